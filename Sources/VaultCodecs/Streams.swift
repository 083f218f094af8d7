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
