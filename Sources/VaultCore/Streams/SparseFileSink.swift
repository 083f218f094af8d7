import System
import VaultCodecs

/// Writes a new, empty file from its start, leaving a hole wherever a whole
/// aligned block of it is zeros (restic's `restore --sparse`, here always
/// on: the bytes read back are the same). A 10 GiB disk image holding
/// 1 MiB of data takes about 1 MiB on the restoring disk. `finish` sets
/// the length, so a file that ends in a hole is whole.
public final class SparseFileSink: ByteSink {
    /// The file system block most file systems allocate by.
    public static let block = 4096
    let fd: Int32
    let path: String?
    public private(set) var offset: UInt64 = 0

    public init(fd: Int32, path: String? = nil) { (self.fd, self.path) = (fd, path) }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var i = 0, runStart = 0
        /// Writes the data run before `end` (nothing when empty).
        func flush(_ end: Int) throws {
            guard end > runStart else { return }
            try Syscall.pwriteFully(fd, UnsafeRawBufferPointer(start: base + runStart, count: end - runStart), at: offset + UInt64(runStart), path: path)
        }
        // The first block boundary of the file at or after this buffer's start.
        i = (Self.block - Int(offset % UInt64(Self.block))) % Self.block
        while i + Self.block <= bytes.count {
            if Self.isZero(base + i, Self.block) {
                try flush(i)
                runStart = i + Self.block
            }
            i += Self.block
        }
        try flush(bytes.count)
        offset += UInt64(bytes.count)
    }

    /// The file's length set to what was written (the last hole included).
    public func finish() throws { try Syscall.ftruncate(fd, offset, path: path) }

    static func isZero(_ p: UnsafeRawPointer, _ n: Int) -> Bool {
        let words = p.assumingMemoryBound(to: UInt8.self)
        // Word at a time where aligned; the block sizes here are multiples of 8.
        if Int(bitPattern: p) % 8 == 0 {
            let w = UnsafeRawPointer(words).assumingMemoryBound(to: UInt64.self)
            for k in 0..<(n / 8) where w[k] != 0 { return false }
            return true
        }
        for k in 0..<n where words[k] != 0 { return false }
        return true
    }
}
