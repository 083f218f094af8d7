import Foundation
import System
import Testing
import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

/// The unlock agent against another Unix user (made for the test with
/// useradd): the socket's and directory's modes keep them from connecting,
/// and where modes do not stop a process (root's), the peer-credential
/// check does, at both ends.
@Suite(.serialized) struct AgentUserTests {
    let v: VaultFixture
    let user: String
    let ready: Bool
    /// The other user's vault, runtime directory and environment.
    var theirVault: String { v.path + "/their-home/vault" }
    var theirRuntime: String { v.path + "/their-run" }

    init() throws {
        v = try VaultFixture()
        user = "va\(UInt32.random(in: 0...UInt32.max))"
        let made = try CLIHarness.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
                                      environment: v.environment(), executable: "/usr/bin/env")
        let setup = try CLIHarness.run(["sh", "-c", "chmod 0755 . && cp \"$VAULT\" ./vault-bin && chmod 0755 vault-bin "
                                        + "&& mkdir their-home their-run && chown \(user) their-home their-run && chmod 0700 their-run "
                                        + "&& printf 'their password\\n' > their-pw && chown \(user) their-pw && chmod 0600 their-pw"],
                                       environment: v.environment(["VAULT": CLIHarness.binary]), cwd: v.path, executable: "/usr/bin/env")
        ready = getuid() == 0 && made.status == 0 && setup.status == 0
        if !ready { print("skipped the agent user tests: need root and useradd (\(made.stderr)\(setup.stderr))") }
    }

    func cleanUp() {
        _ = try? asThem(["lock", "--all"])
        _ = try? v.add(["lock", "--all"])
        _ = try? CLIHarness.run(["userdel", user], environment: v.environment(), executable: "/usr/bin/env")
    }

    /// `vault ARGS` as the other user, on their vault, with their password file.
    func asThem(_ args: [String]) throws -> CLIHarness.Result {
        try CLIHarness.run(["runuser", "-u", user, "--", "env", "HOME=\(v.path)/their-home", "XDG_RUNTIME_DIR=\(theirRuntime)",
                            "VAULT_ALLOW_WEAK_KDF=1", v.path + "/vault-bin", "--vault", theirVault,
                            "--password-file", v.path + "/their-pw"] + args,
                           environment: v.environment(), cwd: v.path, executable: "/usr/bin/env")
    }

    /// Python, as the other user, connecting to `socket`: prints "connected"
    /// or the error's errno name.
    func connectAsThem(_ socket: String) throws -> String {
        let script = "import socket,errno\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect('\(socket)'); print('connected')\n"
            + "except OSError as e: print(errno.errorcode[e.errno])"
        return try CLIHarness.run(["runuser", "-u", user, "--", "python3", "-c", script], environment: v.environment(),
                                  cwd: v.path, executable: "/usr/bin/env").stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anotherUserCannotReachOurAgent() throws {
        defer { cleanUp() }
        guard ready else { return }
        #expect(try v.run(["unlock"]).status == 0)
        let dir = v.path + "/.run/vault"
        let socket = try FileManager.default.contentsOfDirectory(atPath: dir).first { $0.hasSuffix(".sock") } ?? "?"
        // The sandbox and .run are open to others here; the agent's own
        // directory (0700) is what stops them.
        #expect(chmod(v.path + "/.run", 0o755) == 0)
        #expect(try connectAsThem(dir + "/" + socket) == "EACCES")
        // And with the directory opened up, the socket's own mode (0600).
        #expect(chmod(dir, 0o711) == 0)
        #expect(try connectAsThem(dir + "/" + socket) == "EACCES")
        #expect(chmod(dir, 0o700) == 0)
    }

    @Test func theAgentAnswersNoOtherUserEvenRoot() throws {
        defer { cleanUp() }
        guard ready else { return }
        let made = try asThem(VaultFixture.cheapInit)
        #expect(made.status == 0, "\(made.stderr)")
        let unlocked = try asThem(["unlock"])
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        let dir = theirRuntime + "/vault"
        guard let socket = try FileManager.default.contentsOfDirectory(atPath: dir).first(where: { $0.hasSuffix(".sock") }),
              let id = hex(String(socket.dropLast(5))) else { Issue.record("no socket"); return }

        // Root connects (modes do not stop root) and asks for the key: the
        // agent sees uid 0, not its own, and closes without a byte.
        let fd = try Syscall.open(dir, .directory)
        defer { Syscall.close(fd) }
        let connection = try UnixConnection.connect(in: fd, socket)
        #expect(try connection.peerCredentials().user != 0)
        // The agent may close before the request is even sent (then the send
        // fails with EPIPE); either way not one byte comes back.
        connection.setTimeout(5)
        _ = try? ([1, 1] + id).withUnsafeBytes { try connection.send($0) }
        var answer = [UInt8](repeating: 0, count: 33)
        #expect((try? answer.withUnsafeMutableBytes { try connection.receive(into: $0) }) ?? 0 == 0)

        // Root's own commands: a socket of theirs in a directory of root's
        // (a hard link, as a planted socket would be) is refused by root's
        // side too: the peer is not root.
        let rootRuntime = v.path + "/root-run"
        #expect(mkdir(rootRuntime, 0o700) == 0 && mkdir(rootRuntime + "/vault", 0o700) == 0)
        #expect(link(dir + "/" + socket, rootRuntime + "/vault/" + socket) == 0)
        let r = try CLIHarness.run(["--vault", theirVault, "list"], environment: v.environment(["XDG_RUNTIME_DIR": rootRuntime]),
                                   cwd: v.path)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("served by another user"), "\(r.stderr)")
        // Their own commands use it.
        #expect(try asThem(["unlock", "--status"]).status == 0)
    }

    func hex(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        guard u.count == 32 else { return nil }
        return stride(from: 0, to: 32, by: 2).compactMap { UInt8(String(decoding: u[$0..<$0 + 2], as: UTF8.self), radix: 16) }
    }
}
