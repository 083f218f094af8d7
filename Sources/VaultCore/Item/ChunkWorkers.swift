import Dispatch
import Synchronization
import VaultCrypto

/// One AEAD context per worker thread, and a parallel loop over the chunks
/// of a batch. Chunks are independent (each has its own nonce and associated
/// data), so a batch seals or opens on all cores at once; and one worker can
/// first do the I/O of the neighbouring batch, so reading, writing and the
/// cipher overlap (measured here: AES-GCM alone runs at ~3.9 GB/s a core,
/// reading from the page cache ~6 GB/s, so serialising them costs ~40%).
final class ChunkWorkers: @unchecked Sendable {
    // @unchecked: worker w only ever uses contexts[w], and runs own their
    // claimed chunk indices exclusively.
    private let contexts: [AEAD]

    init(key: FileKey, threads: Int) throws {
        let n = max(1, min(threads, 8))
        let secret = key.secret
        contexts = try (0..<n).map { _ in try AEAD(.aes256GCM, key: secret) }
    }

    /// One more context for `key`, of the same cipher, outside the workers.
    static func context(_ key: FileKey) throws -> AEAD { try AEAD(.aes256GCM, key: key.secret) }

    subscript(_ w: Int) -> AEAD { contexts[w] }

    /// Runs `io()` on one worker and `body(context, k)` for every k in
    /// 0..<chunks on all workers (the I/O worker joins when its I/O is done).
    /// Throws the error of the lowest failing chunk, else the I/O error.
    ///
    /// The closures need not be Sendable: concurrentPerform returns only when
    /// every worker is done, so they never outlive this call, `io` runs on
    /// exactly one worker, and each chunk index is claimed by exactly one.
    func forEach(_ chunks: Int, alongside io: (() throws -> Void)? = nil,
                 _ body: (AEAD, Int) throws -> Void) throws {
        let workers = min(contexts.count, max(chunks, io == nil ? 1 : 2))
        if workers <= 1 {
            try io?()
            for k in 0..<chunks { try body(contexts[0], k) }
            return
        }
        try withoutActuallyEscaping(body) { body in
            try run(chunks, workers: workers, io: Unchecked(io), body: Unchecked(body))
        }
    }

    private func run(_ chunks: Int, workers: Int, io ioTask: Unchecked<(() throws -> Void)?>,
                     body work: Unchecked<(AEAD, Int) throws -> Void>) throws {
        let next = Atomic<Int>(0)
        let chunkFailure = Mutex<(Int, Error)?>(nil)
        let ioFailure = Mutex<Error?>(nil)
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            if w == 0, let io = ioTask.value {
                do { try io() } catch { ioFailure.withLock { $0 = error } }
            }
            while true {
                let k = next.wrappingAdd(1, ordering: .relaxed).oldValue
                if k >= chunks { return }
                do { try work.value(self.contexts[w], k) } catch {
                    chunkFailure.withLock { f in if f == nil || f!.0 > k { f = (k, error) } }
                }
            }
        }
        if let (_, error) = chunkFailure.withLock({ $0 }) { throw error }
        if let error = ioFailure.withLock({ $0 }) { throw error }
    }
}

/// A raw buffer shared with worker threads; each touches disjoint ranges.
struct SharedBuffer: @unchecked Sendable {
    let raw: UnsafeMutableRawBufferPointer
}

/// Carries a value into concurrentPerform's @Sendable body; see forEach.
private struct Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
