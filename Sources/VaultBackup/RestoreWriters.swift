import Dispatch
import Foundation  // Thread
import Synchronization
import VaultCore

/// The threads that write restored files' content (issue 45: a restore of
/// many small files kept one core busy while the other idled). The walk,
/// the directories, the comparisons and the names stay on the restore's
/// own thread, in the snapshot's order; only what concerns one new file's
/// descriptor (its bytes, owner, extended attributes, mode and time) is
/// done here, each job with a snapshot reader of its own. At most
/// `threads` batches of jobs are in flight: `send` waits for a free
/// thread, so the walk never runs further ahead than the writers.
final class RestoreWriters: @unchecked Sendable {
    // @unchecked: `queue` is locked; a job's reader is its own while it
    // runs; `batch` is the submitting thread's alone.
    //
    // Threads of their own, not Dispatch's pool: a job waits for chunks
    // that PackChunks opens ahead on that pool, and with both of the pool's
    // threads (one per core) waiting in jobs, that opening waited for
    // libdispatch's monitor to add a thread, about a second later (a
    // 10 MiB folder's thin restore took 0.2 s or 1.2 s, by turns).
    private let queue = Mutex<[[Job]]>([])
    private let queued = DispatchSemaphore(value: 0)
    private let free: DispatchSemaphore
    private let running = DispatchGroup()
    private let count: Int
    /// Bytes of content written so far, by all of them (for progress).
    let written = Atomic<UInt64>(0)

    /// Every core (at most 4): the restore's own thread mostly waits in
    /// the kernel (names, syncs) meanwhile. `close()` ends them.
    init(_ reader: SnapshotReader, threads: Int = parallelThreads) {
        count = threads
        free = DispatchSemaphore(value: threads)
        for _ in 0..<threads {
            let reader = reader.copy()
            let thread = Thread { [self] in work(reader) }
            thread.start()
        }
    }

    private func work(_ reader: SnapshotReader) {
        while true {
            queued.wait()
            // Woken with nothing queued: close() ends the thread.
            guard let jobs = queue.withLock({ q -> [Job]? in q.isEmpty ? nil : q.removeFirst() }) else { return }
            for job in jobs {
                do { try job.run(reader) } catch { job.failed(error) }
            }
            running.leave()
            free.signal()
        }
    }

    /// Queues `job` for a writer thread, which runs it with a reader of
    /// its own; an error it throws goes to `failed`, on that thread. Jobs
    /// go out in batches (`batchFiles` of them, or `batchBytes` of
    /// content): one small file per hand-over spent more time waking
    /// threads than writing.
    func submit(bytes: UInt64, _ job: @escaping (SnapshotReader) throws -> Void, failed: @escaping (Error) -> Void) {
        batch.append(Job(run: job, failed: failed))
        batchBytes += bytes
        if batch.count >= Self.batchFiles || batchBytes >= Self.batchBytes { send() }
    }

    static let batchFiles = 32
    static let batchBytes: UInt64 = 4 << 20
    private var batch: [Job] = []
    private var batchBytes: UInt64 = 0

    /// Hands the queued jobs to a writer thread (waiting for a free one:
    /// the walk runs no further ahead than the writers).
    private func send() {
        guard !batch.isEmpty else { return }
        let jobs = batch
        (batch, batchBytes) = ([], 0)
        free.wait()
        running.enter()
        queue.withLock { $0.append(jobs) }
        queued.signal()
    }

    /// Returns once every job submitted so far has ended.
    func wait() {
        send()
        running.wait()
    }

    /// Ends the threads once the jobs queued have run: each is woken to an empty queue.
    func close() {
        wait()
        for _ in 0..<count { queued.signal() }
    }

    private struct Job: @unchecked Sendable {
        // @unchecked: run once, on one writer thread, and never by the submitter.
        let run: (SnapshotReader) throws -> Void
        let failed: (Error) -> Void
    }
}
