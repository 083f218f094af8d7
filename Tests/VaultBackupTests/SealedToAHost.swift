import Testing
import TestSupport
import VaultCore
import VaultCrypto
@testable import VaultBackup

/// What the vectors of the objects sealed to one host's piece key (host
/// records, repack notes; docs/FORMAT.md) are made under: piece key bytes
/// 00 01 … 1f (`key(1)`: 01 … 20, another host's), vault id 40 … 4f.
enum SealedToAHost {
    static let vaultID = (0x40..<0x50).map { UInt8($0) }
    static func key(_ first: UInt8 = 0) throws -> PieceKey {
        var bytes = (0..<32).map { UInt8($0) &+ first }
        return try PieceKey(secret: SecretBytes(consuming: &bytes))
    }

    /// A vector FORMAT.md's `section` publishes: its name and its sealed bytes (`field`).
    static func published(_ section: String, _ field: String) throws -> (name: String, bytes: [UInt8]) {
        let name = try #require(try FormatVectors.assigned("name", section: section))
        let bytes = try #require(try FormatVectors.assigned(field, section: section))
        return (name, try #require(Hex.decode(bytes)))
    }
}
