import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `vault` binary as a subprocess, as a user or a script
/// would, and captures its exit status, stdout and stderr.
///
/// The binary is `$VAULT_BIN`, else `<package>/.build/debug/vault`, else
/// `<package>/.build/release/vault`. Every child starts in a new session
/// (setsid), so it has no controlling terminal whatever the test runner has:
/// prompts must fail cleanly, and `PTYDriver` is the only way to get a tty.
enum CLIHarness {
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // CLIHarness.swift, VaultCLITests, Tests
        return url.path
    }()

    static let binary: String = {
        if let bin = ProcessInfo.processInfo.environment["VAULT_BIN"], !bin.isEmpty { return bin }
        let debug = packageRoot + "/.build/debug/vault"
        return FileManager.default.isExecutableFile(atPath: debug) ? debug : packageRoot + "/.build/release/vault"
    }()

    struct Result: Sendable {
        /// The exit status, or 128 + the signal that killed the process.
        var status: Int32
        var stdout: [UInt8]
        var stderr: String
        var timedOut = false
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// A minimal environment: nothing of the developer's VAULT_* settings or
    /// terminal leaks into a test. `HOME` should be a per-test directory.
    static func environment(home: String, _ extra: [String: String] = [:]) -> [String: String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return ["PATH": path, "HOME": home, "LANG": "C.UTF-8"].merging(extra) { $1 }
    }

    /// Runs `vault args...` (or `executable args...`) with `stdin` as its
    /// standard input, and kills it after `timeout` seconds.
    static func run(_ args: [String], stdin: [UInt8] = [], environment: [String: String], cwd: String? = nil,
                    timeout: Double = 30, executable: String? = nil) throws -> Result {
        var argv = [executable ?? binary] + args
        if let cwd { argv = ["/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", cwd] + argv }
        let child = try Child(argv: argv, environment: environment)
        return child.communicate(stdin: stdin, timeout: timeout)
    }
}

/// A process with three pipes, spawned with posix_spawn (fork is unsafe in
/// a multithreaded test runner).
private struct Child {
    let pid: pid_t
    let stdinFD: Int32, stdoutFD: Int32, stderrFD: Int32

    struct SpawnError: Error, CustomStringConvertible {
        let path: String, code: Int32
        var description: String { "cannot run \(path): \(String(cString: strerror(code)))" }
    }

    /// Tests run in parallel. A pipe made without close-on-exec in one
    /// thread would leak into a child spawned by another, which then holds
    /// its write end open and the first test never sees end of file. pipe2
    /// is not exported to Swift, so pipe + FD_CLOEXEC happen under this lock,
    /// which every spawn also takes.
    private static let spawnLock = Mutex(())

    init(argv: [String], environment: [String: String]) throws {
        (pid, stdinFD, stdoutFD, stderrFD) = try Self.spawnLock.withLock { _ in try Self.spawn(argv, environment) }
    }

