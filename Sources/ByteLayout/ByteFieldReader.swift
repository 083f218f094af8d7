// The fields ByteReader and RawByteReader read alike, written once: each
// reader supplies `integer` (big-endian, bounds checked); the fixed-width
// fields and lengths follow from it. Inlinable, so a format's reader is
// specialised in its own module rather than called through a witness table.

/// A reader of big-endian fields.
public protocol ByteFieldReader {
    /// Bytes not read yet.
    var remaining: Int { get }
    /// A big-endian integer of `T`'s width (signed ones as their bit pattern).
    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(ByteLayoutError) -> T
}

extension ByteFieldReader {
    @inlinable public var isAtEnd: Bool { remaining == 0 }

    /// Requires that every byte was read.
    @inlinable public func finish() throws(ByteLayoutError) {
        guard isAtEnd else { throw .trailingBytes(count: remaining) }
    }

    @inlinable public mutating func u8() throws(ByteLayoutError) -> UInt8 { try integer(UInt8.self) }
    @inlinable public mutating func u16() throws(ByteLayoutError) -> UInt16 { try integer(UInt16.self) }
    @inlinable public mutating func u32() throws(ByteLayoutError) -> UInt32 { try integer(UInt32.self) }
    @inlinable public mutating func u64() throws(ByteLayoutError) -> UInt64 { try integer(UInt64.self) }
    @inlinable public mutating func i64() throws(ByteLayoutError) -> Int64 { try integer(Int64.self) }

    /// A length read as an `L` big-endian, at most `max`, as an `Int`.
    @inlinable
    public mutating func length<L: FixedWidthInteger & UnsignedInteger>(_: L.Type, max: Int = .max) throws(ByteLayoutError) -> Int {
        let raw = try integer(L.self)
        guard let n = Int(exactly: raw), n <= max else { throw .badLength(UInt64(truncatingIfNeeded: raw)) }
        return n
    }
}
