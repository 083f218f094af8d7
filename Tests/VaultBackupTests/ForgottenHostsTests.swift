import Foundation
import Testing
@testable import VaultBackup

/// `hosts.forgotten` (docs/FORMAT.md, "Host records"): names added once
/// each and read back in order; any other shape, from a disk that is
/// hostile like every other, reads as no names at all.
@Suite("Forgotten hosts")
struct ForgottenHostsTests {
    static let a = String(repeating: "0a", count: 16), b = String(repeating: "b1", count: 16)

    static func scratch() throws -> String { try scratchDirectory("vault-forgotten") }

    @Test func namesAreKeptOnceEachInOrder() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(ForgottenHosts.read(vault: dir).isEmpty)
        try ForgottenHosts.add(names: [Self.b], vault: dir)
        try ForgottenHosts.add(names: [Self.a, Self.b], vault: dir)
        #expect(ForgottenHosts.read(vault: dir) == [Self.a, Self.b])
        let text = try String(contentsOfFile: dir + "/hosts.forgotten", encoding: .utf8)
        #expect(text == "vault forgotten hosts v1\n\(Self.a)\n\(Self.b)\n")
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
        #expect(ForgottenHosts.read(vault: dir).isEmpty, "\(text.debugDescription)")
    }
}
