import Testing
@testable import VaultCrypto

/// The arithmetic under ML-KEM-768 (MLKEMPolynomial.swift), checked against
/// plain integer arithmetic: exhaustively where the domain is small.
@Suite struct MLKEMPolynomialTests {
    let q = 3329

    /// a mod q in [0, q) for any Int.
    func mod(_ a: Int) -> Int { ((a % q) + q) % q }
    func power(_ base: Int, _ e: Int) -> Int { var r = 1; for _ in 0..<e { r = r * base % q }; return r }
    func bitRev7(_ i: Int) -> Int { (0..<7).reduce(0) { $0 | ((i >> $1) & 1) << (6 - $1) } }
    /// 2^-16 mod q.
    var rInverse: Int { power(power(2, 16), q - 2) }

    @Test func zetasAreFIPS203AppendixAInMontgomeryForm() {
        // The first entries of appendix A's table, 17^BitRev7(i) mod q.
        #expect((0..<8).map { power(17, bitRev7($0)) } == [1, 1729, 2580, 3289, 2642, 630, 1897, 848])
        for i in 0..<128 {
            let z = Int(MLKEMPoly.zetas[i])
            #expect(mod(z * rInverse) == power(17, bitRev7(i)), "zeta \(i)")
            #expect(abs(z) <= q / 2)
        }
    }

    @Test func barrettReduceEveryInt16() {
        for a in Int(Int16.min)...Int(Int16.max) {
            let r = Int(MLKEMPoly.barrettReduce(Int16(a)))
            if mod(r) != mod(a) || abs(r) > (q - 1) / 2 { Issue.record("barrett(\(a)) = \(r)"); return }
        }
    }

    @Test func montgomeryReduceOverItsRange() {
        var rng = SystemRandomNumberGenerator()
        let bound = q << 15
        for step in 0..<40_000 {
            let a = step < 1000 ? bound - 1 - step : Int.random(in: -(bound - 1)..<bound, using: &rng)
            let r = Int(MLKEMPoly.montgomeryReduce(Int32(a)))
            if mod(r) != mod(a * rInverse) || abs(r) >= q { Issue.record("montgomery(\(a)) = \(r)"); return }
        }
    }

    /// Compress_d(x) = round(2^d x / q) mod 2^d, for every x in [0, q);
    /// Decompress_d(y) = round(q y / 2^d) for every y.
    @Test func compressAndDecompressMatchTheFormulas() {
        func exact(_ x: Int, _ d: Int) -> Int { ((x << (d + 1)) + q) / (2 * q) % (1 << d) }
        for x in 0..<q {
            #expect(Int(MLKEMPoly.compress10(Int16(x))) == exact(x, 10), "Compress_10(\(x))")
            #expect(Int(MLKEMPoly.compress4(Int16(x))) == exact(x, 4), "Compress_4(\(x))")
            #expect(Int(MLKEMPoly.compress1(Int16(x))) == exact(x, 1), "Compress_1(\(x))")
        }
        for (d, top) in [(10, 1024), (4, 16), (1, 2)] {
            for y in 0..<top {
                #expect(Int(MLKEMPoly.decompress(UInt32(y), bits: UInt32(d))) == (2 * q * y + (1 << d)) / (2 << d))
            }
        }
    }

    /// NTT^-1(NTT(a) ∘ NTT(b)) is a · b in Z_q[X]/(X^256 + 1), against the
    /// schoolbook product, for random and extreme inputs.
    @Test func nttMultiplicationIsPolynomialMultiplication() {
        for trial in 0..<20 {
            let a: [Int16] = (0..<256).map { i in trial == 0 ? 3328 : trial == 1 ? Int16(i % 2 == 0 ? -3328 : 3328) : Int16.random(in: -3328...3328) }
            let b: [Int16] = (0..<256).map { _ in trial == 0 ? 3328 : Int16.random(in: -3328...3328) }
            var expected = [Int](repeating: 0, count: 256)
            for i in 0..<256 {
                for j in 0..<256 {
                    let p = Int(a[i]) * Int(b[j])
                    if i + j < 256 { expected[i + j] += p } else { expected[i + j - 256] -= p }
                }
            }
            var fa = a, fb = b, product = [Int16](repeating: 0, count: 256)
            fa.withUnsafeMutableBufferPointer { pa in fb.withUnsafeMutableBufferPointer { pb in
                product.withUnsafeMutableBufferPointer { pr in
                    MLKEMPoly.ntt(pa.baseAddress!)
                    MLKEMPoly.ntt(pb.baseAddress!)
                    MLKEMPoly.multiplyAccumulate(pr.baseAddress!, pa.baseAddress!, pb.baseAddress!, k: 1)
                    MLKEMPoly.inverseNTT(pr.baseAddress!)
                }
            } }
            #expect(product.map { mod(Int($0)) } == expected.map(mod), "trial \(trial)")
            #expect(product.allSatisfy { abs(Int($0)) < q })
        }
    }

