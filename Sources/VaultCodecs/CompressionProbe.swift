#if canImport(Glibc)
internal import Glibc    // log2, exp2
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
    /// The least a piece's probe looks at (`pieceSample`): 4 KiB of random
    /// bytes measure 7.95 bits a byte (order-0 entropy counted from n bytes
    /// falls short of the true one by about 255 / (2 n ln 2) bits), still
    /// clearly above the threshold.
    public static let leastSample = 4 << 10

    /// How much of a backup's piece to look at: a sixteenth of it, from 4
    /// KiB up to the 64 KiB a block gets. A small file's piece was counted
    /// whole, byte by byte, before zstd read it again: 3.7 % of a
    /// small-file backup's CPU, 1.3 % after (issue 45). A smaller sample
    /// errs as a block's does: mostly short of the entropy (a try of zstd
    /// that the frame's length then refuses), and where a piece mixes
    /// random and compressible parts its windows may miss the latter.
    public static func pieceSample(_ count: Int) -> Int {
        min(windowSize * windowCount, max(leastSample, count / windowCount))
    }

    /// Whether `block` looks incompressible (see the type's description). An
    /// empty block does not (it compresses to a few bytes either way).
    /// `sample`: how many bytes to look at, in `windowCount` evenly spaced
    /// windows (all of a block no longer than that).
    public static func looksIncompressible(_ block: UnsafeRawBufferPointer,
                                           sample: Int = windowSize * windowCount) -> Bool {
        guard !block.isEmpty else { return false }
        // Four tables of counts on the stack, summed at the end: one table
        // makes each byte wait for the count the byte before may have just
        // written (1.5x slower), and a heap table cost as much as counting
        // a small file's piece (issue 45: the probe was 6 % of a small-file
        // backup's CPU).
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 1024) { counts in
            counts.initialize(repeating: 0)
            // Evenly spaced windows; a block shorter than all of them is one window.
            let window = max(1, min(sample, windowSize * windowCount) / windowCount)
            if block.count <= window * windowCount {
                count(block, into: counts)
                return exceedsThreshold(counts, total: block.count)
            }
            let stride = (block.count - window) / (windowCount - 1)
            for k in 0..<windowCount {
                count(UnsafeRawBufferPointer(rebasing: block[(k * stride)..<(k * stride + window)]), into: counts)
            }
            return exceedsThreshold(counts, total: window * windowCount)
        }
    }

    /// Adds `window`'s bytes to the four tables, byte i to table i mod 4
    /// (a window is at most 64 KiB: no count overflows).
    private static func count(_ window: UnsafeRawBufferPointer, into c: UnsafeMutableBufferPointer<UInt32>) {
        let p = window.baseAddress!.assumingMemoryBound(to: UInt8.self), n = window.count
        var i = 0
        while i &+ 4 <= n {
            c[Int(p[i])] &+= 1
            c[256 &+ Int(p[i &+ 1])] &+= 1
            c[512 &+ Int(p[i &+ 2])] &+= 1
            c[768 &+ Int(p[i &+ 3])] &+= 1
            i &+= 4
        }
        while i < n {
            c[Int(p[i])] &+= 1
            i &+= 1
        }
    }

    /// Whether the order-0 Shannon entropy of `total` bytes counted in the
    /// four tables is above `clearlyIncompressible` bits per byte. It is at
    /// most log2 of how many byte values occur: with no more than
    /// 2^7.8 ≈ 222 of them it cannot be, and text, which has far fewer,
    /// is decided without a logarithm (256 of them a piece were most of
    /// the probe's time on small files).
    private static func exceedsThreshold(_ c: UnsafeMutableBufferPointer<UInt32>, total: Int) -> Bool {
        var kinds = 0
        for b in 0..<256 where c[b] | c[256 + b] | c[512 + b] | c[768 + b] != 0 { kinds += 1 }
        guard Double(kinds) > exp2(clearlyIncompressible) else { return false }
        // H = log2(n) − Σ k·log2(k) / n, with k·log2(k) from a table for
        // the counts most pieces have.
        let n = Double(total)
        let sum = kLog2k.withUnsafeBufferPointer { t in
            var sum = 0.0
            for b in 0..<256 {
                let k = Int(c[b]) + Int(c[256 + b]) + Int(c[512 + b]) + Int(c[768 + b])
                sum += k < t.count ? t[k] : Double(k) * log2(Double(k))
            }
            return sum
        }
        return log2(n) - sum / n > clearlyIncompressible
    }

    /// k·log2(k) for k below 4,096 (0 for 0).
    private static let kLog2k: [Double] = (0..<4096).map { $0 == 0 ? 0 : Double($0) * log2(Double($0)) }
}
