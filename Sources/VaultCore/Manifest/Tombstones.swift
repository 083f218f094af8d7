import ByteLayout
import VaultCrypto

// The item ids a vault has held and let go (docs/FORMAT.md, "Manifest",
// the trailer of versions 5 and 6):
//
//   version 6: tombstones = u32be(t) || (item id (16) || removed i64be || item digest (16)) × t
//   version 5: tombstones = u32be(t) || (item id (16) || removed i64be) × t
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
// The item digest (version 6) says which item was let go, not only which
// id: a dropper who learned an id can drop another item under it, and one
// machine may take in that forgery and remove it while another took in the
// real one. The real one must not go because the forgery did (the model
// test's seed 15873075025391768205 lost a file so). Zero: not known (a
// tombstone read from version 5, or two sides that let go of two items
// under one id); then the id alone counts, as before.
//
// Bounded: at most `maxCount` (40 MB); past it, the longest-removed go
// first. A drop-in removed that long ago and replayed would be taken in
// again; a rekey ends even that (old envelopes no longer open).

public struct Tombstones: Sendable, Equatable {
    public static let maxCount = 1_000_000
    static let recordLength = 40
    /// A version 5 record: no digest.
    static let version5RecordLength = 24
    static let digestLength = 16

    /// When an id was let go, and the digest of the item it named (0: not known).
    struct Removal: Equatable {
        var time: Int64
        var digest: ItemID
    }
    static let unknownDigest = ItemID(0, 0)

    /// Removals by item id.
    private(set) var removed: [ItemID: Removal] = [:]

    public init() {}

    public var count: Int { removed.count }
    var encodedLength: Int { 4 + Self.recordLength * removed.count }

    public func contains(_ id: [UInt8]) -> Bool { ItemID(id).map { removed[$0] != nil } ?? false }

    /// When `id` was let go, if it was.
    public func removedAt(_ id: [UInt8]) -> Int64? { ItemID(id).flatMap { removed[$0]?.time } }

    /// Whether the removal of `e`'s id was the removal of `e` as far as is
    /// known: its id is here, with `e`'s digest or none. An id let go for
    /// another item (another kind or file key: a forgery under a learned
    /// id, or the real item where the forgery was let go) does not remove `e`.
    public func removes(_ e: ManifestEntry) -> Bool {
        guard let id = ItemID(e.itemID), let r = removed[id] else { return false }
        return r.digest == Self.unknownDigest || r.digest == ItemID(e.tombstoneDigest)
    }

    /// Every id, ascending.
    public var ids: [[UInt8]] { removed.keys.sorted().map(\.bytes) }

    /// Records `e`'s id as let go at `time` (an earlier time already
    /// recorded stays), with its item digest.
    package mutating func insert(_ e: ManifestEntry, at time: Int64) {
        insert(e.itemID, at: time, digest: e.tombstoneDigest)
    }

    /// Records `id` as let go at `time`, by the item of that digest (16
    /// zero bytes: not known). The published vectors' way in.
    package mutating func insert(_ id: [UInt8], at time: Int64, digest: [UInt8]) {
        guard let key = ItemID(id), let digest = ItemID(digest) else { return }
        removed[key] = Self.combined(removed[key], Removal(time: time, digest: digest))
        trim()
    }

    mutating func remove(_ id: [UInt8]) {
        if let key = ItemID(id) { removed[key] = nil }
    }

    /// Both sides' tombstones, without `live` (ids the merged manifest
    /// holds again). Symmetric.
    package func union(_ other: Tombstones, except live: (ItemID) -> Bool) -> Tombstones {
        var out = Tombstones()
        out.removed = removed.filter { !live($0.key) }
        for (id, r) in other.removed where !live(id) {
            out.removed[id] = Self.combined(out.removed[id], r)
        }
        out.trim()
        return out
    }

    /// Two removals of one id: the earlier time; the digest both give, or
    /// the one known, else (two items let go under one id) none, so the id
    /// alone counts. Symmetric.
    static func combined(_ a: Removal?, _ b: Removal) -> Removal {
        guard let a else { return b }
        let digest = a.digest == b.digest || b.digest == unknownDigest ? a.digest
            : a.digest == unknownDigest ? b.digest : unknownDigest
        return Removal(time: min(a.time, b.time), digest: digest)
    }

    /// Keeps the newest `maxCount`: the oldest removals (then the smallest
    /// ids, so every copy drops the same ones) go.
    private mutating func trim() {
        guard removed.count > Self.maxCount else { return }
        let doomed = removed.sorted { ($0.value.time, $0.key) < ($1.value.time, $1.key) }.prefix(removed.count - Self.maxCount)
        for (id, _) in doomed { removed[id] = nil }
    }

    /// Version 6 records; version 5's (no digests) only for its published vector.
    func encode(into out: inout [UInt8], version: UInt8) {
        out += ByteWriter.bigEndian(UInt32(removed.count))
        for id in removed.keys.sorted() {
            let r = removed[id]!
            out += id.bytes
            out += ByteWriter.bigEndian(r.time)
            if version >= 6 { out += r.digest.bytes }
        }
    }

    /// Exact shape (ascending unique ids, at most `maxCount`), or
    /// `corruptedOrTampered`. Version 5's records have no digest.
    static func decode(_ r: inout RawByteReader, version: UInt8) throws -> Tombstones {
        var out = Tombstones()
        out.removed = try IDTable.decode(&r, max: maxCount) { r in
            Removal(time: try r.i64(), digest: version >= 6 ? ItemID(try r.u64(), try r.u64()) : unknownDigest)
        }
        return out
    }
}

extension ManifestEntry {
    /// What a tombstone records of the item it let go (docs/FORMAT.md,
    /// "Manifest"): the first 16 bytes of SHA-256("vault v1 tombstone
    /// item" || kind || file key). Two entries of one id are the same item
    /// exactly when their kinds and file keys agree, so this tells them
    /// apart without keeping the key; it lives only inside the sealed
    /// manifest, beside the key itself.
    public var tombstoneDigest: [UInt8] {
        var input = Array("vault v1 tombstone item".utf8) + [kind.rawValue]
        fileKey.withUnsafeBytes { input += $0 }
        defer { SecureZero.zero(&input) }
        // SHA-256 of 56 bytes in memory fails only if OpenSSL cannot
        // allocate: then the digest is "not known", and the id alone counts.
        return (try? SHA256.hash(input)).map { Array($0.prefix(Tombstones.digestLength)) }
            ?? [UInt8](repeating: 0, count: Tombstones.digestLength)
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
