import VaultBackup

/// The `--json` outputs of `backup` and `snapshots` (README.md,
/// "Machine-readable output"), beside JSONOutput's others.
extension JSONOutput {
    /// `backup --json`.
    struct Backup: Encodable {
        let snapshot: String?
        let host: String
        let dryRun: Bool
        let files: UInt64, directories: UInt64, symlinks: UInt64, bytes: UInt64
        let filesRead: UInt64, bytesRead: UInt64, filesUnchanged: UInt64
        let piecesNew: Int, piecesReused: Int, bytesNew: UInt64, bytesStored: UInt64, packs: Int
        /// What the new pieces take in packs, compressed.
        let bytesNewCompressed: UInt64
        let parentUsed: Bool
        let unreadable: [String], changedWhileRead: [String], skipped: [String]
        let seconds: Double

        init(_ s: BackupSummary, host: String, seconds: Double, dryRun: Bool) {
            (snapshot, self.host, self.dryRun, self.seconds) = (s.snapshot, host, dryRun, seconds)
            (files, directories, symlinks, bytes) = (s.counts.files, s.counts.directories, s.counts.symlinks, s.counts.bytes)
            (filesRead, bytesRead, filesUnchanged) = (s.filesRead, s.bytesRead, s.filesUnchanged)
            (piecesNew, piecesReused, bytesNew, bytesStored, packs) = (s.piecesNew, s.piecesReused, s.bytesNew, s.bytesStored, s.packs)
            bytesNewCompressed = s.bytesNewCompressed
            (parentUsed, unreadable, changedWhileRead, skipped) = (s.parentUsed, s.unreadable, s.changedWhileRead, s.skipped)
        }

        enum CodingKeys: String, CodingKey {
            case snapshot, host, dryRun = "dry_run", files, directories, symlinks, bytes, filesRead = "files_read"
            case bytesRead = "bytes_read", filesUnchanged = "files_unchanged", piecesNew = "pieces_new"
            case piecesReused = "pieces_reused", bytesNew = "bytes_new", bytesStored = "bytes_stored", packs
            case bytesNewCompressed = "bytes_new_compressed"
            case parentUsed = "parent_used", unreadable, changedWhileRead = "changed_while_read", skipped, seconds
        }
    }

    /// One snapshot of `snapshots --json`.
    struct SnapshotItem: Encodable {
        let id: String
        let host: String
        let paths: [String]
        let tags: [String]
        let start: String, end: String
        let files: UInt64, directories: UInt64, symlinks: UInt64, bytes: UInt64
        let changedWhileRead: UInt64, unreadable: UInt64

        init(_ r: SnapshotReader) {
            let s = r.snapshot
            (id, host, tags) = (r.id, s.host, s.tags)
            paths = s.paths.map { String(decoding: $0, as: UTF8.self) }
            (start, end) = (iso8601(s.start.seconds), iso8601(s.end.seconds))
            (files, directories, symlinks, bytes) = (s.counts.files, s.counts.directories, s.counts.symlinks, s.counts.bytes)
            (changedWhileRead, unreadable) = (s.counts.changedWhileRead, s.counts.unreadable)
        }

        enum CodingKeys: String, CodingKey {
            case id, host, paths, tags, start, end, files, directories, symlinks, bytes
            case changedWhileRead = "changed_while_read", unreadable
        }
    }

    struct Snapshots: Encodable { let snapshots: [SnapshotItem] }

    /// `snapshots stats --json`.
    struct BackupStats: Encodable {
        let snapshots: Int, packs: Int
        /// What the snapshots hold (each file counted in each snapshot), and what the packs store.
        let snapshotBytes: UInt64, storedBytes: UInt64
        enum CodingKeys: String, CodingKey { case snapshots, packs, snapshotBytes = "snapshot_bytes", storedBytes = "stored_bytes" }
    }
}
