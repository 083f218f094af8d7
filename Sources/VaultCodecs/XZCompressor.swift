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
        guard Compression.xzPresets.contains(level) else {
            throw XZError.invalidLevel(level)
        }
        guard threads >= 1 else { throw XZError.invalidThreadCount(threads) }
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
        guard Compression.xzPresets.contains(level), threads >= 1 else { return nil }
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
