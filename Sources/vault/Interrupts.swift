import System
import Foundation
import Synchronization

/// Ctrl-C (SIGINT), SIGTERM and SIGHUP: run the registered cleanups, newest
/// first, print `vault: interrupted`, then die by that same signal with its
/// default action (unless a command that such a signal ends normally
/// registered `stopWith`). Dying by it, not exiting 130, is what tells bash
/// to stop a loop or a `;` chain, as for `sleep` or `cp`; the shell shows
/// 128 + the signal (130, 143, 129) as `$?`.
///
/// The signals are blocked in every thread and taken by one watcher thread
/// with sigwait(3), so cleanups are ordinary Swift code rather than signal
/// handlers, where almost nothing is safe to call. Signals that were ignored
/// when vault started (`vault add x &` in a script ignores SIGINT) stay ignored.
///
/// Use it for what must not be left behind: a terminal with echo off, a temp
/// file of plaintext. Cleanups run on the watcher thread while the registry
/// lock is held, so the interrupted code cannot unregister one halfway; a
/// cleanup must therefore be quick, idempotent, and must not call `Interrupts`.
enum Interrupts {
    struct Token: Hashable, Sendable { fileprivate let id: UInt64 }

    private struct Registry {
        var nextID: UInt64 = 0
        var cleanups: [(id: UInt64, run: @Sendable () -> Void)] = []
        /// Set while a signal is the documented way to end the command
        /// (`vault mount`): the first one runs this and the command ends
        /// on its own, quietly; a second one interrupts as usual.
        var stop: (id: UInt64, run: @Sendable () -> Void)?
    }

    private static let registry = Mutex(Registry())

    /// Call once, first thing in main, before any other thread exists:
    /// threads inherit the blocked mask from the thread that starts them.
    static func install() {
        let signals = Syscall.interruptSignals.filter { !Syscall.isIgnored($0) }
        guard !signals.isEmpty else { return }
        Syscall.blockSignals(signals)
        Thread.detachNewThread {
            while true {
                let received = Syscall.waitForSignal(signals)
                registry.withLock { registry in
                    if let stop = registry.stop {
                        registry.stop = nil
                        stop.run()
                        return
                    }
                    for cleanup in registry.cleanups.reversed() { cleanup.run() }
                    Terminal.writeStderr(["\(Terminal.program): interrupted"])
                    Syscall.dieBySignal(received)
                }
            }
        }
    }

    /// Makes the next Ctrl-C, SIGTERM or SIGHUP run `stop` (quick, and not
    /// calling `Interrupts`) instead of interrupting: for a command that a
    /// signal ends normally. Until `unregister`.
    static func stopWith(_ stop: @escaping @Sendable () -> Void) -> Token {
        registry.withLock { registry in
            registry.nextID += 1
            registry.stop = (registry.nextID, stop)
            return Token(id: registry.nextID)
        }
    }

    /// Registers `cleanup` to run if the process is interrupted.
    static func register(_ cleanup: @escaping @Sendable () -> Void) -> Token {
        registry.withLock { registry in
            registry.nextID += 1
            registry.cleanups.append((registry.nextID, cleanup))
            return Token(id: registry.nextID)
        }
    }

    /// Drops a cleanup once what it guards is done (or cleaned up normally).
    static func unregister(_ token: Token) {
        registry.withLock { registry in
            registry.cleanups.removeAll { $0.id == token.id }
            if registry.stop?.id == token.id { registry.stop = nil }
        }
    }

    /// Runs `body` with `cleanup` registered for its duration only.
    static func withCleanup<R>(_ cleanup: @escaping @Sendable () -> Void, _ body: () throws -> R) rethrows -> R {
        let token = register(cleanup)
        defer { unregister(token) }
        return try body()
    }
}
