import COpenSSL
import Testing
import VaultCrypto

/// The AEADs are libgcrypt's (Gcrypt.swift), and AES-256-GCM libipsec-mb's
/// where it runs faster (IPSecMB.swift; AESGCMImplementationTests checks
/// each on its own); every vault sealed before that was sealed by OpenSSL's
/// EVP. All must be the same functions: for random
/// keys, nonces, AAD and lengths (empty, around the 16-byte blocks and
/// 64-byte ChaCha blocks, a whole item chunk and past it) OpenSSL opens what
/// AEAD sealed and AEAD opens what OpenSSL sealed, byte for byte, in place
/// as ItemReader opens a chunk; one flipped bit anywhere fails and leaves
/// the output zeroed.
@Suite struct AEADDifferentialTests {
    static let lengths = [0, 1, 15, 16, 17, 63, 64, 65, 4095, 65_537, (1 << 20) + 16, (1 << 20) + 31]

    /// OpenSSL EVP, the oracle: seal (encrypt) or open (decrypt and verify); nil when the tag fails.
    static func evp(_ algorithm: AEADAlgorithm, seal: Bool, key: [UInt8], nonce: [UInt8], aad: [UInt8], input: [UInt8]) -> [UInt8]? {
        let cipher: OpaquePointer = switch algorithm {
        case .aes128GCM: EVP_aes_128_gcm()
        case .aes256GCM: EVP_aes_256_gcm()
        case .chacha20Poly1305: EVP_chacha20_poly1305()
        }
        let ctx = EVP_CIPHER_CTX_new()!
        defer { EVP_CIPHER_CTX_free(ctx) }
        let body = seal ? input : Array(input.dropLast(16))
        var out = [UInt8](repeating: 0, count: body.count + 16)
        var n: Int32 = 0
        guard EVP_CipherInit_ex(ctx, cipher, nil, key, nonce, seal ? 1 : 0) == 1,
              aad.isEmpty || EVP_CipherUpdate(ctx, nil, &n, aad, Int32(aad.count)) == 1,
              body.isEmpty || EVP_CipherUpdate(ctx, &out, &n, body, Int32(body.count)) == 1 else { return nil }
        if seal {
            var tail = [UInt8](repeating: 0, count: 32)
            guard EVP_CipherFinal_ex(ctx, &tail, &n) == 1 else { return nil }
            var tag = [UInt8](repeating: 0, count: 16)
            guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, &tag) == 1 else { return nil }
            return Array(out[..<body.count]) + tag
        }
        var tag = Array(input.suffix(16))
        var tail = [UInt8](repeating: 0, count: 32)
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, &tag) == 1,
              EVP_CipherFinal_ex(ctx, &tail, &n) == 1 else { ERR_clear_error(); return nil }
        return Array(out[..<body.count])
    }

    @Test(arguments: AEADTests.algorithms)
    func sameFunctionAsOpenSSL(algorithm: AEADAlgorithm) throws {
        for (i, length) in Self.lengths.enumerated() {
            let key = SecureRandom.bytes(algorithm.keyLength)
            let aead = try AEAD(algorithm, key: try key.withUnsafeBytes { try SecretBytes(copying: $0) })
            let nonce = SecureRandom.bytes(12), aad = SecureRandom.bytes([0, 1, 13, 16, 41][i % 5]), pt = SecureRandom.bytes(length)
            let sealed = try aead.seal(nonce: nonce, aad: aad, plaintext: pt)
            #expect(Self.evp(algorithm, seal: true, key: key, nonce: nonce, aad: aad, input: pt) == sealed, "length \(length)")
            #expect(Self.evp(algorithm, seal: false, key: key, nonce: nonce, aad: aad, input: sealed) == pt, "length \(length)")

            // In place, as a chunk is opened in its page buffer.
            let theirs = try #require(Self.evp(algorithm, seal: true, key: key, nonce: nonce, aad: aad, input: pt))
            var buffer = theirs
            try buffer.withUnsafeMutableBytes { b in
                try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in
                    try aead.open(nonce: n, aad: a, sealed: UnsafeRawBufferPointer(b),
                                  into: UnsafeMutableRawBufferPointer(rebasing: b[..<length]))
                } }
            }
            #expect(Array(buffer[..<length]) == pt, "length \(length)")

            // One flipped bit (ciphertext, tag or AAD) fails, in place too, and zeroes what was opened.
            var flipped = theirs
            flipped[(length * 7 + 3) % flipped.count] ^= 0x10
            #expect(throws: CryptoError.authenticationFailed) { try aead.open(nonce: nonce, aad: aad, sealed: flipped) }
            #expect(throws: CryptoError.authenticationFailed) { try aead.open(nonce: nonce, aad: aad + [1], sealed: theirs) }
            try flipped.withUnsafeMutableBytes { b in
                #expect(throws: CryptoError.authenticationFailed) {
                    try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in
                        try aead.open(nonce: n, aad: a, sealed: UnsafeRawBufferPointer(b),
                                      into: UnsafeMutableRawBufferPointer(rebasing: b[..<length]))
                    } }
                }
            }
            #expect(flipped[..<length].allSatisfy { $0 == 0 }, "length \(length)")
            // And the context goes on: the next message opens.
            #expect(try aead.open(nonce: nonce, aad: aad, sealed: theirs) == pt)
        }
    }
}
