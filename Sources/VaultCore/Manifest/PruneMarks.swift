import ByteLayout

// Prune's memory of packs it found (partly) unused (docs/FORMAT.md,
// "Manifest", version 5 trailer, and "Forget and prune"):
//
//   marks = u32be(p) || (pack id (16) || since i64be || needed u64be) × p
//
// pack ids in ascending byte order, each once. A mark says: since `since`
// (Unix seconds, this vault's clock), the snapshots in the manifest have
// needed exactly `needed` bytes of this pack id's pieces, fewer than it
// holds. Prune deletes or rewrites a pack only once its mark is older
// than the grace and `needed` is still what it finds (PrunePlan in
// VaultBackup), so a writer in flight (a `backup --to` whose pack is in
// an inbox and whose snapshot is not yet) has the grace to land its
// snapshot. Sync carries marks; a merge keeps, per pack, the later mark.

public struct PruneMarks: Sendable, Equatable {
    public struct Mark: Sendable, Equatable {
        public var since: Int64
        public var needed: UInt64
        public init(since: Int64, needed: UInt64) { (self.since, self.needed) = (since, needed) }
    }
    static let recordLength = 32

    private(set) var marks: [ItemID: Mark] = [:]

    public init() {}

    public var count: Int { marks.count }
    var encodedLength: Int { 4 + Self.recordLength * marks.count }

    public subscript(pack: [UInt8]) -> Mark? {
        get { ItemID(pack).flatMap { marks[$0] } }
        set { if let key = ItemID(pack) { marks[key] = newValue } }
    }

    /// Every marked pack id, ascending.
    public var packs: [[UInt8]] { marks.keys.sorted().map(\.bytes) }

    /// Keeps only the marks of `packs`.
    public mutating func keep(only packs: Set<[UInt8]>) {
        marks = marks.filter { packs.contains($0.key.bytes) }
    }

    /// Both sides' marks: per pack the later one (then the one needing
    /// fewer bytes), so the grace is never shortened. Symmetric.
    package func union(_ other: PruneMarks) -> PruneMarks {
        var out = self
        for (id, theirs) in other.marks {
            guard let ours = out.marks[id] else { out.marks[id] = theirs; continue }
            if (theirs.since, ours.needed) > (ours.since, theirs.needed) { out.marks[id] = theirs }
        }
        return out
    }

    func encode(into out: inout [UInt8]) {
        out += ByteWriter.bigEndian(UInt32(marks.count))
        for id in marks.keys.sorted() {
            let m = marks[id]!
            out += id.bytes
            out += ByteWriter.bigEndian(m.since)
            out += ByteWriter.bigEndian(m.needed)
        }
    }

    /// Exact shape (ascending unique ids, at most `max`), or `corruptedOrTampered`.
    static func decode(_ r: inout RawByteReader, max: Int) throws -> PruneMarks {
        var out = PruneMarks()
        out.marks = try IDTable.decode(&r, max: max) { r in Mark(since: try r.i64(), needed: try r.u64()) }
        return out
    }
}
