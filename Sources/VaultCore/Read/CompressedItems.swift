import VaultCodecs

// Compression before encryption (docs/FORMAT.md, "Compressed content"): the
// item header's flags name the codec (bit 0 xz, bit 2 zstd), and every write
// of content (add, folders, open saving) goes through `Compression.encoder`,
// every read through `ItemReader.decodedStream`. The default, auto, stores
// content whose start is incompressible raw (no codec: a JPEG or a video
// keeps random access by chunk) and the rest as zstd block by block, with
// incompressible blocks stored raw, so adding a JPEG costs no more with
// compression on than off.

/// What `add` asks for (defined with the codecs).
public typealias Compression = VaultCodecs.Compression

/// How many threads a compressor uses (both cores here: zstd's blocks and
/// xz's blocks are compressed one per core).
let compressionThreads = 2

extension ItemFlags {
    /// The codec flag for content written as `compression` says.
    static func codec(_ compression: Compression) -> ItemFlags {
        switch compression {
        case .none: []
        case .auto, .zstd: .zstd
        case .xz: .xz
        }
    }
}

extension ItemReader {
    /// The content stream, authenticated chunk by chunk and decoded as the
    /// header's codec flag says.
    func decodedStream() throws -> ByteStream {
        if header.flags.contains(.xz) { return try XZDecompressor(upstream: contentStream()) }
        if header.flags.contains(.zstd) { return try ZstdDecompressor(upstream: contentStream()) }
        return contentStream()
    }
}

/// Content's first bytes, read once to decide how to compress it
/// (`Compression.resolved`) and then written first, so nothing is read twice
/// (and stdin, which cannot be re-read, works the same way). From a file, the
/// first block (8 MiB); from a pipe, only the first 64 KiB (the probe's
/// windows), so a slow producer is not waited on for 8 MiB before the add
/// has even started its content file.
struct ContentStart {
    static let pipeSampleSize = CompressionProbe.windowSize * CompressionProbe.windowCount

    let bytes: [UInt8]
    let compression: Compression

    init(_ source: FileHandleFD, _ compression: Compression) throws {
        var sample: [UInt8] = []
        if compression == .auto {
            // A small file's sample is the file (plus a byte, in case it
            // grew): zeroing an 8 MiB buffer for each of 10,000 mail files
            // was most of a many-file add's CPU time.
            let count = source.isRegularFile ? (source.size < UInt64(ZstdCompressor.blockSize) ? Int(source.size) + 1 : ZstdCompressor.blockSize) : Self.pipeSampleSize
            sample = [UInt8](repeating: 0, count: count)
            let n = try sample.withUnsafeMutableBytes { try source.readSequential(into: $0) }
            sample.removeSubrange(n...)
        }
        bytes = sample
        self.compression = sample.withUnsafeBytes { compression.resolved(sample: $0) }
    }
}

/// Writes `start` and then `source` to its end through the start's chosen
/// encoder into `writer`; returns the bytes read.
func writeCompressed(_ start: ContentStart, _ source: FileHandleFD, to writer: ItemWriter) throws -> UInt64 {
    guard let encoder = try start.compression.encoder(threads: compressionThreads, downstream: writer) else {
        try writer.write(start.bytes)
        return UInt64(start.bytes.count) + (try writer.consume(source))
    }
    try start.bytes.withUnsafeBytes { try encoder.write($0) }
    // A small file is all in `start` by now: a small buffer finds its end.
    let small = source.isRegularFile && source.size < 1 << 20
    var buffer = [UInt8](repeating: 0, count: small ? 64 << 10 : 1 << 20)
    while true {
        let n = try buffer.withUnsafeMutableBytes { try source.readSequential(into: $0) }
        if n == 0 { break }
        try buffer.withUnsafeBytes { try encoder.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
    }
    try encoder.finish()
    return encoder.bytesIn
}

extension Vault {
    /// Drops in a file or stdin, compressed as `compression` says.
    @discardableResult
    public func dropIn(from source: FileHandleFD, name: String, mode: UInt16, modified: Int64,
                       compression: Compression, progress: ((UInt64) -> Void)? = nil,
                       announce: ((String) -> Void)? = nil, batch: DropInBatch? = nil,
                       landed: @escaping () -> Void = {}) throws -> ManifestEntry {
        source.readProgress = progress
        defer { source.readProgress = nil }
        let start = try ContentStart(source, compression)
        // The file's size sizes the writer's buffers (compressed content is
        // about as long or shorter; the size is only a hint).
        return try dropIn(name: name, kind: .file, flags: .codec(start.compression), mode: mode,
                          modified: modified, expectedLength: source.isRegularFile ? source.size : nil,
                          progress: nil, announce: announce, batch: batch, landed: landed) { writer in
            (try writeCompressed(start, source, to: writer), 1)
        }
    }
}

extension UnlockedVault {
    /// Saves `source` (read to its end) as the newest version of a file item.
    @discardableResult
    public func saveFileVersion(of entry: ManifestEntry, from source: FileHandleFD, now: Int64,
                                compression: Compression = .default) throws -> ManifestEntry {
        let start = try ContentStart(source, compression)
        return try saveVersion(of: entry, flags: .codec(start.compression), now: now) { writer in
            (try writeCompressed(start, source, to: writer), 1)
        }
    }
}

/// Copies a pull stream into a sink, 1 MiB at a time.
func pump(_ stream: ByteStream, into sink: ByteSink) throws -> UInt64 {
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var total: UInt64 = 0
    while true {
        let n = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
        if n == 0 { return total }
        try buffer.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        total += UInt64(n)
    }
}

/// Runs `body`, turning a damaged compressed stream inside an authenticated
/// item into the vault's one damage error.
func codecError<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch is CodecError { throw VaultError.corruptedOrTampered }
}
