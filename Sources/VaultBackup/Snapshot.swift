import ByteLayout
import VaultCore
import VaultCrypto

// A snapshot item's content (docs/FORMAT.md, "Backups: snapshots"):
//
//   "VAULTSN2" || pack count u32be || pack id (16) × count      (BackupItems: what absorb checks)
//   || piece key (32) || host (u16be length || UTF-8)
//   || path count u16be || (u16be length || absolute path bytes) × count
//   || tag count u16be || (u16be length || UTF-8) × count
//   || start seconds i64be || start nanoseconds u32be || end seconds i64be || end nanoseconds u32be
//   || files u64be || directories u64be || symlinks u64be || bytes u64be
//   || changed while read u64be || unreadable u64be
//   || root tree reference (64)
//
// Format 1 ("VAULTSN1") ends in a 60-byte reference (PieceRef); it is read,
// never written.
// The pack list names every pack any reference of the snapshot points
// into, its own and those of earlier snapshots it reuses; the root tree
// holds one entry per backed-up path, named by the path's last component.

public struct Snapshot: Sendable {
    public static let maxPaths = 1024, maxTags = 256, maxText = 4096

    public var packs: [[UInt8]]
    public var key: PieceKey
    public var host: String
    public var paths: [[UInt8]]
    public var tags: [String]
    public var start: (seconds: Int64, nanoseconds: UInt32)
    public var end: (seconds: Int64, nanoseconds: UInt32)
    public var counts: BackupCounts
    public var root: PieceRef

    public init(packs: [[UInt8]], key: PieceKey, host: String, paths: [[UInt8]], tags: [String],
                start: (Int64, UInt32), end: (Int64, UInt32), counts: BackupCounts, root: PieceRef) {
        (self.packs, self.key, self.host, self.paths, self.tags) = (packs, key, host, paths, tags)
        (self.start, self.end, self.counts, self.root) = (start, end, counts, root)
    }

    /// The content's exact length (see `encode`).
    var encodedLength: Int {
        BackupItems.snapshotMagic.count + 4 + 16 * packs.count + PieceKey.length + 2 + host.utf8.count
            + 2 + paths.reduce(0) { $0 + 2 + $1.count } + 2 + tags.reduce(0) { $0 + 2 + $1.utf8.count }
            + 2 * (8 + 4) + 6 * 8 + PieceRef.length
    }

    /// The content, with the piece key in it: the caller seals it into an
    /// item and zeroes it. Its buffer is sized once, before the key goes in:
    /// an array that grew after it would leave a copy of the key in the
    /// smaller buffer it freed, where no zeroing reaches.
    public func encode() throws -> [UInt8] {
        var w = ByteWriter(BackupItems.snapshotMagic, capacity: encodedLength)
        w.u32(UInt32(packs.count))
        for p in packs { w.bytes(p) }
        key.secret.withUnsafeBytes { w.bytes($0) }
        try w.lengthPrefixed(UInt16.self, Array(host.utf8))
        w.u16(UInt16(paths.count))
        for p in paths { try w.lengthPrefixed(UInt16.self, p) }
        w.u16(UInt16(tags.count))
        for t in tags { try w.lengthPrefixed(UInt16.self, Array(t.utf8)) }
        w.i64(start.seconds); w.u32(start.nanoseconds)
        w.i64(end.seconds); w.u32(end.nanoseconds)
        for c in [counts.files, counts.directories, counts.symlinks, counts.bytes, counts.changedWhileRead, counts.unreadable] {
            w.u64(c)
        }
        root.encode(into: &w)
        return w.bytes
    }

    /// Exact shape, bounded counts and lengths, nothing after the root
    /// reference; nil otherwise.
    public static func decode(_ content: [UInt8]) -> Snapshot? {
        guard let packs = try? BackupItems.packIDs(inSnapshot: content) else { return nil }
        var r = ByteReader(content)
        do {
            try r.skip(12 + 16 * packs.count)
            var keyBytes = try r.bytes(PieceKey.length)
            let key = try PieceKey(secret: SecretBytes(consuming: &keyBytes))
            func text() throws -> String? { String(validating: try r.lengthPrefixed(UInt16.self, max: maxText), as: UTF8.self) }
            guard let host = try text() else { return nil }
            let pathCount = Int(try r.u16())
            guard pathCount <= maxPaths else { return nil }
            let paths = try (0..<pathCount).map { _ in try r.lengthPrefixed(UInt16.self, max: maxText) }
            let tagCount = Int(try r.u16())
            guard tagCount <= maxTags else { return nil }
            var tags: [String] = []
            for _ in 0..<tagCount { guard let t = try text() else { return nil }; tags.append(t) }
            let start = (try r.i64(), try r.u32()), end = (try r.i64(), try r.u32())
            guard start.1 < 1_000_000_000, end.1 < 1_000_000_000 else { return nil }
            let counts = BackupCounts(files: try r.u64(), directories: try r.u64(), symlinks: try r.u64(), bytes: try r.u64(),
                                      changedWhileRead: try r.u64(), unreadable: try r.u64())
            let root = try PieceRef.decode(&r, legacy: content.starts(with: BackupItems.legacySnapshotMagic))
            try r.finish()
            return Snapshot(packs: packs, key: key, host: host, paths: paths, tags: tags, start: start, end: end,
                            counts: counts, root: root)
        } catch {
            return nil
        }
    }
}

/// What a snapshot holds, in numbers.
public struct BackupCounts: Sendable, Equatable {
    public var files: UInt64 = 0, directories: UInt64 = 0, symlinks: UInt64 = 0, bytes: UInt64 = 0
    public var changedWhileRead: UInt64 = 0, unreadable: UInt64 = 0
    public init() {}
    public init(files: UInt64, directories: UInt64, symlinks: UInt64, bytes: UInt64, changedWhileRead: UInt64, unreadable: UInt64) {
        (self.files, self.directories, self.symlinks, self.bytes) = (files, directories, symlinks, bytes)
        (self.changedWhileRead, self.unreadable) = (changedWhileRead, unreadable)
    }
}
