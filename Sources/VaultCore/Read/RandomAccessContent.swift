import Dispatch
import Synchronization
import System
import VaultCodecs

/// Reads a file item's content at any offset, as a file system does
/// (`vault mount`): only the chunks a read touches are read and
/// authenticated (docs/FORMAT.md, "Reading": any chunk opens on its own once
/// the final chunk has), from the item's `SharedChunks`, which keeps the
/// last few for every reader of the item. When reads go forward, the next
/// `readAhead` chunks are opened meanwhile on another thread, no further
/// than `readingAheadUntil` until a read reaches it (a folder's file read
/// to its end: the reader is likely walking the folder, whose next files
/// follow in the archive); a failure there only counts if that chunk is
/// then read. A reader made with `startingAt` opens that offset's chunk
/// ahead at once, while its first read is still on its way. A compressed item is decompressed forward; a read behind
/// that, or far ahead, resumes at the nearest zstd frame before it, from a
/// table of the item's frames its readers share (`ZstdFrameTable`, built on
/// the first such read by walking frame and block headers, no
/// decompression); an xz item, or a zstd one without a table, is decoded
/// from its start again.
///
/// For a file item exactly its `size` bytes are released: a chunk that
/// fails to authenticate, or decompressed content longer or shorter than the
/// entry, is `itemCorrupted` for that read. For a folder item the content is
/// its tar archive (whose files `FolderIndex` locates), as long as it is.
///
/// A chunk opened ahead holds its slot and the item's reader, never this
/// object: so this object goes as soon as its last user lets go (a FUSE
/// release), on that user's thread, without waiting; an opening still
/// running finishes on its own. (When the prefetch held this object, its
/// end could be the last release, and a deinit waiting for the prefetch
/// then waited, on the prefetch's own thread, for itself: one thread, one
/// descriptor and two chunk buffers lost per file closed while its next
/// chunk was being opened, until the pool had no thread left for a prefetch
/// the FUSE loop waited for.)
public final class RandomAccessContent: @unchecked Sendable {
    // @unchecked: used from one thread at a time (one request at a time
    // for this open file); the chunks it reads are `SharedChunks`' to lock.
    public let entry: ManifestEntry
    private let reader: ItemReader
    private let compressed: Bool
    /// The content's length when known (a file's size; an uncompressed archive's length).
    private let length: UInt64
    /// Whether the content must end at `length` exactly (file items).
    private let exact: Bool
    private let chunks: SharedChunks
    /// The chunk the last read ended in.
    private var current: SharedChunks.Slot?
    /// Chunks opened ahead of a forward reader: a FUSE read is 128 KiB to
    /// 1 MiB, so two keep the other core busy while this one copies (one
    /// or four made a mount's first `cat` of 1 GiB no faster: 0.61x and
    /// 0.65x the no-work floor, against two's 0.65x in the same run).
    static let readAhead: UInt64 = 2
    /// This reader's: `readAhead`, or the opener's (UnlockedVault.readAhead).
    private let ahead: UInt64
    /// Where the last read ended: a read starting there is reading forward.
    private var lastEnd: UInt64
    /// No chunk from here on is opened ahead (the end of a folder's file in
    /// its archive: the next file's chunk is that file's to open).
    private let aheadEnd: UInt64
    /// Compressed items: the decompressed stream and how far into it we are.
    private var stream: ByteStream?
    private var position: UInt64 = 0
    private let frames: SharedFrameTable
    /// A read this far ahead of the stream resumes at a frame rather than decoding up to it (one frame).
    static let decodeAhead = UInt64(ZstdCompressor.blockSize)

    init(entry: ManifestEntry, reader: ItemReader, chunks: SharedChunks, frames: SharedFrameTable,
         startingAt start: UInt64? = nil, readingAheadUntil end: UInt64? = nil, readAhead: UInt64 = RandomAccessContent.readAhead) {
        ahead = readAhead
        self.entry = entry
        self.reader = reader
        self.chunks = chunks
        self.frames = frames
        compressed = reader.header.flags.isCompressed
        exact = entry.kind != .folder
        length = exact ? entry.size : compressed ? .max : reader.contentLength
        aheadEnd = min(length, end ?? .max)
        lastEnd = start ?? 0
        if let start, !compressed, start < length { chunks.readAhead(start / UInt64(ItemCipher.chunkSize)) }
    }

