// Running a helper program (rclone) with an argument vector, no shell.
// C types (posix_spawn attributes and file actions) stay in this file.
import CSystem
#if canImport(Glibc)
import Glibc
#endif

extension Syscall {
    /// Runs `program` (looked up in PATH, as posix_spawnp does) with
    /// `arguments`, standard input from /dev/null, standard output and error
    /// on the given descriptors, and `environment` changes applied to ours
    /// (a nil value removes the variable). Like `spawnShell`, the child gets
    /// an empty signal mask and the default SIGPIPE action. With
    /// `newProcessGroup` it leads a group of its own, so that
    /// `killGroup` ends it and everything it started. With `newSession` it
    /// leads a session of its own (no controlling terminal, so no SIGHUP
    /// when ours closes) and inherits no descriptor beyond 0, 1 and 2: a
    /// process meant to outlive us (the unlock agent). `stdin` replaces
    /// /dev/null as its standard input. `name` is its argv[0] (default: `program`).
    public static func spawn(_ program: String, name: String? = nil, arguments: [String], stdin: Int32? = nil, stdout: Int32, stderr: Int32,
                             environment: [String: String?] = [:], newProcessGroup: Bool = false,
                             newSession: Bool = false) throws -> Int32 {
        let devNull = try open("/dev/null", .readOnly)
        defer { close(devNull) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin ?? devNull, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        if newSession { _ = csystem_spawn_addclosefrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = childSignals(&attributes)
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        if newSession { flags |= Int32(csystem_spawn_setsid_flag()) }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var env: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let name = String(text.prefix { $0 != "=" })
            if environment[name] == nil { env.append(text) }
            index += 1
        }
        for (name, value) in environment { if let value { env.append(name + "=" + value) } }

        let argv = [name ?? program] + arguments
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cenv: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) }; for p in cenv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, program, &actions, &attributes, &cargs, &cenv)
        guard rc == 0 else { throw SystemError(operation: .run, path: program, errno: Errno(rawValue: rc)) }
        return pid
    }

    /// pipe2(O_CLOEXEC): (read end, write end).
    public static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        _ = try retrying(.pipe) { csystem_pipe_cloexec(&fds) }
        return (fds[0], fds[1])
    }

    /// Reads what `fd` gives until end of file, `limit` bytes, or `seconds`
    /// without anything new: a child's short report on a pipe.
    public static func readReport(_ fd: Int32, limit: Int, seconds: Double) throws -> [UInt8] {
        var out = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 512)
        while out.count < limit {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = try retrying(.poll) { poll(&entry, 1, Int32(seconds * 1000)) }
            if ready == 0 { break }
            let n = try buffer.withUnsafeMutableBytes { b in try retrying(.read) { Glibc.read(fd, b.baseAddress!, b.count) } }
            if n == 0 { break }
            out += buffer[0..<min(n, limit - out.count)]
        }
        return out
    }

    /// SIGKILL to every process in the group `group` leads.
    public static func killGroup(_ group: Int32) { _ = kill(-group, SIGKILL) }

    /// kill(2) of one process (our child): `signal` to `pid`.
    public static func sendSignal(_ signal: Int32, to pid: Int32) { _ = kill(pid, signal) }

    /// waitpid with WNOHANG: how the child ended, or nil while it runs.
    public static func exitStatus(_ pid: Int32) throws -> Termination? {
        var status: Int32 = 0
        let r = try retrying(.waitpid) { waitpid(pid, &status, WNOHANG) }
        return r == pid ? Termination(status: status) : nil
    }
}

extension Syscall {
    /// nanosleep(2) for `seconds`, resumed after signals.
    public static func sleep(_ seconds: Double) {
        var t = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var rest = timespec()
        while nanosleep(&t, &rest) == -1 && errno == EINTR { t = rest }
    }
}
