import Testing
import VaultCrypto

@Suite struct X25519Tests {
    func x25519(_ scalar: [UInt8], _ u: [UInt8]) throws -> [UInt8] {
        try X25519PrivateKey(secret: try SecretBytes(copying: scalar.withUnsafeBytes { $0 }))
            .sharedSecret(with: X25519PublicKey(bytes: u)).bytes
    }

    /// RFC 7748 section 5.2, the two single scalar multiplications.
    @Test(arguments: [
        ("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
         "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
         "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"),
        // The u-coordinate has its top bit set, which X25519 must ignore.
        ("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
         "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
         "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"),
    ])
    func rfc7748Vector(scalar: String, u: String, output: String) throws {
        #expect(try x25519([UInt8](hex: scalar), [UInt8](hex: u)) == [UInt8](hex: output))
    }

    /// RFC 7748 section 5.2, iterated: k = u = 9; then k, u = X25519(k, u), k.
    @Test func rfc7748Iterated() throws {
        var k = [UInt8](repeating: 0, count: 32), u = k
        k[0] = 9; u[0] = 9
        for i in 1...1000 {
            (k, u) = (try x25519(k, u), k)
            if i == 1 { #expect(k == [UInt8](hex: "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079")) }
        }
        #expect(k == [UInt8](hex: "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51"))
    }

    /// RFC 7748 section 6.1, Diffie-Hellman between Alice and Bob.
    @Test func rfc7748DiffieHellman() throws {
        let alice = try X25519PrivateKey(secret: try SecretBytes(hex: "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = try X25519PrivateKey(secret: try SecretBytes(hex: "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        #expect(alice.publicKey.bytes == [UInt8](hex: "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        #expect(bob.publicKey.bytes == [UInt8](hex: "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        let shared = [UInt8](hex: "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        #expect(try alice.sharedSecret(with: bob.publicKey).bytes == shared)
        #expect(try bob.sharedSecret(with: alice.publicKey).bytes == shared)
    }

    @Test func lowOrderPointIsRejected() throws {
        let zero = try X25519PublicKey(bytes: [UInt8](repeating: 0, count: 32))
        #expect(throws: CryptoError.weakSharedSecret) { try X25519PrivateKey().sharedSecret(with: zero) }
    }

    @Test func randomKeysAgree() throws {
        let a = try X25519PrivateKey(), b = try X25519PrivateKey()
        #expect(a.publicKey != b.publicKey)
        #expect(try a.sharedSecret(with: b.publicKey) == b.sharedSecret(with: a.publicKey))
    }

    @Test func wrongLengthsAreRejected() {
        #expect(throws: CryptoError.invalidLength(what: .x25519PublicKey, expected: 32, got: 31)) {
            try X25519PublicKey(bytes: [UInt8](repeating: 1, count: 31))
        }
        #expect(throws: CryptoError.invalidLength(what: .x25519PrivateKey, expected: 32, got: 33)) {
            try X25519PrivateKey(secret: try SecretBytes(count: 33))
        }
    }
}
