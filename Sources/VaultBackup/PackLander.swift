import Foundation

/// Lands a backup's sealed packs one after another on a thread of its own.
/// A pack's landing waits for the disk (the content's fsync, the
/// envelope's, the cache log's), and the worker that stored pieces used to
/// wait there with it, holding the pack lock, while the reader and the
/// other worker ran out of room (issue 45). Shared by a cache's two
/// writers, so that `landed` and the cache see one pack at a time, in the
/// order handed in. At most `depth` packs are handed in and not landed
/// (the one landing included). A failure ends the landing (the packs
/// after it are dropped, their temp files with them) and is thrown by the
/// next `land` or `wait`: a backup whose pack did not land writes no
/// snapshot.
final class PackLander: @unchecked Sendable {
    // @unchecked Sendable: `failure` is used under `lock`; the queue runs
    // one landing at a time, each with what it was handed alone.
    private let queue = DispatchQueue(label: "vault.backup.lander")
    private let room: DispatchSemaphore
    private let lock = NSLock()
    private var failure: (any Error)?
    /// Held for the writers' `fresh` pieces and the cache's: asked from the
    /// pipeline's workers, changed as packs are stored and land.
    let index = NSLock()

    static let depth = 2

    init() { room = DispatchSemaphore(value: Self.depth) }

    /// Runs `landing` on the landing thread once the packs handed in before
    /// it have landed; waits while `depth` packs wait. Throws an earlier
    /// landing's failure instead.
    func land(_ landing: Landing) throws {
        try check()
        room.wait()
        queue.async { [self] in
            defer { room.signal() }
            guard lock.withLock({ failure == nil }) else { return }
            do { try landing.body() } catch { lock.withLock { failure = failure ?? error } }
        }
    }

    /// Waits until every pack handed in has landed; the first failure.
    func wait() throws {
        queue.sync {}
        try check()
    }

    private func check() throws {
        if let failure = lock.withLock({ failure }) { throw failure }
    }

    /// A landing and what it lands, handed to the landing thread and used
    /// there alone.
    struct Landing: @unchecked Sendable {
        let body: () throws -> Void
    }
}
