import Dispatch
import Synchronization

/// Asks work running on another thread to stop at its next safe point, and
/// lets the asker wait until it has. An interrupt handler uses it before
/// erasing a tree of plaintext that the main thread may still be writing
/// into: erasing under a running writer could let it recreate what was just
/// erased (libarchive makes missing parent directories).
public final class StopRequest: Sendable {
    private let requested = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    public init() {}

    /// Thrown at a checkpoint once a stop was requested.
    public struct Stopped: Error {}

    /// The worker's safe point: throws `Stopped` once a stop was requested.
    public func checkpoint() throws {
        if requested.load(ordering: .acquiring) { throw Stopped() }
    }

    /// The worker says it has finished (stopped or not) and cleaned up.
    public func finished() { done.signal() }

    /// Asks the worker to stop and waits up to `seconds` for it to finish;
    /// false if it did not in time.
    @discardableResult
    public func stopAndWait(seconds: Double) -> Bool {
        requested.store(true, ordering: .releasing)
        return done.wait(timeout: .now() + seconds) == .success
    }
}
