// Reads a byte layout field by field, front to back (docs/FORMAT.md
// notation: `a u8 || b u32be || c (16)`): fixed-size big-endian integers,
// fixed-size byte fields, length-prefixed fields, then `finish()`, which
// requires the exact end. The input is hostile: every bound is checked
// before an index is formed and every length is compared with what is
// left, never added to an offset first, so no input traps; a short or
// long input is a `ByteLayoutError`.

/// A cursor over bytes that hands out one field at a time.
public struct ByteReader: ByteFieldReader, Sendable {
    // @usableFromInline: `integer` is inlined into each format's module
    // and specialised there (a tree of 200,000 entries spent 10 % of a
    // restore in the generic one, through a witness table: issue 45).
    @usableFromInline let base: ArraySlice<UInt8>
    @usableFromInline var position: Int

    public init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    public init(_ bytes: ArraySlice<UInt8>) {
        base = bytes
        position = bytes.startIndex
    }

    /// Bytes read so far (from the start of what the reader was given).
    public var offset: Int { position - base.startIndex }
    /// Bytes not read yet.
    @inlinable public var remaining: Int { base.endIndex - position }

    /// The next `count` bytes, without copying.
    @inlinable public mutating func slice(_ count: Int) throws(ByteLayoutError) -> ArraySlice<UInt8> {
        try Self.check(count, remaining: remaining)
        defer { position += count }
        return base[position..<position + count]
    }

    /// The next `count` bytes.
    public mutating func bytes(_ count: Int) throws(ByteLayoutError) -> [UInt8] { Array(try slice(count)) }

    /// Skips `count` bytes.
    public mutating func skip(_ count: Int) throws(ByteLayoutError) { _ = try slice(count) }

    /// Everything not read yet (possibly nothing).
    public mutating func rest() -> [UInt8] {
        defer { position = base.endIndex }
        return Array(base[position...])
    }

    /// A reader over the next `count` bytes (a field whose inside is a
    /// layout of its own), this one moved past them.
    public mutating func reader(_ count: Int) throws(ByteLayoutError) -> ByteReader { ByteReader(try slice(count)) }

    /// Requires the next bytes to be `constant` (a magic or a version).
    public mutating func expect(_ constant: [UInt8]) throws(ByteLayoutError) {
        let at = offset
        guard try slice(constant.count).elementsEqual(constant) else { throw .mismatch(offset: at) }
    }

    /// A big-endian integer of `T`'s width (signed ones as their bit pattern).
    @inlinable public mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) throws(ByteLayoutError) -> T {
        Self.bigEndian(try slice(T.bitWidth / 8))
    }


    /// `length L || bytes (length)`, the length at most `max`.
    public mutating func lengthPrefixed<L: FixedWidthInteger & UnsignedInteger>(_ prefix: L.Type, max: Int = .max) throws(ByteLayoutError) -> [UInt8] {
        try bytes(try length(prefix, max: max))
    }
}

// What RawByteReader shares with ByteReader, so both check alike.
extension ByteReader {
    /// `count` bytes can be taken from `remaining`.
    @inlinable static func check(_ count: Int, remaining: Int) throws(ByteLayoutError) {
        guard count >= 0 else { throw .badLength(UInt64(truncatingIfNeeded: count)) }
        guard count <= remaining else { throw .truncated(needed: count, remaining: remaining) }
    }

    /// The integer whose big-endian bytes are `bytes` (already `T`'s width).
    @inlinable static func bigEndian<T: FixedWidthInteger, S: Sequence<UInt8>>(_ bytes: S) -> T {
        var v: T = 0
        for b in bytes { v = v << 8 | T(truncatingIfNeeded: b) }
        return v
    }
}