    private static func spawn(_ argv: [String], _ environment: [String: String]) throws -> (pid_t, Int32, Int32, Int32) {
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw SpawnError(path: "pipe", code: errno) }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            pipes.append(fds)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipes[0][0], 0)
        posix_spawn_file_actions_adddup2(&actions, pipes[1][1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 2)
        for fd in pipes.joined() { posix_spawn_file_actions_addclose(&actions, fd) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc), not exported to Swift
        var empty = sigset_t(), defaults = sigset_t()
        sigemptyset(&empty)
        sigfillset(&defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(setsid | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cenv: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer { for p in cargs + cenv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, cargs, cenv)
        for fd in [pipes[0][0], pipes[1][1], pipes[2][1]] { close(fd) }
        guard rc == 0 else {
            for fd in [pipes[0][1], pipes[1][0], pipes[2][0]] { close(fd) }
            throw SpawnError(path: argv[0], code: rc)
        }
        return (pid, pipes[0][1], pipes[1][0], pipes[2][0])
    }

    /// Feeds stdin and drains stdout and stderr together with poll(2), so a
    /// child that fills one pipe while we write the other cannot deadlock.
    func communicate(stdin input: [UInt8], timeout: Double) -> CLIHarness.Result {
        let deadline = Date().addingTimeInterval(timeout)
        var out: [UInt8] = [], err: [UInt8] = []
        var written = 0
        var open: [Int32: Bool] = [stdinFD: true, stdoutFD: true, stderrFD: true]
        if input.isEmpty { close(stdinFD); open[stdinFD] = false }
        var timedOut = false
        var chunk = [UInt8](repeating: 0, count: 65536)
        while open[stdoutFD]! || open[stderrFD]! {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { timedOut = true; break }
            var fds = [stdinFD, stdoutFD, stderrFD].filter { open[$0]! }.map { fd in
                pollfd(fd: fd, events: Int16(fd == stdinFD ? POLLOUT : POLLIN), revents: 0)
            }
            if poll(&fds, nfds_t(fds.count), Int32(min(remaining, 1) * 1000)) <= 0 { continue }
            for p in fds where p.revents != 0 {
                if p.fd == stdinFD {
                    let n = input[written...].withUnsafeBytes { write(stdinFD, $0.baseAddress, $0.count) }
                    if n > 0 { written += n }
                    if n < 0 || written == input.count { close(stdinFD); open[stdinFD] = false }
                } else {
                    let n = chunk.withUnsafeMutableBytes { read(p.fd, $0.baseAddress, $0.count) }
                    if n <= 0 { close(p.fd); open[p.fd] = false; continue }
                    if p.fd == stdoutFD { out += chunk[..<n] } else { err += chunk[..<n] }
                }
            }
        }
        if timedOut { kill(pid, SIGKILL) }
        for (fd, isOpen) in open where isOpen { close(fd) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return CLIHarness.Result(status: code, stdout: out, stderr: String(decoding: err, as: UTF8.self),
                                 timedOut: timedOut)
    }
}

/// A private temporary directory for one test, removed when it goes away.
final class Sandbox {
    let path: String

    init() throws {
        var template = Array("/tmp/vault-cli-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        path = String(cString: made)
        try FileManager.default.createDirectory(atPath: path + "/.run", withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
    }

    deinit {
        Self.detachMounts(under: path)
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A mount test that ends with its mount still up kills vault's process
    /// group, where fusermount3's auto_unmount helper dies too: the dead
    /// mount point ("transport endpoint is not connected") would stay for
    /// good and keep the sandbox from being removed. Detach any left here.
    static func detachMounts(under root: String) {
        guard let table = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return }
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 2, fields[2].hasPrefix("fuse"), fields[1].hasPrefix(root + "/") else { continue }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/fusermount3")
            p.arguments = ["-u", "-z", String(fields[1])]
            try? p.run()
            p.waitUntilExit()
        }
    }

    /// Writes `contents` to `name` in the sandbox (mode 0600) and returns its path.
    @discardableResult
    func file(_ name: String, _ contents: String, mode: Int = 0o600) throws -> String {
        let target = path + "/" + name
        try CLIHarness.writeFile(Array(contents.utf8), to: target, mode: mode)
        return target
    }

    func read(_ name: String) throws -> String { try String(contentsOfFile: path + "/" + name, encoding: .utf8) }

    /// The harness environment with HOME here, and XDG_RUNTIME_DIR too (as
    /// on a systemd machine): `vault open` copies stay in this test's own
    /// directory, never in the /dev/shm base that every vault of this user
    /// shares, where one test's command would erase another's abandoned
    /// copy. `"XDG_RUNTIME_DIR": ""` in `extra` takes it away.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        CLIHarness.environment(home: path, ["XDG_RUNTIME_DIR": path + "/.run"].merging(extra) { $1 })
    }

    func run(_ args: [String], stdin: [UInt8] = [], _ extra: [String: String] = [:]) throws -> CLIHarness.Result {
        try CLIHarness.run(args, stdin: stdin, environment: environment(extra), cwd: path)
    }
}

extension Background {
    /// Waits (up to 20 s) until the process holds open a file of `directory`
    /// that has no name there (O_TMPFILE: /proc shows it "(deleted)"), as a
    /// drop-in's content is until it is whole; false if it never does.
    func waitUntilWritingNameless(in directory: String) -> Bool {
        let started = Date()
        while Date().timeIntervalSince(started) < 20 {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            let writing = fds.contains { fd in
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) ?? ""
                return target.hasPrefix(directory + "/") && target.hasSuffix(" (deleted)")
            }
            if writing { return true }
            usleep(10_000)
        }
        return false
    }
}

extension CLIHarness {
    /// Writes a file with `mode`. An executable is written by a `cp` child,
    /// never through a descriptor of this process: a test that runs one
    /// while another test spawns a long-lived child (a server) would
    /// otherwise find it "text file busy" when that child inherited the
    /// still-open write descriptor, and the shell would run the next `vi`
    /// on PATH instead (seen once, under the whole suite's load).
    static func writeFile(_ bytes: [UInt8], to target: String, mode: Int) throws {
        guard mode & 0o111 != 0 else {
            try Data(bytes).write(to: URL(fileURLWithPath: target))
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target)
            return
        }
        let source = target + ".source-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        defer { try? FileManager.default.removeItem(atPath: source) }
        let cp = try CLIHarness.run(["cp", source, target], environment: ["PATH": "/usr/bin:/bin"], timeout: 30, executable: "/usr/bin/env")
        guard cp.status == 0 else { throw CocoaError(.fileWriteUnknown) }
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target)
    }
}
