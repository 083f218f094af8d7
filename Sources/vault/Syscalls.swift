// The only file in the `vault` executable that calls libc. Every call that can
// fail with errno goes through `retrying`, which retries EINTR in this one
// place and turns -1/errno into a typed `SystemError`. C types (termios,
// sigset_t, posix_spawn attributes) stay inside this file.
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which one, on which path, and its errno.
struct SystemError: Error, Equatable, Sendable {
    let operation: String
    let path: String?
    let errno: Int32

    /// strerror(3) text, lower-cased to fit the `vault: ...` message style.
    var reason: String { Syscall.describe(errno) }
}

enum Syscall {
    @inline(__always)
    static func retrying<T: BinaryInteger>(_ operation: String, path: String? = nil,
                                           _ body: () -> T) throws(SystemError) -> T {
        while true {
            let r = body()
            if r != -1 { return r }
            let e = errno
            if e == EINTR { continue }
            throw SystemError(operation: operation, path: path, errno: e)
        }
    }

    /// strerror(3), first letter lower-cased ("no such file or directory").
    static func describe(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    static let ENOENT = Glibc.ENOENT
    static let EPIPE = Glibc.EPIPE

    // MARK: Files

    /// The corresponding C function is `open`; O_CLOEXEC is always added.
    static func open(_ path: String, readWrite: Bool = false, noControllingTerminal: Bool = false) throws(SystemError) -> Int32 {
        var flags = (readWrite ? O_RDWR : O_RDONLY) | O_CLOEXEC
        if noControllingTerminal { flags |= O_NOCTTY }
        return try retrying("open", path: path) { Glibc.open(path, flags) }
    }

    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// Reads into `buffer` until it is full or end of file; returns the count.
    static func readFully(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, path: String? = nil) throws(SystemError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retrying("read", path: path) { Glibc.read(fd, buffer.baseAddress! + done, buffer.count - done) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// `readFully` into an array, without the array ever being resized.
    static func readFully(_ fd: Int32, into buffer: inout [UInt8], path: String? = nil) throws(SystemError) -> Int {
        var result: Result<Int, SystemError> = .success(0)
        buffer.withUnsafeMutableBytes { raw in
            result = Result { () throws(SystemError) in try readFully(fd, raw, path: path) }
        }
        return try result.get()
    }

    /// One read(2): for a terminal in canonical mode, at most one line.
    static func readSome(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        try retrying("read") { Glibc.read(fd, buffer.baseAddress!, buffer.count) }
    }

    static func writeFully(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemError) {
        var done = 0
        while done < buffer.count {
            done += try retrying("write") { Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done) }
        }
    }

    static func writeFully(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var result: Result<Void, SystemError> = .success(())
        bytes.withUnsafeBytes { raw in result = Result { () throws(SystemError) in try writeFully(fd, raw) } }
        try result.get()
    }

    /// Best-effort text output (prompts, the newline after a prompt).
    static func writeText(_ fd: Int32, _ text: String) {
        try? writeFully(fd, Array(text.utf8))
    }

    /// Permission bits of an open file (st_mode & 0o7777).
    static func permissions(_ fd: Int32, path: String? = nil) throws(SystemError) -> UInt32 {
        var st = stat()
        _ = try retrying("fstat", path: path) { fstat(fd, &st) }
        return UInt32(st.st_mode) & 0o7777
    }

    static func isRegularFile(_ fd: Int32) -> Bool {
        var st = stat()
        return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    // MARK: Process

    /// The corresponding C function is `umask`.
    static func setUmask(_ mask: UInt32) { _ = umask(mode_t(mask)) }

    /// setrlimit(RLIMIT_CORE, 0): no core file can hold a key or password.
    static func disableCoreDumps() -> Bool {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        return setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0
    }

    /// prctl(PR_SET_DUMPABLE, 0): also stops core dumps piped to a handler
    /// (which ignore RLIMIT_CORE) and ptrace attach by other processes of the
    /// same user. prctl is variadic, which Swift cannot import, so it is called
    /// through a fixed-arity pointer; on the Linux ABIs Swift supports, integer
    /// variadic arguments travel in the same registers as fixed ones.
    static func setNotDumpable() -> Bool {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        let PR_SET_DUMPABLE: Int32 = 4  // <linux/prctl.h>, not exported to Swift
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "prctl") else { return false }
        let prctl = unsafeBitCast(symbol, to: Prctl.self)
        return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    }

    /// The signals of a crash. The Swift runtime's backtracer catches them and
    /// prints registers and raw memory to stderr, which may hold keys or
    /// passwords; the default action ends the process without a word (and,
    /// with core dumps off, without a file).
    static func restoreDefaultCrashSignals() -> Bool {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&action.sa_mask)
        return [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT].allSatisfy { sigaction($0, &action, nil) == 0 }
    }

    /// exit(3): the normal end of the process.
    static func exit(_ code: Int32) -> Never { Glibc.exit(code) }

    /// _exit(2): no atexit handlers, for leaving from the interrupt thread
    /// while other threads may still be running.
    static func exitImmediately(_ code: Int32) -> Never { Glibc._exit(code) }

    // MARK: Signals

    /// The signals that mean "stop now": Ctrl-C, kill, hang-up.
    static let interruptSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Whether `signal` was ignored when we started (`cmd &` in a script
    /// ignores SIGINT); such a disposition is respected.
    static func isIgnored(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// SIGPIPE ignored: writing to a closed pipe returns EPIPE, which we
    /// report and clean up after, instead of dying silently mid-operation.
    static func ignoreBrokenPipe() { _ = signal(SIGPIPE, SIG_IGN) }

    /// Blocks `signals` in this thread and, by inheritance, in every thread it
    /// starts later; `waitForSignal` then receives them synchronously.
    static func blockSignals(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// sigwait(3) on `signals` (which must be blocked); returns the one received.
    static func waitForSignal(_ signals: [Int32]) -> Int32 {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }

    // MARK: Terminal

    /// The terminal's mode before we turned echo off, to put back.
    struct TerminalMode: Sendable { fileprivate let saved: termios }

    /// Turns echo off on `fd` and returns the previous mode. TCSAFLUSH drops
    /// anything typed (and echoed) before the prompt. ISIG stays on so Ctrl-C
    /// still interrupts; the interrupt path restores the mode.
    static func disableEcho(_ fd: Int32) throws(SystemError) -> TerminalMode {
        var mode = termios()
        _ = try retrying("tcgetattr") { tcgetattr(fd, &mode) }
        var silent = mode
        silent.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
        _ = try retrying("tcsetattr") { tcsetattr(fd, TCSAFLUSH, &silent) }
        return TerminalMode(saved: mode)
    }

    static func restore(_ fd: Int32, _ mode: TerminalMode) {
        var saved = mode.saved
        _ = tcsetattr(fd, TCSANOW, &saved)
    }

    // MARK: Child processes

    /// Runs `/bin/sh -c command` with its standard output on a new pipe and
    /// everything else inherited; returns the pid and the pipe's read end.
    /// The child gets an empty signal mask and the default SIGPIPE action,
    /// undoing what `Interrupts` and `ignoreBrokenPipe` did to this process.
    static func spawnShell(_ command: String) throws(SystemError) -> (pid: pid_t, output: Int32) {
        var fds: [Int32] = [-1, -1]
        _ = try retrying("pipe") { pipe(&fds) }
        // pipe2(O_CLOEXEC) is not exported to Swift. vault spawns from one
        // thread only, so setting the flag just after cannot race a spawn.
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
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
    static func spawnShell(_ command: String, arguments: [String], directory: String?,
                           stdout: Int32? = nil) throws(SystemError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdout { posix_spawn_file_actions_adddup2(&actions, stdout, 1) }  // dup2 clears close-on-exec on fd 1

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), defaults = sigset_t()
        sigemptyset(&empty)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)  // the interrupt signals keep their disposition; only the mask changed
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // posix_spawn_file_actions_addchdir_np is not exported to Swift: the
        // shell changes directory itself, with the directory as "$1".
        // The arguments follow the command as "$@" ("$EDITOR" FILE).
        let script = arguments.isEmpty ? command : command + " \"$@\""
        let argv = directory.map { ["/bin/sh", "-c", "cd -- \"$1\" || exit 127; shift; " + script, "sh", $0] }
            ?? ["/bin/sh", "-c", script, "sh"]
        let fullArgv = argv + arguments
        var cargs: [UnsafeMutablePointer<CChar>?] = fullArgv.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &cargs, environ)
        guard rc == 0 else { throw SystemError(operation: "posix_spawn", path: "/bin/sh", errno: rc) }
        return pid
    }

    /// How a child ended.
    enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)

        /// "exited with status 1", "was killed by signal 9".
        var description: String {
            switch self {
            case .exited(let code): return "exited with status \(code)"
            case .signaled(let signal): return "was killed by signal \(signal)"
            }
        }
    }

