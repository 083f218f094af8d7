import System
/// What vault does to its own process before it reads any secret.
enum ProcessHardening {
    /// No core dumps (RLIMIT_CORE 0, and not dumpable, which also covers
    /// piped core handlers and blocks ptrace by other processes of the
    /// user); files and directories we create are private (umask 077);
    /// writing to a closed pipe is an error we can clean up after, not a
    /// silent death; and a crash prints nothing of memory (the runtime's
    /// backtracer, which would, is replaced by the default action).
    static func apply(_ terminal: Terminal) {
        if !Syscall.restoreDefaultCrashSignals() {
            terminal.warning("cannot turn off the crash reporter; a crash could print secrets")
        }
        Syscall.setUmask(0o077)
        Syscall.ignoreBrokenPipe()
        let coreLimited = Syscall.disableCoreDumps()
        let notDumpable = Syscall.setNotDumpable()
        if !coreLimited || !notDumpable {
            terminal.warning("cannot disable core dumps; a crash could write secrets to disk")
        }
    }
}
