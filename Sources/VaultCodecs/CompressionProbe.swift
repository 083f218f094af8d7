#if canImport(Glibc)
internal import Glibc    // log2
#endif

/// Decides from a glance whether a block is worth handing to the compressor.
///
/// It has to be nearly free: auto mode may make adding a JPEG or a video at
/// most 5% slower than storing it raw, and a raw add runs at the speed of
/// the disk, while zstd spends ~1.5 s of CPU a GiB even on random bytes. So
/// the probe looks at only `windowCount` windows of `windowSize` bytes spread
/// over the block (64 KiB of each 8 MiB block, ~50 µs) and measures their
/// byte entropy: above `clearlyIncompressible` bits per byte (JPEG, PNG,
/// video, zip, xz, encrypted data) nothing but long repeats could help, and
/// those are rare, so the block is stored raw without trying. Anything lower
/// is compressed, and kept raw after all if that did not make it smaller
/// (ZstdCompressor), which catches what the glance misjudges.
public enum CompressionProbe {
    /// The windows looked at: evenly spaced over the block.
    public static let windowSize = 4 << 10
    public static let windowCount = 16
    /// Byte entropy (bits per byte) above which a block is stored raw outright.
    public static let clearlyIncompressible = 7.8

    /// Whether `block` looks incompressible (see the type's description). An
    /// empty block does not (it compresses to a few bytes either way).
    public static func looksIncompressible(_ block: UnsafeRawBufferPointer) -> Bool {
        guard !block.isEmpty else { return false }
        return entropy(of: windows(of: block)) > clearlyIncompressible
    }

    /// Evenly spaced windows; a block shorter than all of them is one window.
    private static func windows(of block: UnsafeRawBufferPointer) -> [UnsafeRawBufferPointer] {
        if block.count <= windowSize * windowCount { return [block] }
        let stride = (block.count - windowSize) / (windowCount - 1)
        return (0..<windowCount).map { UnsafeRawBufferPointer(rebasing: block[($0 * stride)..<($0 * stride + windowSize)]) }
    }

    /// Order-0 Shannon entropy of all the windows together, in bits per byte.
    private static func entropy(of windows: [UnsafeRawBufferPointer]) -> Double {
        var counts = [Int](repeating: 0, count: 256)
        var total = 0
        counts.withUnsafeMutableBufferPointer { c in
            for w in windows {
                for byte in w { c[Int(byte)] += 1 }
                total += w.count
            }
        }
        let n = Double(total)
        return counts.reduce(0.0) { h, c in c == 0 ? h : h - Double(c) / n * log2(Double(c) / n) }
    }
}
