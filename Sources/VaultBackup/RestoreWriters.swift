import Dispatch
import Synchronization
import VaultCore

/// The threads that write restored files' content (issue 45: a restore of
/// many small files kept one core busy while the other idled). The walk,
/// the directories, the comparisons and the names stay on the restore's
/// own thread, in the snapshot's order; only what concerns one new file's
/// descriptor (its bytes, owner, extended attributes, mode and time) is
/// done here, each job with a snapshot reader of its own. At most
/// `threads` jobs are in flight: `submit` waits for a free one, so the
/// walk never runs further ahead than the writers.
final class RestoreWriters: @unchecked Sendable {
    // @unchecked: `readers` is locked; a job's reader is its own while it
    // runs; `batch` is the submitting thread's alone.
    private let queue = DispatchQueue(label: "vault.restore.writers", attributes: .concurrent)
    private let free: DispatchSemaphore
    private let running = DispatchGroup()
    private let readers: Mutex<[SnapshotReader]>
    /// Bytes of content written so far, by all of them (for progress).
    let written = Atomic<UInt64>(0)

    /// Every core (at most 4): the restore's own thread mostly waits in
    /// the kernel (names, syncs) meanwhile.
    init(_ reader: SnapshotReader, threads: Int = parallelThreads) {
        free = DispatchSemaphore(value: threads)
        readers = Mutex((0..<threads).map { _ in reader.copy() })
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

    /// Hands the queued jobs to a writer thread (waiting for a free one).
    private func send() {
        guard !batch.isEmpty else { return }
        let jobs = batch
        (batch, batchBytes) = ([], 0)
        free.wait()
        running.enter()
        queue.async { [self] in
            let reader = readers.withLock { $0.removeLast() }
            for job in jobs {
                do { try job.run(reader) } catch { job.failed(error) }
            }
            readers.withLock { $0.append(reader) }
            running.leave()
            free.signal()
        }
    }

    /// Returns once every job submitted so far has ended.
    func wait() {
        send()
        running.wait()
    }

    private struct Job: @unchecked Sendable {
        // @unchecked: run once, on one writer thread, and never by the submitter.
        let run: (SnapshotReader) throws -> Void
        let failed: (Error) -> Void
    }
}
