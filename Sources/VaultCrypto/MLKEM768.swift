import Foundation

/// ML-KEM-768 (FIPS 203, August 2024), written from the standard; no library
/// on Debian 12 has it. SHA3 and SHAKE come from OpenSSL 3.0 (OpenSSL.swift),
/// the polynomial arithmetic from MLKEMPolynomial.swift.
///
/// Byte layouts (k = 3, du = 10, dv = 4, eta1 = eta2 = 2):
///
///     ek (1184) = ByteEncode_12(t̂) (1152) || rho (32)
///     dk (2400) = ByteEncode_12(ŝ) (1152) || ek (1184) || H(ek) (32) || z (32)
///     c  (1088) = ByteEncode_10(Compress_10(u)) (960) || ByteEncode_4(Compress_4(v)) (128)
///     K  (32)
///
/// Algorithms implemented: 13 K-PKE.KeyGen, 14 K-PKE.Encrypt, 15 K-PKE.Decrypt,
/// 16 ML-KEM.KeyGen_internal, 17 ML-KEM.Encaps_internal, 18 ML-KEM.Decaps_internal,
/// 19 ML-KEM.KeyGen, 20 ML-KEM.Encaps, 21 ML-KEM.Decaps, with the input checks
/// of section 7.2 (encapsulation key: length and modulus check, done when an
/// `EncapsulationKey` is made) and section 7.3 (decapsulation key: length and
/// hash check, done when a `DecapsulationKey` is made; ciphertext length, in
/// `decapsulate`). H = SHA3-256, G = SHA3-512, J = SHAKE256(·, 32),
/// PRF_2 = SHAKE256(·, 128), XOF = SHAKE128 (section 4.1).
///
///     let dk = try MLKEM768.generateKeyPair()
///     let (c, k) = try MLKEM768.encapsulate(to: dk.encapsulationKey)
///     let k2 = try MLKEM768.decapsulate(c, with: dk)          // k == k2
///
/// Secrets: dk and every shared secret are `SecretBytes`; the seeds d, z, m
/// come in as `SecretBytes`. Every intermediate (sigma, r, s, e, y, e1, e2,
/// the decrypted message, K', K̄, the re-encryption) lives in one stack
/// scratch area per call that is zeroed before it is released. Nothing
/// branches on or indexes by secret data (checked by `make ct`); decapsulation
/// picks K' or K̄ with a mask, so a bad ciphertext is not told apart from a
/// good one (implicit rejection: K̄ = J(z || c)).
///
/// Errors: a key that fails its check is `CryptoError.invalidKey`; a key or
/// ciphertext of the wrong length is `CryptoError.invalidLength`; otherwise
/// only an OpenSSL failure (`CryptoError.library`) can throw.
public enum MLKEM768 {
    static let k = 3
    /// |ek| = 384 k + 32.
    public static let encapsulationKeyLength = 1184
    /// |dk| = 768 k + 96.
    public static let decapsulationKeyLength = 2400
    /// |c| = 32 (du k + dv).
    public static let ciphertextLength = 1088
    public static let sharedSecretLength = 32
    /// d, z (key generation) and m (encapsulation) are 32 bytes each.
    public static let seedLength = 32

    static let polyBytes = 384                       // ByteEncode_12 of one polynomial
    static let vectorBytes = k * polyBytes           // 1152
    static let uBytes = k * 320                      // 960
    static let n = MLKEMPoly.n
    /// SHAKE128 output squeezed at first for one matrix entry: three blocks
    /// (504 bytes, 336 candidates). 256 of them are accepted with
    /// probability 1 - 0.0083; otherwise `sampleMatrixEntry` recomputes a
    /// longer output (OpenSSL 3.0 cannot squeeze more after the fact). Four
    /// blocks would never need the retry but cost a ninth more Keccak calls
    /// on every entry.
    static let xofInitialLength = 3 * 168

    // MARK: Keys

