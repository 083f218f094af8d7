import Testing
@testable import VaultCrypto

/// The 3 vectors of draft-connolly-cfrg-xwing-kem-10 (Vectors/xwing.json).
struct XWingVector: Decodable, Sendable {
    let seed, sk, pk, eseed, ct, ss: Hex
    struct File: Decodable, Sendable { let tests: [XWingVector] }
    static let all: [XWingVector] = try! Vectors.load("xwing", as: File.self).tests
}

@Suite struct XWingTests {
    @Test func draftVectors() throws {
        #expect(XWingVector.all.count == 3)
        for (i, v) in XWingVector.all.enumerated() {
            #expect(v.seed.bytes == v.sk.bytes)
            let sk = try XWing.PrivateKey(seed: v.seed.secret)
            #expect(sk.publicKey.bytes == v.pk.bytes, "vector \(i) pk")
            let pk = try XWing.PublicKey(bytes: v.pk.bytes)
            let (ct, ss) = try XWing.encapsulate(to: pk, eseed: v.eseed.secret)
            #expect(ct == v.ct.bytes, "vector \(i) ct")
            #expect(ss.bytes == v.ss.bytes, "vector \(i) ss")
            #expect(try XWing.decapsulate(v.ct.bytes, with: sk).bytes == v.ss.bytes, "vector \(i) decapsulate")
        }
    }

    @Test func randomRoundTrips() throws {
        for _ in 0..<20 {
            let sk = try XWing.PrivateKey()
            let (ct, ss) = try XWing.encapsulate(to: sk.publicKey)
            #expect(ct.count == XWing.ciphertextLength)
            #expect(try XWing.decapsulate(ct, with: sk) == ss)
            #expect(try XWing.PublicKey(bytes: sk.publicKey.bytes) == sk.publicKey)
        }
    }

    /// Changing either half of the ciphertext changes the secret, and never fails.
    @Test func tamperedCiphertextGivesAnotherSecret() throws {
        let sk = try XWing.PrivateKey()
        let (ct, ss) = try XWing.encapsulate(to: sk.publicKey)
        for index in [0, 500, 1087, 1088, 1119] {
            var bad = ct
            bad[index] ^= 0x01
            let other = try XWing.decapsulate(bad, with: sk)
            #expect(other != ss, "byte \(index)")
        }
    }

    /// X25519 parts of low order give the all-zero ss_X (no rejection, as
    /// the draft specifies); the ML-KEM half still carries the secret.
    @Test func lowOrderX25519HalvesAreNotRejected() throws {
        let sk = try XWing.PrivateKey()
        let zeroPoint = [UInt8](repeating: 0, count: 32)
        let weakPK = try XWing.PublicKey(bytes: Array(sk.publicKey.bytes.prefix(1184)) + zeroPoint)
        let (ct, ss) = try XWing.encapsulate(to: weakPK)
        #expect(ss.count == 32)
        // Decapsulating a ciphertext whose X25519 half is low order works too.
        for point in [zeroPoint, [1] + [UInt8](repeating: 0, count: 31)] {
            _ = try XWing.decapsulate(Array(ct.prefix(1088)) + point, with: sk)
        }
        let x = try X25519PrivateKey(secret: try SecretBytes.random(count: 32))
        #expect(try x.unvalidatedSharedSecret(with: X25519PublicKey(bytes: zeroPoint)).bytes == zeroPoint)
        let peer = try X25519PrivateKey().publicKey
        #expect(try x.unvalidatedSharedSecret(with: peer) == x.sharedSecret(with: peer))
    }

    @Test func lengthsAndKeyChecks() throws {
        let sk = try XWing.PrivateKey()
        #expect(throws: CryptoError.invalidLength(what: .xwingCiphertext, expected: 1120, got: 1119)) {
            try XWing.decapsulate([UInt8](repeating: 0, count: 1119), with: sk)
        }
        #expect(throws: CryptoError.invalidLength(what: .xwingPublicKey, expected: 1216, got: 1215)) {
            try XWing.PublicKey(bytes: Array(sk.publicKey.bytes.dropLast()))
        }
        #expect(throws: CryptoError.invalidLength(what: .xwingSeed, expected: 32, got: 31)) {
            try XWing.PrivateKey(seed: try SecretBytes(count: 31))
        }
        // A coefficient of 0xfff (>= q) in pk_M fails the FIPS 203 modulus check.
        var bad = sk.publicKey.bytes
        bad[0] = 0xff; bad[1] |= 0x0f
        #expect(throws: CryptoError.invalidKey(.mlkemModulus)) {
            try XWing.PublicKey(bytes: bad)
        }
    }
}
