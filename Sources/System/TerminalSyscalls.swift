// The terminal: echo off for passwords, and whether a descriptor is one.
#if canImport(Glibc)
import Glibc
#endif

/// A terminal's mode before echo was turned off, to put back.
public struct TerminalMode: Sendable { fileprivate let saved: termios }

extension Syscall {
    /// Whether `fd` is a terminal (isatty).
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Turns echo off on `fd` and returns the previous mode. TCSAFLUSH drops
    /// anything typed (and echoed) before the prompt. ISIG stays on so Ctrl-C
    /// still interrupts; the interrupt path restores the mode.
    public static func disableEcho(_ fd: Int32) throws -> TerminalMode {
        var mode = termios()
        _ = try retrying(.tcgetattr) { tcgetattr(fd, &mode) }
        var silent = mode
        silent.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
        _ = try retrying(.tcsetattr) { tcsetattr(fd, TCSAFLUSH, &silent) }
        return TerminalMode(saved: mode)
    }

    public static func restore(_ fd: Int32, _ mode: TerminalMode) {
        var saved = mode.saved
        _ = tcsetattr(fd, TCSANOW, &saved)
    }
}
