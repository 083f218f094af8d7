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
        guard threads >= 1 else { throw XZError.invalidThreadCount(threads) }
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
