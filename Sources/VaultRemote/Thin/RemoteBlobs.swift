import Foundation
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

    /// Blocks one request fetches when a single block is asked for: 1, or
    /// more where every block will be read (a whole restore: one request
    /// per so many MiB instead of one per chunk; each request costs rclone
    /// an open and a seek).
    public var blocksPerRequest = 1

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
        if let size = sizes.withLock({ $0[name] }) {
            return RemoteBlobSource(name: name, size: size, blobs: self)
        }
        if let (size, header) = cache?.header(of: name) {
            return RemoteBlobSource(name: name, size: size, blobs: self, header: header)
        }
        // The first block tells the size: one request, which the reader's
        // first read (the header) would make anyway; a window of blocks
        // where every block is wanted (a whole restore: one request less a pack).
        let window = blocksPerRequest > 1 && cache == nil ? blocksPerRequest : 1
        let count = Blocks.first + (window - 1) * Int(Blocks.chunk)
        // There, the final block too, at the same time: the reader's next
        // read (ItemReader authenticates it first) would otherwise wait
        // for one more round trip per pack. The last `Blocks.chunk` bytes
        // hold it whole, whatever the size turns out to be.
        let tail = window > 1 ? TailRead() : nil
        let group = DispatchGroup()
        if let tail {
            group.enter()
            Thread { [self] in
                defer { group.leave() }
                let r = Result { try server.http.tail("items/" + name, count: Int(Blocks.chunk)) }
                tail.answer.withLock { $0 = r }
            }.start()
        }
        let first = Result { try server.http.read("items/" + name, offset: 0, count: count, clipped: true) }
        group.wait()
        guard let (bytes, total) = try first.get() else { return nil }
        sizes.withLock { $0[name] = total }
        let source = RemoteBlobSource(name: name, size: total, blobs: self)
        // Whole blocks only: the answer ends at a block's end or the blob's.
        var index: UInt64 = 0
        while case let r = Blocks.range(index, size: total), r.upperBound <= UInt64(bytes.count), !r.isEmpty {
            try source.keep(index, bytes[Int(r.lowerBound)..<Int(r.upperBound)])
            index += 1
        }
        if let tail, total > UInt64(bytes.count) {
            // The same object, or nothing of it is used.
            guard let answer = try tail.answer.withLock({ $0 })?.get(), answer.total == total else {
                throw RemoteError.malformedRemote(.changedWhileDownloading("items/" + name))
            }
            // The answer is the object's last answer.bytes.count bytes (HTTPRange.tail checked).
            let last = Blocks.index(of: total - 1), r = Blocks.range(last, size: total)
            let start = answer.bytes.count - r.count
            try source.keep(last, answer.bytes[start...])
        }
        return source
    }

    /// Blocks `range` of blob `name` from the remote in one request (no
    /// cache), each of its exact length. The object's size must be the one
    /// its first read found: one that changed between two reads is refused
    /// whole, never read in parts of two.
    /// Slices of the one answer, not copies of its bytes.
    func blocks(_ name: String, size: UInt64, _ range: ClosedRange<UInt64>) throws -> [ArraySlice<UInt8>] {
        let start = Blocks.range(range.lowerBound, size: size).lowerBound, end = Blocks.range(range.upperBound, size: size).upperBound
        guard end - start <= UInt64(HTTPRange.maxAnswer),
              let (bytes, total) = try server.http.read("items/" + name, offset: start, count: Int(end - start), clipped: false) else {
            throw RemoteError.malformedRemote(.changedWhileDownloading("items/" + name))
        }
        guard total == size else { throw RemoteError.malformedRemote(.changedWhileDownloading("items/" + name)) }
        return range.map { i in
            let r = Blocks.range(i, size: size)
            return bytes[Int(r.lowerBound - start)..<Int(r.upperBound - start)]
        }
    }

    /// Block `index` of blob `name` (`size` bytes in all), from the disk
    /// cache or the remote.
    func block(_ name: String, size: UInt64, _ index: UInt64) throws -> (bytes: ArraySlice<UInt8>, cached: Bool) {
        let range = Blocks.range(index, size: size)
        if let cached = cache?.read(name, size: size, index: index, count: Int(range.count)) { return (cached[...], true) }
        return (try blocks(name, size: size, index...index)[0], false)
    }
}

/// The answer of a blob's tail read, made beside its first window.
private final class TailRead: Sendable {
    let answer = Mutex<Result<(bytes: [UInt8], total: UInt64)?, any Error>?>(nil)
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
/// from several threads: a few recent blocks kept in memory; the blocks a
/// read spans fetched side by side (a restore reads 16 chunks at once);
/// a block enters the disk cache only once ItemReader said its chunk
/// authenticated, so nothing wrong is ever kept.
final class RemoteBlobSource: ByteSource, @unchecked Sendable {
    let name: String
    let size: UInt64
    let blobs: RemoteBlobs
    private struct Kept { let index: UInt64; let bytes: ArraySlice<UInt8>; var cached: Bool }
    private let recent = Mutex<[Kept]>([])
    /// Held while one read fetches a window of blocks: the readers ahead
    /// (SharedChunks opens chunks on other threads) wait for it and find
    /// their block in `recent`, instead of each fetching its own window
    /// over the same bytes (measured: 1.6x the bytes of a whole restore).
    private let windowFetch = Mutex<Void>(())
    /// The item header (the first bytes), once known, and whether the
    /// cache holds it: every chunk's AAD holds it, so the first chunk to
    /// authenticate proves it, and a later command opens the blob from
    /// the cache without a request.
    private let header = Mutex<(bytes: [UInt8]?, cached: Bool)>((nil, false))
    private var keptBlocks: Int { 4 + blobs.blocksPerRequest }
    /// Requests in flight for one read at most.
    static let parallelFetches = 8

