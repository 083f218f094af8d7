#if canImport(Glibc)
import Glibc    // log2
#endif

/// Decides from a sample whether content is worth compressing.
///
/// It has to be nearly free: auto mode may make adding a JPEG at most 5%
/// slower than storing it raw, and a raw add runs at disk speed. So the probe
/// looks at only `windowCount` windows of `windowSize` bytes spread over the
/// sample (64 KiB in all, wherever the sample is large) and first measures
/// their byte entropy, which costs well under a millisecond:
///
/// - below `clearlyCompressible` bits per byte (text, code, executables,
///   databases, base64), LZMA's literal coder alone gets under 0.8: yes;
/// - above `clearlyIncompressible` (JPEG, PNG, video, zip, xz, encrypted
///   data), nothing but long repeats could help, and those are rare: no;
/// - in between (audio, raw images, mixed content) the windows are
///   compressed at preset 0 (a few milliseconds) and the answer is whether
///   they shrank below `maximumRatio`.
///
/// Callers should pass the first `sampleSize` bytes (or the whole content if
/// shorter) and then write that same buffer to the compressor or the raw
/// writer, so the probe adds no reading.
public enum CompressionProbe {
    /// How much of the content's start a caller should pass as the sample;
    /// more is accepted but not looked at.
    public static let sampleSize = 4 << 20
    /// The windows looked at: evenly spaced over the sample.
    public static let windowSize = 4 << 10
    public static let windowCount = 16
    /// Byte entropy (bits per byte) below which content is compressed outright.
    public static let clearlyCompressible = 6.5
    /// Byte entropy above which content is stored raw outright.
    public static let clearlyIncompressible = 7.8
    /// In between, compress only if the windows shrink to less than this fraction.
    public static let maximumRatio = 0.9

    /// Whether content starting with `sample` should be compressed (see the
    /// type's description). An empty sample is not worth compressing.
    public static func worthCompressing(sample: UnsafeRawBufferPointer) throws -> Bool {
        let sample = UnsafeRawBufferPointer(rebasing: sample[..<min(sample.count, sampleSize)])
        guard !sample.isEmpty else { return false }
        let windows = self.windows(of: sample)
        let bits = entropy(of: windows)
        if bits < clearlyCompressible { return true }
        if bits > clearlyIncompressible { return false }
        return try compressedRatio(of: windows) < maximumRatio
    }

    /// Evenly spaced windows; a sample shorter than all of them is one window.
    private static func windows(of sample: UnsafeRawBufferPointer) -> [UnsafeRawBufferPointer] {
        if sample.count <= windowSize * windowCount { return [sample] }
        let stride = (sample.count - windowSize) / (windowCount - 1)
        return (0..<windowCount).map { UnsafeRawBufferPointer(rebasing: sample[($0 * stride)..<($0 * stride + windowSize)]) }
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

    /// Compressed size over input size for the windows at preset 0
    /// (container overhead of ~60 bytes included, which only matters for tiny samples).
    private static func compressedRatio(of windows: [UnsafeRawBufferPointer]) throws -> Double {
        let lzma = try LZMAStream.probeEncoder(preset: 0)
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        return try scratch.withUnsafeMutableBytes { out in
            var produced = 0
            var consumed = 0
            for w in windows {
                var rest = w
                consumed += rest.count
                while !rest.isEmpty {
                    let r = try lzma.code(rest, out, .run)
                    rest = UnsafeRawBufferPointer(rebasing: rest[r.consumed...])
                    produced += r.produced
                }
            }
            while true {
                let r = try lzma.code(UnsafeRawBufferPointer(start: nil, count: 0), out, .finish)
                produced += r.produced
                if r.streamEnd { break }
            }
            return Double(produced) / Double(consumed)
        }
    }
}
