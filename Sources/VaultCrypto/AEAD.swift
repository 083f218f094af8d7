import Foundation

/// The AEADs this project uses, all with 96-bit nonces and 128-bit tags.
public enum AEADAlgorithm: Sendable, Equatable {
    case aes128GCM, aes256GCM, chacha20Poly1305

    public var keyLength: Int { self == .aes128GCM ? 16 : 32 }
    public static let nonceLength = 12
    public static let tagLength = 16
}

/// One keyed implementation of an AEAD: libgcrypt's (Gcrypt.swift), or for
/// AES-256-GCM on CPUs where it is faster, libipsec-mb's (IPSecMB.swift).
/// Both give the same bytes; the suite checks each against OpenSSL.
protocol AEADCipher: AnyObject {
    func seal(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
              input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer,
              tag: UnsafeMutableRawBufferPointer) throws
    /// On failure `output` is zeroed and `authenticationFailed` thrown.
    func open(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
              input: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
              output: UnsafeMutableRawBufferPointer) throws
}

/// An AEAD keyed once, sealing and opening under per-call nonces.
/// Sealed output is `ciphertext || tag`. Not thread-safe: give each thread its own.
public final class AEAD {
    public let algorithm: AEADAlgorithm
    private let key: SecretBytes
    /// One keyed cipher for both directions: each message starts afresh.
    private var cipher: (any AEADCipher)?

    public init(_ algorithm: AEADAlgorithm, key: SecretBytes) throws {
        guard key.count == algorithm.keyLength else {
            throw CryptoError.invalidLength(what: .aeadKey, expected: algorithm.keyLength, got: key.count)
        }
        self.algorithm = algorithm
        self.key = key
    }

    /// The keyed cipher, made at first use (internal: the tests ask which).
    func context() throws -> any AEADCipher {
        if let cipher { return cipher }
        let c: any AEADCipher = try key.withUnsafeBytes { k in
            if algorithm == .aes256GCM, let fast = IPSecMB.GCM256Context(key: k) { return fast }
            return try Gcrypt.AEADContext(algorithm, key: k)
        }
        cipher = c
        return c
    }

    private static func checkNonce(_ n: UnsafeRawBufferPointer) throws {
        guard n.count == AEADAlgorithm.nonceLength else {
            throw CryptoError.invalidLength(what: .nonce, expected: AEADAlgorithm.nonceLength, got: n.count)
        }
    }

    /// Seals `plaintext` into `output`, which must hold `plaintext.count + 16` bytes.
    public func seal(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
                     plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws {
        try Self.checkNonce(nonce)
        precondition(output.count == plaintext.count + AEADAlgorithm.tagLength)
        let n = plaintext.count
        try context().seal(nonce: nonce, aad: aad, input: plaintext,
                                           output: UnsafeMutableRawBufferPointer(rebasing: output[..<n]),
                                           tag: UnsafeMutableRawBufferPointer(rebasing: output[n...]))
    }

    /// Opens `sealed` (`ciphertext || tag`) into `output` (`sealed.count - 16`
    /// bytes). Throws `authenticationFailed`, leaving `output` zeroed, if the tag
    /// does not verify.
    public func open(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
                     sealed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws {
        try Self.checkNonce(nonce)
        guard sealed.count >= AEADAlgorithm.tagLength else { throw CryptoError.authenticationFailed }
        let n = sealed.count - AEADAlgorithm.tagLength
        precondition(output.count == n)
        try context().open(nonce: nonce, aad: aad,
                                            input: UnsafeRawBufferPointer(rebasing: sealed[..<n]),
                                            tag: UnsafeRawBufferPointer(rebasing: sealed[n...]),
                                            output: output)
    }

    /// Convenience form: returns `ciphertext || tag`.
    public func seal(nonce: some ContiguousBytes, aad: some ContiguousBytes,
                     plaintext: some ContiguousBytes) throws -> [UInt8] {
        try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in try plaintext.withUnsafeBytes { p in
            var out = [UInt8](repeating: 0, count: p.count + AEADAlgorithm.tagLength)
            try out.withUnsafeMutableBytes { try seal(nonce: n, aad: a, plaintext: p, into: $0) }
            return out
        } } }
    }

    /// Convenience form for non-secret plaintexts.
    public func open(nonce: some ContiguousBytes, aad: some ContiguousBytes,
                     sealed: some ContiguousBytes) throws -> [UInt8] {
        try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in try sealed.withUnsafeBytes { s in
            guard s.count >= AEADAlgorithm.tagLength else { throw CryptoError.authenticationFailed }
            var out = [UInt8](repeating: 0, count: s.count - AEADAlgorithm.tagLength)
            try out.withUnsafeMutableBytes { try open(nonce: n, aad: a, sealed: s, into: $0) }
            return out
        } } }
    }

    /// Opens into guarded memory, for plaintexts that are keys.
    public func openSecret(nonce: some ContiguousBytes, aad: some ContiguousBytes,
                           sealed: some ContiguousBytes) throws -> SecretBytes {
        try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in try sealed.withUnsafeBytes { s in
            guard s.count >= AEADAlgorithm.tagLength else { throw CryptoError.authenticationFailed }
            let out = try SecretBytes(count: s.count - AEADAlgorithm.tagLength)
            try out.withUnsafeMutableBytes { try open(nonce: n, aad: a, sealed: s, into: $0) }
            return out
        } } }
    }
}