    /// An ML-KEM-768 encapsulation (public) key that passed the checks of
    /// FIPS 203 section 7.2: 1184 bytes, and every 12-bit value of its first
    /// 1152 bytes below q (the modulus check).
    public struct EncapsulationKey: Sendable, Hashable {
        public let bytes: [UInt8]
        /// H(ek), which every encapsulation needs (Algorithm 17), computed once.
        let hash: [UInt8]
        /// Âᵀ, which every K-PKE.Encrypt under this key needs (Algorithm 14,
        /// line 18), expanded once from rho: k × k polynomials in the NTT
        /// domain, row i holding column i of Â, entry (i, j) =
        /// SampleNTT(rho || i || j). Public, as rho is; FIPS 203 section 3.3
        /// allows keeping it. It is most of an encapsulation's Keccak calls,
        /// so a key used many times (a batch of drop-ins, an inbox opened
        /// with one decapsulation key) pays for it once.
        let matrix: [Int16]

        public init(bytes: [UInt8]) throws {
            guard bytes.count == MLKEM768.encapsulationKeyLength else {
                throw CryptoError.invalidLength(what: .mlkemEncapsulationKey,
                                                expected: MLKEM768.encapsulationKeyLength, got: bytes.count)
            }
            let canonical = bytes.withUnsafeBytes {
                MLKEMPoly.isCanonical12(UnsafeRawBufferPointer(rebasing: $0[..<MLKEM768.vectorBytes]))
            }
            guard canonical else {
                throw CryptoError.invalidKey(.mlkemModulus)
            }
            try self.init(checked: bytes)
        }

        /// For keys this code made, and for the copy inside a decapsulation
        /// key, which section 7.3 does not modulus-check. `matrix`: Âᵀ, if
        /// already expanded (key generation).
        init(checked bytes: [UInt8], matrix: [Int16]? = nil) throws {
            self.bytes = bytes
            var h = [UInt8](repeating: 0, count: 32)
            let hasher = try OpenSSL.KeccakContext()
            try bytes.withUnsafeBytes { b in try h.withUnsafeMutableBytes { try MLKEM768.H(hasher, b, into: $0) } }
            hash = h
            self.matrix = try matrix ?? bytes.withUnsafeBytes { b in
                try MLKEM768.expandMatrix(rho: UnsafeRawBufferPointer(rebasing: b[MLKEM768.vectorBytes...]), hasher: hasher)
            }
        }

        public static func == (a: Self, b: Self) -> Bool { a.bytes == b.bytes }
        public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
    }

    /// An ML-KEM-768 decapsulation (private) key in guarded memory that passed
    /// the checks of FIPS 203 section 7.3: 2400 bytes, and the H(ek) it holds
    /// matches the ek it holds.
    public final class DecapsulationKey: Sendable {
        /// dk = dk_PKE || ek || H(ek) || z, 2400 bytes.
        public let secret: SecretBytes
        public let encapsulationKey: EncapsulationKey

        public init(secret: SecretBytes) throws {
            guard secret.count == MLKEM768.decapsulationKeyLength else {
                throw CryptoError.invalidLength(what: .mlkemDecapsulationKey,
                                                expected: MLKEM768.decapsulationKeyLength, got: secret.count)
            }
            let ekRange = MLKEM768.vectorBytes..<(MLKEM768.vectorBytes + MLKEM768.encapsulationKeyLength)
            let ek = try EncapsulationKey(checked: secret.withUnsafeBytes { Array($0[ekRange]) })
            let hashMatches = secret.withUnsafeBytes { s in
                ek.hash.withUnsafeBytes { Sodium.equal($0, UnsafeRawBufferPointer(rebasing: s[ekRange.upperBound..<(ekRange.upperBound + 32)])) }
            }
            guard hashMatches else {
                throw CryptoError.invalidKey(.mlkemHash)
            }
            self.secret = secret
            encapsulationKey = ek
        }

        init(checked secret: SecretBytes, encapsulationKey: EncapsulationKey) {
            self.secret = secret
            self.encapsulationKey = encapsulationKey
        }
    }

