import Foundation
import Testing
import VaultCrypto

/// A damaged version-3 header (docs/FORMAT.md, "Vault header, version 3")
/// through the built binary: exit 14 with its own message, before any
/// password is tried, so the wrong-password delay (`attempts`) is neither
/// consulted nor counted; the same vault opens again with its header put
/// back. And a version-2 vault as earlier versions wrote it (FORMAT.md's
/// hybrid vector) still opens, and `vault upgrade` moves it to version 3.
@Suite struct HeaderDamageTests {
    static let damaged = "vault: the vault header is damaged (its checksum does not match)"

    /// A version-3 header with its checksum recomputed: what an edit made on
    /// purpose looks like (the checksum authenticates nothing).
    static func resummed(_ header: [UInt8]) throws -> [UInt8] {
        let body = Array(header.dropLast(32))
        return body + (try SHA256.hash(Array("vault v3 header checksum".utf8) + body))
    }

    func header(_ v: VaultFixture) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))) }
    func setHeader(_ v: VaultFixture, _ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: v.dir + "/vault.header")) }
    func attempts(_ v: VaultFixture) -> Data? { FileManager.default.contents(atPath: v.dir + "/attempts") }

    @Test func aFlippedSlotByteIsDamageNotAWrongPassword() throws {
        let v = try VaultFixture()
        try v.write("a.txt", Array("alpha".utf8))
        #expect(try v.add(["add", "a.txt"]).status == 0)
        let original = try header(v)
        #expect(original[8] == 4 && original.count == 1425)
        #expect(attempts(v) == nil)

        // Slots start at 1246 (FORMAT.md): byte 1270 is in the password slot's KDF parameters.
        var edited = original
        edited[1270] ^= 0x01
        try setHeader(v, edited)
        let r = try v.run(["list"])
        #expect(r.status == 14, "\(r.stderr)")
        #expect(firstLine(r.stderr) == Self.damaged)
        #expect(r.stderr.contains("hint: restore '\(v.dir)/vault.header' from a backup, or from a remote copy"), "\(r.stderr)")
        #expect(attempts(v) == nil, "damage must not create the attempts file")

        // A wrong password meets the same verdict: nothing is tried, nothing counted.
        let wrong = try v.sandbox.file("wrong", "not the password\n")
        for _ in 0..<3 {
            let w = try v.run(["list"], password: wrong)
            #expect(w.status == 14 && firstLine(w.stderr) == Self.damaged, "\(w.stderr)")
        }
        #expect(attempts(v) == nil)

        // The same vault with its header put back opens, and a wrong password
        // on a version-3 header is still exit 12, counted.
        try setHeader(v, original)
        #expect(try v.listed().map(\.name) == ["a.txt"])
        let w = try v.run(["list"], password: wrong)
        #expect(w.status == 12 && firstLine(w.stderr) == "vault: wrong password", "\(w.stderr)")
        let counted = try #require(attempts(v))
        #expect(counted.count == 24 && counted[15] == 1)

        // Damage now leaves that count as it is.
        try setHeader(v, edited)
        #expect(try v.run(["list"], password: wrong).status == 14)
        #expect(try v.run(["list"]).status == 14)
        #expect(attempts(v) == counted)
        try setHeader(v, original)
        #expect(try v.get("a.txt").stdout == Array("alpha".utf8))
    }

    @Test func aDamagedChecksumOrATruncatedCopyIsDamage() throws {
        let v = try VaultFixture()
        let original = try header(v)
        var checksum = original
        checksum[checksum.count - 1] ^= 0x80
        for bytes in [checksum, Array(original.dropLast(100)), Array(original.dropLast(32)), original + [0]] {
            try setHeader(v, bytes)
            let r = try v.run(["list"])
            #expect(r.status == 14, "\(bytes.count) bytes: \(r.stderr)")
            #expect(firstLine(r.stderr) == Self.damaged, "\(bytes.count) bytes")
            #expect(try v.add(["info"]).status == 14)
        }
        #expect(attempts(v) == nil)
        try setHeader(v, original)
        #expect(try v.run(["list"]).status == 0)
    }

    /// FORMAT.md's version-2 hybrid header with the version-1 vector's
    /// manifest and item: a vault exactly as the code before version 3 wrote it.
    @Test func aVersionTwoVaultOpensAndUpgradesToVersionThree() throws {
        let v = try VaultFixture(create: false)
        for d in ["", "/items", "/inbox"] {
            try FileManager.default.createDirectory(atPath: v.dir + d, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        let hybrid = try Self.published("## Test vector: a hybrid vault")
        let complete = try Self.published("## Test vector: a complete vault")
        let v2 = try #require(hybrid["vault.header"])
        #expect(v2.count == 1385 && v2[8] == 2)
        try setHeader(v, v2)
        try Data(try #require(complete["manifest"])).write(to: URL(fileURLWithPath: v.dir + "/manifest"))
        try Data(try #require(complete["items/707172737475767778797a7b7c7d7e7f"]))
            .write(to: URL(fileURLWithPath: v.dir + "/items/707172737475767778797a7b7c7d7e7f"))
        let password = try v.sandbox.file("vector-password", "correct horse battery staple\n")

        #expect(try v.info()["format_version"] as? Int == 2)
        #expect(try v.add(["info"]).stdoutText.contains("format version: 2; 'vault upgrade' moves it to 4"))
        let got = try v.run(["get", "hello.txt"], password: password)
        #expect(got.status == 0 && got.stdout == Array("hello, vault".utf8), "\(got.stderr)")

        let up = try v.run(["upgrade"], password: password)
        #expect(up.status == 0, "\(up.stderr)")
        #expect(up.stderr.contains("upgraded to format version 4"), "\(up.stderr)")
        let v3 = try header(v)
        #expect(v3.count == 1425 && v3[8] == 4)
        // Every byte from the vault id to the end of the slot is kept; the
        // counter (1) comes next; the MAC is new.
        #expect(Array(v3[9..<(1425 - 72)]) == Array(v2[9..<(1385 - 32)]))
        #expect(Array(v3[(1425 - 72)..<(1425 - 64)]) == [0, 0, 0, 0, 0, 0, 0, 1])
        #expect(try v.info()["format_version"] as? Int == 4)
        #expect(try v.add(["info"]).stdoutText.contains("format version: 4\n"))
        let after = try v.run(["get", "hello.txt"], password: password)
        #expect(after.status == 0 && after.stdout == Array("hello, vault".utf8), "\(after.stderr)")
        // A second upgrade changes nothing.
        let again = try v.run(["upgrade"], password: password)
        #expect(again.status == 0 && again.stderr.contains("already at format version 4"), "\(again.stderr)")
        #expect(try header(v) == v3)
    }

    /// The hex blocks of one FORMAT.md section: a line `name`… ending in ':'
    /// followed by indented hex lines.
    static func published(_ section: String) throws -> [String: [UInt8]] {
        let text = try String(contentsOfFile: CLIHarness.packageRoot + "/docs/FORMAT.md", encoding: .utf8)
        guard let start = text.range(of: section) else { throw Failure("no section \(section)") }
        var hex: [String: String] = [:], current: String?
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { break }
            if line.hasPrefix("       "), let c = current {
                hex[c, default: ""] += line.trimmingCharacters(in: .whitespaces)
            } else if line.hasSuffix(":"), line.hasPrefix("`") {
                current = String(line.dropFirst().prefix { $0 != "`" })
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                current = nil
            }
        }
        return hex.mapValues { h in
            var out: [UInt8] = [], it = h.makeIterator()
            while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16) ?? 0) }
            return out
        }
    }
}
