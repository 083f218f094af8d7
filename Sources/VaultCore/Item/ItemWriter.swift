import ByteLayout
import VaultCrypto
import System

/// Streams content into the sealed item format (see ItemCipher.swift).
///
/// Memory is flat: two batches of `batchChunks` sealed chunk slots, whatever
/// the content size. While the workers seal one batch in place, one of them
/// first writes the previous batch out (and, in `consume`, reads the next
/// one in), so I/O and the cipher overlap. A full batch can always be sealed
/// as non-final, because the padded stream always continues past the content
/// with at least the 8-byte length trailer; only `finish` seals a final chunk.
public final class ItemWriter: ByteSink {
    public let header: ItemHeader
    private let headerBytes: [UInt8]
    private let sink: ByteSink
    private let workers: ChunkWorkers
    private let batchChunks: Int
    private let pages: [PageBuffer]             // owns the memory `buffers` points into
    private let buffers: [UnsafeMutableRawBufferPointer]
    private var current = 0             // the batch being filled
    private var fullChunks = 0          // complete plaintext chunks in it
    private var partial = 0             // bytes in the slot after them
    private var pendingBytes = 0        // sealed bytes waiting in the other batch
    private var nextIndex: UInt64 = 0   // chunk index of the current batch's slot 0
    public private(set) var contentLength: UInt64 = 0
    public private(set) var sealedLength: UInt64 = 0
    private var finished = false

    /// `expectedLength`, when the caller knows it (a file's size), sizes the
    /// batches: a 100-byte item needs one small slot, not 2 × 16 MiB.
    /// `memory`, when given, is used instead of new pages (and sizes the
    /// batches): a writer of one item after another keeps it.
    public init(key: FileKey, header: ItemHeader, sink: ByteSink,
                threads: Int = 2, batchChunks: Int = 16, expectedLength: UInt64? = nil,
                memory: ItemWriterMemory? = nil) throws {
        precondition(batchChunks >= 1)
        let batchChunks = memory?.batchChunks
            ?? expectedLength.map { Self.chunks(forContentLength: $0, atMost: batchChunks) } ?? batchChunks
        self.header = header
        self.headerBytes = header.bytes
        self.sink = sink
        self.batchChunks = batchChunks
        self.workers = try ChunkWorkers(key: key, threads: threads)
        pages = try memory?.pages ?? (0..<2).map { _ in try PageBuffer(count: batchChunks * ItemCipher.sealedChunkSize) }
        buffers = pages.map(\.raw)
        try headerBytes.withUnsafeBytes { try sink.write($0) }
        sealedLength = UInt64(ItemHeader.length)
    }

    /// Chunks of the padded stream for `length` content bytes, at most `limit`.
    static func chunks(forContentLength length: UInt64, atMost limit: Int) -> Int {
        guard length < ItemCipher.maxContentLength else { return limit }
        let stream = ItemCipher.streamLength(contentLength: length)
        return Int(min(UInt64(limit), (stream + UInt64(ItemCipher.chunkSize) - 1) / UInt64(ItemCipher.chunkSize)))
    }

    private func slot(_ k: Int, in buffer: Int? = nil) -> UnsafeMutableRawPointer {
        buffers[buffer ?? current].baseAddress! + k * ItemCipher.sealedChunkSize
    }

    /// Appends content bytes.
    public func write(_ data: UnsafeRawBufferPointer) throws {
        precondition(!finished, "write after finish")
        try append(data)
        try count(UInt64(data.count))
    }

    public func write(_ data: [UInt8]) throws { try data.withUnsafeBytes { try write($0) } }

    private func count(_ n: UInt64) throws {
        contentLength += n
        guard contentLength <= ItemCipher.maxContentLength else {
            throw VaultError.itemTooLarge
        }
    }

    /// Reads `source` sequentially to its end, straight into the chunk slots
    /// (no intermediate copy), reading the next batch while the workers seal
    /// this one. Returns the number of bytes consumed.
    @discardableResult
    public func consume(_ source: FileHandleFD) throws -> UInt64 {
        precondition(!finished, "write after finish")
        let start = contentLength
        // Fill the current batch; seal it while the next one is read.
        var (full, part, eof) = try fill(current, from: source, full: fullChunks, partial: partial)
        (fullChunks, partial) = (full, part)
        while !eof && fullChunks == batchChunks {
            let other = 1 - current
            var result = (0, 0, false)
            try sealCurrent(final: false) {
                result = try self.fill(other, from: source, full: 0, partial: 0)
            }
            (full, part, eof) = result
            (fullChunks, partial) = (full, part)
        }
        return contentLength - start
    }

