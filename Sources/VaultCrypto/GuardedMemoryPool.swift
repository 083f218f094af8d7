import Synchronization

/// Recycles libsodium guarded blocks (sodium_malloc) of small sizes for
/// `SecretBytes`.
///
/// Why: one sodium_malloc/sodium_free pair is about ten system calls (mmap,
/// four mprotect, mlock, madvise, munlock, munmap), measured at 20-30 µs on
/// these VMs: more than a whole ML-KEM-768 operation's arithmetic, and every
/// HPKE setup makes about ten of them.
///
/// What is kept: a block is reused only for exactly the byte count it was
/// allocated for, so sodium's guard pages and canary stay where they were
/// put for that size; it is zeroed (sodium_memzero) before it goes back to
/// the pool, as sodium_free would have zeroed it; it stays mlock'ed. At most
/// `blocksPerSize` blocks of each size up to `largestPooledSize` are kept;
/// everything else is sodium_free'd as before. What is lost: sodium_free
/// checks the canary in front of a block when it is freed; a pooled block
/// has it checked only when it finally is.
enum GuardedMemoryPool {
    static let largestPooledSize = 4096
    static let blocksPerSize = 8

    /// A pointer we own, parked in the pool (guarded by the mutex).
    private struct Block: @unchecked Sendable { let pointer: UnsafeMutableRawPointer }
    private static let pool = Mutex<[Int: [Block]]>([:])

    /// A zeroed guarded block of `count` bytes, or nil if libsodium could not allocate one.
    static func take(_ count: Int) -> UnsafeMutableRawPointer? {
        if count <= largestPooledSize, let block = pool.withLock({ $0[count]?.popLast() }) {
            return block.pointer
        }
        guard let p = Sodium.allocate(count) else { return nil }
        Sodium.zero(UnsafeMutableRawBufferPointer(start: p, count: count))
        return p
    }

    /// Zeroes a block from `take(count)` and keeps it for reuse, or frees it.
    static func give(_ pointer: UnsafeMutableRawPointer, count: Int) {
        Sodium.zero(UnsafeMutableRawBufferPointer(start: pointer, count: count))
        if count <= largestPooledSize {
            let kept = pool.withLock { blocks -> Bool in
                guard blocks[count, default: []].count < blocksPerSize else { return false }
                blocks[count, default: []].append(Block(pointer: pointer))
                return true
            }
            if kept { return }
        }
        Sodium.free(pointer)
    }
}
