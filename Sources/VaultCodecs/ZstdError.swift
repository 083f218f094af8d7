/// Errors of the zstd layer.
public enum ZstdError: Error, Equatable, Sendable {
    /// The data does not start like a zstd frame.
    case notZstd
    /// The data is damaged (bad block, bad entropy tables, content size mismatch).
    case corrupt
    /// The input ends inside a frame, or holds no frame at all.
    case truncated
    /// A frame asks for a window above the decoder's limit; nothing was allocated for it.
    case windowTooLarge
    /// A compression level outside `Zstd.levels`.
    case invalidLevel(Int)
    /// A thread count below 1.
    case invalidThreadCount(Int)
    /// libzstd could not allocate memory.
    case outOfMemory
    /// Any other libzstd failure; `function` names the call, `code` is its ZSTD_ErrorCode.
    case library(function: String, code: Int)
}
