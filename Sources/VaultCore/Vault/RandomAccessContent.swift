import Dispatch
import System
import VaultCodecs

/// Reads a file item's content at any offset, as a file system does
/// (`vault mount`): only the chunks a read touches are read and
/// authenticated (docs/FORMAT.md, "Reading": any chunk opens on its own once
/// the final chunk has), and the last one is kept for the next read. When
/// reads go forward, the next chunk is opened meanwhile on another thread
/// (into a second buffer), so memory stays at two chunks whatever the
/// item's size; its failure only counts if that chunk is then read. A compressed item
/// has no random access: it is decompressed from its start, forward, and
/// from the start again when a read goes backwards.
///
/// For a file item exactly its `size` bytes are released: a chunk that
/// fails to authenticate, or decompressed content longer or shorter than the
/// entry, is `itemCorrupted` for that read. For a folder item the content is
/// its tar archive (whose files `FolderIndex` locates), as long as it is.
///
/// The chunk opened ahead is a `ChunkPrefetch` that owns its buffer and
/// holds the reader, never this object: so this object goes as soon as its
/// last user lets go (a FUSE release), on that user's thread, without
/// waiting; a prefetch still running finishes on its own and frees its
/// buffer and, if it was the last user, the reader and its descriptor.
/// (When the prefetch held this object, its end could be the last release,
/// and a deinit waiting for the prefetch then waited, on the prefetch's own
/// thread, for itself: one thread, one descriptor and two chunk buffers
/// lost per file closed while its next chunk was being opened, until the
/// pool had no thread left for a prefetch the FUSE loop waited for.)
public final class RandomAccessContent: @unchecked Sendable {
    // @unchecked: used from one thread at a time (the FUSE loop, or one
    // request at a time for this open file); the prefetch thread touches
    // only its `ChunkPrefetch`, read here only after `wait()`.
    public let entry: ManifestEntry
    private let reader: ItemReader
    private let compressed: Bool
    /// The content's length when known (a file's size; an uncompressed archive's length).
    private let length: UInt64
    /// Whether the content must end at `length` exactly (file items).
    private let exact: Bool
    private var cachedChunk: UInt64?
    /// The last chunk read, in place (one buffer for the item's lifetime).
    private var chunk: PageBuffer?
    private var cachedCount = 0
    /// The chunk being opened ahead, if any; and a buffer for the next one
    /// (the one the last prefetch's chunk replaced), so two buffers at most.
    private var ahead: ChunkPrefetch?
    private var spare: PageBuffer?
    /// Where the last read ended: a read starting there is reading forward.
    private var lastEnd: UInt64 = 0
    /// No chunk from here on is opened ahead (the end of a folder's file in
    /// its archive: the next file's chunk is that file's to open).
    private let aheadEnd: UInt64
    /// Compressed items: the decompressed stream and how far into it we are.
    private var stream: ByteStream?
    private var position: UInt64 = 0

    init(entry: ManifestEntry, reader: ItemReader, readingAheadUntil end: UInt64? = nil) {
        self.entry = entry
        self.reader = reader
        compressed = reader.header.flags.isCompressed
        exact = entry.kind != .folder
        length = exact ? entry.size : compressed ? .max : reader.contentLength
        aheadEnd = min(length, end ?? .max)
    }

