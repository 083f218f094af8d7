import ByteLayout

// The item ids a vault has held and let go (docs/FORMAT.md, "Manifest",
// version 5 trailer):
//
//   tombstones = u32be(t) || (item id (16) || removed i64be) × t
//
// ids in ascending byte order, each once, none an id the manifest's records
// hold; `removed` is the Unix second this vault first let it go. Every way
// an id leaves the manifest leaves one: remove, forget, prune (a pack
// deleted or rewritten as a repack), a merge that drops it, a rekey (the
// old ids). Sync carries them (a merge keeps both sides'), so every copy
// knows what any copy removed, and absorb refuses a drop-in whose item id
// is here: a replayed copy of a removed item's drop-in, or a pack dropped
// under the id of one that prune rewrote, comes back on no machine
// however it arrives (issue 37).
//
// Bounded: at most `maxCount` (24 MB); past it, the longest-removed go
// first. A drop-in removed that long ago and replayed would be taken in
// again; a rekey ends even that (old envelopes no longer open).

public struct Tombstones: Sendable, Equatable {
    public static let maxCount = 1_000_000
    static let recordLength = 24

    /// Removal times by item id.
    private(set) var removed: [ItemID: Int64] = [:]

    public init() {}

    public var count: Int { removed.count }
    var encodedLength: Int { 4 + Self.recordLength * removed.count }

    public func contains(_ id: [UInt8]) -> Bool { ItemID(id).map { removed[$0] != nil } ?? false }

    /// When `id` was let go, if it was.
    public func removedAt(_ id: [UInt8]) -> Int64? { ItemID(id).flatMap { removed[$0] } }

    /// Every id, ascending.
    public var ids: [[UInt8]] { removed.keys.sorted().map(\.bytes) }

    /// Records `id` as let go at `time` (an earlier time already recorded stays).
    package mutating func insert(_ id: [UInt8], at time: Int64) {
        guard let key = ItemID(id) else { return }
        if let t = removed[key], t <= time { return }
        removed[key] = time
        trim()
    }

    mutating func remove(_ id: [UInt8]) {
        if let key = ItemID(id) { removed[key] = nil }
    }

    /// Both sides' tombstones (the earlier time where both have one),
    /// without `live` (ids the merged manifest holds again). Symmetric.
    package func union(_ other: Tombstones, except live: (ItemID) -> Bool) -> Tombstones {
        var out = Tombstones()
        out.removed = removed.filter { !live($0.key) }
        for (id, t) in other.removed where !live(id) {
            out.removed[id] = min(t, out.removed[id] ?? t)
        }
        out.trim()
        return out
    }

    /// Keeps the newest `maxCount`: the oldest removals (then the smallest
    /// ids, so every copy drops the same ones) go.
    private mutating func trim() {
        guard removed.count > Self.maxCount else { return }
        let doomed = removed.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.prefix(removed.count - Self.maxCount)
        for (id, _) in doomed { removed[id] = nil }
    }

    func encode(into out: inout [UInt8]) {
        out += ByteWriter.bigEndian(UInt32(removed.count))
        for id in removed.keys.sorted() {
            out += id.bytes
            out += ByteWriter.bigEndian(removed[id]!)
        }
    }

    /// Exact shape (ascending unique ids, at most `maxCount`), or `corruptedOrTampered`.
    static func decode(_ r: inout RawByteReader) throws -> Tombstones {
        do {
            let n = try r.length(UInt32.self, max: maxCount)
            var out = Tombstones()
            out.removed.reserveCapacity(n)
            var previous: ItemID?
            for _ in 0..<n {
                let id = ItemID(try r.u64(), try r.u64())
                let time = try r.i64()
                guard previous.map({ $0 < id }) ?? true else { throw VaultError.corruptedOrTampered }
                previous = id
                out.removed[id] = time
            }
            return out
        } catch { throw VaultError.corruptedOrTampered }
    }
}

/// A 16-byte id (an item id, a pack id) as two integers: a million of
/// them as dictionary keys cost 16 bytes each, not an array's allocation.
/// Ordered as its bytes are (big-endian halves).
package struct ItemID: Hashable, Comparable, Sendable {
    let high: UInt64, low: UInt64

    init(_ high: UInt64, _ low: UInt64) { (self.high, self.low) = (high, low) }

    init?(_ bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        high = bytes[..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8...].reduce(0) { $0 << 8 | UInt64($1) }
    }

    package var bytes: [UInt8] { ByteWriter.bigEndian(high) + ByteWriter.bigEndian(low) }

    package static func < (a: ItemID, b: ItemID) -> Bool { (a.high, a.low) < (b.high, b.low) }
}
