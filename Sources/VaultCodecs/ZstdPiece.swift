/// One piece of a backup (docs/FORMAT.md, "Backups: piece references")
/// stored as exactly one zstd frame, or raw when that does not pay. The
/// reference records both lengths, so the decoder knows the exact size to
/// produce before it starts and never needs a stream of frames.
public final class ZstdPieceEncoder {
    private let context: ZstdCompressionContext
    private var output: UnsafeMutableRawBufferPointer

    /// zstd's default level: 0.3 to 0.5 GB/s a core on text, so a backup
    /// stays disk-bound; restic's "auto" compression is about the same.
    public init(level: Int = ZstdCompressor.defaultLevel) throws {
        context = try ZstdCompressionContext(level: level)
        output = .allocate(byteCount: Zstd.bound(1 << 20), alignment: 16)
    }

    deinit { output.deallocate() }

    /// The frame for `piece`, in the encoder's buffer: valid until the next
    /// call, and only while the encoder lives. Nil when the piece
    /// should be stored raw: the probe finds it incompressible (no time
    /// spent on it), or the frame is not shorter than the piece.
    public func encode(_ piece: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        if piece.isEmpty || CompressionProbe.looksIncompressible(piece, sample: CompressionProbe.pieceSample(piece.count)) { return nil }
        let bound = Zstd.bound(piece.count)
        if output.count < bound {
            output.deallocate()
            output = .allocate(byteCount: bound, alignment: 16)
        }
        let n = try context.compressFrame(piece, into: output)
        return n < piece.count ? UnsafeRawBufferPointer(rebasing: output[..<n]) : nil
    }
}

/// Decodes pieces stored as one zstd frame, exactly. Everything about the
/// frame came from whoever dropped the snapshot, so: a window above
/// 2^`windowLogMax` is refused before anything is allocated for it (vault
/// writes level 3, whose windows are at most 2 MiB); output goes only into
/// the caller's buffer of the length the reference states, and a frame that
/// would make one byte more or less, does not end at the end of the stored
/// bytes, or is followed by anything, is `ZstdError.corrupt` (or
/// `.truncated`), whatever size its header declares.
public final class ZstdPieceDecoder {
    /// 8 MiB: four times what level 3 uses, so any window of ours passes.
    public static let windowLogMax = 23
    private let context: ZstdDecompressionContext

    public init() throws { context = try ZstdDecompressionContext(windowLogMax: Self.windowLogMax) }

    /// Fills `out` exactly from `frame`.
    public func decode(_ frame: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        try context.reset()
        var consumed = 0, produced = 0
        // One spare byte: a frame that makes more than `out.count` shows it
        // by writing there, without a second buffer.
        var spare: UInt8 = 0
        while true {
            let input = UnsafeRawBufferPointer(rebasing: frame[consumed...])
            let r: (consumed: Int, produced: Int, frameEnded: Bool)
            if produced < out.count {
                r = try context.decompress(input, into: UnsafeMutableRawBufferPointer(rebasing: out[produced...]))
            } else {
                r = try withUnsafeMutableBytes(of: &spare) { try context.decompress(input, into: $0) }
                guard r.produced == 0 else { throw ZstdError.corrupt }
            }
            consumed += r.consumed
            produced += r.produced
            if r.frameEnded {
                guard produced == out.count else { throw ZstdError.corrupt }
                guard consumed == frame.count else { throw ZstdError.corrupt }
                return
            }
            if r.consumed == 0 && r.produced == 0 {
                throw consumed == frame.count ? ZstdError.truncated : ZstdError.corrupt
            }
        }
    }
}
