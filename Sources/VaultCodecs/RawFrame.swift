/// A zstd frame that stores its content uncompressed (RFC 8878: a frame of
/// Raw_Block blocks), for blocks that do not compress. Any zstd decoder reads
/// it, so an item's content stays one plain zstd stream (`zstd -d` reads it)
/// and the reader needs no format of vault's own.
///
///     magic 28 B5 2F FD || descriptor A0 || content size (u32le)
///     || blocks: header (3 bytes le: last flag | type 0 << 1 | size << 3) || size bytes
///
/// Descriptor 0xA0: a 4-byte content size, single segment (the window is the
/// content size, so no window descriptor), no checksum, no dictionary. Blocks
/// hold at most 128 KiB (the format's block maximum); an empty content is one
/// empty last block.
enum RawFrame {
    static let maxBlock = 128 << 10
    static let headerLength = 9

    /// The frame's length for `count` content bytes (at most UInt32.max).
    static func length(of count: Int) -> Int {
        headerLength + 3 * max(1, (count + maxBlock - 1) / maxBlock) + count
    }

    /// Writes the frame of `content` into `output` (at least `length(of:)`
    /// bytes); returns its length.
    static func write(_ content: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int {
        precondition(content.count <= Int(UInt32.max) && output.count >= length(of: content.count))
        var at = 0
        func put(_ byte: UInt8) { output[at] = byte; at += 1 }
        func putLE(_ value: Int, bytes: Int) { for k in 0..<bytes { put(UInt8(truncatingIfNeeded: value >> (8 * k))) } }
        [0x28, 0xB5, 0x2F, 0xFD, 0xA0].forEach(put)
        putLE(content.count, bytes: 4)
        var offset = 0
        repeat {
            let n = min(maxBlock, content.count - offset)
            let last = offset + n == content.count ? 1 : 0
            putLE(last | n << 3, bytes: 3)
            if n > 0 {
                (output.baseAddress! + at).copyMemory(from: content.baseAddress! + offset, byteCount: n)
            }
            at += n
            offset += n
        } while offset < content.count
        return at
    }
}
