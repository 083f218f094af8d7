import VaultCore

/// `vault check` over backups: each snapshot's record opens and every tree
/// it reaches parses and matches its id; with `readData`, every file piece
/// too. A piece shared by many files or snapshots is read once per piece
/// key (a reference verified under one host's key says nothing under another's).
public enum SnapshotCheck {
    public static func run(_ vault: UnlockedVault, readData: Bool) -> [(snapshot: String, message: String)] {
        var problems: [(String, String)] = []
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
                if case .snapshotCorrupted(_, let detail) = error { problems.append((entry.name, detail)) } else {
                    problems.append((entry.name, "\(error)"))
                }
            } catch {
                problems.append((entry.name, "corrupted or tampered"))
            }
        }
        return problems
    }
}
