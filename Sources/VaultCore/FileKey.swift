import VaultCrypto

/// The random 256-bit key of one item's content (one per item, per write).
/// Lives in guarded memory; never stored except wrapped in the manifest.
public struct FileKey: Sendable {
    public static let length = 32
    public let secret: SecretBytes

    public init(secret: SecretBytes) throws {
        guard secret.count == Self.length else { throw VaultError.invalidArgument("file key must be 32 bytes") }
        self.secret = secret
    }

    public static func random() -> FileKey { try! FileKey(secret: .random(count: length)) }
}
