// xz compression of item content: a ByteSink that compresses into another
// sink, a ByteStream that decompresses from another stream, and the probe
// that decides whether compressing is worth it. Bytes in, bytes out: nothing
// here knows about vaults or keys. The stream format is plain .xz (one
// stream, CRC64 check), so `xz -d` reads what XZCompressor writes.
// liblzma itself is reached only through LZMA.swift.
#if canImport(Glibc)
import Glibc    // log2
#else
import Darwin
#endif

/// Errors of the xz layer.
public enum XZError: Error, Equatable, Sendable {
    /// The data does not start like an .xz stream.
    case notXZ
    /// The stream is damaged: bad header, bad compressed data or a failed integrity check.
    case corrupt
    /// The stream ends before its footer.
    case truncated
    /// Bytes follow the end of the stream.
    case trailingData
    /// Decoding would need more memory than `limit`; nothing was allocated beyond it.
    case memoryLimitExceeded(limit: UInt64)
    /// A compression level outside 0...9 or a thread count below 1.
    case invalidParameter(String)
    /// liblzma does not support these options or this integrity check; `function` names the call.
    case unsupported(function: String, code: Int)
    /// liblzma could not allocate memory.
    case outOfMemory
    /// Any other liblzma failure; `function` names the call, `code` is its lzma_ret.
    case library(function: String, code: Int)
}

/// How an item's content is compressed before encryption.
public enum CompressionLevel: Equatable, Sendable {
    /// Compress at `autoPreset` if `CompressionProbe` finds the content
    /// compressible, else store it raw.
    case auto
    /// Always compress, at this xz preset (0...9).
    case level(Int)

    /// The preset auto mode compresses at: fast enough for an interactive
    /// `add` (preset 6 is several times slower for a few percent).
    public static let autoPreset = 1
    /// The xz presets.
    public static let presets = 0...9
}

/// A ByteSink that xz-compresses everything written to it into `downstream`.
///
/// Preset `level`, CRC64 check. With `threads` > 1, liblzma's multi-threaded
/// encoder (lzma_stream_encoder_mt) with that many workers: the stream is a
/// sequence of independent blocks of 3 × the preset's dictionary size (at
/// least 1 MiB), byte for byte what `xz -T2` writes. With 1 thread, the
/// single-threaded encoder, as `xz -T1` uses (one block, half the memory,
/// ~5% faster than one worker of the threaded one). Small writes are gathered into a 1 MiB
/// input buffer; output goes downstream in writes of up to 1 MiB. Call
/// `finish()` once after the last write; without it the stream is truncated.
///
/// Memory is bounded by `memoryUsage(level:threads:)` plus the two 1 MiB
/// buffers. liblzma's figures in MiB, 2 threads (1 thread in brackets):
/// level 0: 12 (3), 1: 35 (9), 2: 68 (16), 3: 134 (31), 4: 166 (47),
/// 5–6: 330 (93), 7: 658 (185), 8: 1314 (369), 9: 2498 (673). Each worker
/// holds an encoder (dictionary and match finder) plus its block's input
/// and output. Decoding needs only the dictionary
/// and a little more: 1 MiB at level 1, 8 MiB at 6, 64 MiB at 9.
public final class XZCompressor: ByteSink {
    /// The input and output buffer size.
    public static let bufferSize = 1 << 20

    private let lzma: LZMAStream
    private let downstream: ByteSink
    private let input: UnsafeMutableRawBufferPointer
    private var inputCount = 0
    private let output: UnsafeMutableRawBufferPointer
    private var outputCount = 0
    private var finished = false

    /// Bytes written to this sink so far.
    public private(set) var bytesIn: UInt64 = 0
    /// Compressed bytes handed to `downstream` so far.
    public private(set) var bytesOut: UInt64 = 0

    public init(level: Int, threads: Int, downstream: ByteSink) throws {
        guard CompressionLevel.presets.contains(level) else {
            throw XZError.invalidParameter("compression level \(level) is not in 0...9")
        }
        guard threads >= 1 else { throw XZError.invalidParameter("thread count \(threads) is below 1") }
        lzma = try LZMAStream.encoder(preset: level, threads: threads)
        self.downstream = downstream
        input = .allocate(byteCount: Self.bufferSize, alignment: 16)
        output = .allocate(byteCount: Self.bufferSize, alignment: 16)
    }

    deinit {
        input.deallocate()
        output.deallocate()
    }

