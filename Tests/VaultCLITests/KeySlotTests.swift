import Foundation
import Testing
import VaultCrypto
@testable import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// Key slots, key files, work-factor changes (issue 16) and the move of a
/// version-1 vault to the hybrid header (issue 17), through the CLI.
@Suite("Key slots and upgrades")
struct KeySlotTests {
    static let cheap = ["--kdf-memory", "1", "--kdf-passes", "1"]

    func slotNames(_ v: VaultFixture) throws -> [String] {
        let r = try v.add(["key", "list", "--json"])
        let slots = try JSONObject.parse(r.stdout)["slots"] as? [[String: Any]]
        return slots?.compactMap { $0["name"] as? String } ?? []
    }

    @Test func passwordAndKeyFileSlots() throws {
        let v = try VaultFixture()
        try v.write("a.txt", Array("alpha".utf8))
        #expect(try v.add(["add", "a.txt"]).status == 0)
        let second = try v.sandbox.file("second", "second password\n")

        // A second password slot: both passwords open the vault.
        let add = try v.run(["key", "add", "spouse", "--new-password-file", second] + Self.cheap)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(try slotNames(v) == ["password", "spouse"])
        #expect(try v.run(["get", "a.txt"], password: second).stdout == Array("alpha".utf8))
        #expect(try v.run(["get", "a.txt"]).stdout == Array("alpha".utf8))

        // A generated key file: 64 bytes, 0600, opens the vault with no password source at all.
        let keyFile = v.path + "/laptop.key"
        let kf = try v.run(["key", "add", "laptop", "--new-key-file", keyFile, "--generate"])
        #expect(kf.status == 0, "\(kf.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((attributes[.size] as? NSNumber)?.intValue == 64)
        let viaKey = try v.add(["--key-file", keyFile, "get", "a.txt"])
        #expect(viaKey.status == 0, "\(viaKey.stderr)")
        #expect(viaKey.stdout == Array("alpha".utf8))
        // --generate never overwrites.
        #expect(try v.run(["key", "add", "other", "--new-key-file", keyFile, "--generate"]).status != 0)
        #expect(try slotNames(v) == ["password", "spouse", "laptop"])

        // A wrong key file, a too-short one, and a wrong password are refused.
        let wrongKey = try v.write("wrong.key", randomBytes(64), mode: 0o600)
        let wrong = try v.add(["--key-file", wrongKey, "list"])
        #expect(wrong.status == 12)
        #expect(firstLine(wrong.stderr) == "vault: the key file opens none of the vault's key slots")
        #expect(try v.add(["--key-file", v.write("short.key", randomBytes(31)), "list"]).status != 0)
        #expect(try v.run(["list"], password: v.sandbox.file("bad", "nope\n")).status == 12)
        // A key file and a password option together are a usage error.
        #expect(try v.run(["--key-file", keyFile, "list"]).status == 2)

        // --slot tries one slot only: the main password does not open "spouse".
        #expect(try v.run(["--slot", "spouse", "list"]).status == 12)
        #expect(try v.run(["--slot", "nosuch", "list"]).status == 1)
        #expect(try v.run(["--slot", "spouse", "list"], password: second).status == 0)
        // passwd changes the slot it was unlocked through, only that one.
        let third = try v.sandbox.file("third", "third password\n")
        let pw = try v.run(["--slot", "spouse", "passwd", "--new-password-file", third], password: second)
        #expect(pw.status == 0, "\(pw.stderr)")
        #expect(try slotNames(v) == ["password", "spouse", "laptop"])
        #expect(try v.run(["list"], password: second).status == 12)
        #expect(try v.run(["list"], password: third).status == 0)
        #expect(try v.run(["list"]).status == 0)
        #expect(try v.add(["--key-file", keyFile, "--slot", "spouse", "list"]).status == 2)

        // remove: never an unknown or the last slot; a removed password stops working.
        #expect(try v.run(["key", "remove", "nosuch", "--yes"]).status == 2)
        #expect(try v.run(["key", "remove", "spouse", "--yes"]).status == 0)
        #expect(try v.run(["list"], password: third).status == 12)
        #expect(try v.add(["--key-file", keyFile, "key", "remove", "password", "--yes"]).status == 0)
        #expect(try slotNames(v) == ["laptop"])
        let last = try v.add(["--key-file", keyFile, "key", "remove", "laptop", "--yes"])
        #expect(last.status == 1)
        #expect(last.stderr.contains("last key slot"), "\(last.stderr)")
        #expect(try v.add(["--key-file", keyFile, "get", "a.txt"]).stdout == Array("alpha".utf8))
        // Without a terminal and without --yes, remove asks and cannot.
        #expect(try v.add(["--key-file", keyFile, "key", "remove", "laptop"]).status == 2)

        // A kit exported through the key file recovers a vault with no password slot: it gets one.
        let kit = v.path + "/kit.txt", kp = try v.sandbox.file("kp", "kit passphrase 123\n")
        let export = try v.add(["--key-file", keyFile, "kit", "export", "-o", kit, "--passphrase-file", kp] + Self.cheap)
        #expect(export.status == 0, "\(export.stderr)")
        let fresh = try v.sandbox.file("fresh", "fresh password\n")
        let recover = try v.add(["kit", "recover", kit, "--passphrase-file", kp, "--new-password-file", fresh])
        #expect(recover.status == 0, "\(recover.stderr)")
        #expect(try slotNames(v) == ["laptop", "password"])
        #expect(try v.run(["get", "a.txt"], password: fresh).stdout == Array("alpha".utf8))
    }

