import ByteLayout
import Synchronization
import VaultCrypto
import System

/// Opens a sealed item (see ItemCipher.swift) for streaming or random access.
///
/// `init` checks the exact shape (header, chunk count and final chunk size
/// from the file size) and authenticates the final chunk, which carries the
/// content length; so truncation, dropped or appended chunks, and a moved
/// final flag fail before any content is returned. Every other chunk is
/// authenticated before its bytes leave the reader. All failures are the one
/// `VaultError.corruptedOrTampered`.
///
/// `readChunk` may be called from several threads at once (a mounted
/// folder's files share one reader): each call opens its chunk with an AEAD
/// context of its own, taken from a few kept for reuse.
// @unchecked Sendable: nothing changes after init (contentLength is set
// once there) but the locked spare contexts, and sources read with pread,
// so worker threads may share it.
public final class ItemReader: @unchecked Sendable {
    public let header: ItemHeader
    public private(set) var contentLength: UInt64
    public let chunkCount: UInt64
    private let streamLength: UInt64
    private let headerBytes: [UInt8]
    private let source: ByteSource
    private let workers: ChunkWorkers
    private let key: FileKey
    /// AEAD contexts for `readChunk`, each used by one call at a time.
    private let spareContexts = Mutex<[UncheckedAEAD]>([])
    private static let keptContexts = 4

    public init(key: FileKey, source: ByteSource, threads: Int = 2) throws {
        self.source = source
        let size = source.size
        let h = UInt64(ItemHeader.length), sealed = UInt64(ItemCipher.sealedChunkSize)
        let tag = UInt64(ItemCipher.tagLength)
        guard size >= h + tag + UInt64(ItemCipher.trailerLength) else { throw VaultError.corruptedOrTampered }
        var hb = [UInt8](repeating: 0, count: ItemHeader.length)
        guard try hb.withUnsafeMutableBytes({ try source.read(at: 0, into: $0) }) == ItemHeader.length else {
            throw VaultError.corruptedOrTampered
        }
        header = try ItemHeader(parsing: hb)
        headerBytes = hb
        let body = size - h
        let chunks = (body + sealed - 1) / sealed
        guard chunks <= ItemCipher.maxChunks, body - (chunks - 1) * sealed > tag else {
            throw VaultError.corruptedOrTampered
        }
        chunkCount = chunks
        streamLength = body - chunks * tag
        workers = try ChunkWorkers(key: key, threads: threads)
        self.key = key
        contentLength = 0

        // Authenticate the final chunk and take the content length from its
        // trailer. Only canonical padding is accepted (the stream is exactly
        // Padmé(length + 8) long), so one content length has one encoding.
        let page = try PageBuffer(count: plaintextSize(chunks - 1) + ItemCipher.tagLength, filled: true)
        defer { withExtendedLifetime(page) {} }
        let buffer = page.raw
        let n = try readAndOpen(chunk: chunks - 1, into: buffer, aead: workers[0])
        // A final chunk shorter than the trailer is never canonical (with two
        // or more chunks Padmé makes the last one a multiple of 32 KiB), and
        // would leave no room to read the trailer from.
        guard n >= ItemCipher.trailerLength else { throw VaultError.corruptedOrTampered }
        var tail = RawByteReader(UnsafeRawBufferPointer(rebasing: buffer[(n - ItemCipher.trailerLength)..<n]))
        // A trailer cut short is damage like any other (corruptedOrTampered).
        guard let trailer = try? tail.u64(), trailer <= streamLength - UInt64(ItemCipher.trailerLength),
              ItemCipher.streamLength(contentLength: trailer) == streamLength else {
            throw VaultError.corruptedOrTampered
        }
        contentLength = trailer
        _ = try content(ofChunk: chunks - 1, plaintext: UnsafeRawBufferPointer(rebasing: buffer[..<n]))
    }

    /// Plaintext bytes in chunk `i` (content, padding and trailer together).
    private func plaintextSize(_ i: UInt64) -> Int {
        Int(min(UInt64(ItemCipher.chunkSize), streamLength - i * UInt64(ItemCipher.chunkSize)))
    }

