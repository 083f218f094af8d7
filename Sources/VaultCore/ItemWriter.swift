import VaultCrypto

/// Streams content into the sealed item format (see ItemCipher.swift).
///
/// Memory is flat: one batch of `batchChunks` sealed chunks plus one spare
/// slot, whatever the content size. A chunk is sealed only once the writer
/// knows whether it is the final one: when more input arrives, or at `finish`.
/// Chunks are sealed in place, a batch at a time, on all worker threads.
public final class ItemWriter {
    public let header: ItemHeader
    private let headerBytes: [UInt8]
    private let sink: ByteSink
    private let workers: ChunkWorkers
    private let batchChunks: Int
    private let buffer: UnsafeMutableRawBufferPointer   // (batchChunks + 1) sealed slots

    private var fullChunks = 0          // complete plaintext chunks waiting in the buffer
    private var partial = 0             // bytes in the slot after them
    private var nextIndex: UInt64 = 0   // chunk index of buffer slot 0
    public private(set) var contentLength: UInt64 = 0
    public private(set) var sealedLength: UInt64 = 0
    private var finished = false

    public init(key: FileKey, header: ItemHeader, sink: ByteSink,
                threads: Int = 2, batchChunks: Int = 8) throws {
        precondition(batchChunks >= 1)
        self.header = header
        self.headerBytes = header.bytes
        self.sink = sink
        self.batchChunks = batchChunks
        self.workers = try ChunkWorkers(key: key, threads: threads)
        buffer = .allocate(byteCount: (batchChunks + 1) * ItemCipher.sealedChunkSize, alignment: 64)
        try headerBytes.withUnsafeBytes { try sink.write($0) }
        sealedLength = UInt64(ItemHeader.length)
    }

    deinit { buffer.deallocate() }

    private func slot(_ k: Int) -> UnsafeMutableRawPointer {
        buffer.baseAddress! + k * ItemCipher.sealedChunkSize
    }

    /// Appends content bytes.
    public func write(_ data: UnsafeRawBufferPointer) throws {
        precondition(!finished, "write after finish")
        try append(data)
        contentLength += UInt64(data.count)
        guard contentLength <= ItemCipher.maxContentLength else {
            throw VaultError.invalidArgument("item larger than the format allows")
        }
    }

    public func write(_ data: [UInt8]) throws { try data.withUnsafeBytes { try write($0) } }

    /// Reads `source` sequentially to its end, straight into the chunk slots
    /// (no intermediate copy). Returns the number of bytes consumed.
    @discardableResult
    public func consume(_ source: FileHandleFD) throws -> UInt64 {
        precondition(!finished, "write after finish")
        var total: UInt64 = 0
        while true {
            if fullChunks == batchChunks {
                // Buffer full: read ahead into the spare slot to learn whether
                // the batch holds the final chunk.
                let n = try source.readSequential(into: .init(start: slot(batchChunks), count: ItemCipher.chunkSize))
                if n == 0 { break }
                try flush(lastIsFinal: false, chunks: batchChunks)
                slot(0).copyMemory(from: slot(batchChunks), byteCount: n)
                partial = n
                if partial == ItemCipher.chunkSize { fullChunks = 1; partial = 0 }
                total += UInt64(n)
            } else {
                let room = ItemCipher.chunkSize - partial
                let n = try source.readSequential(into: .init(start: slot(fullChunks) + partial, count: room))
                if n == 0 { break }
                partial += n
                total += UInt64(n)
                if partial == ItemCipher.chunkSize { fullChunks += 1; partial = 0 }
            }
        }
        contentLength += total
        guard contentLength <= ItemCipher.maxContentLength else {
            throw VaultError.invalidArgument("item larger than the format allows")
        }
        return total
    }

    /// Copies stream bytes into the slots, sealing full batches (never final)
    /// only when more bytes are waiting.
    private func append(_ data: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < data.count {
            if fullChunks == batchChunks { try flush(lastIsFinal: false, chunks: batchChunks) }
            let n = min(ItemCipher.chunkSize - partial, data.count - offset)
            (slot(fullChunks) + partial).copyMemory(from: data.baseAddress! + offset, byteCount: n)
            partial += n
            offset += n
            if partial == ItemCipher.chunkSize { fullChunks += 1; partial = 0 }
        }
    }

    /// Seals the first `chunks` slots (the last of which is `partial` bytes
    /// if partial > 0 and it is the slot after the full ones) and writes them.
    private func flush(lastIsFinal: Bool, chunks: Int) throws {
        let lastSize = chunks > fullChunks ? partial : ItemCipher.chunkSize
        let first = nextIndex
        let header = headerBytes
        let prefix = self.header.noncePrefix
        let buf = SharedBuffer(raw: buffer)
        try workers.forEach(chunks) { aead, k in
            let size = k == chunks - 1 ? lastSize : ItemCipher.chunkSize
            let index = UInt32(first + UInt64(k))
            let p = buf.raw.baseAddress! + k * ItemCipher.sealedChunkSize
            let nonce = ItemCipher.nonce(prefix: prefix, index: index)
            let aad = ItemCipher.aad(header: header, index: index, final: lastIsFinal && k == chunks - 1)
            try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in
                try aead.seal(nonce: n, aad: a, plaintext: UnsafeRawBufferPointer(start: p, count: size),
                              into: UnsafeMutableRawBufferPointer(start: p, count: size + ItemCipher.tagLength))
            } }
        }
        let bytes = (chunks - 1) * ItemCipher.sealedChunkSize + lastSize + ItemCipher.tagLength
        try sink.write(UnsafeRawBufferPointer(start: buffer.baseAddress, count: bytes))
        sealedLength += UInt64(bytes)
        nextIndex += UInt64(chunks)
        if chunks > fullChunks { partial = 0 }
        fullChunks = max(0, fullChunks - chunks)
    }

    /// Appends the padding and length trailer and seals the final chunk.
    /// Returns the total sealed length written to the sink.
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
        try withUnsafeBytes(of: contentLength.bigEndian) { try append($0) }
        try flush(lastIsFinal: true, chunks: fullChunks + (partial > 0 ? 1 : 0))
        return sealedLength
    }
}
