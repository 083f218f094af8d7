import VaultCrypto

/// The random 256-bit key of one item's content (one per item, per write).
/// Lives in guarded memory; never stored except wrapped in the manifest.
public struct FileKey: Sendable {
    public static let length = 32
    /// Guarded memory holding the key at `offset`: its own 32 bytes, or the
    /// decrypted manifest that holds every file key (one guarded allocation
    /// for 10,000 items, not 10,000: each costs an mmap, mprotect and mlock).
    private let storage: SecretBytes
    private let offset: Int

    public init(secret: SecretBytes) throws {
        guard secret.count == Self.length else { throw VaultError.invalidArgument("file key must be 32 bytes") }
        storage = secret
        offset = 0
    }

    /// The key at `offset` inside `storage`, shared, not copied.
    init(within storage: SecretBytes, at offset: Int) {
        precondition(offset >= 0 && offset + Self.length <= storage.count)
        (self.storage, self.offset) = (storage, offset)
    }

    /// The key on its own (a copy in guarded memory if it is shared).
    public var secret: SecretBytes {
        storage.count == Self.length ? storage : storage.slice(offset..<offset + Self.length)
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + Self.length])) }
    }

    public static func random() -> FileKey { try! FileKey(secret: .random(count: length)) }
}