    /// Opens chunk `i` in place: `p` holds its sealed bytes, and afterwards
    /// its plaintext (or zeros, if it failed to authenticate).
    private func open(chunk i: UInt64, at p: UnsafeMutableRawPointer, aead: AEAD) throws {
        let size = plaintextSize(i)
        let nonce = ItemCipher.nonce(prefix: header.noncePrefix, index: UInt32(i))
        let aad = ItemCipher.aad(header: headerBytes, index: UInt32(i), final: i == chunkCount - 1)
        do {
            try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in
                try aead.open(nonce: n, aad: a, sealed: UnsafeRawBufferPointer(start: p, count: size + ItemCipher.tagLength),
                              into: UnsafeMutableRawBufferPointer(start: p, count: size))
            } }
        } catch CryptoError.authenticationFailed {
            throw VaultError.corruptedOrTampered
        }
        let offset = UInt64(ItemHeader.length) + i * UInt64(ItemCipher.sealedChunkSize)
        source.authenticated(offset..<(offset + UInt64(size + ItemCipher.tagLength)))
    }

    /// Reads and opens chunk `i` into `buffer`; returns its plaintext size.
    private func readAndOpen(chunk i: UInt64, into buffer: UnsafeMutableRawBufferPointer, aead: AEAD) throws -> Int {
        let size = plaintextSize(i)
        let sealedSize = size + ItemCipher.tagLength
        let offset = UInt64(ItemHeader.length) + i * UInt64(ItemCipher.sealedChunkSize)
        guard try source.read(at: offset, into: .init(rebasing: buffer[..<sealedSize])) == sealedSize else {
            throw VaultError.corruptedOrTampered
        }
        try open(chunk: i, at: buffer.baseAddress!, aead: aead)
        return size
    }

    /// The number of content bytes at the start of chunk `i`'s plaintext.
    /// Also checks that the padding it holds is zero (padding is authenticated,
    /// so this only rejects streams this tool would never write).
    private func content(ofChunk i: UInt64, plaintext: UnsafeRawBufferPointer) throws -> Int {
        let start = i * UInt64(ItemCipher.chunkSize)
        let contentEnd = contentLength > start ? Int(min(contentLength - start, UInt64(plaintext.count))) : 0
        let padEnd = Int(min(streamLength - UInt64(ItemCipher.trailerLength) - start, UInt64(plaintext.count)))
        if padEnd > contentEnd, !UnsafeRawBufferPointer(rebasing: plaintext[contentEnd..<padEnd]).isAllZero {
            throw VaultError.corruptedOrTampered
        }
        return contentEnd
    }

    /// Reads chunk `index` on its own and returns its content bytes (empty
    /// for chunks that hold only padding).
    public func readChunk(_ index: UInt64) throws -> [UInt8] {
        guard index < chunkCount else { throw VaultError.misuse(.chunkOutOfRange(index)) }
        let page = try PageBuffer(count: plaintextSize(index) + ItemCipher.tagLength)
        defer { withExtendedLifetime(page) {} }
        let buffer = page.raw
        let n = try withContext { try readAndOpen(chunk: index, into: buffer, aead: $0) }
        let c = try content(ofChunk: index, plaintext: UnsafeRawBufferPointer(rebasing: buffer[..<n]))
        return Array(buffer[..<c])
    }

    /// Reads chunk `index` into `buffer` (at least `ItemCipher.sealedChunkSize`
    /// bytes, reused by the caller from read to read) and returns how many
    /// content bytes it holds at its start: `readChunk` without an
    /// allocation per chunk, for random access.
    public func readChunk(_ index: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard index < chunkCount, buffer.count >= plaintextSize(index) + ItemCipher.tagLength else {
            throw VaultError.misuse(.chunkOutOfRange(index))
        }
        let n = try withContext { try readAndOpen(chunk: index, into: buffer, aead: $0) }
        return try content(ofChunk: index, plaintext: UnsafeRawBufferPointer(rebasing: buffer[..<n]))
    }

    /// Runs `body` with an AEAD context no other thread uses meanwhile: a
    /// spare one, else a new one; afterwards kept (up to `keptContexts`).
    private func withContext<T>(_ body: (AEAD) throws -> T) throws -> T {
        let context = try spareContexts.withLock { $0.popLast() } ?? UncheckedAEAD(ChunkWorkers.context(key))
        defer { spareContexts.withLock { if $0.count < Self.keptContexts { $0.append(context) } } }
        return try body(context.aead)
    }

    /// Streams all content to `sink` in order. Batches of chunks are opened
    /// in parallel in place; while the workers open one batch, one of them
    /// first writes out the previous (already authenticated) batch and reads
    /// the next. Nothing of a batch reaches the sink unless all of it
    /// authenticated.
    public func readAll(to sink: ByteSink, batchChunks: Int = 16) throws {
        let sealedSize = ItemCipher.sealedChunkSize
        // Sized to the item: a small one needs one slot of its own size.
        let slots = Int(min(UInt64(batchChunks), chunkCount))
        let pages = try (0..<2).map { _ in
            try PageBuffer(count: slots == 1 ? plaintextSize(0) + ItemCipher.tagLength : slots * sealedSize)
        }
        defer { withExtendedLifetime(pages) {} }
        let buffers = pages.map { SharedBuffer(raw: $0.raw) }
        let batches = (chunkCount + UInt64(batchChunks) - 1) / UInt64(batchChunks)
        let firstChunk = { (b: UInt64) in b * UInt64(batchChunks) }
        let chunksIn = { (b: UInt64) in Int(min(UInt64(batchChunks), self.chunkCount - firstChunk(b))) }

        func read(batch b: UInt64, into buffer: SharedBuffer) throws {
            let count = chunksIn(b)
            let last = firstChunk(b) + UInt64(count) - 1
            let bytes = (count - 1) * sealedSize + self.plaintextSize(last) + ItemCipher.tagLength
            let offset = UInt64(ItemHeader.length) + firstChunk(b) * UInt64(sealedSize)
            guard try self.source.read(at: offset, into: .init(rebasing: buffer.raw[..<bytes])) == bytes else {
                throw VaultError.corruptedOrTampered
            }
        }
        func write(batch b: UInt64, from buffer: SharedBuffer) throws {
            for k in 0..<chunksIn(b) {
                let i = firstChunk(b) + UInt64(k)
                let plain = UnsafeRawBufferPointer(start: buffer.raw.baseAddress! + k * sealedSize,
                                                   count: self.plaintextSize(i))
                let n = try self.content(ofChunk: i, plaintext: plain)
                if n > 0 { try sink.write(UnsafeRawBufferPointer(rebasing: plain[..<n])) }
            }
        }

        try read(batch: 0, into: buffers[0])
        for b in 0..<batches {
            let (mine, other) = (buffers[Int(b % 2)], buffers[Int((b + 1) % 2)])
            try workers.forEach(chunksIn(b), alongside: {
                if b > 0 { try write(batch: b - 1, from: other) }
                if b + 1 < batches { try read(batch: b + 1, into: other) }
            }) { aead, k in
                try self.open(chunk: firstChunk(b) + UInt64(k), at: mine.raw.baseAddress! + k * sealedSize, aead: aead)
            }
        }
        try write(batch: batches - 1, from: buffers[Int((batches - 1) % 2)])
    }

    /// The content as a sequential pull stream (one chunk at a time, each
    /// authenticated before any of its bytes are handed out), for consumers
    /// that pull: the xz and zstd decoders, the archive extractor, a mounted
    /// folder's index. The next two chunks are opened on other threads while
    /// this one is consumed (one ahead left a core idle: indexing a mounted
    /// folder waited on one decryption at a time); three buffers in all,
    /// reused to the end. From `start` on (a zstd frame a mounted item resumes at).
    public func contentStream(from start: UInt64 = 0) -> ByteStream { ContentStream(self, from: start) }

    private final class ContentStream: LendingByteStream {
        let reader: ItemReader
        /// The next chunk to hand out.
        var next: UInt64
        var page: PageBuffer?
        var count = 0
        var offset = 0
        /// Chunks `next`, `next + 1`, … being opened ahead, in order, and
        /// the buffers of chunks handed out, for the ones after.
        var ahead: [ChunkPrefetch] = []
        var spare: [PageBuffer] = []
        static let depth = 2
        /// Where in the first chunk handed out to start.
        var skip: Int
        init(_ reader: ItemReader, from start: UInt64) {
            self.reader = reader
            next = start / UInt64(ItemCipher.chunkSize)
            skip = Int(start % UInt64(ItemCipher.chunkSize))
        }

        /// A chunk's buffer: a small item's one chunk needs only its own size.
        func buffer() throws -> PageBuffer {
            try spare.popLast() ?? PageBuffer(count: reader.chunkCount == 1 ? reader.plaintextSize(0) + ItemCipher.tagLength
                                                                         : ItemCipher.sealedChunkSize, filled: true)
        }

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            guard !buffer.isEmpty, try fill() else { return 0 }
            let n = min(buffer.count, count - offset)
            buffer.baseAddress!.copyMemory(from: page!.raw.baseAddress! + offset, byteCount: n)
            offset += n
            return n
        }

        func lend(upTo limit: Int) throws -> UnsafeRawBufferPointer {
            guard limit > 0, try fill() else { return UnsafeRawBufferPointer(start: nil, count: 0) }
            let n = min(limit, count - offset)
            defer { offset += n }
            return UnsafeRawBufferPointer(start: page!.raw.baseAddress! + offset, count: n)
        }

        /// Makes the current chunk hold bytes not handed out yet; false at the end.
        private func fill() throws -> Bool {
            while offset == count {
                guard next < reader.chunkCount else { return false }
                if !ahead.isEmpty {
                    let prefetch = ahead.removeFirst()
                    let result = prefetch.wait()
                    if let page { spare.append(page) }
                    page = prefetch.buffer
                    count = try result.get()
                } else {
                    // The first chunk is opened here; the ones after it
                    // start on other threads first, so that they are under
                    // way meanwhile, not only once it is open.
                    try openAhead(after: next)
                    let p = try page ?? self.buffer()
                    page = p
                    count = try reader.readChunk(next, into: p.raw)
                }
                (offset, skip) = (min(skip, count), 0)
                try openAhead(after: next)
                next += 1
            }
            return true
        }

        /// Starts opening the chunks after `index` that are not under way
        /// yet, up to `depth` of them (`ahead` holds index + 1, index + 2, …).
        private func openAhead(after index: UInt64) throws {
            while ahead.count < Self.depth, index + 1 + UInt64(ahead.count) < reader.chunkCount {
                ahead.append(ChunkPrefetch(index: index + 1 + UInt64(ahead.count), into: try self.buffer(), reader: reader))
            }
        }
    }
}

/// An AEAD context held in `ItemReader`'s spares: only ever used by the
/// one call that took it out.
private struct UncheckedAEAD: @unchecked Sendable {
    let aead: AEAD
    init(_ aead: AEAD) { self.aead = aead }
}
