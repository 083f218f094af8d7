// The only file that imports libzstd. `ZstdCompressionContext` and
// `ZstdDecompressionContext` each own one libzstd context and free it in
// deinit; every size_t result passes through `Zstd.check`, the one place
// that turns a libzstd error code into a `ZstdError`. Pointers handed to
// libzstd are set for one call and never outlive it.
internal import CZstd

enum Zstd {
    /// The levels vault writes: libzstd's 1...19 (the "ultra" levels above 19
    /// need windows beyond what the decoder here accepts).
    static let levels = 1...19

    /// Result codes that are errors become typed errors here and nowhere else.
    @discardableResult
    static func check(_ result: Int, _ function: String) throws -> Int {
        guard ZSTD_isError(result) != 0 else { return result }
        switch ZSTD_getErrorCode(result) {
        case ZSTD_error_prefix_unknown: throw ZstdError.notZstd
        case ZSTD_error_frameParameter_windowTooLarge: throw ZstdError.windowTooLarge
        case ZSTD_error_memory_allocation: throw ZstdError.outOfMemory
        case ZSTD_error_corruption_detected, ZSTD_error_checksum_wrong, ZSTD_error_literals_headerWrong,
             ZSTD_error_dictionary_wrong, ZSTD_error_frameParameter_unsupported, ZSTD_error_version_unsupported,
             ZSTD_error_srcSize_wrong, ZSTD_error_tableLog_tooLarge, ZSTD_error_maxSymbolValue_tooLarge,
             ZSTD_error_maxSymbolValue_tooSmall:
            throw ZstdError.corrupt
        default:
            throw ZstdError.library(function: function, code: Int(ZSTD_getErrorCode(result).rawValue))
        }
    }

    /// The most a block of `count` bytes can compress to (ZSTD_compressBound).
    static func bound(_ count: Int) -> Int { ZSTD_compressBound(count) }
}

/// One compression context at a fixed level; not thread-safe (one per worker).
// @unchecked Sendable: used by one owner at a time; ZstdCompressor hands
// idle ones on through a Mutex.
final class ZstdCompressionContext: @unchecked Sendable {
    private let cctx: OpaquePointer
    let level: Int

    init(level: Int) throws {
        guard Zstd.levels.contains(level) else {
            throw ZstdError.invalidLevel(level)
        }
        guard let c = ZSTD_createCCtx() else { throw ZstdError.outOfMemory }
        cctx = c
        self.level = level
        try Zstd.check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, Int32(level)), "ZSTD_CCtx_setParameter")
        // The frame header records the content size (so a reader's buffer
        // never exceeds it) and no checksum: the item cipher authenticates
        // every byte, a checksum would only cost time.
        try Zstd.check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1), "ZSTD_CCtx_setParameter")
        try Zstd.check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0), "ZSTD_CCtx_setParameter")
    }

    deinit { ZSTD_freeCCtx(cctx) }

    /// Compresses `input` as one whole frame into `output` (at least
    /// `Zstd.bound(input.count)` bytes); returns the frame's length.
    func compressFrame(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> Int {
        try Zstd.check(ZSTD_compress2(cctx, output.baseAddress, output.count, input.baseAddress, input.count),
                       "ZSTD_compress2")
    }
}

/// One streaming decompression context with a window limit.
final class ZstdDecompressionContext {
    private let dctx: OpaquePointer

    /// `windowLogMax`: a frame whose window exceeds 2^windowLogMax bytes is
    /// refused before anything is allocated for it.
    init(windowLogMax: Int) throws {
        guard let d = ZSTD_createDCtx() else { throw ZstdError.outOfMemory }
        dctx = d
        try Zstd.check(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, Int32(windowLogMax)), "ZSTD_DCtx_setParameter")
    }

    deinit { ZSTD_freeDCtx(dctx) }

    /// Forgets any frame in progress (after an error, or before a frame
    /// that must be decoded on its own), keeping the window limit.
    func reset() throws {
        try Zstd.check(ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only), "ZSTD_DCtx_reset")
    }

    /// One ZSTD_decompressStream call: how much of `input` was consumed, how
    /// much of `output` filled, and whether a frame ended exactly here with
    /// everything flushed (libzstd's return value 0).
    func decompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws
        -> (consumed: Int, produced: Int, frameEnded: Bool) {
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let hint = try Zstd.check(ZSTD_decompressStream(dctx, &outBuffer, &inBuffer), "ZSTD_decompressStream")
        return (inBuffer.pos, outBuffer.pos, hint == 0)
    }
}
