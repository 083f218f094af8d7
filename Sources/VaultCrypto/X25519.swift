import Foundation

/// An X25519 public key (32 bytes, RFC 7748). Public keys are not secret.
public struct X25519PublicKey: Equatable, Hashable, Sendable {
    public static let length = 32
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard bytes.count == Self.length else {
            throw CryptoError.invalidLength(what: .x25519PublicKey, expected: Self.length, got: bytes.count)
        }
        self.bytes = bytes
    }
}

/// An X25519 private key held in guarded memory (libsodium).
public final class X25519PrivateKey: Sendable {
    public static let length = 32
    public let secret: SecretBytes
    public let publicKey: X25519PublicKey

    /// A fresh random key pair.
    public convenience init() throws {
        try self.init(secret: SecretBytes.random(count: Self.length))
    }

    public init(secret: SecretBytes) throws {
        guard secret.count == Self.length else {
            throw CryptoError.invalidLength(what: .x25519PrivateKey, expected: Self.length, got: secret.count)
        }
        self.secret = secret
        var pub = [UInt8](repeating: 0, count: Self.length)
        try secret.withUnsafeBytes { s in try pub.withUnsafeMutableBytes { try Sodium.x25519Base(scalar: s, into: $0) } }
        publicKey = try X25519PublicKey(bytes: pub)
    }

    /// X25519(self, peer). Throws `weakSharedSecret` for an all-zero result
    /// (a low-order peer point), as RFC 7748 section 6.1 and RFC 9180 require.
    public func sharedSecret(with peer: X25519PublicKey) throws -> SecretBytes {
        let out = try SecretBytes(count: 32)
        try secret.withUnsafeBytes { s in try peer.bytes.withUnsafeBytes { p in try out.withUnsafeMutableBytes { o in
            try Sodium.x25519(scalar: s, point: p, into: o)
        } } }
        return out
    }

    /// X25519(self, peer) as RFC 7748 section 5 defines it, returning the
    /// all-zero secret of a low-order peer instead of throwing. Only for
    /// X-Wing, which hashes this value together with the ML-KEM secret and
    /// specifies no zero check (draft-connolly-cfrg-xwing-kem section 5.5);
    /// a protocol that relies on X25519 alone must use `sharedSecret(with:)`.
    func unvalidatedSharedSecret(with peer: X25519PublicKey) throws -> SecretBytes {
        let out = try SecretBytes(count: 32)
        secret.withUnsafeBytes { s in peer.bytes.withUnsafeBytes { p in out.withUnsafeMutableBytes { o in
            Sodium.x25519Unchecked(scalar: s, point: p, into: o)
        } } }
        return out
    }
}