    /// Reads into batch `b` from (full, partial) until it is full or the
    /// source ends; returns the new (full, partial, reached end).
    private func fill(_ b: Int, from source: FileHandleFD, full: Int, partial: Int) throws -> (Int, Int, Bool) {
        var (full, partial) = (full, partial)
        while full < batchChunks {
            let room = ItemCipher.chunkSize - partial
            let n = try source.readSequential(into: .init(start: slot(full, in: b) + partial, count: room))
            try count(UInt64(n))
            partial += n
            if partial == ItemCipher.chunkSize { full += 1; partial = 0 }
            if n < room { return (full, partial, true) }
        }
        return (full, partial, false)
    }

    /// Copies stream bytes into the slots, sealing a full batch only when
    /// more bytes are waiting.
    private func append(_ data: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < data.count {
            if fullChunks == batchChunks { try sealCurrent(final: false) }
            let n = min(ItemCipher.chunkSize - partial, data.count - offset)
            (slot(fullChunks) + partial).copyMemory(from: data.baseAddress! + offset, byteCount: n)
            partial += n
            offset += n
            if partial == ItemCipher.chunkSize { fullChunks += 1; partial = 0 }
        }
    }

    /// Seals the current batch in place (its last chunk final if `final`),
    /// while one worker writes out the previous batch and then runs `more`.
    /// Afterwards the sealed batch is pending and the other one is current.
    private func sealCurrent(final: Bool, alongside more: (() throws -> Void)? = nil) throws {
        let chunks = fullChunks + (partial > 0 ? 1 : 0)
        let lastSize = partial > 0 ? partial : ItemCipher.chunkSize
        let (first, header, prefix) = (nextIndex, headerBytes, self.header.noncePrefix)
        let buf = SharedBuffer(raw: buffers[current])
        let (pendingBuffer, pending, sink) = (SharedBuffer(raw: buffers[1 - current]), pendingBytes, self.sink)
        // No I/O to overlap (a small item's only batch): no second worker,
        // so a one-chunk item seals on this thread without a hand-off.
        let io: (() throws -> Void)? = pending == 0 && more == nil ? nil : {
            if pending > 0 { try sink.write(UnsafeRawBufferPointer(rebasing: pendingBuffer.raw[..<pending])) }
            try more?()
        }
        try workers.forEach(chunks, alongside: io) { aead, k in
            let size = k == chunks - 1 ? lastSize : ItemCipher.chunkSize
            let index = UInt32(first + UInt64(k))
            let p = buf.raw.baseAddress! + k * ItemCipher.sealedChunkSize
            let nonce = ItemCipher.nonce(prefix: prefix, index: index)
            let aad = ItemCipher.aad(header: header, index: index, final: final && k == chunks - 1)
            try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in
                try aead.seal(nonce: n, aad: a, plaintext: UnsafeRawBufferPointer(start: p, count: size),
                              into: UnsafeMutableRawBufferPointer(start: p, count: size + ItemCipher.tagLength))
            } }
        }
        sealedLength += UInt64(pending)
        pendingBytes = (chunks - 1) * ItemCipher.sealedChunkSize + lastSize + ItemCipher.tagLength
        nextIndex += UInt64(chunks)
        current = 1 - current
        (fullChunks, partial) = (0, 0)
    }

    /// Appends the padding and length trailer, seals the final chunk and
    /// writes everything out. Returns the total sealed length.
    @discardableResult
    public func finish() throws -> UInt64 {
        precondition(!finished, "finish called twice")
        finished = true
        let stream = ItemCipher.streamLength(contentLength: contentLength)
        var padding = stream - contentLength - UInt64(ItemCipher.trailerLength)
        let zeros = [UInt8](repeating: 0, count: min(Int(padding), ItemCipher.chunkSize))
        while padding > 0 {
            let n = Int(min(padding, UInt64(zeros.count)))
            try zeros.withUnsafeBytes { try append(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            padding -= UInt64(n)
        }
        try ByteWriter.bigEndian(contentLength).withUnsafeBytes { try append($0) }
        try sealCurrent(final: true)
        try sink.write(UnsafeRawBufferPointer(rebasing: buffers[1 - current][..<pendingBytes]))
        sealedLength += UInt64(pendingBytes)
        pendingBytes = 0
        return sealedLength
    }
}

/// The two batches' memory of an ItemWriter, for a caller that writes one
/// item after another (a backup's packs) and hands each writer the same:
/// new pages for every 32 MiB pack cost a page fault per 4 KiB written,
/// a tenth of a small-file backup's time (issue 45). One writer at a time.
public final class ItemWriterMemory {
    let batchChunks: Int
    let pages: [PageBuffer]

    public init(batchChunks: Int = 16) throws {
        precondition(batchChunks >= 1)
        self.batchChunks = batchChunks
        pages = try (0..<2).map { _ in try PageBuffer(count: batchChunks * ItemCipher.sealedChunkSize) }
    }
}
