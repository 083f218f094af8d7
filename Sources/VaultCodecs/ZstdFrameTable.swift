/// Where the frames of a zstd stream start, in its content and in its
/// stored bytes, found from frame and block headers alone (RFC 8878), with
/// no decompression: random access into content ZstdCompressor wrote as
/// independent frames (`vault mount` resumes at the frame before a read
/// instead of decoding from the start).
///
///     frame     = magic 28 B5 2F FD || descriptor || [window] || [dictionary id] || [content size]
///                 || block × n || [checksum (4)]
///     block     = header (3 bytes le: last | type << 1 | size << 3) || size bytes (RLE: 1 byte)
///     skippable = magic 5? 2A 4D 18 || length u32le || length bytes (no content)
///
/// The table only says where to start decoding: libzstd checks each frame's
/// decoded length against the content size in its header, so a stream whose
/// headers lie fails to decode rather than handing out bytes from the wrong
/// place. A frame without a content size (never written by vault) leaves
/// the stream without a table. Frames are kept at least `spacing` content
/// bytes apart and at most `maxEntries` of them, so a hostile stream of
/// tiny frames costs a bounded table (reads past its last entry decode
/// from there).
public struct ZstdFrameTable: Sendable {
    public struct Entry: Sendable, Equatable {
        public let content: UInt64, stored: UInt64
    }
    public static let spacing: UInt64 = 1 << 20
    public static let maxEntries = 1 << 16

    public let entries: [Entry]
    /// The content length of the whole stream.
    public let contentLength: UInt64

    /// Walks `storedLength` bytes read by `read(offset, buffer)` (which fills
    /// the buffer, short only at the end); nil if a header does not parse,
    /// a frame has no content size, or the stream does not end at a frame's end.
    public static func scan(storedLength: UInt64, read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Int) throws -> ZstdFrameTable? {
        var header = [UInt8](repeating: 0, count: 18)   // the longest frame header: magic, descriptor, window, id 4, size 8
        func bytes(at offset: UInt64, _ count: Int) throws -> ArraySlice<UInt8>? {
            guard offset <= storedLength, UInt64(count) <= storedLength - offset else { return nil }
            let n = try header.withUnsafeMutableBytes { try read(offset, .init(rebasing: $0[..<count])) }
            return n == count ? header[..<count] : nil
        }
        func le(_ b: ArraySlice<UInt8>) -> UInt64 { b.reversed().reduce(0) { $0 << 8 | UInt64($1) } }

        var entries: [Entry] = []
        var (content, stored): (UInt64, UInt64) = (0, 0)
        while stored < storedLength {
            guard let magic = try bytes(at: stored, 4) else { return nil }
            let m = le(magic)
            if m & 0xFFFF_FFF0 == 0x184D_2A50 {   // skippable: no content
                guard let size = try bytes(at: stored + 4, 4) else { return nil }
                stored += 8 + le(size)
                continue
            }
            guard m == 0xFD2F_B528, let d = try bytes(at: stored + 4, 1)?.first, d & 0x08 == 0 else { return nil }
            let single = d & 0x20 != 0
            let idLength = [0, 1, 2, 4][Int(d & 3)]
            let sizeLength = [single ? 1 : 0, 2, 4, 8][Int(d >> 6)]
            guard sizeLength > 0 else { return nil }   // no content size: no table
            let sizeAt = stored + 5 + (single ? 0 : 1) + UInt64(idLength)
            guard let sizeBytes = try bytes(at: sizeAt, sizeLength) else { return nil }
            let frameContent = le(sizeBytes) + (sizeLength == 2 ? 256 : 0)
            if entries.isEmpty || content - entries[entries.count - 1].content >= spacing, entries.count < maxEntries {
                entries.append(Entry(content: content, stored: stored))
            }
            var at = sizeAt + UInt64(sizeLength)
            while true {
                guard let h = try bytes(at: at, 3) else { return nil }
                let block = le(h)
                let type = (block >> 1) & 3
                guard type != 3 else { return nil }
                at += 3 + (type == 1 ? 1 : block >> 3)
                if block & 1 == 1 { break }
            }
            if d & 0x04 != 0 { at += 4 }
            let (sum, overflow) = content.addingReportingOverflow(frameContent)
            guard !overflow, at <= storedLength else { return nil }
            (content, stored) = (sum, at)
        }
        guard stored == storedLength, !entries.isEmpty else { return nil }
        return ZstdFrameTable(entries: entries, contentLength: content)
    }

    /// The last entry at or before content offset `offset`.
    public func entry(before offset: UInt64) -> Entry {
        var (low, high) = (0, entries.count)
        while high - low > 1 {
            let mid = (low + high) / 2
            if entries[mid].content <= offset { low = mid } else { high = mid }
        }
        return entries[low]
    }
}