    init(name: String, size: UInt64, blobs: RemoteBlobs, header: [UInt8]? = nil) {
        (self.name, self.size, self.blobs) = (name, size, blobs)
        self.header.withLock { $0 = (header, header != nil) }
    }

    func keep(_ index: UInt64, _ bytes: ArraySlice<UInt8>, cached: Bool = false) throws {
        guard UInt64(bytes.count) == Blocks.range(index, size: size).count else {
            throw RemoteError.malformedRemote(.wrongAnswer("items/" + name))
        }
        recent.withLock { r in
            r.removeAll { $0.index == index }
            r.append(Kept(index: index, bytes: bytes, cached: cached))
            if r.count > keptBlocks { r.removeFirst() }
        }
        if index == 0 { header.withLock { h in if h.bytes == nil { h.bytes = Array(bytes.prefix(Int(Blocks.header))) } } }
    }

    func authenticated(_ range: Range<UInt64>) {
        guard let cache = blobs.cache else { return }
        let proven = header.withLock { h -> [UInt8]? in
            guard let b = h.bytes, !h.cached else { return nil }
            h.cached = true
            return b
        }
        if let proven { cache.writeHeader(name, size: size, proven) }
        let index = Blocks.index(of: range.lowerBound)
        let block = recent.withLock { r -> ArraySlice<UInt8>? in
            guard let k = r.firstIndex(where: { $0.index == index }), !r[k].cached else { return nil }
            r[k].cached = true
            return r[k].bytes
        }
        if let block { cache.write(name, size: size, index: index, Array(block)) }
    }

    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < size, buffer.count > 0 else { return 0 }
        // The header alone (ItemReader's first read), when it is known.
        if offset + UInt64(buffer.count) <= Blocks.header, let h = header.withLock({ $0.bytes }), h.count == Int(Blocks.header) {
            let from = Int(offset)
            h.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[from..<(from + buffer.count)])) }
            return buffer.count
        }
        let end = min(size, offset + UInt64(buffer.count))
        let indexes = Array(Blocks.index(of: offset)...Blocks.index(of: end - 1))
        let blocks = try fetch(indexes)
        var done = 0
        for (index, bytes) in zip(indexes, blocks) {
            let range = Blocks.range(index, size: size)
            let at = offset + UInt64(done)
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

    /// The blocks `indexes`, from memory, the cache or the remote; those
    /// to fetch fetched on up to `parallelFetches` threads.
    private func fetch(_ indexes: [UInt64]) throws -> [ArraySlice<UInt8>] {
        var out = recent.withLock { r in indexes.map { i in r.first { $0.index == i }?.bytes } }
        let missing = out.indices.filter { out[$0] == nil }
        var got: [Int: (bytes: ArraySlice<UInt8>, cached: Bool)] = [:]
        if missing.count == 1, blobs.blocksPerRequest > 1, blobs.cache == nil {
            // The blocks after it too, in one request; those not asked for now kept for the reads to come.
            let first = indexes[missing[0]], count = (size - Blocks.header + Blocks.chunk - 1) / Blocks.chunk
            try windowFetch.withLock { _ in
                if let fetched = recent.withLock({ r in r.first { $0.index == first }?.bytes }) {
                    got[missing[0]] = (fetched, false)   // another reader's window brought it meanwhile
                    return
                }
                let last = min(count, first + UInt64(blobs.blocksPerRequest)) - 1
                let blocks = try blobs.blocks(name, size: size, first...last)
                got[missing[0]] = (blocks[0], false)
                for (k, b) in blocks.enumerated().dropFirst() { try keep(first + UInt64(k), b) }
            }
        } else if missing.count == 1 {
            got[missing[0]] = try blobs.block(name, size: size, indexes[missing[0]])
        } else if !missing.isEmpty {
            let results = Mutex<[Int: Result<(bytes: ArraySlice<UInt8>, cached: Bool), any Error>]>([:])
            let next = Atomic<Int>(0)
            let group = DispatchGroup()
            for _ in 0..<min(Self.parallelFetches, missing.count) {
                group.enter()
                Thread {
                    defer { group.leave() }
                    while case let k = next.add(1, ordering: .relaxed).oldValue, k < missing.count {
                        let r = Result { try self.blobs.block(self.name, size: self.size, indexes[missing[k]]) }
                        results.withLock { $0[missing[k]] = r }
                    }
                }.start()
            }
            group.wait()
            for (k, r) in results.withLock({ $0 }) { got[k] = try r.get() }
        }
        for k in missing {
            guard let g = got[k] else { throw RemoteError.malformedRemote(.wrongAnswer("items/" + name)) }
            try keep(indexes[k], g.bytes, cached: g.cached)
            out[k] = g.bytes
        }
        return out.map { $0 ?? [] }
    }
}
