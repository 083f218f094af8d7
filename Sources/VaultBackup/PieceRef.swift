import ByteLayout

/// Where a piece is and what it is (docs/FORMAT.md, "Backups: piece
/// references"), 64 bytes:
///
///   pack id (16) || offset u64be || length u32be || stored u32be || piece id (32)
///
/// The pack id names the pack item "pack-<hex>" (BackupItems); the offset
/// and `stored` place the piece's stored bytes in that pack's content;
/// `length` is the piece's own length. Stored bytes shorter than the piece
/// are exactly one zstd frame of it; as long, the piece itself; never
/// longer. The id is HMAC-SHA256 of the piece under the snapshot's piece
/// key: a reader verifies it, since whoever dropped the snapshot chose
/// every field. Records of format 1 (trees "VAULTTR1", snapshots
/// "VAULTSN1") hold 60-byte references without `stored`: always raw.
public struct PieceRef: Hashable, Sendable {
    public static let length = 64
    public static let legacyLength = 60
    public let pack: [UInt8]
    public let offset: UInt64
    /// The piece's length (what a reader gets).
    public let count: UInt32
    /// The length of its bytes in the pack (at most `count`).
    public let stored: UInt32
    public let id: PieceID

    public var isCompressed: Bool { stored < count }

    public init(pack: [UInt8], offset: UInt64, count: UInt32, stored: UInt32, id: PieceID) {
        (self.pack, self.offset, self.count, self.stored, self.id) = (pack, offset, count, stored, id)
    }

    public func encode(into w: inout ByteWriter) {
        w.bytes(pack)
        w.u64(offset)
        w.u32(count)
        w.u32(stored)
        id.encode(into: &w)
    }

    /// `legacy`: the 60-byte shape of format 1 (stored = length). A stored
    /// length above the piece's, or none for a piece that has bytes, is
    /// not a shape a writer makes.
    public static func decode(_ r: inout ByteReader, legacy: Bool = false) throws(ByteLayoutError) -> PieceRef {
        let pack = try r.bytes(16)
        let offset = try r.u64(), count = try r.u32()
        let stored = legacy ? count : try r.u32()
        guard stored <= count, stored > 0 || count == 0 else { throw ByteLayoutError.badLength(UInt64(stored)) }
        return PieceRef(pack: pack, offset: offset, count: count, stored: stored, id: try PieceID(r.bytes(32)))
    }
}
