import Foundation
import Testing
@testable import VaultCrypto
@testable import VaultCore

/// The key slot names of docs/FORMAT.md ("Vault header, version 2"), read
/// from its `slot-names` block: each `valid` name is taken by a slot and
/// read back from a header, each `invalid` one is refused, and the two
/// names of a `same` line (canonically equivalent, other bytes) cannot
/// both be in one header.
@Suite("Key slot names")
struct KeySlotNameTests {
    typealias V = VaultVectorTests

    /// The block's lines: (kind, names).
    static func published() throws -> [(kind: String, names: [String])] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/FORMAT.md"), encoding: .utf8)
        let start = try #require(text.range(of: "<!-- slot-names -->")), end = try #require(text.range(of: "<!-- end slot-names -->"))
        return try text[start.upperBound..<end.lowerBound].split(separator: "\n").map { line in
            let kind = String(line.drop { $0 == " " }.prefix { $0 != " " })
            let rest = String(line.drop { $0 == " " }.dropFirst(kind.count).drop { $0 == " " })
            switch kind {
            case "valid", "invalid": return (kind, [rest])
            case "same": return (kind, rest.split(separator: " ").map(String.init))
            default: throw VectorLineError(line: String(line))
            }
        }
    }

    struct VectorLineError: Error { let line: String }

    /// A header of the vector vault with a password slot for each name.
    static func header(_ names: [String]) throws -> VaultHeader {
        let master = try MasterKey(secret: V.secret(V.vmk))
        let kek = try KeyEncryptionKey.derive(password: V.secret(Array(V.password.utf8)), salt: V.salt, parameters: V.kdf)
        let slots = try names.map {
            try KeySlot.seal(name: $0, kind: .password(V.kdf, salt: V.salt), created: 1_767_225_600, kek: kek,
                             masterKey: master, vaultID: V.vaultID)
        }
        return try VaultHeader.seal(vaultID: V.vaultID, options: [], masterKey: master, slots: slots)
    }

    @Test func thePublishedNames() throws {
        let lines = try Self.published()
        #expect(lines.filter { $0.kind == "valid" }.count >= 5 && lines.contains { $0.kind == "invalid" } && lines.contains { $0.kind == "same" })
        for (kind, names) in lines {
            switch kind {
            case "valid":
                let parsed = try VaultHeader(parsing: Self.header(names).bytes)
                #expect(parsed.slots.map { Array($0.name.utf8) } == names.map { Array($0.utf8) }, "\(names)")
            case "invalid":
                #expect(throws: (any Error).self, "\(names)") { try KeySlot.checkName(names[0]) }
            default:
                #expect(names.count == 2 && names[0] == names[1] && Array(names[0].utf8) != Array(names[1].utf8), "\(names)")
                for name in names { try KeySlot.checkName(name) }
                #expect(throws: VaultError.corruptedOrTampered, "\(names)") { try Self.header(names) }
            }
        }
    }
}
