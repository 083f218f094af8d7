import VaultCodecs

/// A folder (or file) of a snapshot as one tar or zip archive, streamed:
/// `vault snapshots dump SNAPSHOT PATH --archive tar|zip`. Names start at
/// the dumped entry's own name, as `tar -c NAME` from its parent writes
/// them; PATH "/" dumps every top-level path of the snapshot. Every piece
/// is verified before its bytes reach the archive, as for a restore.
public enum SnapshotExport {
    public struct Summary: Equatable, Sendable {
        public var files: UInt64 = 0, directories: UInt64 = 0, symlinks: UInt64 = 0, bytes: UInt64 = 0
    }

    /// Writes the archive of `path` (names from the snapshot's root; empty:
    /// the whole snapshot) to `sink`.
    public static func write(_ reader: SnapshotReader, path: [[UInt8]], format: ExportArchive.Format, to sink: ByteSink) throws -> Summary {
        let archive = try ExportArchive(format: format, to: sink)
        var summary = Summary()
        let c = reader.snapshot.counts
        var budget = min(SnapshotReader.maxEntries, c.files &+ c.directories &+ c.symlinks &+ 1)
        /// The first path written of each hard-link group, with its pieces.
        var links: [UInt32: (path: [UInt8], pieces: [PieceRef], size: UInt64)] = [:]

        func add(_ e: TreeEntry, _ name: [UInt8], depth: Int) throws {
            guard depth <= SnapshotReader.maxDepth else { throw BackupError.snapshotCorrupted(snapshot: reader.id, damage: .nestedTooDeep) }
            guard budget > 0 else { throw BackupError.snapshotCorrupted(snapshot: reader.id, damage: .moreEntriesThanCounted) }
            budget -= 1
            var entry = ExportArchive.Entry(path: name, kind: .file, size: 0, permissions: UInt32(e.mode) & 0o7777,
                                            modified: (e.modified, Int(e.modifiedNanoseconds)), user: e.user, group: e.group)
            entry.attributes = e.attributes.map { ($0.name, $0.value) }
            switch e.kind {
            case .directory:
                entry.kind = .directory
                try archive.begin(entry)
                try archive.finish()
                summary.directories += 1
                if let sub = e.subtree {
                    for child in try reader.tree(sub) { try add(child, name + [0x2f] + child.name, depth: depth + 1) }
                }
            case .symlink:
                entry.kind = .symlink(target: e.target)
                try archive.begin(entry)
                try archive.finish()
                summary.symlinks += 1
            case .file:
                // A hard link of the same content as its group's first file
                // is a link in a tar; anything else is a file of its own.
                if e.linkGroup != 0, format == .tar, let first = links[e.linkGroup], first.pieces == e.pieces, first.size == e.size {
                    entry.kind = .hardlink(to: first.path)
                    try archive.begin(entry)
                    try archive.finish()
                    summary.files += 1
                    return
                }
                if e.linkGroup != 0, links[e.linkGroup] == nil { links[e.linkGroup] = (name, e.pieces, e.size) }
                entry.size = e.size
                try archive.begin(entry)
                do {
                    try reader.write(e, to: ArchiveDataSink(archive))
                    try archive.finish()
                } catch ExportArchive.ExportError.sizeDisagrees {
                    // The pieces do not add up to the size the entry claims.
                    throw BackupError.snapshotCorrupted(snapshot: reader.id, damage: .corruptedOrTampered)
                }
                summary.files += 1
                summary.bytes += e.size
            }
        }

        if path.isEmpty {
            for e in try reader.tree(reader.snapshot.root) { try add(e, e.name, depth: 1) }
        } else {
            try add(try reader.entry(at: path), path[path.count - 1], depth: path.count)
        }
        try archive.close()
        return summary
    }
}

/// A file's data into the open entry of an export.
private final class ArchiveDataSink: ByteSink {
    let archive: ExportArchive
    init(_ archive: ExportArchive) { self.archive = archive }
    func write(_ bytes: UnsafeRawBufferPointer) throws { try archive.write(bytes) }
}
