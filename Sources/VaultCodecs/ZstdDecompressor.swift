/// A ByteStream that reads a sequence of zstd frames from `upstream` and
/// hands out the decompressed bytes.
///
/// Bounded for hostile input: a frame whose window exceeds 2^`windowLogMax`
/// bytes (16 MiB by default; vault writes windows of at most 8 MiB) is
/// `ZstdError.windowTooLarge` before anything is allocated for it, so memory
/// is the window plus libzstd's ~128 KiB buffers, whatever the frame claims.
/// Output comes out a caller's buffer at a time: a decompression bomb is
/// stopped by the caller's own length bound (the manifest entry's size),
/// never by holding it all. The input must be at least one frame and end
/// exactly at a frame's end: otherwise `ZstdError.truncated`.
public final class ZstdDecompressor: ByteStream {
    /// Windows above 16 MiB are refused.
    public static let defaultWindowLogMax = 24
    private static let inputBufferSize = 1 << 17

    private let context: ZstdDecompressionContext
    private let upstream: ByteStream
    private let input: UnsafeMutableRawBufferPointer
    private var inputStart = 0
    private var inputEnd = 0
    private var upstreamEnded = false
    private var ended = false
    /// Whether the last call ended a frame with all its output handed out,
    /// and whether any frame ended at all.
    private var atFrameEnd = false
    private var framesEnded = 0

    public init(upstream: ByteStream, windowLogMax: Int = defaultWindowLogMax) throws {
        context = try ZstdDecompressionContext(windowLogMax: windowLogMax)
        self.upstream = upstream
        input = .allocate(byteCount: Self.inputBufferSize, alignment: 16)
    }

    deinit { input.deallocate() }

    /// Fills up to `buffer.count` bytes; returns 0 only after the last frame
    /// has been decoded completely and upstream has ended.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if ended || buffer.isEmpty { return 0 }
        while true {
            if inputStart == inputEnd && !upstreamEnded {
                let n = try upstream.read(into: input)
                (inputStart, inputEnd) = (0, n)
                if n == 0 { upstreamEnded = true }
            }
            let pending = UnsafeRawBufferPointer(rebasing: input[inputStart..<inputEnd])
            if pending.isEmpty && upstreamEnded && atFrameEnd {
                guard framesEnded > 0 else { throw ZstdError.truncated }
                ended = true
                return 0
            }
            // With no input left, the call only flushes what libzstd still holds.
            let r = try context.decompress(pending, into: buffer)
            inputStart += r.consumed
            if r.frameEnded {
                if !atFrameEnd || r.consumed > 0 { framesEnded += 1 }
                atFrameEnd = true
            } else if r.consumed > 0 || r.produced > 0 {
                atFrameEnd = false
            }
            if r.produced > 0 { return r.produced }
            if r.consumed == 0 && !r.frameEnded {
                // No progress: the input ended inside a frame (or libzstd
                // refuses to move, which it never does with room to write).
                if pending.isEmpty && upstreamEnded { throw ZstdError.truncated }
                if !pending.isEmpty { throw ZstdError.corrupt }
            }
            if pending.isEmpty && upstreamEnded && !atFrameEnd { throw ZstdError.truncated }
        }
    }
}