    @Test func atMostEightSlotsAndNamesAreChecked() throws {
        let v = try VaultFixture()
        for i in 1...7 {
            let f = try v.write("k\(i)", randomBytes(32))
            #expect(try v.run(["key", "add", "k\(i)", "--new-key-file", f]).status == 0)
        }
        let ninth = try v.run(["key", "add", "k8", "--new-key-file", v.write("k8", randomBytes(32))])
        #expect(ninth.status == 1)
        #expect(ninth.stderr.contains("at most 8"), "\(ninth.stderr)")
        #expect(try v.run(["key", "add", "k1", "--new-key-file", v.write("dup", randomBytes(32))]).status == 1)
        #expect(try v.run(["key", "add", "bad name", "--new-key-file", v.write("bn", randomBytes(32))]).status == 2)
        #expect(try slotNames(v).count == 8)
        #expect(try v.run(["list"]).status == 0)
        // The Python reader parses an eight-slot header and finds the password slot among them.
        let py = try CLIHarness.run(["python3", ReferenceReaderTests.reader, "list", v.dir, v.passwordFile],
                                    environment: v.environment(ReferenceReaderTests.noBytecode), timeout: 60,
                                    executable: "/usr/bin/env")
        #expect(py.status == 0, "\(py.stderr)")
    }

    @Test func passwdChangesTheWorkFactor() throws {
        let v = try VaultFixture()
        let same = v.passwordFile
        let r = try v.run(["passwd", "--new-password-file", same, "--kdf-memory", "2", "--kdf-passes", "3"])
        #expect(r.status == 0, "\(r.stderr)")
        let slots = try JSONObject.parse(try v.add(["key", "list", "--json"]).stdout)["slots"] as? [[String: Any]]
        let kdf = slots?.first?["kdf"] as? [String: Any]
        #expect((kdf?["memory_kib"] as? NSNumber)?.intValue == 2048)
        #expect((kdf?["passes"] as? NSNumber)?.intValue == 3)
        #expect(try v.run(["list"]).status == 0)
        #expect(try v.run(["passwd", "--recalibrate", "--kdf-passes", "2"]).status == 2)
        // Above the header bounds: refused before anything is written.
        #expect(try v.run(["passwd", "--new-password-file", same, "--kdf-passes", "17"]).status == 2)
    }

