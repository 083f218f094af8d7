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
    /// A compression level outside 0...9.
    case invalidLevel(Int)
    /// A thread count below 1.
    case invalidThreadCount(Int)
    /// liblzma does not support these options or this integrity check; `function` names the call.
    case unsupported(function: String, code: Int)
    /// liblzma could not allocate memory.
    case outOfMemory
    /// Any other liblzma failure; `function` names the call, `code` is its lzma_ret.
    case library(function: String, code: Int)
}
