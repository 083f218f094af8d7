// Test-only faults on the syscall layer, in the spirit of swift-system's
// Mocking.swift, and smaller: while a fault is armed, one call on one path
// fails with the errno given, before it reaches the kernel. It lets a test
// drive an error path the kernel will not produce on demand (EIO; EACCES
// when the tests run as root). Compiled into debug builds only, which is
// what `swift test` runs: a release build (the vault binary) has none of it.
#if DEBUG
import Synchronization

public enum SyscallFaults {
    private struct Fault: Sendable {
        let call: SystemCall
        let path: String
        let errno: Errno
    }

    private static let armed = Mutex<[Fault]>([])
    /// How many faults are armed: the syscall layer looks no further while 0.
    private static let count = Atomic<Int>(0)

    /// Runs `body` with `call` on exactly `path` failing with `errno` (from
    /// any thread: absorb's work runs on every core). Paths are the
    /// syscall layer's, as its errors name them; a test's temporary
    /// directory keeps them apart from other tests running at once.
    public static func failing<T>(_ call: SystemCall, on path: String, with errno: Errno,
                                  _ body: () throws -> T) rethrows -> T {
        let fault = Fault(call: call, path: path, errno: errno)
        armed.withLock { $0.append(fault) }
        count.add(1, ordering: .sequentiallyConsistent)
        defer {
            armed.withLock { faults in
                if let i = faults.firstIndex(where: { $0.call == call && $0.path == path }) { faults.remove(at: i) }
            }
            count.subtract(1, ordering: .sequentiallyConsistent)
        }
        return try body()
    }

    /// The errno an armed fault forces on `call` at `path`, if any.
    static func forced(_ call: SystemCall, _ path: String?) -> Errno? {
        guard count.load(ordering: .sequentiallyConsistent) > 0, let path else { return nil }
        return armed.withLock { faults in faults.last { $0.call == call && $0.path == path }?.errno }
    }
}
#endif
