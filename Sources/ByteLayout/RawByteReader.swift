// ByteReader over memory it does not own: a decrypted manifest or drop-in
// payload in guarded memory (`SecretBytes`), a chunk in a page buffer. The
// same fields and the same checks as ByteReader, but a field comes back as a
// slice of that memory (`slice`), never copied into an array, so a file key
// is read without leaving a copy on the heap; `bytes` copies, for fields
// that are not secret. Like the pointer it holds, it is valid only inside
// the `withUnsafeBytes` closure that lent the memory, which is why it is
// not Sendable: keep it a local of that closure.

/// A cursor over borrowed bytes that hands out one field at a time.
public struct RawByteReader: ByteFieldReader {
    private let base: UnsafeRawBufferPointer
    private var position = 0

    public init(_ bytes: UnsafeRawBufferPointer) { base = bytes }

    /// Bytes read so far.
    public var offset: Int { position }
    /// Bytes not read yet.
    public var remaining: Int { base.count - position }

    /// The next `count` bytes, as a view of the borrowed memory.
    public mutating func slice(_ count: Int) throws(ByteLayoutError) -> UnsafeRawBufferPointer {
        try ByteReader.check(count, remaining: remaining)
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: base[position..<position + count])
    }

    /// The next `count` bytes, copied (only for fields that are not secret).
    public mutating func bytes(_ count: Int) throws(ByteLayoutError) -> [UInt8] { Array(try slice(count)) }

    /// A big-endian integer of `T`'s width (signed ones as their bit pattern).
    public mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) throws(ByteLayoutError) -> T {
        ByteReader.bigEndian(try slice(T.bitWidth / 8))
    }

}
