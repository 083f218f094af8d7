import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `vault init --shared` / `vault share`: another Unix user, made for the
/// test with useradd, can add items and do nothing else.
@Suite(.serialized) struct SharedVaultTests {
    let v: VaultFixture
    let user: String
    let ready: Bool

    init() throws {
        v = try VaultFixture(create: false)
        user = "vt\(UInt32.random(in: 0...UInt32.max))"
        let made = try CLIHarness.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
                                      environment: v.environment(), executable: "/usr/bin/env")
        // Others must reach the sandbox and run the binary.
        let setup = try Self.shell("chmod 0755 . && cp \"$VAULT\" ./vault-bin && chmod 0755 vault-bin && mkdir home-other "
                                   + "&& chown \(user) home-other && printf 'dropped by another user\\n' > note.txt && chmod 0644 note.txt", v)
        ready = getuid() == 0 && made.status == 0 && setup.status == 0
        if !ready { print("skipped the shared-vault tests: need root and useradd (\(made.stderr)\(setup.stderr))") }
    }

    static func shell(_ script: String, _ v: VaultFixture) throws -> CLIHarness.Result {
        try CLIHarness.run(["sh", "-c", script], environment: v.environment(["VAULT": CLIHarness.binary]), cwd: v.path,
                           executable: "/usr/bin/env")
    }

    /// `vault ARGS` as the other user (no password: they have none).
    func asOther(_ args: [String]) throws -> CLIHarness.Result {
        try CLIHarness.run(["runuser", "-u", user, "--", "env", "HOME=\(v.path)/home-other", v.path + "/vault-bin",
                            "--vault", v.dir] + args, environment: v.environment(), cwd: v.path, executable: "/usr/bin/env")
    }

    func asOtherShell(_ script: String) throws -> CLIHarness.Result {
        try CLIHarness.run(["runuser", "-u", user, "--", "sh", "-c", script], environment: v.environment(), cwd: v.path,
                           executable: "/usr/bin/env")
    }

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func anotherUserCanAddAndNothingElse() throws {
        defer { _ = try? CLIHarness.run(["userdel", user], environment: v.environment(), executable: "/usr/bin/env") }
        guard ready else { return }
        // Not shared yet: the other user is refused, nothing is left.
        #expect(try v.run(VaultFixture.cheapInit).status == 0)
        let refused = try asOther(["add", "note.txt"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("permission denied"), "\(refused.stderr)")

        #expect(try v.run(["share"]).status == 0)
        #expect(try mode(v.dir) == 0o711)
        #expect(try mode(v.dir + "/inbox") == 0o1733)
        #expect(try mode(v.dir + "/vault.header") == 0o644)
        // No lock of the owner's is another user's to take (issue 38); items/
        // may be searched for a name they know (their own packs), not listed.
        #expect(!FileManager.default.fileExists(atPath: v.dir + "/drop.lock"))
        #expect(try mode(v.dir + "/items") == 0o711)
        #expect(try mode(v.dir + "/manifest") == 0o600)
        #expect(try v.info()["shared"] as? Bool == true)

        let added = try asOther(["add", "note.txt"])
        #expect(added.status == 0, "\(added.stderr)")
        // A folder, whose index they write beside it (theirs, in the inbox).
        #expect(try Self.shell("mkdir -p album/sub && printf 'in a folder\\n' > album/sub/x.txt && head -c 1100000 /dev/urandom > album/big "
                               + "&& chmod -R a+rX album", v).status == 0)
        let folder = try asOther(["add", "album"])
        #expect(folder.status == 0, "\(folder.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.dir + "/inbox").filter { $0.hasSuffix(".fx") }.count == 1)
        // Nothing else: not list the vault or the inbox, not read the
        // manifest or items, not delete the owner's files.
        for script in ["ls \(v.dir)", "ls \(v.dir)/inbox", "cat \(v.dir)/manifest", "ls \(v.dir)/items",
                       "rm -f \(v.dir)/manifest", "rm -f \(v.dir)/lock", "mv \(v.dir)/vault.header \(v.dir)/inbox/x"] {
            #expect(try asOtherShell(script).status != 0, "\(script) worked for another user")
        }
        #expect(try asOther(["--password-file", "/dev/null", "list"]).status != 0)

        // The owner takes it in: a stored item of the owner's own (copied,
        // not renamed), the inbox empty.
        let listed = try v.listed()
        #expect(listed.map(\.name) == ["album", "note.txt"])
        #expect(try v.get("note.txt").stdoutText == "dropped by another user\n")
        let items = try FileManager.default.contentsOfDirectory(atPath: v.dir + "/items")
        #expect(items.count == 2)
        for item in items {
            let stored = try FileManager.default.attributesOfItem(atPath: v.dir + "/items/" + item)
            #expect((stored[.ownerAccountID] as? NSNumber)?.uint32Value == getuid())
            #expect(try mode(v.dir + "/items/" + item) == 0o600)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.dir + "/inbox") == [])
        // Their index was kept as the vault's own (the owner's file), and it serves.
        let kept = try FileManager.default.contentsOfDirectory(atPath: v.dir + "/indexes")
        #expect(kept.count == 1)
        #expect((try FileManager.default.attributesOfItem(atPath: v.dir + "/indexes/" + kept[0])[.ownerAccountID] as? NSNumber)?.uint32Value == getuid())
        #expect(try v.get("album/sub/x.txt").stdoutText == "in a folder\n")

        // A new password keeps the header readable for droppers.
        let pw2 = try v.sandbox.file("pw2", "a second long password\n")
        #expect(try v.run(["passwd", "--new-password-file", pw2]).status == 0)
        #expect(try mode(v.dir + "/vault.header") == 0o644)
        #expect(try asOther(["add", "--name", "second.txt", "note.txt"]).status == 0)
        #expect(try v.run(["list"], password: pw2).stdoutText.contains("second.txt"))

        // Off again: refused, and the modes are private.
        #expect(try v.run(["share", "--off"]).status == 0)
        #expect(try mode(v.dir) == 0o700)
        #expect(try mode(v.dir + "/inbox") == 0o700)
        #expect(try mode(v.dir + "/vault.header") == 0o600)
        #expect(try mode(v.dir + "/items") == 0o700)
        #expect(try asOther(["add", "--name", "third.txt", "note.txt"]).status == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.dir + "/inbox") == [])
    }

    /// Absorb records who dropped each item in; another user's drop-in never
    /// becomes the current version of the owner's item, and every read of
    /// one says whose it is.
    @Test func anotherUsersDropInsAreMarkedAndKeptApart() throws {
        defer { _ = try? CLIHarness.run(["userdel", user], environment: v.environment(), executable: "/usr/bin/env") }
        guard ready else { return }
        #expect(try v.run(VaultFixture.cheapInit + ["--shared"]).status == 0)
        let mine = try v.write("mine.txt", Array("mine\n".utf8))
        #expect(try v.add(["add", "--name", "notes.txt", mine]).status == 0)
        #expect(try v.run(["list"]).status == 0)   // the owner's notes.txt is stored
        // The other user drops under the owner's name, and twice under a new one.
        #expect(try asOther(["add", "--name", "notes.txt", "note.txt"]).status == 0)
        #expect(try asOther(["add", "--name", "theirs.txt", "note.txt"]).status == 0)
        #expect(try asOther(["add", "--name", "theirs.txt", "note.txt"]).status == 0)

        let listed = try v.run(["list"])
        #expect(listed.status == 0)
        #expect(listed.stderr == "vault: warning: \(user), another user, dropped in 'notes.txt'; it was kept as "
                + "'notes.txt (from \(user))' and your 'notes.txt' is unchanged\n")
        let lines = listed.stdoutText.split(separator: "\n").map(String.init)
        // The ORIGIN column is as wide as "dropped in by USER".
        let gap = String(repeating: " ", count: user.count + 4)
        #expect(lines.first?.contains("ORIGIN\(gap)      VERSIONS  NAME") == true, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("  dropped-in\(gap)         1  notes.txt") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("  dropped in by \(user)         1  notes.txt (from \(user))") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("  dropped in by \(user)         2  theirs.txt") }, "\(lines)")
        let versions = try v.run(["list", "--versions", "theirs.txt"]).stdoutText.split(separator: "\n")
        #expect(versions.filter { $0.hasSuffix("dropped in by \(user)  theirs.txt") }.count == 2, "\(versions)")

        // The owner's own reads as before, silently; the other user's says whose.
        let own = try v.get("notes.txt")
        #expect(own.stdoutText == "mine\n" && own.stderr == "")
        let theirs = try v.get("notes.txt (from \(user))")
        #expect(theirs.stdoutText == "dropped by another user\n")
        #expect(theirs.stderr == "vault: warning: 'notes.txt (from \(user))' (version 1) was dropped in by \(user), another user of this machine\n")
        let out = v.path + "/restored"
        let restored = try v.run(["restore", "theirs.txt", "--to", out])
        #expect(restored.status == 0 && restored.stderr.contains("'theirs.txt' (version 2) was dropped in by \(user)"), "\(restored.stderr)")

        // JSON: uid and name, absent for the owner's own.
        let uid = try #require(UInt32(try CLIHarness.run(["id", "-u", user], environment: v.environment(),
                                                           executable: "/usr/bin/env").stdoutText.dropLast()))
        let json = try JSONSerialization.jsonObject(with: Data(try v.run(["list", "--json"]).stdout)) as? [String: Any]
        let items = (json?["items"] as? [[String: Any]]) ?? []
        let by = Dictionary(uniqueKeysWithValues: items.map { ($0["name"] as? String ?? "", $0["dropped_by"] as? [String: Any]) })
        #expect(by["notes.txt"]! == nil)
        #expect(by["theirs.txt"]??["uid"] as? UInt32 == uid && by["theirs.txt"]??["name"] as? String == user)

        // The reference reader reads the version 4 manifest the same way.
        let reference = try CLIHarness.run(["python3", ReferenceReaderTests.reader, "list", v.dir, v.passwordFile],
                                           environment: v.environment(ReferenceReaderTests.noBytecode), timeout: 60,
                                           executable: "/usr/bin/env")
        #expect(reference.status == 0, "\(reference.stderr)")
        #expect(reference.stdoutText.contains("theirs.txt\t24\tfile\tdropped in by \(user)\n"), "\(reference.stdoutText)")
        #expect(reference.stdoutText.contains("notes.txt\t5\tfile\tdropped-in\n"))
    }

    /// `share` checks every directory above the vault: one that keeps other
    /// users out is named, with the fix; once they can reach it, the command
    /// it prints is the one that works for them. As that other user, `info`
    /// and `list` say what the vault is to them, and ask for no password.
    @Test func shareSaysWhetherOthersCanReachTheVault() throws {
        defer { _ = try? CLIHarness.run(["userdel", user], environment: v.environment(), executable: "/usr/bin/env") }
        guard ready else { return }
        let home = v.path + "/home-owner"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        let dir = home + "/vault"
        func owner(_ args: [String], at vault: String? = nil) throws -> CLIHarness.Result {
            try CLIHarness.run(["--vault", vault ?? dir, "--password-file", v.passwordFile] + args,
                               environment: v.environment(), cwd: v.path)
        }
        #expect(try owner(VaultFixture.cheapInit).status == 0)
        let blocked = try owner(["share"])
        #expect(blocked.status == 1)
        #expect(blocked.stderr == "vault: '\(home)' is 0700: other users cannot reach the vault\n"
                + "hint: run 'chmod o+x \(home)' or move the vault; its own modes are set for sharing\n")
        #expect(try mode(dir) == 0o711 && mode(dir + "/inbox") == 0o1733)
        // init --shared makes the vault, and warns the same way.
        let second = try owner(VaultFixture.cheapInit + ["--shared"], at: home + "/second")
        #expect(second.status == 0 && second.stderr.contains("vault: warning: '\(home)' is 0700: other users cannot reach the vault\n"),
                "\(second.stderr)")

        #expect(chmod(home, 0o711) == 0)
        let shared = try owner(["share"])
        #expect(shared.status == 0)
        #expect(shared.stderr == "vault: shared: other users of this machine can add items, and nothing else\n"
                + "hint: they run: vault --vault \(dir) add FILE\n")
        // Exactly that command, as the other user.
        let added = try asOtherShell("cd \(v.path) && HOME=\(v.path)/home-other ./vault-bin --vault \(dir) add note.txt")
        #expect(added.status == 0, "\(added.stderr)")

        func other(_ args: [String]) throws -> CLIHarness.Result {
            try CLIHarness.run(["runuser", "-u", user, "--", "env", "HOME=\(v.path)/home-other", v.path + "/vault-bin",
                                "--vault", dir] + args, environment: v.environment(), cwd: v.path, executable: "/usr/bin/env")
        }
        let refusal = "vault: this vault is shared with you for adding only\n"
            + "hint: add files with 'vault --vault \(dir) add FILE'; only root can list, read or change it\n"
        for args in [["list"], ["--password-file", "/dev/null", "list"], ["get", "note.txt"], ["info", "--json"]] {
            let r = try other(args)
            #expect(r.status == 1 && r.stderr == refusal && r.stdout.isEmpty, "\(args): \(r.stderr)")
        }
        let info = try other(["info"])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdoutText.contains("shared: this vault is shared with you for adding only\n"))
        #expect(info.stdoutText.contains("public key fingerprint: "))
        // The owner took nothing in meanwhile, and now does.
        #expect(try owner(["list"]).stdoutText.contains("note.txt"))
    }

    @Test func initSharedMakesASharedVault() throws {
        defer { _ = try? CLIHarness.run(["userdel", user], environment: v.environment(), executable: "/usr/bin/env") }
        guard ready else { return }
        let r = try v.run(VaultFixture.cheapInit + ["--shared"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("shared: other users of this machine can add items, and nothing else"))
        #expect(try asOther(["add", "note.txt"]).status == 0)
        #expect(try v.listed().map(\.name) == ["note.txt"])
    }
}
