// Writes a byte layout field by field, the mirror of ByteReader:
// big-endian integers, bytes, length-prefixed fields. A length that does
// not fit its prefix is refused (never truncated into another layout).

/// Bytes appended one field at a time.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(_ start: [UInt8] = [], capacity: Int = 0) {
        bytes = start
        bytes.reserveCapacity(capacity)
    }

    /// Empties the bytes and keeps their memory, for a writer that writes
    /// its buffer out and fills it again.
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// `value`'s big-endian bytes (signed ones as their bit pattern).
    public static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    /// Appended in place: an array per field was most of what a backup's
    /// walk allocated for its trees and file lists (issue 45).
    public mutating func integer<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }
    public mutating func u8(_ value: UInt8) { bytes.append(value) }
    public mutating func u16(_ value: UInt16) { integer(value) }
    public mutating func u32(_ value: UInt32) { integer(value) }
    public mutating func u64(_ value: UInt64) { integer(value) }
    public mutating func i64(_ value: Int64) { integer(value) }

    public mutating func bytes<S: Sequence<UInt8>>(_ field: S) { bytes += field }

    /// `length L || field`; `badLength` if the length does not fit `L`.
    public mutating func lengthPrefixed<L: FixedWidthInteger & UnsignedInteger>(_: L.Type, _ field: [UInt8]) throws(ByteLayoutError) {
        guard let n = L(exactly: field.count) else { throw .badLength(UInt64(field.count)) }
        integer(n)
        bytes += field
    }
}