    // MARK: Public API (Algorithms 19-21 and their internal forms)

    /// ML-KEM.KeyGen (Algorithm 19): a fresh key pair from 64 random bytes.
    public static func generateKeyPair() throws -> DecapsulationKey {
        try generateKeyPair(d: SecretBytes.random(count: seedLength), z: SecretBytes.random(count: seedLength))
    }

    /// ML-KEM.KeyGen_internal (Algorithm 16): the key pair of the seeds d and
    /// z (32 bytes each). Storing (d, z) instead of dk is allowed (section 3.3).
    public static func generateKeyPair(d: SecretBytes, z: SecretBytes) throws -> DecapsulationKey {
        guard d.count == seedLength, z.count == seedLength else {
            throw CryptoError.invalidLength(what: .mlkemSeed, expected: seedLength,
                                            got: d.count == seedLength ? z.count : d.count)
        }
        let dk = try SecretBytes(count: decapsulationKeyLength)
        let hasher = try OpenSSL.KeccakContext()
        var matrix: [Int16] = []
        let ek = try filled(encapsulationKeyLength) { ek in
            matrix = try withBuffers(reading: [d, z], writing: [dk]) { seeds, out in
                try keyGenInternal(d: seeds[0], z: seeds[1], ek: ek, dk: out[0], hasher: hasher)
            }
        }
        return DecapsulationKey(checked: dk, encapsulationKey: try EncapsulationKey(checked: ek, matrix: matrix))
    }

    /// ML-KEM.Encaps (Algorithm 20): a shared secret and its ciphertext for
    /// `ek`, from 32 fresh random bytes.
    public static func encapsulate(to ek: EncapsulationKey) throws -> (ciphertext: [UInt8], sharedSecret: SecretBytes) {
        try encapsulate(to: ek, randomness: SecretBytes.random(count: seedLength))
    }

    /// ML-KEM.Encaps_internal (Algorithm 17) with the randomness m given.
    /// Internal: reusing m reveals the shared secret; only the vectors and
    /// X-Wing's derandomized encapsulation need it.
    static func encapsulate(to ek: EncapsulationKey, randomness m: SecretBytes) throws
        -> (ciphertext: [UInt8], sharedSecret: SecretBytes) {
        guard m.count == seedLength else {
            throw CryptoError.invalidLength(what: .mlkemRandomness, expected: seedLength, got: m.count)
        }
        let sharedSecret = try SecretBytes(count: sharedSecretLength)
        let hasher = try OpenSSL.KeccakContext()
        let c = try filled(ciphertextLength) { c in
            try withBuffers(reading: [ek.bytes, ek.hash, m], writing: [sharedSecret]) { input, out in
                try ek.matrix.withUnsafeBufferPointer { matrix in
                    try encapsInternal(ek: input[0], matrix: matrix, ekHash: input[1], m: input[2], ciphertext: c,
                                       sharedSecret: out[0], hasher: hasher)
                }
            }
        }
        return (c, sharedSecret)
    }

    /// ML-KEM.Decaps (Algorithm 21): the shared secret of `ciphertext`, or,
    /// if the ciphertext is not a valid encapsulation under this key, the
    /// pseudorandom K̄ = J(z || c) (implicit rejection; never an error). Only
    /// a ciphertext that is not 1088 bytes long throws (`invalidLength`).
    public static func decapsulate(_ ciphertext: some ContiguousBytes, with dk: DecapsulationKey) throws -> SecretBytes {
        let sharedSecret = try SecretBytes(count: sharedSecretLength)
        let hasher = try OpenSSL.KeccakContext()
        try ciphertext.withUnsafeBytes { c in
            guard c.count == ciphertextLength else {
                throw CryptoError.invalidLength(what: .mlkemCiphertext, expected: ciphertextLength, got: c.count)
            }
            try withBuffers(reading: [dk.secret], writing: [sharedSecret]) { key, out in
                try dk.encapsulationKey.matrix.withUnsafeBufferPointer { matrix in
                    try decapsInternal(dk: key[0], matrix: matrix, ciphertext: c, sharedSecret: out[0], hasher: hasher)
                }
            }
        }
        return sharedSecret
    }

