// xz compression of item content (XZCompressor, XZDecompressor,
// CompressionProbe): bytes in, bytes out, nothing here knows about vaults or
// keys. The stream format is plain .xz (one stream, CRC64 check), so `xz -d`
// reads what XZCompressor writes. liblzma itself is reached only through
// LZMA.swift.

/// How an item's content is compressed before encryption: what `add` asks
/// for, or the vault's default.
public enum Compression: Equatable, Sendable {
    /// Stored raw.
    case none
    /// Compressed at `autoPreset` if `CompressionProbe` finds the content
    /// compressible, else stored raw.
    case auto
    /// Always compressed, at this xz preset (0...9).
    case level(Int)

    /// The preset auto mode compresses at: fast enough for an interactive
    /// `add` (preset 6 is several times slower for a few percent).
    public static let autoPreset = 1
    /// The xz presets.
    public static let presets = 0...9
}
