import VaultCodecs

/// Reads a file item's content at any offset, as a file system does
/// (`vault mount`): only the chunks a read touches are read and
/// authenticated (docs/FORMAT.md, "Reading": any chunk opens on its own once
/// the final chunk has), and the last one is kept for the next read, so
/// memory stays at one chunk whatever the item's size. A compressed item
/// has no random access: it is decompressed from its start, forward, and
/// from the start again when a read goes backwards.
///
/// Exactly the item's `size` bytes are released: a chunk that fails to
/// authenticate, or decompressed content longer or shorter than the entry,
/// is `itemCorrupted` for that read and every later one.
public final class RandomAccessContent {
    public let entry: ManifestEntry
    private let reader: ItemReader
    private let compressed: Bool
    private var cachedChunk: UInt64?
    private var cached: [UInt8] = []
    /// Compressed items: the decompressed stream and how far into it we are.
    private var stream: ByteStream?
    private var position: UInt64 = 0

    init(entry: ManifestEntry, reader: ItemReader) {
        self.entry = entry
        self.reader = reader
        compressed = reader.header.flags.contains(.compressed)
    }

    /// Fills `buffer` from `offset`; fewer bytes only at the end of the item.
    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < entry.size, !buffer.isEmpty else { return 0 }
        let want = Int(min(UInt64(buffer.count), entry.size - offset))
        do {
            return try compressed ? readDecompressed(at: offset, into: .init(rebasing: buffer[..<want]))
                                  : readChunks(at: offset, into: .init(rebasing: buffer[..<want]))
        } catch VaultError.corruptedOrTampered, is XZError {
            throw VaultError.itemCorrupted(name: entry.name)
        }
    }

    private func readChunks(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        let size = UInt64(ItemCipher.chunkSize)
        while done < buffer.count {
            let at = offset + UInt64(done)
            let index = at / size
            if cachedChunk != index {
                cachedChunk = nil
                cached = try reader.readChunk(index)
                cachedChunk = index
            }
            let start = Int(at - index * size)
            guard start < cached.count else { throw VaultError.corruptedOrTampered }   // shorter than the entry says
            let n = min(buffer.count - done, cached.count - start)
            cached.withUnsafeBytes { buffer.baseAddress!.advanced(by: done).copyMemory(from: $0.baseAddress! + start, byteCount: n) }
            done += n
        }
        return done
    }

    private func readDecompressed(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if stream == nil || offset < position {
            stream = try XZDecompressor(upstream: reader.contentStream())
            position = 0
        }
        guard let stream else { return 0 }
        var skip = [UInt8](repeating: 0, count: 1 << 16)
        while position < offset {
            let n = try skip.withUnsafeMutableBytes { try stream.read(into: .init(rebasing: $0[..<Int(min(UInt64($0.count), offset - position))])) }
            guard n > 0 else { throw VaultError.corruptedOrTampered }
            position += UInt64(n)
        }
        var done = 0
        while done < buffer.count {
            let n = try stream.read(into: .init(rebasing: buffer[done...]))
            guard n > 0 else { throw VaultError.corruptedOrTampered }   // ended before `size`
            done += n
        }
        position += UInt64(done)
        if position == entry.size {
            // Past `size` there must be nothing: else the entry and its content disagree.
            var one = [UInt8](repeating: 0, count: 1)
            guard try one.withUnsafeMutableBytes({ try stream.read(into: $0) }) == 0 else { throw VaultError.corruptedOrTampered }
            self.stream = nil
        }
        return done
    }
}

extension UnlockedVault {
    /// Opens a file item for reads at any offset (its final chunk is
    /// authenticated and its header checked against the entry here).
    public func randomAccess(_ entry: ManifestEntry) throws -> RandomAccessContent {
        guard entry.kind == .file else { throw VaultError.invalidArgument("'\(entry.name)' is a folder") }
        return RandomAccessContent(entry: entry, reader: try reader(for: entry))
    }
}
