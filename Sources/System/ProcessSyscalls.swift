// The process: its hardening, signals, children, clocks and identity.
// C types (sigset_t, posix_spawn attributes, tm) stay in this file.
import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// How a child ended.
public enum Termination: Equatable, Sendable {
    case exited(Int32)
    case signaled(Int32)

    init(status: Int32) {
        self = csystem_exited(status) != 0 ? .exited(csystem_exit_status(status)) : .signaled(csystem_term_signal(status))
    }
}

/// Broken-down local time, for dates shown to people.
public struct LocalTime: Sendable {
    public let year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
}

extension Syscall {
    // MARK: Identity and clocks

    public static var processID: Int32 { getpid() }
    public static var userID: UInt32 { getuid() }
    public static var groupID: UInt32 { getgid() }

    /// The login name of user `uid` (getpwuid_r); nil if it has none.
    public static func userName(of uid: UInt32) -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = buffer.count
        return buffer.withUnsafeMutableBufferPointer { b -> String? in
            guard let base = b.baseAddress, getpwuid_r(uid_t(uid), &entry, base, count, &found) == 0, found != nil,
                  let name = entry.pw_name else { return nil }
            return String(validatingCString: name)
        }
    }

    /// Unix seconds, now: CLOCK_REALTIME, never earlier than the timestamp
    /// of a file written before the call. time(2) returns the seconds of
    /// the clock's last tick, which can trail the kernel's file timestamps
    /// (fine-grained since Linux 6.13) by up to a tick: a file written just
    /// before a second ended then looked a second in the future (54 files
    /// of 15,205 here), and a grace counted from it one second short.
    public static func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec)
    }

    /// Seconds on CLOCK_MONOTONIC, for durations.
    public static func monotonicSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Seconds on CLOCK_BOOTTIME, which, unlike CLOCK_MONOTONIC, goes on
    /// while the machine sleeps: an agent told to end in 15 minutes must
    /// not wake from a night's suspend with 15 minutes still to go.
    public static func bootSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_BOOTTIME, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// `unix` in the local time zone (localtime_r); nil if it has no such date.
    public static func localTime(_ unix: Int64) -> LocalTime? {
        var t = time_t(unix)
        var parts = tm()
        guard localtime_r(&t, &parts) != nil else { return nil }
        return LocalTime(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                         hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// The Unix time of a local wall-clock time (mktime, daylight saving
    /// time decided by the zone); nil if out of range.
    public static func unixTime(localYear year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64? {
        guard let y = Int32(exactly: year - 1900) else { return nil }
        var parts = tm()
        (parts.tm_year, parts.tm_mon, parts.tm_mday) = (y, Int32(month - 1), Int32(day))
        (parts.tm_hour, parts.tm_min, parts.tm_sec, parts.tm_isdst) = (Int32(hour), Int32(minute), Int32(second), -1)
        let t = mktime(&parts)
        return t == -1 && !(year == 1969 && month == 12 && day == 31) ? nil : Int64(t)
    }

    /// This process's peak resident memory in KiB (getrusage ru_maxrss).
    public static var peakResidentKiB: Int {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return u.ru_maxrss
    }

    /// Physical memory in bytes (sysconf).
    public static var physicalMemory: UInt64 {
        UInt64(max(0, sysconf(Int32(_SC_PHYS_PAGES)))) * UInt64(max(0, sysconf(Int32(_SC_PAGESIZE))))
    }

    /// Field 22 of /proc/PID/stat: the process's start time in clock ticks
    /// since boot, which with the pid names a process for good (a reused
    /// pid has another start time). nil if there is no such process, or it
    /// has ended and not yet been reaped; nil too if /proc cannot be read
    /// (for this process's own start time, which names its scratch files,
    /// that is an error the caller throws). Whether another process still
    /// runs is `processRuns`, which reads a /proc it cannot read otherwise.
    public static func startTime(of pid: Int32) -> UInt64? {
        (try? readStartTime(of: pid)) ?? nil
    }

    /// Whether process `pid`, started at `start` (`startTime`), still runs.
    /// Only the kernel's word says no: no such process, another start time
    /// (the pid was reused), or a zombie. A /proc that cannot be read
    /// (EACCES under hidepid, no descriptor left) says yes: the callers
    /// erase what a process that is gone left behind, and must never erase
    /// a running one's on a guess.
    public static func processRuns(_ pid: Int32, since start: UInt64) -> Bool {
        do { return try readStartTime(of: pid) == start } catch { return true }
    }

    /// `startTime`, with "no such process" (nil) told apart from a failure
    /// to read /proc (thrown).
    static func readStartTime(of pid: Int32) throws -> UInt64? {
        // /proc files report a size of 0: read to the end, not by size.
        let fd: Int32
        do { fd = try open("/proc/\(pid)/stat") } catch let error as SystemError where error.errno == .noSuchFile {
            return nil
        }
        defer { close(fd) }
        var raw = [UInt8](repeating: 0, count: 4096)
        let n: Int
        // ESRCH: the process ended between the open and the read.
        do { n = try readFully(fd, into: &raw) } catch let error as SystemError where error.errno == .noSuchProcess {
            return nil
        }
        let text = String(decoding: raw[..<n], as: UTF8.self)
        // The command name (field 2) may hold spaces; fields resume after its ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let rest = text[text.index(after: close)...].split(separator: " ")
        // A zombie (state Z, or X while it goes) has ended: whoever owns
        // its leftovers may erase them. In a container whose init does not
        // reap, a SIGKILLed vault can stay a zombie for good.
        guard rest.count > 19, rest[0] != "Z", rest[0] != "X" else { return nil }
        return UInt64(rest[19])
    }

    /// This process's environment, read from `environ` as getenv reads it:
    /// a name given twice has its first value; an entry without `=`, or
    /// with nothing before it, is no variable. (Foundation's ProcessInfo
    /// made the same dictionary behind its own locks and bridging, 6 % of
    /// every command's start: issue 45.)
    public static func environment() -> [String: String] { environment(environ) }

    /// The variables of a NULL-terminated `environ`-shaped array.
    static func environment(_ entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> [String: String] {
        var out: [String: String] = [:]
        var i = 0
        while let entry = entries[i] {
            i += 1
            guard let equals = strchr(entry, 0x3D), equals != entry else { continue }
            let name = String(decoding: UnsafeRawBufferPointer(start: entry, count: entry.distance(to: equals)), as: UTF8.self)
            if out[name] == nil { out[name] = String(cString: equals + 1) }
        }
        return out
    }

    // MARK: Hardening

    /// The corresponding C function is `umask`.
    public static func setUmask(_ mask: UInt16) { _ = umask(mode_t(mask)) }

    /// setrlimit(RLIMIT_CORE, 0): no core file can hold a key or password.
    public static func disableCoreDumps() -> Bool {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        return setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0
    }

    /// prctl(PR_SET_DUMPABLE, 0): also stops core dumps piped to a handler
    /// (which ignore RLIMIT_CORE) and ptrace attach by other processes of the
    /// same user.
    public static func setNotDumpable() -> Bool { csystem_set_not_dumpable() == 0 }

    /// The name ps, pgrep and top show for this process (at most 15 bytes).
    public static func setProcessName(_ name: String) { _ = csystem_set_process_name(name) }

    /// The signals of a crash. The Swift runtime's backtracer catches them and
    /// prints registers and raw memory to stderr, which may hold keys or
    /// passwords; the default action ends the process without a word (and,
    /// with core dumps off, without a file).
    public static func restoreDefaultCrashSignals() -> Bool {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&action.sa_mask)
        return [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT].allSatisfy { sigaction($0, &action, nil) == 0 }
    }

    /// exit(3): the normal end of the process.
    public static func exit(_ code: Int32) -> Never { Glibc.exit(code) }

    /// _exit(2): no atexit handlers, for leaving from the interrupt thread
    /// while other threads may still be running.
    public static func exitImmediately(_ code: Int32) -> Never { Glibc._exit(code) }

    // MARK: Signals

    /// The signals that mean "stop now": Ctrl-C, kill, hang-up.
    public static let interruptSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Whether `signal` was ignored when we started (`cmd &` in a script
    /// ignores SIGINT); such a disposition is respected.
    public static func isIgnored(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// Ends the process by `signal` with its default action, after the
    /// caller has cleaned up: the shell then sees "killed by SIGINT" and a
    /// loop or a `;` chain stops, as it does for `sleep` or `cp` (a plain
    /// exit 130 lets bash run the next command). Unblocked in this thread
    /// and raised at it; `_exit(128 + signal)` only if the kernel refused.
    public static func dieBySignal(_ signal: Int32) -> Never {
        _ = Glibc.signal(signal, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
        _ = Glibc.raise(signal)
        Glibc._exit(128 + signal)
    }

    /// SIGPIPE ignored: writing to a closed pipe returns EPIPE, which we
    /// report and clean up after, instead of dying silently mid-operation.
    public static func ignoreBrokenPipe() { _ = signal(SIGPIPE, SIG_IGN) }

    /// Blocks `signals` in this thread and, by inheritance, in every thread it
    /// starts later; `waitForSignal` then receives them synchronously.
    public static func blockSignals(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// sigwait(3) on `signals` (which must be blocked); returns the one received.
    public static func waitForSignal(_ signals: [Int32]) -> Int32 {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }

    /// Points standard input, output and error at /dev/null: for a process
    /// that goes on after whoever gave it those descriptors is done.
    public static func detachStandardStreams() {
        let null = Glibc.open("/dev/null", O_RDWR)
        guard null >= 0 else { return }
        for fd: Int32 in 0...2 { _ = dup2(null, fd) }
        if null > 2 { _ = Glibc.close(null) }
    }

    /// SIGTERM to `pid`.
    public static func terminate(_ pid: Int32) { _ = kill(pid, SIGTERM) }

    // MARK: Children

    /// What every child gets: an empty signal mask and the default SIGPIPE
    /// action, undoing what the interrupt handling and `ignoreBrokenPipe`
    /// did here (the interrupt signals keep their disposition; only the mask
    /// changed). Returns the spawn flags that make the attributes count.
    static func childSignals(_ attributes: inout posix_spawnattr_t) -> Int32 {
        var empty = sigset_t(), defaults = sigset_t()
        sigemptyset(&empty)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        return POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
    }

    /// Runs `/bin/sh -c command` with its standard output on a new pipe and
    /// everything else inherited; returns the pid and the pipe's read end.
    public static func spawnShell(_ command: String) throws -> (pid: Int32, output: Int32) {
        var fds: [Int32] = [-1, -1]
        _ = try retrying(.pipe) { csystem_pipe_cloexec(&fds) }
        do {
            let pid = try spawnShell(command, arguments: [], directory: nil, stdout: fds[1])
            close(fds[1])
            return (pid, fds[0])
        } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
    }

    /// Runs `/bin/sh -c command sh arguments...` (so the command sees the
    /// arguments as "$@", the way editors are run), in `directory` if given,
    /// with the terminal inherited, or standard output on `stdout` if given.
    /// The child gets an empty signal mask and the default SIGPIPE action,
    /// undoing what the interrupt handling and `ignoreBrokenPipe` did here.
    public static func spawnShell(_ command: String, arguments: [String], directory: String?,
                                  stdout: Int32? = nil) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdout { posix_spawn_file_actions_adddup2(&actions, stdout, 1) }  // dup2 clears close-on-exec on fd 1
        if let directory { _ = csystem_spawn_addchdir(&actions, directory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(childSignals(&attributes)))

        let script = arguments.isEmpty ? command : command + " \"$@\""
        let argv = ["/bin/sh", "-c", script, "sh"] + arguments
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &cargs, environ)
        guard rc == 0 else { throw SystemError(operation: .posix_spawn, path: "/bin/sh", errno: Errno(rawValue: rc)) }
        return pid
    }

    public static func wait(_ pid: Int32) throws -> Termination {
        var status: Int32 = 0
        _ = try retrying(.waitpid) { waitpid(pid, &status, 0) }
        return Termination(status: status)
    }

    /// Reads child `pid`'s output from `fd` into `buffer` until the child has
    /// exited and what it wrote is read, or the pipe ends, or `buffer` is
    /// full. Not until end of file alone: a background process the command
    /// started (`echo pw; sleep 100 &`) inherits the pipe and would hold it
    /// open long after the command is done. Returns the bytes read and, if
    /// the child was seen to exit, how it ended (else the caller waits).
    public static func readOutput(of pid: Int32, from fd: Int32,
                                  into buffer: UnsafeMutableRawBufferPointer) throws -> (Int, Termination?) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var count = 0
        var ended: Termination?
        while true {
            while count < buffer.count {
                let n = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
                if n > 0 { count += n; continue }
                if n == 0 { return (count, ended) }
                let e = Errno.current
                if e == .interrupted { continue }
                if e == .wouldBlock { break }
                throw SystemError(operation: .read, errno: e)
            }
            if count == buffer.count || ended != nil { return (count, ended) }
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                ended = Termination(status: status)   // one more pass drains what it wrote before exiting
            } else if r == -1 && Errno.current != .interrupted {
                throw SystemError(operation: .waitpid, errno: .current)
            } else {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, 100)
            }
        }
    }
}
