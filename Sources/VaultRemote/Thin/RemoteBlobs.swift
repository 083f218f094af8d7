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

    /// Set by a command that reads every block of the blobs it opens (a
    /// whole restore, `check --read-data`): each blob is then read in one
    /// request from its start (BlobStream), at most this many blocks ahead
    /// of its readers. 0: blocks are fetched as they are read.
    public var streamAhead = 0

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
        if streamAhead > 0 && cache == nil { return try streamed(name) }
        if let size = sizes.withLock({ $0[name] }) {
            return RemoteBlobSource(name: name, size: size, blobs: self)
        }
        if let (size, header) = cache?.header(of: name) {
            return RemoteBlobSource(name: name, size: size, blobs: self, header: header)
        }
        // The first block tells the size: one request, which the reader's
        // first read (the header) would make anyway.
        guard let (bytes, total) = try server.http.read("items/" + name, offset: 0, count: Blocks.first, clipped: true) else { return nil }
        sizes.withLock { $0[name] = total }
        let source = RemoteBlobSource(name: name, size: total, blobs: self)
        // Block 0 whole, or the whole blob when it is shorter.
        try source.keep(0, bytes[...])
        return source
    }

    /// A blob read whole: its stream from the start and, beside it, its
    /// final block by a suffix range. ItemReader authenticates the final
    /// chunk first, which the stream brings last; the last `Blocks.chunk`
    /// bytes hold it whole, whatever the blob's size.
    private func streamed(_ name: String) throws -> ByteSource? {
        let path = "items/" + name
        let stream = BlobStream(server.http, path, limit: streamAhead)
        let answer: (bytes: [UInt8], total: UInt64)?
        do { answer = try server.http.tail(path, count: Int(Blocks.chunk)) } catch { stream.cancel(); throw error }
        guard let (bytes, total) = answer else { stream.cancel(); return nil }
        let known = sizes.withLock { s in
            let known = s[name]
            if known == nil { s[name] = total }
            return known
        }
        guard known == nil || known == total else {
            stream.cancel()
            throw RemoteError.malformedRemote(.changedWhileDownloading(path))
        }
        // A blob the tail holds whole needs no stream.
        let whole = UInt64(bytes.count) == total
        if whole { stream.cancel() }
        let source = RemoteBlobSource(name: name, size: total, blobs: self, stream: whole ? nil : stream)
        let last = Blocks.index(of: total - 1), r = Blocks.range(last, size: total)
        // (A blob of one block a little longer than a chunk: its stream brings it.)
        if r.count <= bytes.count { try source.keep(last, bytes[(bytes.count - Int(r.count))...]) }
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
    /// The blob read whole from its start, when the command reads every
    /// block (RemoteBlobs.streamAhead).
    private let stream: BlobStream?
    /// The item header (the first bytes), once known, and whether the
    /// cache holds it: every chunk's AAD holds it, so the first chunk to
    /// authenticate proves it, and a later command opens the blob from
    /// the cache without a request.
    private let header = Mutex<(bytes: [UInt8]?, cached: Bool)>((nil, false))
    private static let keptBlocks = 5
    /// Requests in flight for one read at most.
    static let parallelFetches = 8

    init(name: String, size: UInt64, blobs: RemoteBlobs, header: [UInt8]? = nil, stream: BlobStream? = nil) {
        (self.name, self.size, self.blobs, self.stream) = (name, size, blobs, stream)
        self.header.withLock { $0 = (header, header != nil) }
    }

    deinit { stream?.cancel() }

    func keep(_ index: UInt64, _ bytes: ArraySlice<UInt8>, cached: Bool = false) throws {
        guard UInt64(bytes.count) == Blocks.range(index, size: size).count else {
            throw RemoteError.malformedRemote(.wrongAnswer("items/" + name))
        }
        recent.withLock { r in
            r.removeAll { $0.index == index }
            r.append(Kept(index: index, bytes: bytes, cached: cached))
            if r.count > Self.keptBlocks { r.removeFirst() }
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
        if let stream {
            for k in missing { if let b = stream.take(indexes[k], size: size) { got[k] = (b, false) } }
        }
        let rest = missing.filter { got[$0] == nil }
        if rest.count == 1 {
            got[rest[0]] = try blobs.block(name, size: size, indexes[rest[0]])
        } else if !rest.isEmpty {
            let results = Mutex<[Int: Result<(bytes: ArraySlice<UInt8>, cached: Bool), any Error>]>([:])
            let next = Atomic<Int>(0)
            let group = DispatchGroup()
            for _ in 0..<min(Self.parallelFetches, rest.count) {
                group.enter()
                Thread {
                    defer { group.leave() }
                    while case let k = next.add(1, ordering: .relaxed).oldValue, k < rest.count {
                        let r = Result { try self.blobs.block(self.name, size: self.size, indexes[rest[k]]) }
                        results.withLock { $0[rest[k]] = r }
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
