/// What changed between two snapshots (`vault snapshots diff`): entries
/// added, removed, or changed (type, content, mode, owner or times), by
/// path, in walk order. Two directories with the same tree reference are
/// the same, and are not read: a diff of two nightly snapshots reads only
/// the directories that changed.
public enum SnapshotDiff {
    public enum Change: Sendable, Hashable {
        case added, removed, changed
        public var symbol: String { switch self { case .added: "+"; case .removed: "-"; case .changed: "M" } }
    }

    /// What a change moved, in file bytes: a file added counts its size as
    /// added, one removed as removed, one changed both (its old size
    /// removed, its new size added); directories and links count nothing.
    public struct Bytes: Sendable, Equatable {
        public var added: UInt64 = 0, removed: UInt64 = 0
        public init(added: UInt64 = 0, removed: UInt64 = 0) { (self.added, self.removed) = (added, removed) }
    }

    public static func run(_ a: SnapshotReader, _ b: SnapshotReader, report: ([[UInt8]], Change, Bytes) throws -> Void) throws {
        func fileBytes(_ e: TreeEntry) -> UInt64 { e.kind == .file ? e.size : 0 }
        var budget = UInt64(SnapshotReader.maxEntries)
        let sameKey = try a.snapshot.key.id(of: []) == b.snapshot.key.id(of: [])
        func same(_ x: TreeEntry, _ y: TreeEntry) -> Bool {
            x.kind == y.kind && x.mode == y.mode && x.user == y.user && x.group == y.group && x.size == y.size
                && x.modified == y.modified && x.modifiedNanoseconds == y.modifiedNanoseconds
                && x.pieces.map(\.id) == y.pieces.map(\.id) && x.target == y.target && x.attributes == y.attributes
        }
        func all(_ reader: SnapshotReader, _ e: TreeEntry, _ path: [[UInt8]], _ change: Change) throws {
            try report(path, change, change == .added ? Bytes(added: fileBytes(e)) : Bytes(removed: fileBytes(e)))
            guard e.kind == .directory, let sub = e.subtree else { return }
            for child in try reader.tree(sub) {
                guard budget > 0, path.count < SnapshotReader.maxDepth else { throw BackupError.snapshotCorrupted(snapshot: reader.id, damage: .tooManyEntries) }
                budget -= 1
                try all(reader, child, path + [child.name], change)
            }
        }
        func compare(_ ra: PieceRef?, _ rb: PieceRef?, _ path: [[UInt8]]) throws {
            guard path.count < SnapshotReader.maxDepth else { throw BackupError.snapshotCorrupted(snapshot: b.id, damage: .nestedTooDeep) }
            // Same host key and same tree id: the same directory.
            if sameKey, let ra, let rb, ra.id == rb.id { return }
            let left = try ra.map(a.tree) ?? [], right = try rb.map(b.tree) ?? []
            var i = 0, j = 0
            while i < left.count || j < right.count {
                guard budget > 0 else { throw BackupError.snapshotCorrupted(snapshot: b.id, damage: .tooManyEntries) }
                budget -= 1
                if j == right.count || (i < left.count && left[i].name.lexicographicallyPrecedes(right[j].name)) {
                    try all(a, left[i], path + [left[i].name], .removed); i += 1
                } else if i == left.count || right[j].name.lexicographicallyPrecedes(left[i].name) {
                    try all(b, right[j], path + [right[j].name], .added); j += 1
                } else {
                    let (x, y) = (left[i], right[j])
                    let p = path + [x.name]
                    if x.kind == .directory && y.kind == .directory {
                        if !same(x, y) { try report(p, .changed, Bytes()) }
                        try compare(x.subtree, y.subtree, p)
                    } else if x.kind != y.kind {
                        try all(a, x, p, .removed)
                        try all(b, y, p, .added)
                    } else if !same(x, y) {
                        try report(p, .changed, Bytes(added: fileBytes(y), removed: fileBytes(x)))
                    }
                    i += 1; j += 1
                }
            }
        }
        try compare(a.snapshot.root, b.snapshot.root, [])
    }
}