    /// Fills `buffer` from `offset`; fewer bytes only at the end of the item.
    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < length, !buffer.isEmpty else { return 0 }
        let want = Int(min(UInt64(buffer.count), length - offset))
        return try itemErrors {
            try compressed ? readDecompressed(at: offset, into: .init(rebasing: buffer[..<want]))
                           : readChunks(at: offset, into: .init(rebasing: buffer[..<want]))
        }
    }

    /// A chunk that fails to open, or content that disagrees with the
    /// entry, is this item's corruption, said by its name.
    private func itemErrors<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch VaultError.corruptedOrTampered, is CodecError {
            throw VaultError.itemCorrupted(name: entry.name)
        }
    }

    /// The `count` bytes from `offset` (fewer only at the item's end)
    /// where they already lie: in the buffers of the chunks they were
    /// opened into, one span per chunk, held (with their chunks) for as long
    /// as the result lives, on any thread. A FUSE reply is written to the
    /// kernel from them, with no copy in between, and after this reader's
    /// lock is let go. A compressed item's bytes are decoded into a buffer
    /// of their own.
    public func bytes(at offset: UInt64, count: Int) throws -> HeldBytes {
        guard offset < length, count > 0 else { return HeldBytes(spans: [], holding: []) }
        let want = Int(min(UInt64(count), length - offset))
        if compressed { return try HeldBytes.filled(count: want) { try read(at: offset, into: $0) } }
        var held: [AnyObject] = []
        var spans: [UnsafeRawBufferPointer] = []
        try itemErrors {
            try chunkSpans(at: offset, count: want) { slot, span in
                held.append(slot)
                spans.append(span)
            }
        }
        return HeldBytes(spans: spans, holding: held)
    }

    private func readChunks(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        try chunkSpans(at: offset, count: buffer.count) { _, span in
            buffer.baseAddress!.advanced(by: done).copyMemory(from: span.baseAddress!, byteCount: span.count)
            done += span.count
        }
        return done
    }

    /// The `count` bytes from `offset` as they lie in their chunks' buffers,
    /// a span per chunk, each handed over with its slot (which keeps the
    /// buffer); then the next chunks are opened ahead of a forward reader.
    private func chunkSpans(at offset: UInt64, count: Int, _ each: (SharedChunks.Slot, UnsafeRawBufferPointer) throws -> Void) throws {
        var done = 0
        let size = UInt64(ItemCipher.chunkSize)
        while done < count {
            let at = offset + UInt64(done)
            let index = at / size
            if current?.index != index {
                current = nil
                current = try chunks.chunk(index)
            }
            guard let slot = current else { throw VaultError.corruptedOrTampered }
            let opened = try slot.wait()
            let start = Int(at - index * size)
            guard start < opened else { throw VaultError.corruptedOrTampered }   // shorter than the entry says
            let n = min(count - done, opened - start)
            try each(slot, UnsafeRawBufferPointer(start: slot.buffer.raw.baseAddress! + start, count: n))
            done += n
        }
        // Only for reads going forward (a random reader would wait for chunks it never reads).
        if offset == lastEnd, let last = current?.index {
            let end = offset + UInt64(done) >= aheadEnd ? length : aheadEnd
            for k in 1...ahead where (last + k) * size < end { chunks.readAhead(last + k) }
        }
        lastEnd = offset + UInt64(done)
    }

    /// The zstd frame to resume at for `offset`, if the item has a table
    /// (a file's must add up to its size).
    private func frame(before offset: UInt64) -> ZstdFrameTable.Entry? {
        guard reader.header.flags.contains(.zstd) else { return nil }
        let table = frames.table {
            try ZstdFrameTable.scan(storedLength: reader.contentLength) { try readChunks(at: $0, into: $1) }
        }
        guard let table, !exact || table.contentLength == entry.size else { return nil }
        return table.entry(before: offset)
    }

    private func readDecompressed(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let behind = stream == nil || offset < position
        if behind ? offset > 0 : offset - position > Self.decodeAhead, let frame = frame(before: offset),
           behind || frame.content > position {
            stream = try ZstdDecompressor(upstream: reader.contentStream(from: frame.stored))
            position = frame.content
        } else if behind {
            stream = try reader.decodedStream()
            position = 0
        }
        guard let stream else { return 0 }
        var skip = [UInt8](repeating: 0, count: 1 << 16)
        while position < offset {
            let n = try skip.withUnsafeMutableBytes { try stream.read(into: .init(rebasing: $0[..<Int(min(UInt64($0.count), offset - position))])) }
            guard n > 0 else {
                if exact { throw VaultError.corruptedOrTampered }
                return 0   // an archive ends where it ends
            }
            position += UInt64(n)
        }
        var done = 0
        while done < buffer.count {
            let n = try stream.read(into: .init(rebasing: buffer[done...]))
            guard n > 0 else {
                if exact { throw VaultError.corruptedOrTampered }   // ended before `size`
                break
            }
            done += n
        }
        position += UInt64(done)
        if exact, position == entry.size {
            // Past `size` there must be nothing: else the entry and its content disagree.
            var one = [UInt8](repeating: 0, count: 1)
            guard try one.withUnsafeMutableBytes({ try stream.read(into: $0) }) == 0 else { throw VaultError.corruptedOrTampered }
            self.stream = nil
        }
        return done
    }
}

