import ByteLayout

/// Where a piece is and what it is (docs/FORMAT.md, "Backups: piece
/// references"), 60 bytes:
///
///   pack id (16) || offset u64be || length u32be || piece id (32)
///
/// The pack id names the pack item "pack-<hex>" (BackupItems), the offset
/// and length place the piece in that pack's content, and the id is
/// HMAC-SHA256 of its bytes under the snapshot's piece key: a reader
/// verifies it, since whoever dropped the snapshot chose every field.
public struct PieceRef: Hashable, Sendable {
    public static let length = 60
    public let pack: [UInt8]
    public let offset: UInt64
    public let count: UInt32
    public let id: PieceID

    public init(pack: [UInt8], offset: UInt64, count: UInt32, id: PieceID) {
        (self.pack, self.offset, self.count, self.id) = (pack, offset, count, id)
    }

    public func encode(into w: inout ByteWriter) {
        w.bytes(pack)
        w.u64(offset)
        w.u32(count)
        w.bytes(id.bytes)
    }

    public static func decode(_ r: inout ByteReader) throws(ByteLayoutError) -> PieceRef {
        let pack = try r.bytes(16)
        let offset = try r.u64(), count = try r.u32()
        return PieceRef(pack: pack, offset: offset, count: count, id: PieceID(try r.bytes(32)))
    }
}
