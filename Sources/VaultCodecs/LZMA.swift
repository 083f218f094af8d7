// The only file that imports liblzma. `LZMAStream` owns one lzma_stream
// (encoder or decoder) and ends it in deinit; every lzma_ret passes through
// `LZMAStream.check`, the one place that turns a failure into an `XZError`.
// Pointers handed to liblzma (next_in, next_out) are set for one lzma_code
// call and cleared before `code` returns, so none outlives its buffer.
internal import CLZMA

final class LZMAStream {
    // Heap-allocated so the lzma_stream never moves while liblzma holds state for it.
    private let strm: UnsafeMutablePointer<lzma_stream>

    private init() {
        strm = .allocate(capacity: 1)
        strm.initialize(to: lzma_stream())   // LZMA_STREAM_INIT does not import
    }

    deinit {
        lzma_end(strm)   // frees the coder and, for the MT encoder, joins its threads
        strm.deinitialize(count: 1)
        strm.deallocate()
    }

    // The lzma_ret values that are not errors: LZMA_OK and LZMA_STREAM_END.
    // Everything else becomes a typed error here and nowhere else. The
    // decoder is created with LZMA_TELL_UNSUPPORTED_CHECK, so a check it
    // cannot verify is an error rather than silently skipped.
    private func check(_ ret: lzma_ret, _ function: String) throws {
        switch ret {
        case LZMA_OK, LZMA_STREAM_END: return
        case LZMA_MEM_ERROR: throw XZError.outOfMemory
        case LZMA_MEMLIMIT_ERROR:
            // (What the stream would need is not reported: the threaded
            // decoder's lzma_memusage is its current use, not the need.)
            throw XZError.memoryLimitExceeded(limit: lzma_memlimit_get(strm))
        case LZMA_FORMAT_ERROR: throw XZError.notXZ
        case LZMA_DATA_ERROR: throw XZError.corrupt
        // No progress possible: for a decoder, the input ended early (our
        // encoders always have room to write, so they never see it).
        case LZMA_BUF_ERROR: throw XZError.truncated
        case LZMA_OPTIONS_ERROR, LZMA_UNSUPPORTED_CHECK:
            throw XZError.unsupported(function: function, code: Int(ret.rawValue))
        default:
            throw XZError.library(function: function, code: Int(ret.rawValue))
        }
    }

    /// An .xz encoder at preset `preset` (0...9) with a CRC64 check. With
    /// several threads, liblzma's multi-threaded encoder
    /// (lzma_stream_encoder_mt): independent blocks of liblzma's default
    /// size, 3 × the preset's dictionary (at least 1 MiB), as `xz -T2`
    /// writes; with 2 workers that keeps both busy, and larger blocks would
    /// only cost memory. With one thread, the plain encoder
    /// (lzma_easy_encoder), as `xz -T1` does: one block, half the memory, no
    /// hand-off between threads, slightly smaller output.
    static func encoder(preset: Int, threads: Int) throws -> LZMAStream {
        let s = LZMAStream()
        if threads == 1 {
            try s.check(lzma_easy_encoder(s.strm, UInt32(preset), LZMA_CHECK_CRC64), "lzma_easy_encoder")
        } else {
            var mt = options(preset: preset, threads: threads)
            try s.check(lzma_stream_encoder_mt(s.strm, &mt), "lzma_stream_encoder_mt")
        }
        return s
    }

    /// An .xz decoder for exactly one stream (no LZMA_CONCATENATED) that will
    /// not allocate more than `memoryLimit` bytes. With several threads,
    /// liblzma's multi-threaded decoder (lzma_stream_decoder_mt, as
    /// `xz -d -T2`): the blocks our multi-threaded encoder writes are
    /// decoded in parallel (1 GiB of text at preset 1: 6.0 s -> 3.0 s here);
    /// a stream of one block, or one that would need more than the limit
    /// to go parallel, is decoded by one thread.
    static func decoder(memoryLimit: UInt64, threads: Int) throws -> LZMAStream {
        let s = LZMAStream()
        let tellUnsupportedCheck: UInt32 = 0x02   // LZMA_TELL_UNSUPPORTED_CHECK (a UINT32_C macro)
        if threads == 1 {
            try s.check(lzma_stream_decoder(s.strm, memoryLimit, tellUnsupportedCheck), "lzma_stream_decoder")
        } else {
            var mt = lzma_mt()
            mt.flags = tellUnsupportedCheck
            mt.threads = UInt32(threads)
            mt.timeout = 0                       // lzma_code blocks until it can make progress
            mt.memlimit_threading = memoryLimit  // above it: one thread
            mt.memlimit_stop = memoryLimit       // above it: LZMA_MEMLIMIT_ERROR
            try s.check(lzma_stream_decoder_mt(s.strm, &mt), "lzma_stream_decoder_mt")
        }
        return s
    }

    /// Peak memory of `encoder(preset:threads:)`, as liblzma computes it
    /// (lzma_easy_encoder_memusage, lzma_stream_encoder_mt_memusage); nil
    /// for invalid options.
    static func encoderMemoryUsage(preset: Int, threads: Int) -> UInt64? {
        var mt = options(preset: preset, threads: threads)
        let n = threads == 1 ? lzma_easy_encoder_memusage(UInt32(preset)) : lzma_stream_encoder_mt_memusage(&mt)
        return n == UInt64.max ? nil : n
    }

    private static func options(preset: Int, threads: Int) -> lzma_mt {
        var mt = lzma_mt()
        mt.flags = 0
        mt.threads = UInt32(threads)
        mt.block_size = 0
        mt.timeout = 0          // lzma_code blocks until it can make progress
        mt.preset = UInt32(preset)
        mt.filters = nil
        mt.check = LZMA_CHECK_CRC64
        return mt
    }

    enum Action { case run, finish }

    /// One lzma_code call: consumes from `input`, produces into `output`.
    /// Returns the bytes consumed and produced, and whether the stream ended.
    func code(_ input: UnsafeRawBufferPointer, _ output: UnsafeMutableRawBufferPointer,
              _ action: Action) throws -> (consumed: Int, produced: Int, streamEnd: Bool) {
        strm.pointee.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        strm.pointee.avail_in = input.count
        strm.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        strm.pointee.avail_out = output.count
        let ret = lzma_code(strm, action == .run ? LZMA_RUN : LZMA_FINISH)
        let consumed = input.count - strm.pointee.avail_in
        let produced = output.count - strm.pointee.avail_out
        strm.pointee.next_in = nil; strm.pointee.avail_in = 0
        strm.pointee.next_out = nil; strm.pointee.avail_out = 0
        try check(ret, "lzma_code")
        return (consumed, produced, ret == LZMA_STREAM_END)
    }
}
