// Compression of item content before encryption: zstd (ZstdCompressor,
// ZstdDecompressor, RawFrame, CompressionProbe) by default, xz (XZCompressor,
// XZDecompressor) for the smallest output. Bytes in, bytes out: nothing here
// knows about vaults or keys. Both streams are the plain formats, so
// `zstd -d` and `xz -d` read them. libzstd is reached only through Zstd.swift,
// liblzma only through LZMA.swift.

/// How new content is compressed: the one place that names the choices
/// (what `add --compression` parses into, and what every write passes on).
public enum Compression: Equatable, Sendable {
    /// Stored raw.
    case none
    /// The default: content whose start looks incompressible stored raw
    /// (`resolved(sample:)`); the rest zstd at `ZstdCompressor.defaultLevel`,
    /// block by block, with blocks that do not compress stored raw.
    case auto
    /// zstd at this level (1...19), every block compressed.
    case zstd(level: Int)
    /// xz at this preset (0...9): the smallest output, many times slower.
    case xz(level: Int)

    /// The default: costs nothing on incompressible data.
    public static let `default` = Compression.auto
    /// restic's `--compression max`: xz at its default preset.
    public static let max = Compression.xz(level: 6)
    /// The xz presets.
    public static let xzPresets = 0...9
    /// The zstd levels.
    public static let zstdLevels = Zstd.levels

    /// Parses `auto`, `off`, `max`, `zstd`, `zstd:N`, `xz` or `xz:N`; nil if
    /// it is none of these (or a level is out of range).
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let level = parts.count == 2 ? Int(parts[1]) : nil
        if parts.count == 2 && level == nil { return nil }
        switch parts[0] {
        case "auto" where parts.count == 1: self = .auto
        case "off" where parts.count == 1: self = .none
        case "max" where parts.count == 1: self = Self.max
        case "zstd":
            let l = level ?? ZstdCompressor.defaultLevel
            guard Self.zstdLevels.contains(l) else { return nil }
            self = .zstd(level: l)
        case "xz":
            let l = level ?? 6
            guard Self.xzPresets.contains(l) else { return nil }
            self = .xz(level: l)
        default: return nil
        }
    }

    /// What to write for content that starts with `sample` (the first
    /// `ZstdCompressor.blockSize` bytes, or all of it if shorter): auto
    /// stores content whose start looks incompressible (a photo, a video, an
    /// archive) raw as a whole, so the item keeps random access by chunk (a
    /// mount reads a video's middle without decoding its start) and costs no
    /// compression time; every other choice is what it says.
    public func resolved(sample: UnsafeRawBufferPointer) -> Compression {
        self == .auto && CompressionProbe.looksIncompressible(sample) ? .none : self
    }

    /// The encoder for this choice in front of `downstream`, with `threads`
    /// workers; nil for `.none` (write to `downstream` directly).
    public func encoder(threads: Int, downstream: ByteSink) throws -> CompressingSink? {
        switch self {
        case .none: return nil
        case .auto: return try ZstdCompressor(level: ZstdCompressor.defaultLevel, adaptive: true, threads: threads, downstream: downstream)
        case .zstd(let level): return try ZstdCompressor(level: level, adaptive: false, threads: threads, downstream: downstream)
        case .xz(let level): return try XZCompressor(level: level, threads: threads, downstream: downstream)
        }
    }
}

/// A compressor: a ByteSink that must be finished, and counts both sides.
public protocol CompressingSink: ByteSink {
    func finish() throws
    var bytesIn: UInt64 { get }
    var bytesOut: UInt64 { get }
}

extension ZstdCompressor: CompressingSink {}
extension XZCompressor: CompressingSink {}

/// An error of either codec's decoder: inside an authenticated item, damage.
public protocol CodecError: Error {}
extension XZError: CodecError {}
extension ZstdError: CodecError {}
