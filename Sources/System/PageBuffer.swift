/// A raw buffer for bulk I/O. From 256 KiB up it is its own anonymous
/// mapping, returned to the kernel on deinit: malloc would keep it, and
/// with the long-lived small allocations of a large manifest between such
/// buffers its heap could not shrink (a rekey of 130,000 items grew to
/// 1.2 GiB). Smaller ones come from malloc.
public final class PageBuffer: @unchecked Sendable {
    // @unchecked: the memory is owned here, and its users touch disjoint
    // ranges (ChunkWorkers' threads) or use it from one thread at a time.
    public let raw: UnsafeMutableRawBufferPointer
    private let mapped: Bool

    /// `filled`: the caller writes all of it at once (a chunk read into
    /// it), so a mapping is populated when made: one call instead of a
    /// page fault per 4 KiB (0.32 against 0.50 ms for a fresh 1 MiB
    /// buffer written whole).
    public init(count: Int, filled: Bool = false) throws {
        if count >= 256 << 10 {
            raw = try Syscall.map(count, populated: filled)
            mapped = true
        } else {
            raw = .allocate(byteCount: max(count, 1), alignment: 64)
            mapped = false
        }
    }

    deinit {
        if mapped { Syscall.unmap(raw) } else { raw.deallocate() }
    }
}
