import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Another local user, a real one made for the test with useradd (issue 38,
/// items 4 to 6): nothing they can open decides whether the owner's
/// commands run; their drop-ins still never seal to a key a rekey left
/// behind; their backups deduplicate; a place they planted in /dev/shm is
/// skipped. The suite runs as root, the vault's owner.
@Suite("Another local user", .serialized)
struct LocalUserTests {
    let v: VaultFixture
    let user: String, victim: String
    let ready: Bool

    init() throws {
        v = try VaultFixture(create: false)
        let tag = UInt32.random(in: 0...UInt32.max)
        (user, victim) = ("vo\(tag)", "vv\(tag)")
        var made = true
        for u in [user, victim] {
            let r = try CLIHarness.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", u],
                                       environment: v.environment(), executable: "/usr/bin/env")
            made = made && r.status == 0
        }
        let setup = try SharedVaultTests.shell("chmod 0755 . && cp \"$VAULT\" ./vault-bin && chmod 0755 vault-bin "
                                               + "&& mkdir home-other home-victim src && chown \(user) home-other src && chown \(victim) home-victim "
                                               + "&& printf 'dropped by another user\\n' > note.txt && chmod 0644 note.txt", v)
        ready = getuid() == 0 && made && setup.status == 0
        if !ready { print("skipped the local-user tests: need root and useradd (\(setup.stderr))") }
    }

    func cleanUp() {
        for u in [user, victim] { _ = try? CLIHarness.run(["userdel", u], environment: v.environment(), executable: "/usr/bin/env") }
    }

    /// `vault --vault DIR ARGS` as the other user, in the sandbox.
    func asOther(_ args: [String], prefix: [String] = [], timeout: Double = 30) throws -> CLIHarness.Result {
        try Self.run(as: user, sandbox: v.path, vault: v.dir, environment: v.environment(), args, prefix: prefix, timeout: timeout)
    }

    /// The same from any thread (plain values only).
    static func run(as user: String, sandbox: String, vault: String, environment: [String: String], _ args: [String],
                    prefix: [String] = [], timeout: Double = 30) throws -> CLIHarness.Result {
        try CLIHarness.run(["runuser", "-u", user, "--", "env", "HOME=\(sandbox)/home-other", "XDG_CACHE_HOME=\(sandbox)/home-other/cache"]
                           + prefix + [sandbox + "/vault-bin", "--vault", vault] + args,
                           environment: environment, cwd: sandbox, timeout: timeout, executable: "/usr/bin/env")
    }

    /// A shell script as the other user.
    func asOtherShell(_ script: String, timeout: Double = 30) throws -> CLIHarness.Result {
        try CLIHarness.run(["runuser", "-u", user, "--", "sh", "-c", script], environment: v.environment(), cwd: v.path,
                           timeout: timeout, executable: "/usr/bin/env")
    }

    /// The other user holds `flock -x` on every file of the vault they can
    /// open (vault.header; drop.lock where a version before issue 38 shared
    /// it 0644), and keeps holding; the owner's add, backup, prune and rekey
    /// all finish. On 4f9261d the add waits for ever (killed after 20 s), and
    /// so do the others.
    @Test func filesAnotherUserCanOpenStallNoneOfTheOwnersCommands() throws {
        defer { cleanUp() }
        guard ready else { return }
        #expect(try v.run(VaultFixture.cheapInit + ["--shared"]).status == 0)
        #expect(try v.add(["add", try v.write("first.txt", Array("first\n".utf8))]).status == 0)
        #expect(FileManager.default.fileExists(atPath: v.dir + "/owner.lock"))
        #expect(try asOtherShell("exec 3<\(v.dir)/owner.lock").status != 0, "another user opened the owner's lock")
        let held = v.path + "/home-other/held"
        let holder = try Background(["--version"], environment: v.environment(), cwd: v.path, prefix: [
            "runuser", "-u", user, "--", "sh", "-c",
            "n=3; for f in \(v.dir)/vault.header \(v.dir)/drop.lock \(v.dir)/owner.lock \(v.dir)/drop.fence; do "
                + "if [ -r \"$f\" ]; then eval \"exec $n<\\\"$f\\\"\" && flock -x $n && n=$((n + 1)); fi; done; "
                + "touch \(held); exec sleep 300; :",
        ])
        defer { holder.killGroup() }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: held), Date() < deadline { usleep(20_000) }
        #expect(FileManager.default.fileExists(atPath: held), "the other user's locks were never taken")

        let add = try v.add(["add", try v.write("second.txt", Array("second\n".utf8))], timeout: 20)
        #expect(add.status == 0 && !add.timedOut, "add: \(add.status) \(add.stderr)")
        try v.write("tree.txt", Array("backed up\n".utf8))
        let backup = try CLIHarness.run(["--vault", v.dir, "backup", v.path + "/tree.txt"],
                                        environment: v.environment(["XDG_CACHE_HOME": v.path + "/cache"]), cwd: v.path, timeout: 20)
        #expect(backup.status == 0 && !backup.timedOut, "backup: \(backup.status) \(backup.stderr)")
        let prune = try v.run(["snapshots", "prune"], timeout: 20)
        #expect(prune.status == 0 && !prune.timedOut, "prune: \(prune.status) \(prune.stderr)")
        let rekey = try v.run(["rekey", "--yes"], timeout: 20)
        #expect(rekey.status == 0 && !rekey.timedOut, "rekey: \(rekey.status) \(rekey.stderr)")
        #expect(try v.listed().map(\.name).sorted() == ["first.txt", "second.txt"])
    }

    /// A rekey holds the drop fence while it takes in the last drop-ins and
    /// switches keys (held there 3 s by strace slowing its syncfs): the other
    /// user's add waits for it, then seals to the new key, and the owner
    /// takes it in. A fence is a file the owner made and holds; the waiting
    /// side only looks at it, so it is no lock anyone else can hold.
    @Test func anotherUsersAddWaitsWhileARekeyDecides() throws {
        defer { cleanUp() }
        guard ready else { return }
        #expect(try v.run(VaultFixture.cheapInit + ["--shared"]).status == 0)
        #expect(try v.add(["add", try v.write("mine.txt", Array("mine\n".utf8))]).status == 0)
        #expect(try v.run(["list"]).status == 0)
        let rekey = try Background(["--vault", v.dir, "--password-file", v.passwordFile, "rekey", "--yes"],
                                   environment: v.environment(), cwd: v.path,
                                   prefix: ["strace", "-f", "-o", "/dev/null", "-e", "trace=syncfs", "-e", "inject=syncfs:delay_enter=3000000"])
        defer { rekey.killGroup() }
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: v.dir + "/drop.fence"), rekey.poll() == nil, Date() < deadline { usleep(10_000) }
        #expect(FileManager.default.fileExists(atPath: v.dir + "/drop.fence"), "no fence while the rekey decided: \(rekey.stderr)")
        let result = Collector<CLIHarness.Result>()
        let (sandbox, vault, environment, user) = (v.path, v.dir, v.environment(), self.user)
        let adding = Thread {
            if let r = try? Self.run(as: user, sandbox: sandbox, vault: vault, environment: environment, ["add", "note.txt"]) { result.append(r) }
        }
        adding.stackSize = 1 << 20
        adding.start()
        usleep(700_000)
        #expect(result.all.isEmpty, "the other user's add landed while the rekey decided")
        #expect(rekey.wait(timeout: 60) == 0, "rekey: \(rekey.stderr)")
        let end = Date().addingTimeInterval(30)
        while result.all.isEmpty, Date() < end { usleep(20_000) }
        #expect(result.all.first?.status == 0, "add: \(result.all.first?.stderr ?? "never finished")")
        #expect(try v.listed().map(\.name).sorted() == ["mine.txt", "note.txt"])
        #expect(try v.get("note.txt").stdoutText == "dropped by another user\n")
    }

    /// The other user's add seals to the key it read, then (slowed by
    /// strace) lands its envelope only after a whole rekey ran: the rekey
    /// could not see it, and its key no longer opens. The add looks again,
    /// finds the key changed, and replaces its envelope with one sealed to
    /// the new key: the owner takes it in, and nothing is left unopened.
    @Test func anotherUsersAddThatLandsAfterARekeyIsSealedAgain() throws {
        defer { cleanUp() }
        guard ready else { return }
        #expect(try v.run(VaultFixture.cheapInit + ["--shared"]).status == 0)
        let result = Collector<CLIHarness.Result>()
        let (sandbox, vault, environment, user) = (v.path, v.dir, v.environment(), self.user)
        let adding = Thread {
            // The second linkat names the envelope (the first, the content).
            if let r = try? Self.run(as: user, sandbox: sandbox, vault: vault, environment: environment, ["add", "note.txt"], prefix: ["strace", "-f", "-o", "/dev/null", "-e", "trace=linkat",
                                                                        "-e", "inject=linkat:delay_enter=3000000:when=2"]) {
                result.append(r)
            }
        }
        adding.stackSize = 1 << 20
        adding.start()
        let deadline = Date().addingTimeInterval(20)
        func waiting() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: v.dir + "/inbox")) ?? []).filter { $0.hasSuffix(".item") } }
        while waiting().isEmpty, result.all.isEmpty, Date() < deadline { usleep(10_000) }
        #expect(!waiting().isEmpty, "the add's content never landed")
        let rekey = try v.run(["rekey", "--yes"], timeout: 20)
        #expect(rekey.status == 0, "rekey: \(rekey.stderr)")
        let end = Date().addingTimeInterval(30)
        while result.all.isEmpty, Date() < end { usleep(20_000) }
        #expect(result.all.first?.status == 0, "add: \(result.all.first?.stderr ?? "never finished")")
        let list = try v.run(["list"])
        #expect(list.status == 0 && !list.stderr.contains("could not be opened"), "\(list.stderr)")
        #expect(try v.get("note.txt").stdoutText == "dropped by another user\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.dir + "/inbox") == [])
    }

    /// Three identical backups by the other user store their data once:
    /// after the owner takes the first in, the other user's cache can still
    /// see that its pack is there (items/ is 0711 in a shared vault, and
    /// permission denied is never read as "gone"). On 4f9261d each stores
    /// all of it again (three packs).
    @Test func anotherUsersBackupsDeduplicate() throws {
        defer { cleanUp() }
        guard ready else { return }
        #expect(try v.run(VaultFixture.cheapInit + ["--shared"]).status == 0)
        let data = v.path + "/src/data.bin"
        try Data(BackupFixture.random(3 << 20, seed: 38)).write(to: URL(fileURLWithPath: data))
        #expect(chmod(data, 0o644) == 0)
        var stored: [Int] = []
        for _ in 0..<3 {
            let r = try asOther(["backup", v.path + "/src", "--json"])
            #expect(r.status == 0, "backup: \(r.stderr)")
            #expect(!r.stderr.contains("permission denied"), "\(r.stderr)")
            stored.append((try? JSONObject.parse(r.stdout))?["pieces_new"] as? Int ?? -1)
            #expect(try v.run(["snapshots"]).status == 0)   // the owner takes it in
        }
        #expect(stored.count == 3 && stored[0] > 0 && stored[1] == 0 && stored[2] == 0, "new pieces per backup: \(stored)")
        let stats = try JSONObject.parse(try v.run(["snapshots", "stats", "--json"]).stdout)
        #expect(stats["packs"] as? Int == 2 && stats["snapshots"] as? Int == 3, "\(stats)")
    }

    /// A symbolic link another user planted at /dev/shm/vault-UID (with no
    /// XDG_RUNTIME_DIR) is skipped, as SECURITY.md says: `open` uses the
    /// next place and saves the edit. On 4f9261d it fails ("refusing
    /// '/dev/shm/vault-UID': a symbolic link ...").
    @Test func aLinkAnotherUserPlantedInDevShmIsSkipped() throws {
        defer { cleanUp() }
        guard ready else { return }
        let uid = try #require(UInt32(try CLIHarness.run(["id", "-u", victim], environment: v.environment(),
                                                          executable: "/usr/bin/env").stdoutText.dropLast()))
        let planted = "/dev/shm/vault-\(uid)"
        defer { unlink(planted) }
        #expect(try asOtherShell("mkdir -p \(v.path)/home-other/trap && ln -s \(v.path)/home-other/trap \(planted)").status == 0)
        let home = v.path + "/home-victim"
        func asVictim(_ args: [String]) throws -> CLIHarness.Result {
            try CLIHarness.run(["runuser", "-u", victim, "--", "env", "-u", "XDG_RUNTIME_DIR", "HOME=\(home)", "VAULT_ALLOW_WEAK_KDF=1",
                                v.path + "/vault-bin", "--vault", home + "/vault", "--password-file", home + "/pw"] + args,
                               environment: v.environment(), cwd: home, executable: "/usr/bin/env")
        }
        #expect(try CLIHarness.run(["runuser", "-u", victim, "--", "sh", "-c", "printf 'a long password\\n' > \(home)/pw && chmod 600 \(home)/pw "
                                    + "&& printf 'draft\\n' > \(home)/note.txt"], environment: v.environment(), executable: "/usr/bin/env").status == 0)
        #expect(try asVictim(VaultFixture.cheapInit).status == 0)
        #expect(try asVictim(["add", home + "/note.txt"]).status == 0)
        let open = try asVictim(["open", "note.txt", "--with", "sed -i s/draft/final/"])
        #expect(open.status == 0, "open: \(open.stderr)")
        #expect(try asVictim(["get", "note.txt"]).stdoutText == "final\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: v.path + "/home-other/trap") == [], "a copy went through the link")
    }
}
