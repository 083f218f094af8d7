import VaultCrypto

/// The random 256-bit key of one item's content (one per item, per write).
/// Lives in guarded memory (a 32-byte slot of `SecretBytes`' arena, so
/// 100,000 of them cost one lock each of 50 regions, not 100,000 mappings);
/// never stored except wrapped in the manifest or a drop-in envelope.
public struct FileKey: Sendable {
    public static let length = 32
    public let secret: SecretBytes

    public init(secret: SecretBytes) throws {
        guard secret.count == Self.length else { throw VaultError.misuse(.fileKeyLength) }
        self.secret = secret
    }

    /// Copies the key at the start of `bytes` (a decrypted manifest entry or envelope).
    init(copying bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count >= Self.length else { throw VaultError.corruptedOrTampered }
        try self.init(secret: SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[..<Self.length])))
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try secret.withUnsafeBytes(body)
    }

    public static func random() throws -> FileKey { try FileKey(secret: .random(count: length)) }

    /// Whether two keys are the same (in constant time).
    public func same(as other: FileKey) -> Bool {
        withUnsafeBytes { a in other.withUnsafeBytes { b in constantTimeEqual(a, b) } }
    }
}
