import Synchronization
import System
import VaultCore

/// A thin vault's blobs on its remote (BlobFetcher), read by range through
/// one RcloneServer. A blob is read in blocks that are its sealed chunks
/// (block 0 with the item header in front): a chunk is one request, and
/// what a reader needs is all that is fetched. Blocks go through a small
/// memory cache and, when `cache` is given, a bounded cache on disk (the
/// snapshot listings and the mount read the same trees again and again).
/// Nothing here trusts a byte: ItemReader authenticates every chunk it is
/// given; this checks only the shapes (the range asked for, the object's
/// size staying the same between two reads of it).
public final class RemoteBlobs: BlobFetcher, @unchecked Sendable {
    public let server: RcloneServer
    let cache: BlockCache?
    /// Each blob's size as its first read found it (blob name → size).
    private let sizes = Mutex<[String: UInt64]>([:])

    public init(server: RcloneServer, cache: BlockCache?) {
        self.server = server
        self.cache = cache
    }

    /// Ends the command's use: the cache trimmed to its bound.
    public func finish() throws { try cache?.trim() }

    public var requests: Int { server.http.requests.load(ordering: .relaxed) }
    public var bytesReceived: UInt64 { server.http.received.load(ordering: .relaxed) }

    public func source(forBlob name: String) throws -> ByteSource? {
        guard RemoteNames.isItemID(Substring(name)) else { return nil }
        if let size = sizes.withLock({ $0[name] }) ?? cache?.size(of: name) {
            return RemoteBlobSource(name: name, size: size, blobs: self)
        }
        // The first block tells the size: one request, which the reader's
        // first read (the header) would make anyway.
        guard let (bytes, total) = try server.http.read("items/" + name, offset: 0, count: Blocks.first, clipped: true) else { return nil }
        sizes.withLock { $0[name] = total }
        let source = RemoteBlobSource(name: name, size: total, blobs: self)
        try source.keep(0, bytes)
        cache?.write(name, size: total, index: 0, bytes)
        return source
    }

    /// Block `index` of blob `name` (`size` bytes in all), from the caches
    /// or the remote.
    func block(_ name: String, size: UInt64, _ index: UInt64) throws -> [UInt8] {
        let range = Blocks.range(index, size: size)
        if let cached = cache?.read(name, size: size, index: index, count: Int(range.count)) { return cached }
        guard let (bytes, total) = try server.http.read("items/" + name, offset: range.lowerBound, count: Int(range.count), clipped: false) else {
            throw RemoteError.malformedRemote(.changedWhileDownloading("items/" + name))
        }
        // The same object as the size came from: one that changed between
        // two reads is refused whole, not read in parts of two.
        guard total == size else { throw RemoteError.malformedRemote(.changedWhileDownloading("items/" + name)) }
        cache?.write(name, size: size, index: index, bytes)
        return bytes
    }
}

/// A blob's blocks: its sealed chunks, the item header in front of the first.
enum Blocks {
    static let header = UInt64(ItemHeader.length), chunk = UInt64(ItemCipher.sealedChunkSize)
    static let first = Int(header + chunk)

    static func index(of offset: UInt64) -> UInt64 { offset < header ? 0 : (offset - header) / chunk }

    static func range(_ index: UInt64, size: UInt64) -> Range<UInt64> {
        let start = index == 0 ? 0 : header + index * chunk
        let end = min(header + (index + 1) * chunk, size)
        return start..<max(start, end)
    }
}

/// One remote blob as random-access bytes for ItemReader, which reads it
/// from several threads: a few recent blocks kept in memory.
final class RemoteBlobSource: ByteSource, @unchecked Sendable {
    let name: String
    let size: UInt64
    let blobs: RemoteBlobs
    private let recent = Mutex<[(index: UInt64, bytes: [UInt8])]>([])
    private static let keptBlocks = 4

    init(name: String, size: UInt64, blobs: RemoteBlobs) {
        (self.name, self.size, self.blobs) = (name, size, blobs)
    }

    func keep(_ index: UInt64, _ bytes: [UInt8]) throws {
        guard UInt64(bytes.count) == Blocks.range(index, size: size).count else {
            throw RemoteError.malformedRemote(.wrongAnswer("items/" + name))
        }
        recent.withLock { r in
            r.removeAll { $0.index == index }
            r.append((index, bytes))
            if r.count > Self.keptBlocks { r.removeFirst() }
        }
    }

    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count, offset + UInt64(done) < size {
            let at = offset + UInt64(done)
            let index = Blocks.index(of: at)
            let range = Blocks.range(index, size: size)
            let bytes = try block(index)
            let from = Int(at - range.lowerBound)
            let n = min(buffer.count - done, bytes.count - from)
            guard n > 0 else { break }
            bytes.withUnsafeBytes { b in
                UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + n)]).copyMemory(from: UnsafeRawBufferPointer(rebasing: b[from..<(from + n)]))
            }
            done += n
        }
        return done
    }

    private func block(_ index: UInt64) throws -> [UInt8] {
        if let hit = recent.withLock({ r in r.first { $0.index == index }?.bytes }) { return hit }
        let bytes = try blobs.block(name, size: size, index)
        try keep(index, bytes)
        return bytes
    }
}
