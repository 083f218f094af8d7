import VaultCodecs

/// Where sealed or plain bytes go, in order (defined with the codecs, which
/// plug into the same chain).
public typealias ByteSink = VaultCodecs.ByteSink
/// Sequential plain bytes, pulled (an item's content, a decompressor).
public typealias ByteStream = VaultCodecs.ByteStream
public typealias LendingByteStream = VaultCodecs.LendingByteStream

/// Random-access bytes of known size (a sealed item file, or memory).
public protocol ByteSource: AnyObject {
    var size: UInt64 { get }
    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of data.
    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// ItemReader's word that the sealed chunk at `range` (with the item
    /// header, for the first) authenticated: what a source that keeps
    /// bytes for later (a thin vault's block cache) may keep from now on.
    func authenticated(_ range: Range<UInt64>)
}

extension ByteSource {
    public func authenticated(_ range: Range<UInt64>) {}
}
