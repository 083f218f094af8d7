import Dispatch
import Synchronization

/// A ByteSink that zstd-compresses everything written to it into `downstream`
/// as a sequence of independent frames, one per `blockSize` bytes of input
/// (docs/FORMAT.md, "Compressed content").
///
/// Independent frames are what make it fast: `threads` blocks are compressed
/// at once, one per core, each by its own context; and in adaptive mode
/// (auto) each block is decided on its own, so a folder of text with a video
/// in the middle compresses the text and stores the video raw. A block is
/// stored as a raw frame (RFC 8878 raw blocks, which every zstd decoder
/// reads) when `CompressionProbe` finds it incompressible, costing no
/// compression time, or when compressing it did not make it smaller.
///
/// Each frame records its content size and has no checksum (the item cipher
/// authenticates every byte); its window is at most the block size, 8 MiB,
/// so decoding needs little memory. Memory: `threads` × (8 MiB of input and
/// ~8 MiB of output) plus a context each (~1.3 MiB at level 3). Call
/// `finish()` once after the last write; an empty input still writes one
/// (empty) frame, so every stream holds at least one.
public final class ZstdCompressor: ByteSink {
    /// 8 MiB: each frame starts with an empty window, which costs 1.7% of
    /// the output at 4 MiB against one whole stream and 0.3% at 8 MiB
    /// (measured here on 314 MB of text at level 3).
    public static let blockSize = 8 << 20
    /// zstd's own default level, which auto mode uses.
    public static let defaultLevel = 3

    /// One per block of a flush, made when first needed (a small file
    /// needs one) and taken from `idle` when one is there.
    private var contexts: [ZstdCompressionContext] = []
    private let level: Int
    private let adaptive: Bool
    private let downstream: ByteSink
    private let input: UnsafeMutableRawBufferPointer       // `threads` blocks
    private var inputCount = 0
    private let outputs: [UnsafeMutableRawBufferPointer]   // one frame slot per block
    private var finished = false

    /// Bytes written to this sink so far.
    public private(set) var bytesIn: UInt64 = 0
    /// Compressed bytes handed to `downstream` so far.
    public private(set) var bytesOut: UInt64 = 0
    /// Blocks stored as raw frames so far (adaptive mode).
    public private(set) var rawBlocks = 0

    /// `adaptive`: store incompressible blocks raw (auto mode); otherwise
    /// every block goes through the compressor.
    public init(level: Int, adaptive: Bool, threads: Int, downstream: ByteSink) throws {
        guard threads >= 1 else { throw ZstdError.invalidThreadCount(threads) }
        guard Zstd.levels.contains(level) else {
            throw ZstdError.invalidLevel(level)
        }
        self.level = level
        self.adaptive = adaptive
        self.downstream = downstream
        input = .allocate(byteCount: threads * Self.blockSize, alignment: 16)
        let slot = max(Zstd.bound(Self.blockSize), RawFrame.length(of: Self.blockSize))
        outputs = (0..<threads).map { _ in .allocate(byteCount: slot, alignment: 16) }
    }

    deinit {
        input.deallocate()
        outputs.forEach { $0.deallocate() }
        Self.idle.withLock { idle in
            for c in contexts where idle.count < Self.maxIdle { idle.append(c) }
        }
    }

    /// Contexts of compressors that are gone, for the next ones: a many-file
    /// add makes a compressor per file, and making its contexts anew cost
    /// more than compressing a 7 KB mail file. ZSTD_compress2 starts every
    /// frame from a reset session, so a context carries nothing from one
    /// use to the next but its level and its memory.
    private static let idle = Mutex<[ZstdCompressionContext]>([])
    /// At most this many kept (~1.3 MiB each at level 3 after an 8 MiB block).
    private static let maxIdle = 4

    private func context(_ i: Int) throws -> ZstdCompressionContext {
        while contexts.count <= i {
            let kept = Self.idle.withLock { idle in
                idle.firstIndex { $0.level == level }.map { idle.remove(at: $0) }
            }
            contexts.append(try kept ?? ZstdCompressionContext(level: level))
        }
        return contexts[i]
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(!finished, "ZstdCompressor.write after finish")
        bytesIn += UInt64(bytes.count)
        var rest = bytes
        while !rest.isEmpty {
            let n = min(rest.count, input.count - inputCount)
            (input.baseAddress! + inputCount).copyMemory(from: rest.baseAddress!, byteCount: n)
            inputCount += n
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            if inputCount == input.count { try flush() }
        }
    }

    /// Compresses what is buffered and hands the last frames downstream.
    public func finish() throws {
        precondition(!finished, "ZstdCompressor.finish twice")
        finished = true
        if inputCount > 0 || bytesIn == 0 { try flush() }
    }

    /// Encodes the buffered blocks in parallel, then writes their frames in order.
    private func flush() throws {
        let blocks = max(1, (inputCount + Self.blockSize - 1) / Self.blockSize)
        for i in 0..<blocks { _ = try context(i) }
        let frames = Mutex<[(length: Int, raw: Bool)]>(Array(repeating: (0, false), count: blocks))
        let failure = Mutex<Error?>(nil)
        let job = Shared(self)
        DispatchQueue.concurrentPerform(iterations: blocks) { i in
            let me = job.value
            let start = i * Self.blockSize
            let block = UnsafeRawBufferPointer(rebasing: me.input[start..<min(me.inputCount, start + Self.blockSize)])
            do {
                let frame = try me.encode(block, with: me.contexts[i], into: me.outputs[i])
                frames.withLock { $0[i] = frame }
            } catch { failure.withLock { if $0 == nil { $0 = error } } }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        for (i, frame) in frames.withLock({ $0 }).enumerated() {
            try downstream.write(UnsafeRawBufferPointer(rebasing: outputs[i][..<frame.length]))
            bytesOut += UInt64(frame.length)
            if frame.raw { rawBlocks += 1 }
        }
        inputCount = 0
    }

    /// One block's frame: raw when the probe or the result says compression
    /// does not pay.
    private func encode(_ block: UnsafeRawBufferPointer, with context: ZstdCompressionContext,
                        into output: UnsafeMutableRawBufferPointer) throws -> (length: Int, raw: Bool) {
        if adaptive && CompressionProbe.looksIncompressible(block) {
            return (RawFrame.write(block, into: output), true)
        }
        let n = try context.compressFrame(block, into: output)
        if adaptive && n >= RawFrame.length(of: block.count) {
            return (RawFrame.write(block, into: output), true)
        }
        return (n, false)
    }
}

/// Lends the compressor to concurrentPerform's workers: each touches only
/// its own block, context and output slot, and the call returns only when
/// all are done.
private struct Shared: @unchecked Sendable {
    let value: ZstdCompressor
    init(_ value: ZstdCompressor) { self.value = value }
}
