import VaultCore

/// `vault check` over backups: each snapshot's record opens and every tree
/// it reaches parses and matches its id; with `readData`, every file piece
/// too. A piece shared by many files or snapshots is read once per piece
/// key (a reference verified under one host's key says nothing under another's).
public enum SnapshotCheck {
    /// What one snapshot's check found (the CLI words it).
    public enum Problem: Equatable, Sendable {
        /// The snapshot is damaged.
        case damaged(SnapshotDamage)
        /// Another backup error stopped its reading.
        case failed(BackupError)
    }

    public static func run(_ vault: UnlockedVault, readData: Bool) -> [(snapshot: String, problem: Problem)] {
        var problems: [(String, Problem)] = []
        var verified: [PieceID: Set<PieceRef>] = [:]
        for entry in vault.snapshotEntries {
            do {
                let reader = try SnapshotReader(vault, entry)
                let keyName = try reader.snapshot.key.id(of: [])
                var done = verified[keyName] ?? []
                defer { verified[keyName] = done }
                var bytes: [UInt8] = []
                try reader.walk(visit: { _, e in
                    guard readData, e.kind == .file else { return true }
                    for p in e.pieces where !done.contains(p) {
                        try reader.read(p, into: &bytes, limit: Chunker.maxSize)
                        done.insert(p)
                    }
                    return true
                })
            } catch let error as BackupError {
                if case .snapshotCorrupted(_, let damage) = error { problems.append((entry.name, .damaged(damage))) } else {
                    problems.append((entry.name, .failed(error)))
                }
            } catch {
                // Its item does not open (itemCorrupted), or a failure to
                // read it: reported for this snapshot, the others go on.
                problems.append((entry.name, .damaged(.corruptedOrTampered)))
            }
        }
        return problems
    }
}
