import Dispatch
import Synchronization
import VaultCrypto

/// One AEAD context per worker thread, and a parallel loop over the chunks
/// of a batch. Chunks are independent (each has its own nonce and associated
/// data), so a batch seals or opens on all cores at once.
final class ChunkWorkers: @unchecked Sendable {
    // @unchecked: each AEAD is used by exactly one worker index at a time.
    private let contexts: [AEAD]

    init(key: FileKey, threads: Int) throws {
        let n = max(1, min(threads, 8))
        contexts = try (0..<n).map { _ in try AEAD(.aes256GCM, key: key.secret) }
    }

    var count: Int { contexts.count }
    subscript(_ w: Int) -> AEAD { contexts[w] }

    /// Runs `body(context, k)` for k in 0..<chunks, spread over the workers.
    /// Rethrows the error of the lowest failing chunk index.
    func forEach(_ chunks: Int, _ body: @Sendable (AEAD, Int) throws -> Void) throws {
        if chunks == 1 || contexts.count == 1 {
            for k in 0..<chunks { try body(contexts[0], k) }
            return
        }
        let firstFailure = Mutex<(Int, Error)?>(nil)
        let workers = min(contexts.count, chunks)
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            for k in stride(from: w, to: chunks, by: workers) {
                do { try body(self.contexts[w], k) } catch {
                    firstFailure.withLock { f in if f == nil || f!.0 > k { f = (k, error) } }
                    return
                }
            }
        }
        if let (_, error) = firstFailure.withLock({ $0 }) { throw error }
    }
}

/// A raw buffer shared with worker threads; each touches disjoint ranges.
struct SharedBuffer: @unchecked Sendable {
    let raw: UnsafeMutableRawBufferPointer
}
