import Synchronization

/// Where `SecretBytes` live: a bounded number of guarded, locked regions.
///
/// Why not one `sodium_malloc` per secret: each costs an mmap with guard
/// pages and an mlock, so a vault with 30,000 waiting drop-ins (a file key
/// each) ran out of mappings at ~16,000 live secrets, and a non-root user's
/// 8 MiB RLIMIT_MEMLOCK was spent after ~2,000 (one locked page each).
///
/// Instead, small secrets (up to 4 KiB) are slots in 64 KiB regions, each
/// region one `sodium_malloc` (guard pages around it, locked, excluded from
/// core dumps), one size class per region (32, 64, ... 4096 bytes). Freed
/// slots are zeroed and reused, so the number of regions follows the peak
/// number of live secrets: 30,000 file keys take 15 regions, under 1 MiB.
/// Larger secrets (a decrypted manifest) get their own `sodium_malloc`.
///
/// Locking is best effort, as it is in libsodium: past RLIMIT_MEMLOCK a
/// region is still guarded and never dumped, but the kernel may swap it.
/// `lockFailures` counts such regions so the caller can say so.
enum GuardedArena {
    static let regionSize = 64 << 10
    static let smallestClass = 32
    static let largestClass = 4096

    /// Where a secret's bytes are and how to give them back.
    struct Allocation: @unchecked Sendable {
        // @unchecked: a raw pointer into memory this arena owns; each
        // allocation is handed to exactly one SecretBytes, which alone uses it.
        let pointer: UnsafeMutableRawPointer
        /// The bytes reserved: the size class, or the exact size of a large one.
        let capacity: Int
        /// Index of the size class, or nil for a dedicated allocation.
        let sizeClass: Int?
    }

    private struct State {
        /// Free slots per size class (as addresses, so the state is Sendable).
        var free: [[UInt]] = Array(repeating: [], count: GuardedArena.classCount)
        var regions = 0
        var lockFailures = 0
    }

    static let classCount = 8   // 32 << 0 ... 32 << 7 = 4096
    private static let state = Mutex(State())

    /// Regions (and large allocations) that could not be locked in RAM.
    static var lockFailures: Int { state.withLock { $0.lockFailures } }

    /// Regions made so far (for tests: bounded by the peak of live secrets).
    static var regionCount: Int { state.withLock { $0.regions } }

    static func sizeClass(for count: Int) -> Int? {
        guard count <= largestClass else { return nil }
        var c = 0
        while smallestClass << c < count { c += 1 }
        return c
    }

    /// Zeroed storage for `count` bytes; throws `outOfMemory` rather than trapping.
    static func allocate(_ count: Int) throws(CryptoError) -> Allocation {
        guard count >= 0 else { throw .invalidParameter(.negativeSecretSize) }
        guard let c = sizeClass(for: count) else {
            guard let p = Sodium.allocate(count) else { throw .outOfMemory }
            if !Sodium.lock(UnsafeMutableRawBufferPointer(start: p, count: count)) { state.withLock { $0.lockFailures += 1 } }
            Sodium.zero(UnsafeMutableRawBufferPointer(start: p, count: count))
            return Allocation(pointer: p, capacity: count, sizeClass: nil)
        }
        let size = smallestClass << c
        let address: UInt? = try state.withLock { (s: inout State) throws(CryptoError) -> UInt? in
            if s.free[c].isEmpty {
                guard let region = Sodium.allocate(regionSize) else { throw .outOfMemory }
                if !Sodium.lock(UnsafeMutableRawBufferPointer(start: region, count: regionSize)) { s.lockFailures += 1 }
                Sodium.zero(UnsafeMutableRawBufferPointer(start: region, count: regionSize))
                s.regions += 1
                let base = UInt(bitPattern: region)
                s.free[c].reserveCapacity(s.free[c].count + regionSize / size)
                // Pushed in reverse so slots are handed out from the start of the region.
                for k in stride(from: regionSize / size - 1, through: 0, by: -1) { s.free[c].append(base + UInt(k * size)) }
            }
            return s.free[c].popLast()
        }
        guard let address, let p = UnsafeMutableRawPointer(bitPattern: address) else { throw .outOfMemory }
        return Allocation(pointer: p, capacity: size, sizeClass: c)
    }

    /// Zeroes the whole slot and returns it (or frees a dedicated allocation,
    /// which `sodium_free` zeroes).
    static func release(_ a: Allocation) {
        guard let c = a.sizeClass else { Sodium.free(a.pointer); return }
        Sodium.zero(UnsafeMutableRawBufferPointer(start: a.pointer, count: a.capacity))
        let address = UInt(bitPattern: a.pointer)
        state.withLock { $0.free[c].append(address) }
    }
}