    @Test func rekeyKeepsOnlyTheSlotItWasOpenedWith() throws {
        let v = try VaultFixture()
        let keyFile = try v.write("k", randomBytes(48))
        #expect(try v.run(["key", "add", "kf", "--new-key-file", keyFile]).status == 0)
        let r = try v.run(["rekey", "--yes"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("key slots dropped") && r.stderr.contains("kf"), "\(r.stderr)")
        #expect(try slotNames(v) == ["password"])
        #expect(try v.add(["--key-file", keyFile, "list"]).status == 12)
        #expect(try v.run(["list"]).status == 0)
    }

    /// A vault as earlier versions wrote it (version-1 header, X25519 drop-ins)
    /// opens, takes drop-ins, and `vault upgrade` moves it to version 3 without
    /// re-encrypting: old X25519 envelopes still open after it, new ones are X-Wing.
    @Test func aVersionOneVaultOpensAndUpgrades() throws {
        let v = try VaultFixture(create: false)
        try Self.makeVersionOne(at: v.dir, password: v.password)
        var info = try v.info()
        #expect(info["format_version"] as? Int == 1)
        #expect(info["kem"] as? String == "x25519")
        #expect(try v.add(["info"]).stdoutText.contains("'vault upgrade' moves it to X-Wing"))

        try v.write("old.txt", Array("sealed to X25519".utf8))
        #expect(try v.add(["add", "old.txt"]).status == 0)
        let envelopes = try FileManager.default.contentsOfDirectory(atPath: v.dir + "/inbox").filter { $0.hasSuffix(".env") }
        let old = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/inbox/" + envelopes[0]))
        #expect(envelopes.count == 1 && old[8] == 1 && old[9] == 1)

        let upgrade = try v.run(["upgrade"])
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        #expect(upgrade.stderr.contains("X-Wing"), "\(upgrade.stderr)")
        info = try v.info()
        #expect(info["format_version"] as? Int == 4)
        #expect(info["kem"] as? String == "x-wing")
        #expect(info["waiting_drop_ins"] as? Int == 1)
        // Only the header changed: the manifest is the same file.
        try v.write("new.txt", Array("sealed to X-Wing".utf8))
        #expect(try v.add(["add", "new.txt"]).status == 0)
        let hybrid = try FileManager.default.contentsOfDirectory(atPath: v.dir + "/inbox")
            .filter { $0.hasSuffix(".env") && $0 != envelopes[0] }
        let new = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/inbox/" + hybrid[0]))
        #expect(new[8] == 2 && new[9] == 2 && new.count > 1130)
        // Both drop-ins are absorbed and read back.
        #expect(try v.listed().map(\.name).sorted() == ["new.txt", "old.txt"])
        #expect(try v.get("old.txt").stdout == Array("sealed to X25519".utf8))
        #expect(try v.get("new.txt").stdout == Array("sealed to X-Wing".utf8))
        #expect(try v.run(["check", "--read-data"]).status == 0)
        // A second upgrade changes nothing.
        let header = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))
        #expect(try v.run(["upgrade"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header")) == header)
    }

    @Test func aVersionOneVaultIsUpgradedByItsFirstSlotChange() throws {
        let v = try VaultFixture(create: false)
        try Self.makeVersionOne(at: v.dir, password: v.password)
        let keyFile = try v.write("k", randomBytes(32))
        #expect(try v.run(["key", "add", "kf", "--new-key-file", keyFile]).status == 0)
        #expect(try v.info()["format_version"] as? Int == 4)
        #expect(try slotNames(v) == ["password", "kf"])
        #expect(try v.run(["list"]).status == 0)
        #expect(try v.add(["--key-file", keyFile, "list"]).status == 0)
    }

    /// A FIFO, a device or a directory as a key file is refused before a
    /// byte is read: opening a FIFO with no writer used to block for ever.
    /// (The timeout is only a hang detector; no timing is asserted.)
    @Test func aKeyFileThatIsNotARegularFileIsRefusedAtOnce() throws {
        let v = try VaultFixture()
        let fifo = v.path + "/fifo.key", folder = v.path + "/folder.key"
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        for (path, kind) in [(fifo, "a FIFO (named pipe)"), ("/dev/null", "a character device"), (folder, "a directory")] {
            let message = "vault: key file '\(path)' is \(kind), not a regular file\n"
            let opened = try CLIHarness.run(["--vault", v.dir, "--key-file", path, "list"], environment: v.environment(),
                                            cwd: v.path, timeout: 20)
            #expect(!opened.timedOut && opened.status == 1 && opened.stderr == message, "--key-file \(path): \(opened)")
            let added = try v.run(["key", "add", "other", "--new-key-file", path], timeout: 20)
            #expect(!added.timedOut && added.status == 1 && added.stderr == message, "--new-key-file \(path): \(added)")
        }
        #expect(try slotNames(v) == ["password"])
    }

    /// A key file is as good as the password: group- or world-readable, it
    /// gets the password file's warning, wherever it is read.
    @Test func aKeyFileOthersCanReadIsWarnedAbout() throws {
        let v = try VaultFixture()
        let key = v.path + "/laptop.key"
        #expect(try v.run(["key", "add", "laptop", "--new-key-file", key, "--generate"]).status == 0)
        let quiet = try v.add(["--key-file", key, "list"])
        #expect(quiet.status == 0 && !quiet.stderr.contains("warning"), "\(quiet.stderr)")

        let warning = "vault: warning: key file '\(key)' can be read by other users\nhint: chmod 600 '\(key)'\n"
        for mode in [0o644, 0o640, 0o604] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: key)
            let r = try v.add(["--key-file", key, "list"])
            #expect(r.status == 0 && r.stderr.hasPrefix(warning), "mode \(String(mode, radix: 8)): \(r.stderr)")
        }
        let shared = try v.write("shared.key", randomBytes(32), mode: 0o644)
        let added = try v.run(["key", "add", "shared", "--new-key-file", shared])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stderr.hasPrefix("vault: warning: key file '\(shared)' can be read by other users\nhint: chmod 600 '\(shared)'\n"),
                "\(added.stderr)")
    }

    /// `key list`: a header line and aligned columns (it printed "\x09"
    /// where its tabs were, the whole line escaped at once), each cell
    /// escaped on its own; CREATED as `list` shows dates (local time).
    @Test func keyListIsAnAlignedTable() throws {
        let v = try VaultFixture()
        #expect(try v.run(["key", "add", "laptop", "--new-key-file", v.path + "/laptop.key", "--generate"]).status == 0)
        let second = try v.sandbox.file("second", "second password\n")
        #expect(try v.run(["key", "add", "Zoë", "--new-password-file", second] + Self.cheap).status == 0)
        let slots = try JSONObject.parse(try v.add(["key", "list", "--json"]).stdout)["slots"] as? [[String: Any]] ?? []
        let formatter = DateFormatter()
        (formatter.locale, formatter.timeZone, formatter.dateFormat) = (Locale(identifier: "en_US_POSIX"), TimeZone(identifier: "UTC"), "yyyy-MM-dd HH:mm")
        let created = slots.map { formatter.string(from: Date(timeIntervalSince1970: Double(($0["created"] as? Int) ?? 0))) }
        #expect(created.count == 3)
        guard created.count == 3 else { return }

        let r = try v.add(["key", "list"], ["TZ": "UTC0"])
        #expect(r.status == 0 && r.stderr == "", "\(r.stderr)")
        #expect(r.stdoutText == """
            NAME      KIND      COST                            CREATED
            password  password  argon2id 1 MiB, 1 pass, 1 lane  \(created[0])
            laptop    key file  hkdf-sha256                     \(created[1])
            Zoë       password  argon2id 1 MiB, 1 pass, 1 lane  \(created[2])

            """, "\(r.stdoutText)")
        #expect(!r.stdoutText.contains("\\x09") && !r.stdoutText.contains("\t"))
    }

    /// Writes an empty vault with a version-1 header (Argon2id 1 MiB, 1 pass).
    static func makeVersionOne(at dir: String, password: String) throws {
        for d in ["", "/items", "/inbox"] {
            try FileManager.default.createDirectory(atPath: dir + d, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        let vaultID = SecureRandom.bytes(16), salt = SecureRandom.bytes(16)
        let kdf = try Argon2Parameters(memoryKiB: 1024, passes: 1, lanes: 1)
        var pw = Array(password.utf8)
        let kek = try KeyEncryptionKey.derive(password: SecretBytes(consuming: &pw), salt: salt, parameters: kdf)
        let master = try MasterKey.random()
        let header = try VaultHeader.sealV1(vaultID: vaultID, kdf: kdf, salt: salt, kek: kek, masterKey: master, options: [])
        #expect(header.bytes.count == 182)
        try Data(try Manifest().sealed(key: master.manifestKey(vaultID: vaultID), vaultID: vaultID))
            .write(to: URL(fileURLWithPath: dir + "/manifest"))
        try Data(header.bytes).write(to: URL(fileURLWithPath: dir + "/vault.header"))
    }
    /// A key file that is not there fails before the password is asked for,
    /// with the hint to generate one (issue 29, item 10); nothing changes.
    @Test func keyAddOfAMissingKeyFileFailsBeforeThePassword() throws {
        let v = try VaultFixture()
        let before = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))
        let r = try v.run(["key", "add", "laptop", "--new-key-file", v.path + "/missing.key"], password: v.path + "/no-such-password-file")
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr == "vault: no key file '\(v.path)/missing.key'\nhint: add --generate to write a new key file there\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header")) == before)
    }
}