    @Test func byteEncodingsRoundTrip() {
        var poly = (0..<256).map { Int16($0 * 13 % 3329) }
        var encoded = [UInt8](repeating: 0, count: 384)
        var decoded = [Int16](repeating: 0, count: 256)
        poly.withUnsafeMutableBufferPointer { p in encoded.withUnsafeMutableBytes { MLKEMPoly.byteEncode12(p.baseAddress!, into: $0.baseAddress!) } }
        encoded.withUnsafeBytes { e in decoded.withUnsafeMutableBufferPointer { MLKEMPoly.byteDecode12($0.baseAddress!, from: e.baseAddress!) } }
        #expect(decoded == poly)
        #expect(encoded.withUnsafeBytes { MLKEMPoly.isCanonical12($0) })
        // Negative representatives encode as their value mod q.
        poly[0] = -1
        poly.withUnsafeMutableBufferPointer { p in encoded.withUnsafeMutableBytes { MLKEMPoly.byteEncode12(p.baseAddress!, into: $0.baseAddress!) } }
        #expect(encoded[0] == 0x00 && encoded[1] & 0x0f == 0x0d)  // 3328 = 0xd00
        // 12-bit values q ... 4095 fail the modulus check and decode mod q.
        for bad in [3329, 4095] {
            var bytes = [UInt8](repeating: 0, count: 3)
            bytes[0] = UInt8(bad & 0xff); bytes[1] = UInt8(bad >> 8)
            #expect(!bytes.withUnsafeBytes { MLKEMPoly.isCanonical12($0) })
            bytes = [0, UInt8(bad & 0x0f) << 4, UInt8(bad >> 4)]  // the second 12-bit value
            #expect(!bytes.withUnsafeBytes { MLKEMPoly.isCanonical12($0) })
            #expect(MLKEMPoly.subtractQIfAtLeastQ(Int16(bad)) == Int16(bad - q))
        }
        #expect(MLKEMPoly.subtractQIfAtLeastQ(3328) == 3328)
    }

    /// SampleNTT's retry with a longer SHAKE128 output gives the same entry
    /// as the first try, even when the first output is far too short.
    @Test func sampleNTTRetryGivesTheSameEntry() throws {
        let hasher = try OpenSSL.KeccakContext()
        let rho = SecureRandom.bytes(32)
        func entry(bufferLength: Int) throws -> [Int16] {
            var r = [Int16](repeating: -1, count: 256)
            var buffer = [UInt8](repeating: 0, count: bufferLength)
            try rho.withUnsafeBytes { rho in try buffer.withUnsafeMutableBytes { b in try r.withUnsafeMutableBufferPointer { p in
                try MLKEM768.sampleMatrixEntry(p.baseAddress!, rho: rho, x: 1, y: 2, hasher: hasher, buffer: b)
            } } }
            return r
        }
        let normal = try entry(bufferLength: MLKEM768.xofInitialLength)
        #expect(normal.allSatisfy { $0 >= 0 && $0 < 3329 })
        #expect(try entry(bufferLength: 168) == normal)
        #expect(try entry(bufferLength: 3) == normal)
        #expect(try entry(bufferLength: 1000) == normal)
    }