    static func wait(_ pid: pid_t) throws(SystemError) -> Termination {
        var status: Int32 = 0
        _ = try retrying("waitpid") { waitpid(pid, &status, 0) }
        return termination(status)
    }

    /// The W* macros are not imported; these are their <sys/wait.h> definitions.
    private static func termination(_ status: Int32) -> Termination {
        status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
    }

    /// Reads child `pid`'s output from `fd` into `buffer` until the child has
    /// exited and what it wrote is read, or the pipe ends, or `buffer` is
    /// full. Not until end of file alone: a background process the command
    /// started (`echo pw; sleep 100 &`) inherits the pipe and would hold it
    /// open long after the command is done. Returns the bytes read and, if
    /// the child was seen to exit, how it ended (else the caller waits).
    static func readOutput(of pid: pid_t, from fd: Int32,
                           into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> (Int, Termination?) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var count = 0
        var ended: Termination?
        while true {
            while count < buffer.count {
                let n = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
                if n > 0 { count += n; continue }
                if n == 0 { return (count, ended) }
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                throw SystemError(operation: "read", path: nil, errno: errno)
            }
            if count == buffer.count || ended != nil { return (count, ended) }
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                ended = termination(status)   // one more pass drains what it wrote before exiting
            } else if r == -1 && errno != EINTR {
                throw SystemError(operation: "waitpid", path: nil, errno: errno)
            } else {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, 100)
            }
        }
    }

    /// SIGTERM, for a child we no longer wait for.
    static func terminate(_ pid: pid_t) { _ = Glibc.kill(pid, SIGTERM) }
}
