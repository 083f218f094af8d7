import Dispatch
import Foundation  // ProcessInfo
import Synchronization

/// `body(i)` for every i in 0..<count, on up to `threads` cores at once;
/// the results in index order. Throws the error of the lowest failing
/// index (after every index has run). For independent work that is mostly
/// CPU per item: opening the inbox's envelopes and sealing single ones for
/// a remote's inbox (one HPKE operation of ~0.1 ms each), and checking the
/// drop-ins' contents (absorb).
///
/// `body` need not be Sendable: concurrentPerform returns only when every
/// worker is done, so it never outlives this call, and each index (and its
/// result slot) is claimed by exactly one worker.
func parallelMap<T>(_ count: Int, threads: Int = parallelThreads, _ body: (Int) throws -> T) throws -> [T] {
    let workers = max(1, min(threads, count))
    if workers == 1 { return try (0..<count).map(body) }
    let slots = UnsafeMutableBufferPointer<Result<T, Error>?>.allocate(capacity: count)
    slots.initialize(repeating: nil)
    defer {
        _ = slots.deinitialize()
        slots.deallocate()
    }
    withoutActuallyEscaping(body) { body in
        let job = ParallelWork(body: body, slots: slots)
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                if i >= count { return }
                job.slots[i] = Result { try job.body(i) }
            }
        }
    }
    var results: [T] = []
    results.reserveCapacity(count)
    for slot in slots {
        guard let slot else { preconditionFailure("parallelMap: an index was never run") }
        results.append(try slot.get())
    }
    return results
}

/// What parallelMap's workers share; see there why it may cross threads.
struct ParallelWork<T>: @unchecked Sendable {
    let body: (Int) throws -> T
    let slots: UnsafeMutableBufferPointer<Result<T, Error>?>
}

/// The cores parallelMap uses: all of them, at most 4 (each item is small;
/// more workers would only contend).
package let parallelThreads = min(4, max(1, ProcessInfo.processInfo.activeProcessorCount))