    @Test func fips202KnownAnswers() throws {
        let h = try OpenSSL.KeccakContext()
        func run(_ f: OpenSSL.Keccak, _ input: [UInt8], _ length: Int) throws -> [UInt8] {
            var out = [UInt8](repeating: 0, count: length)
            try h.begin(f)
            try input.withUnsafeBytes { try h.absorb($0) }
            try out.withUnsafeMutableBytes { f.isXOF ? try h.squeeze(into: $0) : try h.finish(into: $0) }
            return out
        }
        let abc = Array("abc".utf8)
        #expect(try run(.sha3_256, abc, 32) == [UInt8](hex: "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"))
        #expect(try run(.sha3_512, abc, 64) == [UInt8](hex: "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"))
        #expect(try run(.shake128, [], 32) == [UInt8](hex: "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26"))
        #expect(try run(.shake256, [], 64) == [UInt8](hex: "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762fd75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be"))
        // A longer squeeze starts with the shorter one (the SampleNTT retry relies on it).
        #expect(try Array(run(.shake128, abc, 1000).prefix(504)) == run(.shake128, abc, 504))
        // Misuse is an error, not a crash.
        try h.begin(.sha3_256)
        var wrong = [UInt8](repeating: 0, count: 31)
        #expect(throws: CryptoError.self) { try wrong.withUnsafeMutableBytes { try h.finish(into: $0) } }
        try h.begin(.sha3_256)
        #expect(throws: CryptoError.self) { try wrong.withUnsafeMutableBytes { try h.squeeze(into: $0) } }
    }
}

@Suite struct MLKEMAPITests {
    @Test func randomRoundTrips() throws {
        for _ in 0..<10 {
            let dk = try MLKEM768.generateKeyPair()
            let (c, k) = try MLKEM768.encapsulate(to: dk.encapsulationKey)
            #expect(c.count == 1088 && k.count == 32)
            #expect(try MLKEM768.decapsulate(c, with: dk) == k)
            // Keys survive a trip through their bytes.
            let ek2 = try MLKEM768.EncapsulationKey(bytes: dk.encapsulationKey.bytes)
            let dk2 = try MLKEM768.DecapsulationKey(secret: dk.secret.withUnsafeBytes { try SecretBytes(copying: $0) })
            #expect(ek2 == dk.encapsulationKey && dk2.encapsulationKey == ek2)
            #expect(try MLKEM768.decapsulate(c, with: dk2) == k)
        }
    }

    /// Implicit rejection: a modified ciphertext gives J(z || c), not an error.
    @Test func modifiedCiphertextGivesTheRejectionSecret() throws {
        let dk = try MLKEM768.generateKeyPair()
        let (c, k) = try MLKEM768.encapsulate(to: dk.encapsulationKey)
        var bad = c
        bad[100] ^= 0x80
        let rejected = try MLKEM768.decapsulate(bad, with: dk)
        #expect(rejected != k)
        let z = Array(dk.secret.bytes.suffix(32))
        let h = try OpenSSL.KeccakContext()
        var j = [UInt8](repeating: 0, count: 32)
        try h.begin(.shake256)
        try (z + bad).withUnsafeBytes { try h.absorb($0) }
        try j.withUnsafeMutableBytes { try h.squeeze(into: $0) }
        #expect(rejected.bytes == j)
        c.withUnsafeBytes { pc in bad.withUnsafeBytes { pb in
            #expect(MLKEM768.equalMask(pc, pb) == 0)
            #expect(MLKEM768.equalMask(pc, pc) == 0xff)
        } }
    }

    @Test func wrongLengthsAreTypedErrors() throws {
        let dk = try MLKEM768.generateKeyPair()
        for n in [0, 1087, 1089] {
            #expect(throws: CryptoError.invalidLength(what: .mlkemCiphertext, expected: 1088, got: n)) {
                try MLKEM768.decapsulate([UInt8](repeating: 0, count: n), with: dk)
            }
        }
        #expect(throws: CryptoError.invalidLength(what: .mlkemEncapsulationKey, expected: 1184, got: 1183)) {
            try MLKEM768.EncapsulationKey(bytes: Array(dk.encapsulationKey.bytes.dropLast()))
        }
        #expect(throws: CryptoError.invalidLength(what: .mlkemDecapsulationKey, expected: 2400, got: 2399)) {
            try MLKEM768.DecapsulationKey(secret: dk.secret.slice(0..<2399))
        }
        #expect(throws: CryptoError.invalidLength(what: .mlkemSeed, expected: 32, got: 31)) {
            try MLKEM768.generateKeyPair(d: try SecretBytes(count: 31), z: try SecretBytes(count: 32))
        }
        #expect(throws: CryptoError.invalidLength(what: .mlkemRandomness, expected: 32, got: 33)) {
            try MLKEM768.encapsulate(to: dk.encapsulationKey, randomness: try SecretBytes(count: 33))
        }
    }
}