    // MARK: The hash functions (section 4.1)

    /// H(s) = SHA3-256(s).
    static func H(_ hasher: OpenSSL.KeccakContext, _ s: UnsafeRawBufferPointer,
                  into out: UnsafeMutableRawBufferPointer) throws {
        try hasher.begin(.sha3_256)
        try hasher.absorb(s)
        try hasher.finish(into: out)
    }

    /// G(a || b) = SHA3-512(a || b), 64 bytes.
    static func G(_ hasher: OpenSSL.KeccakContext, _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer,
                  into out: UnsafeMutableRawBufferPointer) throws {
        try hasher.begin(.sha3_512)
        try hasher.absorb(a)
        try hasher.absorb(b)
        try hasher.finish(into: out)
    }

    /// PRF_2(s, b) = SHAKE256(s || b, 128), then SamplePolyCBD_2 into `r`.
    static func samplePolyCBD(_ r: MLKEMPoly.Pointer, seed s: UnsafeRawBufferPointer, nonce: UInt8,
                              hasher: OpenSSL.KeccakContext, buffer: UnsafeMutableRawBufferPointer) throws {
        let prf = UnsafeMutableRawBufferPointer(rebasing: buffer[..<128])
        try hasher.begin(.shake256)
        try hasher.absorb(s)
        try hasher.absorb(byte: nonce)
        try hasher.squeeze(into: prf)
        if let base = prf.baseAddress { MLKEMPoly.sampleCBD2(r, from: base) }
    }

    /// One matrix entry: SampleNTT(rho || x || y) (Algorithm 7) with
    /// XOF = SHAKE128. `buffer` holds the first output; in the rare case it
    /// runs short the XOF is recomputed with twice the length (the bytes
    /// already read come out the same) and sampling resumes where it stopped.
    /// rho is public, so the retry reveals nothing.
    static func sampleMatrixEntry(_ r: MLKEMPoly.Pointer, rho: UnsafeRawBufferPointer, x: UInt8, y: UInt8,
                                  hasher: OpenSSL.KeccakContext, buffer: UnsafeMutableRawBufferPointer) throws {
        func squeeze(_ out: UnsafeMutableRawBufferPointer) throws {
            try hasher.begin(.shake128)
            try hasher.absorb(rho)
            try hasher.absorb(byte: x)
            try hasher.absorb(byte: y)
            try hasher.squeeze(into: out)
        }
        var count = 0, position = 0
        try squeeze(buffer)
        if MLKEMPoly.sampleNTT(r, from: UnsafeRawBufferPointer(buffer), count: &count, position: &position) { return }
        var length = 2 * buffer.count
        // 64 KiB holds 43690 candidates; needing more than that has
        // probability far below 2^-1000.
        while length <= 1 << 16 {
            var longer = [UInt8](repeating: 0, count: length)
            let done = try longer.withUnsafeMutableBytes { b in
                try squeeze(b)
                return MLKEMPoly.sampleNTT(r, from: UnsafeRawBufferPointer(b), count: &count, position: &position)
            }
            if done { return }
            length *= 2
        }
        throw CryptoError.invalidParameter(.mlkemSampleNTT)
    }

    /// Âᵀ of `rho` (see EncapsulationKey.matrix): entry (i, j) at
    /// (i k + j) n, SampleNTT(rho || i || j).
    static func expandMatrix(rho: UnsafeRawBufferPointer, hasher: OpenSSL.KeccakContext) throws -> [Int16] {
        var matrix = [Int16](repeating: 0, count: k * k * n)
        var xof = [UInt8](repeating: 0, count: xofInitialLength)
        try matrix.withUnsafeMutableBufferPointer { m in
            try xof.withUnsafeMutableBytes { buffer in
                guard let base = m.baseAddress else { throw CryptoError.outOfMemory }
                for i in 0..<k {
                    for j in 0..<k {
                        try sampleMatrixEntry(base + (i * k + j) * n, rho: rho, x: UInt8(i), y: UInt8(j),
                                              hasher: hasher, buffer: buffer)
                    }
                }
            }
        }
        return matrix
    }

