// Reads a byte layout field by field, front to back (docs/FORMAT.md
// notation: `a u8 || b u32be || c (16)`): fixed-size big-endian integers,
// fixed-size byte fields, length-prefixed fields, then `finish()`, which
// requires the exact end. The input is hostile: every bound is checked
// before an index is formed and every length is compared with what is
// left, never added to an offset first, so no input traps; a short or
// long input is a `ByteLayoutError`.

/// A cursor over bytes that hands out one field at a time.
public struct ByteReader: Sendable {
    private let base: ArraySlice<UInt8>
    private var position: Int

    public init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    public init(_ bytes: ArraySlice<UInt8>) {
        base = bytes
        position = bytes.startIndex
    }

    /// Bytes read so far (from the start of what the reader was given).
    public var offset: Int { position - base.startIndex }
    /// Bytes not read yet.
    public var remaining: Int { base.endIndex - position }
    public var isAtEnd: Bool { remaining == 0 }

    /// The next `count` bytes, without copying.
    public mutating func slice(_ count: Int) throws(ByteLayoutError) -> ArraySlice<UInt8> {
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
    public mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) throws(ByteLayoutError) -> T {
        Self.bigEndian(try slice(T.bitWidth / 8))
    }

    public mutating func u8() throws(ByteLayoutError) -> UInt8 { try integer() }
    public mutating func u16() throws(ByteLayoutError) -> UInt16 { try integer() }
    public mutating func u32() throws(ByteLayoutError) -> UInt32 { try integer() }
    public mutating func u64() throws(ByteLayoutError) -> UInt64 { try integer() }
    public mutating func i64() throws(ByteLayoutError) -> Int64 { try integer() }

    /// A length read as an `L` big-endian, at most `max`, as an `Int`.
    public mutating func length<L: FixedWidthInteger & UnsignedInteger>(_: L.Type, max: Int = .max) throws(ByteLayoutError) -> Int {
        try Self.length(try integer(L.self), max: max)
    }

    /// `length L || bytes (length)`, the length at most `max`.
    public mutating func lengthPrefixed<L: FixedWidthInteger & UnsignedInteger>(_ prefix: L.Type, max: Int = .max) throws(ByteLayoutError) -> [UInt8] {
        try bytes(try length(prefix, max: max))
    }

    /// Requires that every byte was read.
    public func finish() throws(ByteLayoutError) {
        guard isAtEnd else { throw .trailingBytes(count: remaining) }
    }
}

// What RawByteReader shares with ByteReader, so both check alike.
extension ByteReader {
    /// `count` bytes can be taken from `remaining`.
    static func check(_ count: Int, remaining: Int) throws(ByteLayoutError) {
        guard count >= 0 else { throw .badLength(UInt64(truncatingIfNeeded: count)) }
        guard count <= remaining else { throw .truncated(needed: count, remaining: remaining) }
    }

    /// The integer whose big-endian bytes are `bytes` (already `T`'s width).
    static func bigEndian<T: FixedWidthInteger, S: Sequence<UInt8>>(_ bytes: S) -> T {
        var v: T = 0
        for b in bytes { v = v << 8 | T(truncatingIfNeeded: b) }
        return v
    }

    /// A length field's value as an `Int`, at most `max`.
    static func length<L: FixedWidthInteger & UnsignedInteger>(_ raw: L, max: Int) throws(ByteLayoutError) -> Int {
        guard let n = Int(exactly: raw), n <= max else { throw .badLength(UInt64(truncatingIfNeeded: raw)) }
        return n
    }
}