    /// Fills `buffer` from `offset`; fewer bytes only at the end of the item.
    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < length, !buffer.isEmpty else { return 0 }
        let want = Int(min(UInt64(buffer.count), length - offset))
        do {
            return try compressed ? readDecompressed(at: offset, into: .init(rebasing: buffer[..<want]))
                                  : readChunks(at: offset, into: .init(rebasing: buffer[..<want]))
        } catch VaultError.corruptedOrTampered, is CodecError {
            throw VaultError.itemCorrupted(name: entry.name)
        }
    }

    private func readChunks(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        let size = UInt64(ItemCipher.chunkSize)
        while done < buffer.count {
            let at = offset + UInt64(done)
            let index = at / size
            if cachedChunk != index { try load(index) }
            guard let page = chunk else { throw VaultError.corruptedOrTampered }
            let start = Int(at - index * size)
            guard start < cachedCount else { throw VaultError.corruptedOrTampered }   // shorter than the entry says
            let n = min(buffer.count - done, cachedCount - start)
            buffer.baseAddress!.advanced(by: done).copyMemory(from: page.raw.baseAddress! + start, byteCount: n)
            done += n
        }
        // Only for reads going forward (a random reader would wait for chunks it never reads).
        if offset == lastEnd, let last = cachedChunk, last + 1 < reader.chunkCount,
           (last + 1) * size < aheadEnd, ahead == nil { prefetch(last + 1) }
        lastEnd = offset + UInt64(done)
        return done
    }

    /// Makes chunk `index` the cached one: the prefetched one if it is that
    /// chunk, else read here (after the prefetch in flight, if any, ends:
    /// its buffer is reused, and one file never has two in flight).
    private func load(_ index: UInt64) throws {
        cachedChunk = nil
        if let prefetch = ahead {
            ahead = nil
            let result = prefetch.wait()
            if prefetch.index == index {
                (spare, chunk) = (chunk, prefetch.buffer)
                cachedCount = try result.get()
                cachedChunk = index
                return
            }
            spare = spare ?? prefetch.buffer
        }
        let page = try chunk ?? spare.take() ?? PageBuffer(count: ItemCipher.sealedChunkSize)
        chunk = page
        cachedCount = try reader.readChunk(index, into: page.raw)
        cachedChunk = index
    }

    /// Starts opening chunk `index` on another thread.
    private func prefetch(_ index: UInt64) {
        guard let buffer = try? spare.take() ?? PageBuffer(count: ItemCipher.sealedChunkSize) else { return }
        ahead = ChunkPrefetch(index: index, into: buffer, reader: reader)
    }

    private func readDecompressed(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if stream == nil || offset < position {
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

/// An item opened once (its final chunk authenticated and its header
/// checked against the entry) for any number of `RandomAccessContent`s, on
/// any threads at once: a mounted folder's files share their item's.
public final class OpenedItem: Sendable {
    public let entry: ManifestEntry
    let reader: ItemReader

    init(entry: ManifestEntry, reader: ItemReader) { (self.entry, self.reader) = (entry, reader) }

    /// Reads at any offset, opening chunks ahead no further than `end` (a
    /// folder's file: where it ends in the archive).
    public func randomAccess(readingAheadUntil end: UInt64? = nil) -> RandomAccessContent {
        RandomAccessContent(entry: entry, reader: reader, readingAheadUntil: end)
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
        OpenedItem(entry: entry, reader: try reader(for: entry))
    }

    /// Where each file of a folder item lies in its archive: the whole
    /// archive is read (decrypted, decompressed) once, with the path checks
    /// `restore` makes, and its file count must agree with the entry.
    public func index(folder entry: ManifestEntry) throws -> FolderIndex {
        guard entry.kind == .folder else { throw VaultError.invalidArgument("'\(entry.name)' is not a folder") }
        let r = try reader(for: entry)
        do {
            let index = try archiveError { try FolderIndex.build(from: contentStream(r)) }
            // Hard links are files too (FORMAT.md counts them, at 0 bytes).
            guard UInt64(index.entries.filter({ $0.kind == .file }).count) == entry.fileCount else {
                throw VaultError.corruptedOrTampered
            }
            return index
        } catch VaultError.corruptedOrTampered, is CodecError {
            throw VaultError.itemCorrupted(name: entry.name)
        } catch VaultError.unsafeArchiveEntry(_, let path, let reason) {
            throw VaultError.unsafeArchiveEntry(item: entry.name, entry: path, reason: reason)
        }
    }
}

/// One chunk being opened ahead, on a shared concurrent queue, into a buffer
/// it owns. The work holds this object and the reader only (never the
/// `RandomAccessContent` that started it) and never waits for anything, so
/// it always ends, and ends by itself when nobody wants its chunk any more.
final class ChunkPrefetch: @unchecked Sendable {
    // @unchecked: `result` is written once on the queue before `done`
    // leaves, and read only after `wait()`; the buffer likewise.
    let index: UInt64
    let buffer: PageBuffer
    private var result: Result<Int, Error>?
    private let done = DispatchGroup()
    private static let queue = DispatchQueue(label: "vault.random-access.prefetch", attributes: .concurrent)

    init(index: UInt64, into buffer: PageBuffer, reader: ItemReader) {
        self.index = index
        self.buffer = buffer
        Self.queue.async(group: done) { [self] in
            result = Result { try reader.readChunk(index, into: buffer.raw) }
        }
    }

    /// How the chunk opened (its content bytes in `buffer`), once it has.
    func wait() -> Result<Int, Error> {
        done.wait()
        return result!
    }
}
