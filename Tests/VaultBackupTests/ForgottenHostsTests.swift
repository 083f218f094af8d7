import Foundation
import Testing
@testable import VaultBackup
import VaultCore

/// The old machine-local `hosts.forgotten` (docs/FORMAT.md, "Host
/// records"), still read: its names join the ones the next forget keeps in
/// the manifest; any other shape, from a disk that is hostile like every
/// other, reads as no names at all.
@Suite("Forgotten hosts")
struct ForgottenHostsTests {
    static let a = String(repeating: "0a", count: 16), b = String(repeating: "b1", count: 16)

    static func scratch() throws -> String { try scratchDirectory("vault-forgotten") }

    @Test func theOldFilesNamesJoinTheNextForget() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(ForgottenHosts.legacy(vault: dir).isEmpty)
        #expect(try ForgottenHosts.names(hostsOf: [], vaultID: [UInt8](repeating: 0, count: 16), vault: dir).isEmpty)
        try Data("vault forgotten hosts v1\n\(Self.a)\n\(Self.b)\n".utf8).write(to: URL(fileURLWithPath: dir + "/hosts.forgotten"))
        #expect(ForgottenHosts.legacy(vault: dir) == [Self.a, Self.b])
        let names = try ForgottenHosts.names(hostsOf: [], vaultID: [UInt8](repeating: 0, count: 16), vault: dir)
        #expect(names == [[UInt8](repeating: 0x0a, count: 16), [UInt8](repeating: 0xb1, count: 16)])
        ForgottenHosts.removeLegacy(vault: dir)
        #expect(!FileManager.default.fileExists(atPath: dir + "/hosts.forgotten"))
    }

    @Test(arguments: [
        "vault forgotten hosts v2\n\(a)\n",                    // another version
        "vault forgotten hosts v1\n\(a)",                      // no final newline
        "vault forgotten hosts v1\n\(a.uppercased())\n",       // upper case
        "vault forgotten hosts v1\n\(a.dropLast())\n",         // 31 digits
        "vault forgotten hosts v1\n\(a)\n\n",                  // an empty line
        "vault forgotten hosts v1\n\(a)x\n",                   // 33 characters
    ])
    func anyOtherShapeReadsAsNone(_ text: String) throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/hosts.forgotten"))
        #expect(ForgottenHosts.legacy(vault: dir).isEmpty, "\(text.debugDescription)")
    }
}
