import Foundation
import Testing

/// A remote the attacker controls (issue 23): real rclone on a local
/// directory, behind scripts/test/hostile-rclone.py (VAULT_RCLONE), which
/// forges manifest prefixes, serves an older copy to whole reads while
/// listings see the newer one, truncates downloads, fails half-way and
/// answers huge listings. After each, the local vault is byte for byte what
/// it was, or (honest remote) a state that passes `check --read-data` with
/// every item it had.
@Suite("Hostile remotes", .serialized)
struct HostileRemoteTests {
    static let wrapper = CLIHarness.packageRoot + "/scripts/test/hostile-rclone.py"

    /// Every file under `dir` (relative path -> bytes): what "nothing was
    /// changed" is compared against.
    static func snapshot(_ dir: String) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        let fm = FileManager.default
        guard let walker = fm.enumerator(atPath: dir) else { return out }
        for case let rel as String in walker {
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: dir + "/" + rel, isDirectory: &isDir), !isDir.boolValue {
                out[rel] = Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + rel)))
            }
        }
        return out
    }

    static func copyTree(_ from: String, _ to: String) throws {
        try? FileManager.default.removeItem(atPath: to)
        try FileManager.default.copyItem(atPath: from, toPath: to)
    }

    static func hostile(_ modes: String, target: String) -> [String: String] {
        ["VAULT_RCLONE": wrapper, "HOSTILE": modes, "HOSTILE_TARGET": target, "PYTHONDONTWRITEBYTECODE": "1"]
    }

    static func names(_ v: VaultFixture, password: String? = nil) throws -> [String] {
        let r = try v.run(["list", "--json"], password: password)
        #expect(r.status == 0, "\(r.stderr)")
        return try ListedItem.parse(r.stdout).map(\.name).sorted()
    }

    /// A: f1, pushed to a local directory remote (generation 2); B: a clone
    /// of it on another "machine"; `old`: a copy of the remote then; A: f2
    /// and f3, pushed.
    static func twoMachines() throws -> (a: VaultFixture, b: VaultFixture, remote: String, old: String) {
        let a = try VaultFixture()
        let remote = a.path + "/remote", old = a.path + "/remote-old"
        #expect(try a.add(["add", a.write("f1", Array("one".utf8))]).status == 0)
        #expect(try a.run(["list"]).status == 0)
        #expect(try a.run(["remote", "add", "usb", remote]).status == 0)
        let first = try a.run(["push"])
        #expect(first.status == 0, "\(first.stderr)")
        let b = try VaultFixture(password: a.password, create: false)
        let clone = try b.run(["clone", remote, b.dir])
        #expect(clone.status == 0, "\(clone.stderr)")
        try copyTree(remote, old)
        for f in ["f2", "f3"] { #expect(try a.add(["add", a.write(f, Array(f.utf8))]).status == 0) }
        #expect(try names(a) == ["f1", "f2", "f3"])
        #expect(try a.run(["push"]).status == 0)
        return (a, b, remote, old)
    }

    /// Issue 23's repro: the older remote put back, and a short read that
    /// says generation 999. Before, pull installed the older manifest and
    /// said "nothing was changed"; the newer items' keys were gone.
    @Test func aForgedPrefixOverAnOlderManifestChangesNothing() throws {
        let (a, _, remote, old) = try Self.twoMachines()
        try Self.copyTree(old, remote)
        let before = try Self.snapshot(a.dir)
        let r = try a.run(["pull"], Self.hostile("prefix=999", target: remote))
        #expect(r.status == 14, "\(r.stderr)")
        #expect(r.stderr.contains("nothing was changed"), "\(r.stderr)")
        #expect(try Self.snapshot(a.dir) == before)
        // Without the lie: the remote is older than what was pushed there.
        let honest = try a.run(["pull"])
        #expect(honest.status == 14 && honest.stderr.contains("older than one this vault already had"), "\(honest.stderr)")
        #expect(try Self.snapshot(a.dir) == before)
        #expect(try Self.names(a) == ["f1", "f2", "f3"])
    }

    /// B is behind; the remote lies in each way it can while B pulls. B is
    /// unchanged each time, and the honest pull then brings everything.
    @Test func everyLieOfTheRemoteLeavesThePullerUnchanged() throws {
        let (a, b, remote, old) = try Self.twoMachines()
        defer { withExtendedLifetime(a) {} }  // its sandbox holds the remote
        // (lie, exit status, part of the message); nil: whatever rclone says of missing files.
        let cases: [(String, Int32?, String)] = [
            ("old=\(old)", nil, ""), ("prefix=999,old=\(old)", nil, ""), ("truncate", 14, "header"),
            ("fail-midway", 20, "connection reset"), ("biglist=2000", 10, "no vault"),
            ("prefix=0", 14, "announced generation 0"), ("prefix=999", 14, "announced generation 999")]
        for (modes, status, message) in cases {
            let before = try Self.snapshot(b.dir)
            let r = try b.run(["pull"], Self.hostile(modes, target: remote), timeout: 120)
            #expect(r.status != 0 && (status == nil || r.status == status), "\(modes): \(r.status) \(r.stderr)")
            #expect(message.isEmpty || r.stderr.contains(message), "\(modes): \(r.stderr)")
            #expect(try Self.snapshot(b.dir) == before, "\(modes) changed the vault")
        }
        let honest = try b.run(["pull"])
        #expect(honest.status == 0, "\(honest.stderr)")
        #expect(try Self.names(b) == ["f1", "f2", "f3"])
        let check = try b.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)")
    }

    /// `clone` and `check --remote --read-data` through the same lies: the
    /// clone leaves nothing at its directory (nor beside it), the check
    /// reports the copy as bad and changes nothing here.
    @Test func cloneAndCheckThroughEveryLie() throws {
        let (a, b, remote, old) = try Self.twoMachines()
        let parentBefore = try FileManager.default.contentsOfDirectory(atPath: b.path).sorted()
        for modes in ["old=\(old)", "truncate", "fail-midway", "biglist=2000"] {
            let dir = b.path + "/cloned"
            let r = try b.run(["clone", remote, dir], Self.hostile(modes, target: remote), timeout: 120)
            #expect(r.status != 0, "\(modes): clone succeeded")
            #expect(!FileManager.default.fileExists(atPath: dir), "\(modes) left \(dir)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: b.path).sorted() == parentBefore, "\(modes) left files")
            let before = try Self.snapshot(a.dir)
            let check = try a.run(["check", "--remote", "usb", "--read-data"], Self.hostile(modes, target: remote), timeout: 120)
            #expect(check.status != 0, "\(modes): check passed: \(check.stderr)")
            #expect(try Self.snapshot(a.dir) == before, "\(modes): check changed the vault")
        }
        #expect(try a.run(["check", "--remote", "usb", "--read-data"]).status == 0)
    }

    /// A listing of millions of made-up entries is refused while it is read,
    /// with memory bounded by the entry limit, not by the answer's size.
    @Test func aHugeListingIsRefused() throws {
        let (a, _, remote, _) = try Self.twoMachines()
        let before = try Self.snapshot(a.dir)
        let r = try a.run(["push"], Self.hostile("biglist=1500000", target: remote), timeout: 300)
        #expect(r.status == 14 && r.stderr.contains("lists more than"), "\(r.stderr)")
        #expect(try Self.snapshot(a.dir) == before)
    }

    /// Issue 23, defect 2: a password change on A is not undone by B, which
    /// still has the old header, nor by the remote serving the old header.
    @Test func aPasswordChangeIsNeverUndone() throws {
        let (a, b, remote, old) = try Self.twoMachines()
        #expect(try b.run(["pull"]).status == 0)
        let newPassword = try a.sandbox.file("new-password", "the new password after a leak\n")
        let passwd = try a.run(["passwd", "--new-password-file", newPassword])
        #expect(passwd.status == 0, "\(passwd.stderr)")
        #expect(try a.run(["push"], password: newPassword).status == 0)
        let newHeader = try Data(contentsOf: URL(fileURLWithPath: remote + "/vault.header"))

        // B (old header, in step with A's items) adds one and pushes: its header stays home.
        #expect(try b.add(["add", b.write("fb", Array("b".utf8))]).status == 0)
        #expect(try Self.names(b) == ["f1", "f2", "f3", "fb"])
        let push = try b.run(["push"])
        #expect(push.status == 0, "\(push.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: remote + "/vault.header")) == newHeader)

        // A takes B's item; the leaked password still fails on A.
        #expect(try a.run(["pull"], password: newPassword).status == 0)
        #expect(try Self.names(a, password: newPassword) == ["f1", "f2", "f3", "fb"])
        #expect(try a.run(["list"]).status == 12)

        // The remote serves the old header: A keeps its own, and a push puts it back.
        try FileManager.default.removeItem(atPath: remote + "/vault.header")
        try FileManager.default.copyItem(atPath: old + "/vault.header", toPath: remote + "/vault.header")
        let header = try Self.snapshot(a.dir)["vault.header"]
        #expect(try a.run(["pull"], password: newPassword).status == 0)
        #expect(try Self.snapshot(a.dir)["vault.header"] == header)
        #expect(try a.run(["list"]).status == 12)
        #expect(try a.run(["push"], password: newPassword).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: remote + "/vault.header")) == newHeader)

        // B takes the new header: the old password no longer opens B either.
        let bPull = try b.run(["pull"])
        #expect(bPull.status == 0 && bPull.stderr.contains("password was changed on another machine"), "\(bPull.stderr)")
        #expect(try b.run(["list"]).status == 12)
        #expect(try Self.names(b, password: newPassword) == ["f1", "f2", "f3", "fb"])
    }

    /// The same rule on this machine: an older `vault.header` put back in
    /// the vault directory itself (a synced folder, a restored file) is
    /// refused even with the password it holds, and nothing is changed;
    /// `--accept-rollback` opens it on purpose.
    @Test func anOlderHeaderPutBackHereIsRefused() throws {
        let v = try VaultFixture()
        #expect(try v.add(["add", v.write("f", Array("f".utf8))]).status == 0)
        #expect(try v.run(["list"]).status == 0)
        let old = try Data(contentsOf: URL(fileURLWithPath: v.dir + "/vault.header"))
        let newPassword = try v.sandbox.file("new-password", "the new password after a leak\n")
        #expect(try v.run(["passwd", "--new-password-file", newPassword]).status == 0)
        try old.write(to: URL(fileURLWithPath: v.dir + "/vault.header"))
        let before = try Self.snapshot(v.dir)
        let r = try v.run(["list"])
        #expect(r.status == 14 && r.stderr.contains("vault header is older than one seen here before (counter 1, seen 2)"), "\(r.stderr)")
        #expect(try Self.snapshot(v.dir) == before)
        let accepted = try v.run(["--accept-rollback", "list"])
        #expect(accepted.status == 0, "\(accepted.stderr)")
    }

    /// Both machines changed their slots: push refuses (exit 11, nothing
    /// changed on either side); `push --replace-header` chooses, and the
    /// other machine takes it at its next pull.
    @Test func slotsChangedOnBothSidesAreRefusedUntilOneIsChosen() throws {
        let (a, b, remote, _) = try Self.twoMachines()
        #expect(try b.run(["pull"]).status == 0)
        let pa = try a.sandbox.file("pa", "password chosen on machine a\n")
        let pb = try b.sandbox.file("pb", "password chosen on machine b\n")
        #expect(try a.run(["passwd", "--new-password-file", pa]).status == 0)
        #expect(try b.run(["passwd", "--new-password-file", pb]).status == 0)
        #expect(try a.run(["push"], password: pa).status == 0)
        let remoteBefore = try Self.snapshot(remote), bBefore = try Self.snapshot(b.dir)
        let refused = try b.run(["push"], password: pb)
        #expect(refused.status == 11 && refused.stderr.contains("changed their key slots"), "\(refused.stderr)")
        #expect(try Self.snapshot(remote) == remoteBefore && Self.snapshot(b.dir) == bBefore)
        let pulled = try b.run(["pull"], password: pb)
        #expect(pulled.status == 11, "\(pulled.stderr)")
        #expect(try Self.snapshot(b.dir) == bBefore)

        let chosen = try b.run(["push", "--replace-header"], password: pb)
        #expect(chosen.status == 0, "\(chosen.stderr)")
        #expect(try a.run(["pull"], password: pa).status == 0)
        #expect(try Self.names(a, password: pb) == ["f1", "f2", "f3"])
        #expect(try a.run(["list"], password: pa).status == 12)
    }

    /// Defect 4: a plain directory copy of a pushed remote opens, even one
    /// of an empty vault (no items/, no inbox/ on the remote).
    @Test func aPlainCopyOfTheRemoteOpens() throws {
        let v = try VaultFixture()
        let remote = v.path + "/remote"
        #expect(try v.run(["remote", "add", "usb", remote]).status == 0)
        #expect(try v.run(["push"]).status == 0)
        let copy = v.path + "/copy"
        try Self.copyTree(remote, copy)
        let r = try CLIHarness.run(["--vault", copy, "--password-file", v.passwordFile, "list"],
                                   environment: v.environment(), cwd: v.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try v.add(["add", v.write("x", Array("x".utf8))]).status == 0)
        #expect(try v.run(["list"]).status == 0)
        #expect(try v.run(["push"]).status == 0)
        try Self.copyTree(remote, copy)
        let got = try CLIHarness.run(["--vault", copy, "--password-file", v.passwordFile, "get", "x"],
                                     environment: v.environment(), cwd: v.path)
        #expect(got.status == 0 && got.stdout == Array("x".utf8), "\(got.stderr)")
    }

    /// A vault whose path has a colon reaches rclone as a local path, not a
    /// remote named "col".
    @Test func aVaultPathWithAColonIsLocal() throws {
        let v = try VaultFixture(create: false)
        let r0 = try CLIHarness.run(["--vault", "col:on", "--password-file", v.passwordFile] + VaultFixture.cheapInit,
                                    environment: v.environment(), cwd: v.path)
        #expect(r0.status == 0, "\(r0.stderr)")
        let run = { (args: [String]) in
            try CLIHarness.run(["--vault", "col:on", "--password-file", v.passwordFile] + args,
                               environment: v.environment(), cwd: v.path)
        }
        #expect(try run(["add", v.write("x", Array("x".utf8))]).status == 0)
        #expect(try run(["list"]).status == 0)
        #expect(try run(["remote", "add", "usb", v.path + "/remote"]).status == 0)
        let push = try run(["push"])
        #expect(push.status == 0, "\(push.stderr)")
        #expect(FileManager.default.fileExists(atPath: v.path + "/remote/manifest"))
    }

    /// Junk in the remote's inbox (anyone who can write there) is not
    /// copied into ours; the counts say what happened; push then has no
    /// waiting drop-ins to warn about and counts no negative deletions.
    @Test func junkDropInsStayOnTheRemote() throws {
        let (a, _, remote, _) = try Self.twoMachines()
        let sender = try VaultFixture(create: false)
        let sent = try CLIHarness.run(["add", "--to", remote, sender.write("real", Array("real".utf8))],
                                      environment: sender.environment(), cwd: sender.path)
        #expect(sent.status == 0, "\(sent.stderr)")
        let junk = String(repeating: "ab", count: 16)
        try FileManager.default.createDirectory(atPath: remote + "/inbox", withIntermediateDirectories: true)
        try Data(randomBytes(100)).write(to: URL(fileURLWithPath: remote + "/inbox/\(junk).item"))
        try Data(randomBytes(1200)).write(to: URL(fileURLWithPath: remote + "/inbox/\(junk).env"))
        let pull = try a.run(["pull"])
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(pull.stderr.contains("took in 1 drop-in from the inbox of 'usb'"), "\(pull.stderr)")
        #expect(pull.stderr.contains("ignored 1 drop-in"), "\(pull.stderr)")
        #expect(!FileManager.default.fileExists(atPath: a.dir + "/inbox/\(junk).env"))
        let push = try a.run(["push", "--json"])
        #expect(push.status == 0 && !push.stderr.contains("wait in the inbox"), "\(push.stderr)")
        let summary = try JSONObject.parse(push.stdout)
        #expect(summary["deleted"] as? Int == 0 && summary["drop_ins"] as? Int == 1, "\(summary)")
        #expect(try Self.names(a) == ["f1", "f2", "f3", "real"])
    }

    /// `add --to` pins the fingerprint per place, not per spelling: a
    /// swapped header behind another spelling of the same directory is
    /// refused.
    @Test func thePinIsPerPlaceNotPerSpelling() throws {
        let (a, _, remote, _) = try Self.twoMachines()
        let sender = try VaultFixture(create: false)
        let file = try sender.write("s", Array("s".utf8))
        let first = try CLIHarness.run(["add", "--to", remote, file], environment: sender.environment(), cwd: sender.path)
        #expect(first.status == 0, "\(first.stderr)")
        let other = try VaultFixture()
        try FileManager.default.removeItem(atPath: remote + "/vault.header")
        try FileManager.default.copyItem(atPath: other.dir + "/vault.header", toPath: remote + "/vault.header")
        let parent = (remote as NSString).deletingLastPathComponent
        for spelling in [remote, parent + "/./remote", parent + "//remote/", remote + "/."] {
            let r = try CLIHarness.run(["add", "--to", spelling, file], environment: sender.environment(), cwd: sender.path)
            #expect(r.status == 14 && r.stderr.contains("fingerprint"), "\(spelling): \(r.stderr)")
        }
        _ = a
    }
}
