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
    /// `killGroup` ends it and everything it started.
    public static func spawn(_ program: String, arguments: [String], stdout: Int32, stderr: Int32,
                             environment: [String: String?] = [:], newProcessGroup: Bool = false) throws -> Int32 {
        let devNull = try open("/dev/null", .readOnly)
        defer { close(devNull) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, devNull, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = childSignals(&attributes)
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
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

        let argv = [program] + arguments
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cenv: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) }; for p in cenv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, program, &actions, &attributes, &cargs, &cenv)
        guard rc == 0 else { throw SystemError(operation: "run", path: program, errno: Errno(rawValue: rc)) }
        return pid
    }

    /// SIGKILL to every process in the group `group` leads.
    public static func killGroup(_ group: Int32) { _ = kill(-group, SIGKILL) }

    /// waitpid with WNOHANG: how the child ended, or nil while it runs.
    public static func exitStatus(_ pid: Int32) throws -> Termination? {
        var status: Int32 = 0
        let r = try retrying("waitpid") { waitpid(pid, &status, WNOHANG) }
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
