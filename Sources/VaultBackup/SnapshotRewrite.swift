import System
import VaultCore

/// `vault snapshots rewrite`: a snapshot again without the entries that
/// match patterns (restic's `rewrite`, borg's `recreate`): a leaked
/// `~/.aws/credentials` taken out of every snapshot. Only the directories
/// on the way to a removed entry get new trees (stored in a new pack, as a
/// backup stores them); every other tree and every file's pieces are
/// shared with the original. Host, paths, tags, times and the piece key
/// stay; the counts lose what was removed; the pack list is computed
/// again, so no pack only the removed entries used is named by it.
public enum SnapshotRewrite {
    public struct Outcome: Sendable {
        /// The new snapshot, not yet written (the caller seals it).
        public var snapshot: Snapshot
        /// The paths removed (as the tree spells them), and what they held.
        public var removed: [[[UInt8]]] = []
        public var counts = BackupCounts()
        /// Packs that held pieces only the removed entries or the replaced
        /// trees may have used: a prune of them is a purge (Prune.Purge).
        public var purge: Set<[UInt8]> = []
    }

    /// The rewritten snapshot, or nil when no entry matches. With `dryRun`
    /// nothing is stored (the outcome's snapshot is then not to be written).
    public static func rewrite(_ reader: SnapshotReader, excluding patterns: [[UInt8]], dryRun: Bool) throws -> Outcome? {
        let writer = try PackWriter(vault: reader.vault.vault, cache: nil, dryRun: dryRun, landed: nil)
        var removed: [[[UInt8]]] = [], counts = BackupCounts(), purge = Set<[UInt8]>(), packs = Set<[UInt8]>()
        let c = reader.snapshot.counts
        var budget = min(SnapshotReader.maxEntries, c.files &+ c.directories &+ c.symlinks &+ 1)
        func corrupted(_ d: SnapshotDamage) -> BackupError { .snapshotCorrupted(snapshot: reader.id, damage: d) }
        func spend() throws {
            guard budget > 0 else { throw corrupted(.moreEntriesThanCounted) }
            budget -= 1
        }
        func text(_ path: [[UInt8]]) -> [UInt8] { path.reduce([]) { $0 + [0x2f] + $1 } }

        /// Everything under an entry that goes: counted, its packs to purge.
        func drop(_ e: TreeEntry, depth: Int) throws {
            guard depth <= SnapshotReader.maxDepth else { throw corrupted(.nestedTooDeep) }
            switch e.kind {
            case .file:
                counts.files += 1
                counts.bytes &+= e.size
                for p in e.pieces { purge.insert(p.pack) }
            case .symlink: counts.symlinks += 1
            case .directory:
                counts.directories += 1
                if let sub = e.subtree {
                    purge.insert(sub.pack)
                    for child in try reader.tree(sub) { try spend(); try drop(child, depth: depth + 1) }
                }
            }
        }
        /// The tree at `ref` without what matches: a new reference, or nil
        /// when nothing under it matched (its packs then kept as they are).
        func rebuild(_ ref: PieceRef, _ path: [[UInt8]]) throws -> PieceRef? {
            guard path.count <= SnapshotReader.maxDepth else { throw corrupted(.nestedTooDeep) }
            var out: [TreeEntry] = [], changed = false
            for e in try reader.tree(ref) {
                try spend()
                let p = path + [e.name]
                if BackupFilter.matches(patterns, name: e.name, path: text(p)) {
                    removed.append(p)
                    try drop(e, depth: p.count)
                    changed = true
                    continue
                }
                var e2 = e
                if e.kind == .directory, let sub = e.subtree {
                    if let new = try rebuild(sub, p) {
                        e2.subtree = new
                        purge.insert(sub.pack)
                        changed = true
                    } else {
                        packs.insert(sub.pack)   // kept as it is: everything under it was visited here
                    }
                }
                for piece in e.pieces { packs.insert(piece.pack) }
                out.append(e2)
            }
            guard changed else { return nil }
            let bytes = Tree.encode(out)
            guard bytes.count <= Tree.maxLength else { throw BackupError.treeTooLarge(entries: out.count) }
            let (new, _) = try bytes.withUnsafeBytes { try writer.store($0, id: reader.snapshot.key.id(of: $0)) }
            packs.insert(new.pack)
            return new
        }

        guard let root = try rebuild(reader.snapshot.root, []) else { return nil }
        purge.insert(reader.snapshot.root.pack)
        try writer.land()
        var s = reader.snapshot
        s.root = root
        let old = s.counts
        s.counts.files = old.files >= counts.files ? old.files - counts.files : 0
        s.counts.directories = old.directories >= counts.directories ? old.directories - counts.directories : 0
        s.counts.symlinks = old.symlinks >= counts.symlinks ? old.symlinks - counts.symlinks : 0
        s.counts.bytes = old.bytes >= counts.bytes ? old.bytes - counts.bytes : 0
        // The original's order, then the new pack(s): only what is used.
        s.packs = reader.snapshot.packs.filter { packs.contains($0) } + packs.subtracting(reader.snapshot.packs).sorted { $0.lexicographicallyPrecedes($1) }
        return Outcome(snapshot: s, removed: removed, counts: counts, purge: purge)
    }
}
