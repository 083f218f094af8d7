import VaultCodecs

// Optional xz compression before encryption (item flag bit 0). Auto mode
// looks at a sample of the content first (VaultCodecs.CompressionProbe, a
// fraction of a millisecond) and stores incompressible content raw, so adding
// a JPEG costs no more with compression on than off.

/// What `add` asks for (defined with the codec).
public typealias Compression = VaultCodecs.Compression

/// How many threads the xz encoder uses (both cores here; more rarely helps
/// an interactive add and costs ~35 MiB each at preset 1).
let compressionThreads = 2

extension Vault {
    /// The vault's default when `add` says nothing.
    public var defaultCompression: Compression {
        header.options.contains(.compressByDefault) ? .auto : .none
    }

    /// Drops in a file or stdin, compressed as `compression` says.
    @discardableResult
    public func dropIn(from source: FileHandleFD, name: String, mode: UInt16, modified: Int64,
                       compression: Compression, progress: ((UInt64) -> Void)? = nil,
                       announce: ((String) -> Void)? = nil) throws -> ManifestEntry {
        source.readProgress = progress
        defer { source.readProgress = nil }
        // The sample is read once and then written first, so nothing is read twice
        // (and stdin, which cannot be re-read, works the same way).
        var sample: [UInt8] = []
        var level: Int?
        switch compression {
        case .none: break
        case .level(let l): level = l
        case .auto:
            sample = [UInt8](repeating: 0, count: CompressionProbe.sampleSize)
            let n = try sample.withUnsafeMutableBytes { try source.readSequential(into: $0) }
            sample.removeSubrange(n...)
            if try sample.withUnsafeBytes({ try CompressionProbe.worthCompressing(sample: $0) }) {
                level = Compression.autoPreset
            }
        }
        // The file's size sizes the writer's buffers (compressed content is
        // about as long or shorter; the size is only a hint).
        return try dropIn(name: name, kind: .file, flags: level == nil ? [] : [.compressed], mode: mode,
                          modified: modified, expectedLength: source.isRegularFile ? source.size : nil,
                          progress: nil, announce: announce) { writer in
            guard let level else {
                try writer.write(sample)
                return (UInt64(sample.count) + (try writer.consume(source)), 1)
            }
            let xz = try XZCompressor(level: level, threads: compressionThreads, downstream: writer)
            try xz.write(sample)
            var buffer = [UInt8](repeating: 0, count: XZCompressor.bufferSize)
            while true {
                let n = try buffer.withUnsafeMutableBytes { try source.readSequential(into: $0) }
                if n == 0 { break }
                try buffer.withUnsafeBytes { try xz.write(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            }
            try xz.finish()
            return (xz.bytesIn, 1)
        }
    }
}

extension XZCompressor {
    func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try write($0) } }
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

/// Runs `body`, turning a damaged xz stream inside an authenticated item into
/// the vault's one damage error.
func xzError<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch is XZError { throw VaultError.corruptedOrTampered }
}
