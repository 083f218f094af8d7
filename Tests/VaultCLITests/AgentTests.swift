import Foundation
import System
import Testing
import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

/// `vault unlock` / `vault lock`: the unlock agent, run for real (the built
/// binary starts it as its own process) and spoken to by the binary's
/// commands. Every test ends its agents, even when it fails.
@Suite struct AgentTests {
    let v: VaultFixture
    /// The agent directory ($XDG_RUNTIME_DIR/vault) of the fixture.
    var agentDirectory: String { v.path + "/.run/vault" }

    init() throws { v = try VaultFixture() }

    /// `vault ARGS` with no password source at all.
    func bare(_ args: [String], _ extra: [String: String] = [:]) throws -> CLIHarness.Result { try v.add(args, extra) }

    func unlock(_ args: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try v.run(["unlock"] + args)
        #expect(r.status == 0, "\(r.stderr)", sourceLocation: sourceLocation)
    }

    func lockAll() { _ = try? bare(["lock", "--all"]) }

    /// The agent's process id, from the socket's peer credentials.
    func agentPID(in directory: String? = nil) throws -> Int32 {
        let dir = directory ?? agentDirectory
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".sock") }
        guard names.count == 1 else { throw Failure("expected one socket in \(dir), found \(names)") }
        let fd = try Syscall.open(dir, .directory)
        defer { Syscall.close(fd) }
        return try UnixConnection.connect(in: fd, names[0]).peerCredentials().process
    }

    /// Whether `pid` still runs: a zombie has ended (whether a parent reaps
    /// it depends on what init is here, not on vault).
    static func running(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z") && !stat[close...].hasPrefix(") X")
    }

    func addNote(_ name: String = "note.txt", _ text: String = "kept safe\n") throws {
        let path = try v.write(name, Array(text.utf8))
        #expect(try bare(["add", path]).status == 0)
    }

    @Test func unlockedCommandsNeedNoPasswordAndLockEndsThat() throws {
        defer { lockAll() }
        try addNote()
        #expect(try bare(["list"]).status == 2)  // no password source: the baseline
        #expect(try bare(["unlock", "--status"]).status == 1)
        try unlock(["--for", "10m"])

        let status = try bare(["unlock", "--status"])
        #expect(status.status == 0)
        #expect(status.stdoutText.hasPrefix("unlocked: locks in "), "\(status.stdoutText)")
        let list = try bare(["list"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdoutText.contains("note.txt"))
        let got = try bare(["get", "note.txt"])
        #expect(got.status == 0 && got.stdoutText == "kept safe\n", "\(got.stderr)")
        let edited = try bare(["open", "note.txt", "--with", "sh -c 'echo more >> \"$1\"' sh"])
        #expect(edited.status == 0, "\(edited.stderr)")
        #expect(try bare(["get", "note.txt"]).stdoutText == "kept safe\nmore\n")

        let info = try bare(["info"])
        #expect(info.stdoutText.contains("unlocked: yes, locks in "), "\(info.stdoutText)")
        let infoJSON = try JSONObject.parse(try bare(["info", "--json"]).stdout)
        #expect((infoJSON["unlocked_seconds_left"] as? Int).map { (500...600).contains($0) } == true)

        let locked = try bare(["lock"])
        #expect(locked.status == 0 && locked.stderr.contains("locked"), "\(locked.stderr)")
        #expect(try bare(["list"]).status == 2)
        #expect(try bare(["unlock", "--status"]).status == 1)
        #expect(try bare(["lock"]).stderr.contains("was not unlocked"))
        #expect(try bare(["info"]).stdoutText.contains("unlocked: no"))
        #expect(try JSONObject.parse(try bare(["info", "--json"]).stdout)["unlocked_seconds_left"] is NSNull)
        // Nothing of the agent is left: no socket, no process.
        #expect(try FileManager.default.contentsOfDirectory(atPath: agentDirectory).filter { $0.hasSuffix(".sock") }.isEmpty)
    }

    /// On a terminal: one prompt at unlock, none after; the agent holds
    /// nothing of the terminal (the driver sees the session end).
    @Test func onATerminalThePasswordIsAskedOnce() throws {
        defer { lockAll() }
        try addNote()
        let env = v.environment()
        let unlocked = try PTYDriver.run(["--vault", v.dir, "unlock"],
                                         steps: [.expect("password: "), .send(v.password + "\n")], environment: env)
        #expect(unlocked.exit == 0 && unlocked.timed_out == false, "\(unlocked.text)")
        #expect(unlocked.text.contains("unlocked for 15 min"), "\(unlocked.text)")
        let listed = try PTYDriver.run(["--vault", v.dir, "list"], steps: [.expect("note.txt")], environment: env)
        #expect(listed.exit == 0 && listed.failed_step == nil, "\(listed.text)")
        #expect(!listed.text.contains("password"), "\(listed.text)")
    }

    @Test func theAgentEndsWhenItsTimeIsUp() throws {
        defer { lockAll() }
        try unlock(["--for", "2s"])
        let pid = try agentPID()
        #expect(try bare(["list"]).status == 0)
        Thread.sleep(forTimeInterval: 3.5)
        #expect(try bare(["list"]).status == 2)
        #expect(try bare(["unlock", "--status"]).status == 1)
        #expect(!Self.running(pid), "the agent process is still there")
    }

    @Test func idleCountsFromTheLastUse() throws {
        defer { lockAll() }
        try unlock(["--for", "4s", "--idle"])
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try bare(["list"]).status == 0)  // a use: 4 more seconds from here
        Thread.sleep(forTimeInterval: 2.5)
        // 5 s after the start: a plain --for 4s agent would be gone.
        let status = try bare(["unlock", "--status"])
        #expect(status.status == 0 && status.stdoutText.contains("without use"), "\(status.stdoutText)")
        Thread.sleep(forTimeInterval: 2.5)
        #expect(try bare(["unlock", "--status"]).status == 1)
    }

    @Test func aKilledAgentLeavesOnlyAStaleSocketThatTheNextCommandRemoves() throws {
        defer { lockAll() }
        try unlock()
        let pid = try agentPID()
        #expect(kill(pid, SIGKILL) == 0)
        for _ in 0..<50 where Self.running(pid) { Thread.sleep(forTimeInterval: 0.05) }
        let socket = try FileManager.default.contentsOfDirectory(atPath: agentDirectory).filter { $0.hasSuffix(".sock") }
        #expect(socket.count == 1, "the killed agent's socket stays until a command looks")
        #expect(try bare(["list"]).status == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: agentDirectory).filter { $0.hasSuffix(".sock") }.isEmpty)
        // And a new agent starts in its place.
        try unlock()
        #expect(try bare(["list"]).status == 0)
    }

    @Test func sigtermEndsTheAgentAndRemovesItsSocket() throws {
        defer { lockAll() }
        try unlock()
        let pid = try agentPID()
        #expect(kill(pid, SIGTERM) == 0)
        for _ in 0..<50 where Self.running(pid) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!Self.running(pid))
        #expect(try FileManager.default.contentsOfDirectory(atPath: agentDirectory).filter { $0.hasSuffix(".sock") }.isEmpty)
    }

    /// Logging out removes $XDG_RUNTIME_DIR: an agent nobody can reach ends.
    @Test func anAgentWhoseSocketIsGoneEnds() throws {
        defer { lockAll() }
        try unlock()
        let pid = try agentPID()
        try FileManager.default.removeItem(atPath: agentDirectory)
        for _ in 0..<160 where Self.running(pid) { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!Self.running(pid), "the agent outlived its socket")
    }

    @Test func twoVaultsHaveAnAgentEach() throws {
        let other = try VaultFixture()
        // Both vaults' agents in one runtime directory, as for one user.
        let shared = ["XDG_RUNTIME_DIR": v.path + "/.run"]
        defer { lockAll() }
        try unlock()
        #expect(try other.run(["unlock"], shared).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: agentDirectory).filter { $0.hasSuffix(".sock") }.count == 2)
        #expect(try other.add(["list"], shared).status == 0)
        #expect(try other.add(["lock"], shared).status == 0)
        #expect(try other.add(["list"], shared).status == 2)
        #expect(try bare(["list"]).status == 0, "locking one vault left the other unlocked")
        #expect(try other.run(["unlock"], shared).status == 0)
        let all = try bare(["lock", "--all"])
        #expect(all.stderr.contains("locked 2 vaults"), "\(all.stderr)")
        #expect(try bare(["list"]).status == 2)
        #expect(try other.add(["list"], shared).status == 2)
    }

    @Test func rekeyEndsTheAgent() throws {
        defer { lockAll() }
        try unlock()
        let r = try v.run(["rekey", "--yes"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("unlock agent held the old key"), "\(r.stderr)")
        #expect(try bare(["unlock", "--status"]).status == 1)
        #expect(try bare(["list"]).status == 2)
    }

    /// A copy of the vault (same id) rekeyed elsewhere: the agent's key does
    /// not open its header, so it is not used there, and is still used here.
    @Test func aKeyThatDoesNotOpenTheHeaderIsNotUsed() throws {
        defer { lockAll() }
        try FileManager.default.copyItem(atPath: v.dir, toPath: v.path + "/copy")
        let copy = ["--vault", v.path + "/copy"]
        // Its own state directory: this machine's rollback memory of the copy
        // would otherwise refuse the original as an older manifest.
        let elsewhere = v.environment(["XDG_STATE_HOME": v.path + "/copy-state"])
        #expect(try CLIHarness.run(copy + ["--password-file", v.passwordFile, "rekey", "--yes"],
                                   environment: elsewhere, cwd: v.path).status == 0)
        try unlock()
        let r = try CLIHarness.run(copy + ["list"], environment: elsewhere, cwd: v.path)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("the unlock agent's key does not open this vault"), "\(r.stderr)")
        #expect(try bare(["list"]).status == 0)
    }

    @Test func aPasswordOnTheCommandLineWinsAndChangingTheLocksNeedsIt() throws {
        defer { lockAll() }
        try unlock()
        let wrong = try v.sandbox.file("wrong", "not the password\n")
        #expect(try v.run(["list"], password: wrong).status == 12, "an explicit password is used, not the agent")
        #expect(try bare(["list"]).status == 0)
        for command in [["passwd"], ["key", "add", "second"], ["key", "remove", "password", "--yes"],
                        ["kit", "export", "-o", v.path + "/kit.txt"], ["rekey", "--yes"], ["upgrade"]] {
            let r = try bare(command)
            #expect(r.status == 2, "\(command) ran on the agent's key: \(r.stderr)")
            let name = command.prefix(command[0] == "key" || command[0] == "kit" ? 2 : 1).joined(separator: " ")
            #expect(r.stderr.hasPrefix("vault: \(name) needs the password: the unlock agent's key is not accepted for it\n"),
                    "\(command): \(r.stderr)")
        }
    }

    /// `move send` erases the vault here once it is sent: on the agent's key
    /// alone, whoever sits at an unlocked terminal could send it away. It
    /// needs the password (or a key file), and says so before it reads the
    /// code or touches the vault.
    @Test func moveSendNeedsThePasswordNotTheAgent() throws {
        defer { lockAll() }
        try addNote()
        try unlock()
        let target = v.path + "/elsewhere"
        let (receiver, _, codeFile) = try MoveCommandTests.receiver(v, into: target, ["--no-verify"])
        defer { receiver.killGroup() }
        let r = try bare(["move", "send", "--code-file", codeFile, "--yes"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr == "vault: move send needs the password: the unlock agent's key is not accepted for it\n"
                + "hint: give --password-file FILE, --password-command CMD or --key-file FILE, or run it on a terminal\n")
        // Nothing was sent or erased: the vault is here, whole, and the agent still serves it.
        #expect(FileManager.default.fileExists(atPath: v.dir + "/vault.header"))
        #expect(try bare(["get", "note.txt"]).stdoutText == "kept safe\n")
        #expect(try bare(["check", "--read-data"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func theAgentHoldsTheKeyOnlyInLockedUndumpableMemory() throws {
        defer { lockAll() }
        try unlock()
        let pid = try agentPID()
        let cmdline = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
        #expect(String(decoding: cmdline, as: UTF8.self) == "vault\0--run-as-unlock-agent\0")
        #expect(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) == "vault\n")
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
        #expect(core?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first == "0", "\(core ?? "")")
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let locked = status.split(separator: "\n").first { $0.hasPrefix("VmLck:") }
        let kib = locked.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        #expect(kib > 0, "no locked memory: \(locked ?? "")")
        // Its standard streams are /dev/null: nothing of the starter's is held.
        for fd in 0...2 {
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) == "/dev/null")
        }
    }

    @Test func aDirectoryOthersCanUseIsRefused() throws {
        try FileManager.default.createDirectory(atPath: agentDirectory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
        let r = try v.run(["unlock"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("group or others may use it"), "\(r.stderr)")
    }

    /// Issue 43, item 8: with no XDG_RUNTIME_DIR (su, cron, ssh without
    /// pam_systemd) unlock falls back as open does: /run/user/UID when it
    /// is this user's, else /dev/shm/vault-UID; and the next command finds
    /// the agent there. Before: "XDG_RUNTIME_DIR is not set", exit 1.
    @Test func noRuntimeDirectoryFallsBackToMemory() throws {
        let env = ["XDG_RUNTIME_DIR": ""]
        let uid = getuid()
        var run = stat()
        let place = stat("/run/user/\(uid)", &run) == 0 && run.st_uid == uid && run.st_mode & 0o077 == 0
            ? "/run/user/\(uid)/vault" : "/dev/shm/vault-agent-\(uid)"
        let r = try v.run(["unlock"], env)
        defer { _ = try? v.run(["lock"], env) }
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: place).contains { $0.hasSuffix(".sock") }, "no socket in \(place)")
        let list = try v.add(["list"], env)
        #expect(list.status == 0, "the agent was not found: \(list.stderr)")
        #expect(try v.run(["lock"], env).status == 0)
    }

    @Test func timesAreReadStrictly() throws {
        for bad in ["15", "m", "0s", "1x", "8d", "-5m", "1h-"] {
            let r = try v.run(["unlock", "--for", bad])
            #expect(r.status == 2, "--for \(bad): \(r.stderr)")
        }
    }

    /// The bytes of docs/FORMAT.md, "Unlock agent", against a running agent.
    @Test func theProtocolIsTheOneFormatDescribes() throws {
        defer { lockAll() }
        try unlock(["--for", "10m"])
        let socket = try FileManager.default.contentsOfDirectory(atPath: agentDirectory).first { $0.hasSuffix(".sock") } ?? "?"
        let idHex = Array(socket.utf8.prefix(32))
        let id = stride(from: 0, to: 32, by: 2).compactMap { UInt8(String(decoding: idHex[$0..<$0 + 2], as: UTF8.self), radix: 16) }
        #expect(id.count == 16 && socket == String(decoding: idHex, as: UTF8.self) + ".sock")
        let fd = try Syscall.open(agentDirectory, .directory)
        defer { Syscall.close(fd) }
        func ask(_ request: [UInt8], expect count: Int) throws -> [UInt8] {
            let c = try UnixConnection.connect(in: fd, socket)
            c.setTimeout(5)
            try request.withUnsafeBytes { try c.send($0) }
            var answer = [UInt8](repeating: 0, count: count + 1)
            let n = try answer.withUnsafeMutableBytes { try c.receive(into: $0) }
            #expect(n == count, "answer of \(n) bytes to \(request.prefix(2)), expected \(count)")
            return Array(answer.prefix(n))
        }
        let now = UInt64(Date().timeIntervalSince1970)
        let status = try ask([0x01, 0x02] + id, expect: 18)
        #expect(status.first == 0x00)
        let left = status[1..<5].reduce(0) { $0 << 8 | Int($1) }
        #expect((590...600).contains(left), "\(left) s left")
        #expect(status[5] == 0x00)
        #expect(status[6..<10].reduce(0) { $0 << 8 | Int($1) } == 600)
        let started = status[10..<18].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(started <= now && now - started < 60)

        #expect(try ask([0x01, 0x09] + id, expect: 1) == [0x02])  // unknown operation
        #expect(try ask([0x02, 0x02] + id, expect: 1) == [0x02])  // unknown version
        var other = id
        other[0] ^= 1
        #expect(try ask([0x01, 0x01] + other, expect: 1) == [0x01])  // another vault's id: no key
        let key = try ask([0x01, 0x01] + id, expect: 33)
        #expect(key.first == 0x00)
        // The 32 bytes are the master key: with it, the header's MAC verifies
        // (the CLI proves it by opening the vault with no password).
        #expect(try bare(["list"]).status == 0)
        #expect(try ask([0x01, 0x03] + id, expect: 1) == [0x00])  // lock
        #expect(try bare(["unlock", "--status"]).status == 1)
    }
}
