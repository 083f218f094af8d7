import Testing
import VaultCrypto

@Suite struct AEADTests {
    static let algorithms: [AEADAlgorithm] = [.aes128GCM, .aes256GCM, .chacha20Poly1305]

    @Test(arguments: algorithms, [0, 1, 15, 16, 17, 4096])
    func roundTrip(algorithm: AEADAlgorithm, length: Int) throws {
        let aead = try AEAD(algorithm, key: .random(count: algorithm.keyLength))
        let nonce = SecureRandom.bytes(12), aad = SecureRandom.bytes(length % 7), pt = SecureRandom.bytes(length)
        let sealed = try aead.seal(nonce: nonce, aad: aad, plaintext: pt)
        #expect(sealed.count == length + AEADAlgorithm.tagLength)
        #expect(try aead.open(nonce: nonce, aad: aad, sealed: sealed) == pt)
        #expect(try aead.openSecret(nonce: nonce, aad: aad, sealed: sealed).bytes == pt)
        // The context is reusable with a fresh nonce.
        let nonce2 = SecureRandom.bytes(12)
        let sealed2 = try aead.seal(nonce: nonce2, aad: aad, plaintext: pt)
        #expect(try aead.open(nonce: nonce2, aad: aad, sealed: sealed2) == pt)
    }

    @Test(arguments: algorithms)
    func tamperingFailsAuthentication(algorithm: AEADAlgorithm) throws {
        let key = try SecretBytes.random(count: algorithm.keyLength)
        let aead = try AEAD(algorithm, key: key)
        let nonce = SecureRandom.bytes(12), aad = Array("header".utf8), pt = Array("attack at dawn".utf8)
        let sealed = try aead.seal(nonce: nonce, aad: aad, plaintext: pt)

        let otherKey = try AEAD(algorithm, key: .random(count: algorithm.keyLength))
        #expect(throws: CryptoError.authenticationFailed) { try otherKey.open(nonce: nonce, aad: aad, sealed: sealed) }
        var wrongNonce = nonce
        wrongNonce[11] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try aead.open(nonce: wrongNonce, aad: aad, sealed: sealed) }
        #expect(throws: CryptoError.authenticationFailed) { try aead.open(nonce: nonce, aad: aad + [0], sealed: sealed) }
        #expect(throws: CryptoError.authenticationFailed) { try aead.open(nonce: nonce, aad: [UInt8](), sealed: sealed) }
        var wrongTag = sealed
        wrongTag[wrongTag.count - 1] ^= 0x80
        #expect(throws: CryptoError.authenticationFailed) { try aead.open(nonce: nonce, aad: aad, sealed: wrongTag) }
        var wrongCiphertext = sealed
        wrongCiphertext[0] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try aead.open(nonce: nonce, aad: aad, sealed: wrongCiphertext) }
        #expect(throws: CryptoError.authenticationFailed) { try aead.open(nonce: nonce, aad: aad, sealed: Array(sealed.prefix(15))) }
        #expect(throws: CryptoError.authenticationFailed) { try aead.openSecret(nonce: nonce, aad: aad, sealed: wrongTag) }
        // The failures left the context usable.
        #expect(try aead.open(nonce: nonce, aad: aad, sealed: sealed) == pt)
    }

    @Test(arguments: algorithms)
    func wrongKeyOrNonceLengthIsRejected(algorithm: AEADAlgorithm) throws {
        for length in [0, 16, 24, 32, 33] where length != algorithm.keyLength {
            #expect(throws: CryptoError.invalidLength(what: .aeadKey, expected: algorithm.keyLength, got: length)) {
                try AEAD(algorithm, key: try SecretBytes(count: length))
            }
        }
        let aead = try AEAD(algorithm, key: .random(count: algorithm.keyLength))
        #expect(throws: CryptoError.invalidLength(what: .nonce, expected: 12, got: 8)) {
            try aead.seal(nonce: [UInt8](repeating: 0, count: 8), aad: [UInt8](), plaintext: [1])
        }
    }

    /// The Galois/Counter Mode of Operation (McGrew and Viega), test case 16:
    /// AES-256, 96-bit IV, 60-byte plaintext, 20-byte AAD.
    @Test func aes256GCMKnownAnswer() throws {
        let aead = try AEAD(.aes256GCM, key: try SecretBytes(hex: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"))
        let nonce = [UInt8](hex: "cafebabefacedbaddecaf888")
        let aad = [UInt8](hex: "feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let pt = [UInt8](hex: "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                            + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
        let expected = [UInt8](hex: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
                                  + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
                                  + "76fc6ece0f4e1768cddf8853bb2d551b")
        #expect(try aead.seal(nonce: nonce, aad: aad, plaintext: pt) == expected)
        #expect(try aead.open(nonce: nonce, aad: aad, sealed: expected) == pt)
    }

    /// RFC 8439 section 2.8.2, AEAD_CHACHA20_POLY1305 example.
    @Test func chacha20Poly1305KnownAnswer() throws {
        let aead = try AEAD(.chacha20Poly1305, key: try SecretBytes(hex: "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"))
        let nonce = [UInt8](hex: "070000004041424344454647")
        let aad = [UInt8](hex: "50515253c0c1c2c3c4c5c6c7")
        let pt = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let expected = [UInt8](hex: "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
                                  + "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
                                  + "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
                                  + "3ff4def08e4b7a9de576d26586cec64b6116"
                                  + "1ae10b594f09e26a7e902ecbd0600691")
        #expect(try aead.seal(nonce: nonce, aad: aad, plaintext: pt) == expected)
        #expect(try aead.open(nonce: nonce, aad: aad, sealed: expected) == pt)
    }
}