    // MARK: Scratch

    /// Lends the bytes of `inputs`, then the storage of `outputs`, all at
    /// once: one closure, where one nested `withUnsafe…` per buffer would
    /// hide the algorithm. As with those, the pointers are valid only
    /// inside `body`; nothing is copied.
    static func withBuffers<R>(reading inputs: [any ContiguousBytes], writing outputs: [SecretBytes],
                               _ body: ([UnsafeRawBufferPointer], [UnsafeMutableRawBufferPointer]) throws -> R) throws -> R {
        func lend(_ read: [UnsafeRawBufferPointer], _ written: [UnsafeMutableRawBufferPointer]) throws -> R {
            if read.count < inputs.count { return try inputs[read.count].withUnsafeBytes { try lend(read + [$0], written) } }
            if written.count < outputs.count {
                return try outputs[written.count].withUnsafeMutableBytes { try lend(read, written + [$0]) }
            }
            return try body(read, written)
        }
        return try lend([], [])
    }

    /// A new array of `count` zero bytes, filled by `body` (a public output: ek, c).
    static func filled(_ count: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Void) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        try out.withUnsafeMutableBytes(body)
        return out
    }

    /// Runs `body` with `polynomials` polynomials and `bytes` bytes of stack
    /// scratch, and zeroes both (sodium_memzero) before they are released,
    /// whether `body` returns or throws.
    static func withScratch<R>(polynomials: Int, bytes: Int,
                               _ body: (MLKEMPoly.Pointer, UnsafeMutableRawBufferPointer) throws -> R) throws -> R {
        // At least one element each, so the base addresses are never nil.
        try withUnsafeTemporaryAllocation(of: Int16.self, capacity: max(polynomials * n, 1)) { polys in
            defer { SecureZero.zero(UnsafeMutableRawBufferPointer(polys)) }
            return try withUnsafeTemporaryAllocation(byteCount: max(bytes, 1), alignment: 16) { raw in
                defer { SecureZero.zero(raw) }
                guard let p = polys.baseAddress else { throw CryptoError.outOfMemory }
                return try body(p, raw)
            }
        }
    }

    // MARK: K-PKE (Algorithms 13-15)

    /// K-PKE.KeyGen (Algorithm 13) and ML-KEM.KeyGen_internal (Algorithm 16):
    /// writes ek (1184 bytes) and dk (2400 bytes) for the seeds d and z, and
    /// returns ek's Âᵀ (expandMatrix), which it computes t̂ with.
    static func keyGenInternal(d: UnsafeRawBufferPointer, z: UnsafeRawBufferPointer,
                               ek: UnsafeMutableRawBufferPointer, dk: UnsafeMutableRawBufferPointer,
                               hasher: OpenSSL.KeccakContext) throws -> [Int16] {
        // Polynomials: one matrix row (k), s (k), e (k), t (k).
        // Bytes: rho || sigma (64), PRF output (128).
        try withScratch(polynomials: 4 * k, bytes: 64 + 128) { p, raw in
            let row = p, s = p + k * n, e = p + 2 * k * n, t = p + 3 * k * n
            let rhoSigma = UnsafeMutableRawBufferPointer(rebasing: raw[0..<64])
            let prf = UnsafeMutableRawBufferPointer(rebasing: raw[64..<192])
            // (rho, sigma) = G(d || k): k as one byte separates the parameter sets.
            var kByte = UInt8(k)
            try withUnsafeBytes(of: &kByte) { try G(hasher, d, $0, into: rhoSigma) }
            let rho = UnsafeRawBufferPointer(rebasing: rhoSigma[0..<32])
            let sigma = UnsafeRawBufferPointer(rebasing: rhoSigma[32..<64])
            // rho is public (it is the end of ek); only sigma stays secret.
            ConstantTime.declassify(rho)
            for i in 0..<k {
                try samplePolyCBD(s + i * n, seed: sigma, nonce: UInt8(i), hasher: hasher, buffer: prf)
            }
            for i in 0..<k {
                try samplePolyCBD(e + i * n, seed: sigma, nonce: UInt8(k + i), hasher: hasher, buffer: prf)
            }
            for i in 0..<k {
                MLKEMPoly.ntt(s + i * n)
                MLKEMPoly.ntt(e + i * n)
            }
            // t̂_i = Σ_j Â[i,j] ∘ ŝ_j + ê_i, with Â[i,j] = SampleNTT(rho || j || i),
            // entry (j, i) of Âᵀ, one row at a time.
            let matrix = try expandMatrix(rho: rho, hasher: hasher)
            for i in 0..<k {
                for j in 0..<k {
                    for x in 0..<n { row[j * n + x] = matrix[(j * k + i) * n + x] }
                }
                let ti = t + i * n
                MLKEMPoly.multiplyAccumulate(ti, row, s, k: k)
                MLKEMPoly.toMontgomery(ti)
                MLKEMPoly.add(ti, e + i * n)
                MLKEMPoly.reduce(ti)
            }
            guard let ekBase = ek.baseAddress, let dkBase = dk.baseAddress else { throw CryptoError.outOfMemory }
            // ek = ByteEncode_12(t̂) || rho; dk = ByteEncode_12(ŝ) || ek || H(ek) || z.
            for i in 0..<k {
                MLKEMPoly.byteEncode12(t + i * n, into: ekBase + i * polyBytes)
                MLKEMPoly.byteEncode12(s + i * n, into: dkBase + i * polyBytes)
            }
            UnsafeMutableRawBufferPointer(rebasing: ek[vectorBytes..<encapsulationKeyLength]).copyMemory(from: rho)
            (dkBase + vectorBytes).copyMemory(from: ekBase, byteCount: encapsulationKeyLength)
            let hOffset = vectorBytes + encapsulationKeyLength
            try H(hasher, UnsafeRawBufferPointer(ek), into: UnsafeMutableRawBufferPointer(rebasing: dk[hOffset..<(hOffset + 32)]))
            UnsafeMutableRawBufferPointer(rebasing: dk[(hOffset + 32)...]).copyMemory(from: z)
            return matrix
        }
    }

    /// K-PKE.Encrypt (Algorithm 14): c = Encrypt(ek, m, r) for a 1184-byte
    /// ek, 32-byte m and r, with `matrix` the Âᵀ of ek's rho (expandMatrix).
    /// t̂ is decoded mod q, so an ek that was not modulus-checked (the copy
    /// inside dk) is read as FIPS 203 reads it.
    static func pkeEncrypt(ek: UnsafeRawBufferPointer, matrix: UnsafeBufferPointer<Int16>, m: UnsafeRawBufferPointer,
                           r: UnsafeRawBufferPointer, into c: UnsafeMutableRawBufferPointer,
                           hasher: OpenSSL.KeccakContext) throws {
        // Polynomials: matrix column (k), t̂ (k), y (k), e1 then u (k), e2, mu, v.
        // Bytes: PRF output (128).
        try withScratch(polynomials: 4 * k + 3, bytes: 128) { p, raw in
            let row = p, tHat = p + k * n, y = p + 2 * k * n, u = p + 3 * k * n
            let e2 = p + 4 * k * n, mu = e2 + n, v = mu + n
            let prf = UnsafeMutableRawBufferPointer(rebasing: raw[0..<128])
            guard let ekBase = ek.baseAddress, let mBase = m.baseAddress, let cBase = c.baseAddress,
                  let matrixBase = matrix.baseAddress else {
                throw CryptoError.outOfMemory
            }
            guard matrix.count == k * k * n else { throw CryptoError.invalidParameter(.mlkemMatrixSize) }
            for i in 0..<k { MLKEMPoly.byteDecode12(tHat + i * n, from: ekBase + i * polyBytes) }
            for i in 0..<k {
                try samplePolyCBD(y + i * n, seed: r, nonce: UInt8(i), hasher: hasher, buffer: prf)
            }
            for i in 0..<k {
                try samplePolyCBD(u + i * n, seed: r, nonce: UInt8(k + i), hasher: hasher, buffer: prf)
            }
            try samplePolyCBD(e2, seed: r, nonce: UInt8(2 * k), hasher: hasher, buffer: prf)
            for i in 0..<k { MLKEMPoly.ntt(y + i * n) }
            // u_i = NTT^-1(Σ_j Â[j,i] ∘ ŷ_j) + e1_i, with Â[j,i] = SampleNTT(rho || i || j)
            // (the transpose), one column at a time; v (free until below) holds the product.
            for i in 0..<k {
                row.update(from: matrixBase + i * k * n, count: k * n)
                MLKEMPoly.multiplyAccumulate(v, row, y, k: k)
                MLKEMPoly.inverseNTT(v)
                MLKEMPoly.add(u + i * n, v)
                MLKEMPoly.reduce(u + i * n)
            }
            // v = NTT^-1(t̂ ∘ ŷ) + e2 + Decompress_1(ByteDecode_1(m)).
            MLKEMPoly.decodeDecompress1(mu, from: mBase)
            MLKEMPoly.multiplyAccumulate(v, tHat, y, k: k)
            MLKEMPoly.inverseNTT(v)
            MLKEMPoly.add(v, e2)
            MLKEMPoly.add(v, mu)
            MLKEMPoly.reduce(v)
            for i in 0..<k { MLKEMPoly.compressEncode10(u + i * n, into: cBase + i * 320) }
            MLKEMPoly.compressEncode4(v, into: cBase + uBytes)
        }
    }

    /// K-PKE.Decrypt (Algorithm 15): the 32-byte m of ciphertext c under
    /// dk_PKE (1152 bytes).
    static func pkeDecrypt(dkPKE: UnsafeRawBufferPointer, ciphertext c: UnsafeRawBufferPointer,
                           into m: UnsafeMutableRawBufferPointer) throws {
        // Polynomials: u' (k), ŝ (k), v', w.
        try withScratch(polynomials: 2 * k + 2, bytes: 16) { p, _ in
            let u = p, s = p + k * n, v = p + 2 * k * n, w = v + n
            guard let dkBase = dkPKE.baseAddress, let cBase = c.baseAddress, let mBase = m.baseAddress else {
                throw CryptoError.outOfMemory
            }
            for i in 0..<k {
                MLKEMPoly.decodeDecompress10(u + i * n, from: cBase + i * 320)
                MLKEMPoly.ntt(u + i * n)
                MLKEMPoly.byteDecode12(s + i * n, from: dkBase + i * polyBytes)
            }
            MLKEMPoly.decodeDecompress4(v, from: cBase + uBytes)
            // w = v' - NTT^-1(ŝ ∘ NTT(u')); m = ByteEncode_1(Compress_1(w)).
            MLKEMPoly.multiplyAccumulate(w, s, u, k: k)
            MLKEMPoly.inverseNTT(w)
            MLKEMPoly.subtractFrom(w, v)
            MLKEMPoly.reduce(w)
            MLKEMPoly.compressEncode1(w, into: mBase)
        }
    }

    // MARK: ML-KEM internals (Algorithms 17 and 18)

    /// ML-KEM.Encaps_internal (Algorithm 17): (K, r) = G(m || H(ek)),
    /// c = K-PKE.Encrypt(ek, m, r).
    static func encapsInternal(ek: UnsafeRawBufferPointer, matrix: UnsafeBufferPointer<Int16>, ekHash: UnsafeRawBufferPointer,
                               m: UnsafeRawBufferPointer, ciphertext c: UnsafeMutableRawBufferPointer,
                               sharedSecret: UnsafeMutableRawBufferPointer, hasher: OpenSSL.KeccakContext) throws {
        try withScratch(polynomials: 0, bytes: 64) { _, kr in
            try G(hasher, m, ekHash, into: kr)
            sharedSecret.copyMemory(from: UnsafeRawBufferPointer(rebasing: kr[0..<32]))
            try pkeEncrypt(ek: ek, matrix: matrix, m: m, r: UnsafeRawBufferPointer(rebasing: kr[32..<64]), into: c,
                           hasher: hasher)
        }
    }

    /// ML-KEM.Decaps_internal (Algorithm 18): m' = Decrypt(dk_PKE, c);
    /// (K', r') = G(m' || h); K̄ = J(z || c); c' = Encrypt(ek, m', r');
    /// K = K' if c' == c else K̄, chosen with a mask. `matrix`: the Âᵀ of
    /// the ek inside dk.
    static func decapsInternal(dk: UnsafeRawBufferPointer, matrix: UnsafeBufferPointer<Int16>, ciphertext c: UnsafeRawBufferPointer,
                               sharedSecret: UnsafeMutableRawBufferPointer, hasher: OpenSSL.KeccakContext) throws {
        let ekOffset = vectorBytes, hOffset = vectorBytes + encapsulationKeyLength, zOffset = hOffset + 32
        let dkPKE = UnsafeRawBufferPointer(rebasing: dk[0..<vectorBytes])
        let ek = UnsafeRawBufferPointer(rebasing: dk[ekOffset..<hOffset])
        let h = UnsafeRawBufferPointer(rebasing: dk[hOffset..<zOffset])
        let z = UnsafeRawBufferPointer(rebasing: dk[zOffset..<(zOffset + 32)])
        // Bytes: m' (32), K' || r' (64), K̄ (32), c' (1088).
        try withScratch(polynomials: 0, bytes: 32 + 64 + 32 + ciphertextLength) { _, raw in
            let mPrime = UnsafeMutableRawBufferPointer(rebasing: raw[0..<32])
            let kr = UnsafeMutableRawBufferPointer(rebasing: raw[32..<96])
            let kBar = UnsafeMutableRawBufferPointer(rebasing: raw[96..<128])
            let cPrime = UnsafeMutableRawBufferPointer(rebasing: raw[128...])
            try pkeDecrypt(dkPKE: dkPKE, ciphertext: c, into: mPrime)
            try G(hasher, UnsafeRawBufferPointer(mPrime), h, into: kr)
            try hasher.begin(.shake256)
            try hasher.absorb(z)
            try hasher.absorb(c)
            try hasher.squeeze(into: kBar)
            try pkeEncrypt(ek: ek, matrix: matrix, m: UnsafeRawBufferPointer(mPrime),
                           r: UnsafeRawBufferPointer(rebasing: kr[32..<64]), into: cPrime, hasher: hasher)
            let mask = equalMask(c, UnsafeRawBufferPointer(cPrime))
            let out = sharedSecret.bindMemory(to: UInt8.self)
            let kp = kr.bindMemory(to: UInt8.self), kb = kBar.bindMemory(to: UInt8.self)
            for i in 0..<sharedSecretLength {
                out[i] = (kp[i] & mask) | (kb[i] & ~mask)
            }
        }
    }

    /// 0xff if a == b (same length), else 0x00, with no data-dependent branch:
    /// the OR of all XORs is 0 only if equal, and (x - 1) >> 8 turns 0 into
    /// all ones and 1...255 into 0.
    static func equalMask(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> UInt8 {
        let pa = a.bindMemory(to: UInt8.self), pb = b.bindMemory(to: UInt8.self)
        var diff: UInt8 = 0
        for i in 0..<min(pa.count, pb.count) { diff |= pa[i] ^ pb[i] }
        return UInt8(truncatingIfNeeded: (UInt32(diff) &- 1) >> 8)
    }
}