    /// liblzma's figure for the encoder's peak memory at this level and
    /// thread count (the 2 MiB of buffers here come on top); nil if invalid.
    public static func memoryUsage(level: Int, threads: Int) -> UInt64? {
        guard CompressionLevel.presets.contains(level), threads >= 1 else { return nil }
        return LZMAStream.encoderMemoryUsage(preset: level, threads: threads)
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(!finished, "XZCompressor.write after finish")
        bytesIn += UInt64(bytes.count)
        var rest = bytes
        // A large write with nothing buffered goes to liblzma as it is (the
        // encoder copies it into its block buffers anyway); the rest is gathered.
        if inputCount == 0 && rest.count >= Self.bufferSize {
            try compress(rest)
            return
        }
        while !rest.isEmpty {
            let n = min(rest.count, Self.bufferSize - inputCount)
            (input.baseAddress! + inputCount).copyMemory(from: rest.baseAddress!, byteCount: n)
            inputCount += n
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            if inputCount == Self.bufferSize { try flushInput() }
        }
    }

    /// Compresses what is buffered, ends the stream (LZMA_FINISH) and hands
    /// the rest of the output downstream.
    public func finish() throws {
        precondition(!finished, "XZCompressor.finish called twice")
        try flushInput()
        while true {
            let free = UnsafeMutableRawBufferPointer(rebasing: output[outputCount...])
            let r = try lzma.code(UnsafeRawBufferPointer(start: nil, count: 0), free, .finish)
            outputCount += r.produced
            if r.streamEnd { break }
            if outputCount == output.count { try drainOutput() }
        }
        try drainOutput()
        finished = true
    }

    private func flushInput() throws {
        try compress(UnsafeRawBufferPointer(rebasing: input[..<inputCount]))
        inputCount = 0
    }

    private func compress(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !rest.isEmpty {
            let free = UnsafeMutableRawBufferPointer(rebasing: output[outputCount...])
            let r = try lzma.code(rest, free, .run)
            rest = UnsafeRawBufferPointer(rebasing: rest[r.consumed...])
            outputCount += r.produced
            if outputCount == output.count { try drainOutput() }
        }
    }

    private func drainOutput() throws {
        guard outputCount > 0 else { return }
        try downstream.write(UnsafeRawBufferPointer(rebasing: output[..<outputCount]))
        bytesOut += UInt64(outputCount)
        outputCount = 0
    }
}

/// A ByteStream that reads one .xz stream from `upstream` and hands out the
/// decompressed bytes.
///
/// Strict: exactly one stream (no concatenation, no stream padding), so
/// bytes after its end are `XZError.trailingData`, and an upstream that ends
/// before the stream footer is `XZError.truncated`. The decoder never
/// allocates more than `memoryLimit`; a stream that needs more (its header
/// names a larger dictionary) is `XZError.memoryLimitExceeded`.
///
/// Like `xz -d`, it hands out a block's bytes before that block's CRC64 is
/// checked at the block's end; a failed check then throws `XZError.corrupt`.
/// In the vault the input has already been authenticated by the item cipher,
/// so the check is a second line, not the defence.
public final class XZDecompressor: ByteStream {
    private static let inputBufferSize = 1 << 17

    private let lzma: LZMAStream
    private let upstream: ByteStream
    private let input: UnsafeMutableRawBufferPointer
    private var inputStart = 0
    private var inputEnd = 0
    private var upstreamEnded = false
    private var streamEnded = false

    /// `threads` > 1 decodes independent blocks in parallel (see
    /// `LZMAStream.decoder`); the memory limit covers all of them.
    public init(upstream: ByteStream, memoryLimit: UInt64 = 256 << 20, threads: Int = 2) throws {
        guard threads >= 1 else { throw XZError.invalidParameter("thread count \(threads) is below 1") }
        lzma = try LZMAStream.decoder(memoryLimit: memoryLimit, threads: threads)
        self.upstream = upstream
        input = .allocate(byteCount: Self.inputBufferSize, alignment: 16)
    }

    deinit { input.deallocate() }

    /// Fills up to `buffer.count` bytes; returns 0 only after the whole
    /// stream was decoded and verified and upstream has ended.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if streamEnded || buffer.isEmpty { return 0 }
        while true {
            if inputStart == inputEnd && !upstreamEnded {
                let n = try upstream.read(into: input)
                (inputStart, inputEnd) = (0, n)
                if n == 0 { upstreamEnded = true }
            }
            // Once upstream has ended, LZMA_FINISH: liblzma must reach the
            // stream end with what it has.
            let pending = UnsafeRawBufferPointer(rebasing: input[inputStart..<inputEnd])
            let r = try lzma.code(pending, buffer, upstreamEnded ? .finish : .run)
            inputStart += r.consumed
            if r.streamEnd {
                streamEnded = true
                try rejectTrailingData()
                return r.produced
            }
            if r.produced > 0 { return r.produced }
            if upstreamEnded && r.consumed == 0 { throw XZError.truncated }
        }
    }

    private func rejectTrailingData() throws {
        if inputStart < inputEnd { throw XZError.trailingData }
        if upstreamEnded { return }
        var probe = [UInt8](repeating: 0, count: 16)
        let n = try probe.withUnsafeMutableBytes { try upstream.read(into: $0) }
        if n > 0 { throw XZError.trailingData }
        upstreamEnded = true
    }
}

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