/// Bytes of an item's content as they lie in memory (`RandomAccessContent.bytes`):
/// the spans stay valid while this lives, because it holds what they lie in
/// (a chunk's slot, whose buffer is not reused while held, or a buffer of
/// its own). Read-only, so any thread may read them.
public struct HeldBytes: @unchecked Sendable {
    public let spans: [UnsafeRawBufferPointer]
    private let holding: [AnyObject]

    public init(spans: [UnsafeRawBufferPointer], holding: [AnyObject]) { (self.spans, self.holding) = (spans, holding) }

    public var count: Int { spans.reduce(0) { $0 + $1.count } }

    /// Bytes copied into a buffer of their own: `fill` writes at most
    /// `count` bytes to it and returns how many.
    public static func filled(count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows -> HeldBytes {
        let owned = Owned(count: count)
        let n = try fill(UnsafeMutableRawBufferPointer(rebasing: owned.buffer[..<count]))
        return HeldBytes(spans: [UnsafeRawBufferPointer(rebasing: owned.buffer[..<n])], holding: [owned])
    }

    /// A buffer of its own, freed with the last `HeldBytes` that holds it.
    private final class Owned {
        let buffer: UnsafeMutableRawBufferPointer
        init(count: Int) { buffer = .allocate(byteCount: max(count, 1), alignment: 64) }
        deinit { buffer.deallocate() }
    }
}

/// An item opened once (its final chunk authenticated and its header
/// checked against the entry) for any number of `RandomAccessContent`s, on
/// any threads at once: a mounted folder's files share their item's.
public final class OpenedItem: Sendable {
    public let entry: ManifestEntry
    let reader: ItemReader
    let chunks: SharedChunks
    let frames = SharedFrameTable()
    let readAhead: UInt64

    init(entry: ManifestEntry, reader: ItemReader, readAhead: UInt64 = RandomAccessContent.readAhead) {
        (self.entry, self.reader, self.readAhead) = (entry, reader, readAhead)
        chunks = SharedChunks(reader: reader, readAhead: readAhead)
    }

    /// Reads at any offset, opening chunks ahead no further than `end` (a
    /// folder's file: where it ends in the archive) until a read reaches it;
    /// the chunk at `start` (where a file's reads will begin) is opened ahead at once.
    public func randomAccess(startingAt start: UInt64? = nil, readingAheadUntil end: UInt64? = nil) -> RandomAccessContent {
        RandomAccessContent(entry: entry, reader: reader, chunks: chunks, frames: frames,
                            startingAt: start, readingAheadUntil: end, readAhead: readAhead)
    }
}

extension UnlockedVault {
    /// Opens an item for reads at any offset (its final chunk is
    /// authenticated and its header checked against the entry here): a
    /// file's content, or a folder's archive.
    public func randomAccess(_ entry: ManifestEntry) throws -> RandomAccessContent {
        try open(entry).randomAccess()
    }

    /// Opens an item once for many `RandomAccessContent`s.
    public func open(_ entry: ManifestEntry) throws -> OpenedItem {
        OpenedItem(entry: entry, reader: try reader(for: entry), readAhead: readAhead)
    }

    /// Where each file of a folder item lies in its archive: from its
    /// folder index file if one opens (FolderIndexFile), else the whole
    /// archive is read (decrypted, decompressed) once, with the path checks
    /// `restore` makes, its file count must agree with the entry, and what
    /// it found is kept (unless this process may not write here).
    public func index(folder entry: ManifestEntry) throws -> FolderIndex {
        guard entry.kind == .folder else { throw VaultError.wrongItemKind(name: entry.name, expected: .folder) }
        if let kept = keptIndex(of: entry) { return kept }
        let r = try reader(for: entry)
        do {
            let index = try archiveError { try FolderIndex.build(from: contentStream(r)) }
            // Hard links are files too (FORMAT.md counts them, at 0 bytes).
            guard UInt64(index.entries.filter({ $0.kind == .file }).count) == entry.fileCount else {
                throw VaultError.corruptedOrTampered
            }
            keep(index, of: entry)
            return index
        } catch VaultError.corruptedOrTampered, is CodecError {
            throw VaultError.itemCorrupted(name: entry.name)
        } catch VaultError.unsafeArchiveEntry(_, let path, let reason) {
            throw VaultError.unsafeArchiveEntry(item: entry.name, entry: path, reason: reason)
        }
    }
}

/// A compressed item's frame table, built once for all its readers (the
/// first that needs it walks the headers; the others wait for it).
final class SharedFrameTable: Sendable {
    /// Whether a build was tried, and what it found (nil: no table; decode from the start).
    private let state = Mutex<(tried: Bool, table: ZstdFrameTable?)>((false, nil))

    func table(_ build: () throws -> ZstdFrameTable?) -> ZstdFrameTable? {
        state.withLock { s in
            if !s.tried {
                s.tried = true
                s.table = try? build()   // a chunk that fails here fails again for the read that needs it
            }
            return s.table
        }
    }
}
