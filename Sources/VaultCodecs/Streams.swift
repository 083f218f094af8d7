// The byte-stream shapes the codecs (xz, pax) plug into. VaultCodecs knows
// nothing of vaults or keys: it turns bytes into other bytes.

/// Where bytes go, in order (a sealed item's writer, a file, stdout).
public protocol ByteSink: AnyObject {
    func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// Where bytes come from, in order (an item's decrypted content, stdin).
public protocol ByteStream: AnyObject {
    /// Fills up to `buffer.count` bytes; returns 0 only at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// A stream whose bytes already sit in a buffer of its own (an item's
/// decrypted chunk), so a reader that only looks at them (libarchive, for a
/// folder's index or extraction) borrows them rather than copying each
/// block out first.
public protocol LendingByteStream: ByteStream {
    /// The next bytes, at most `limit` (at least 1): a view of the stream's
    /// own buffer, valid until the next call on the stream. Empty only at the end.
    func lend(upTo limit: Int) throws -> UnsafeRawBufferPointer
}
