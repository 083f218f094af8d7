import VaultCore

/// Absorb's question about a waiting snapshot that names packs the vault
/// holds only as repacks (SnapshotAdmission in VaultCore): was every piece
/// it needs from them kept? A backup told by its repack note (RepackNote)
/// names only kept pieces; one made before the repack, or from a stale
/// note, may not. Proven by a walk: every tree is read (so those in
/// repacks are found and verified), and every reference into a repacked
/// pack must fall in a range its repack kept. The walk is bounded as any
/// (SnapshotReader: depth, and the entries the snapshot counts).
public enum RepackedSnapshots {
    /// Makes absorb ask this (the `vault` command does, at start).
    public static func register() {
        SnapshotAdmission.register { vault, entry, content, repacked in
            keptEverything(vault, entry, content: content, repacked: repacked)
        }
    }

    private struct NotKept: Error {}

    static func keptEverything(_ vault: UnlockedVault, _ entry: ManifestEntry, content: [UInt8], repacked: Set<[UInt8]>) -> Bool {
        guard let reader = try? SnapshotReader(vault, entry, content: content) else { return false }
        func check(_ ref: PieceRef) throws {
            if repacked.contains(ref.pack), !reader.isPlaced(ref) { throw NotKept() }
        }
        do {
            try check(reader.snapshot.root)
            try reader.walk(visit: { _, e in
                if let sub = e.subtree { try check(sub) }
                for p in e.pieces { try check(p) }
                return true
            })
            return true
        } catch {
            // Not kept, or a tree that does not read: refused, as before
            // notes. That host's note (if it has one) goes too, so its next
            // backup stores those pieces again rather than name them in
            // one refused snapshot after another.
            RepackNotes.remove(vault, key: reader.snapshot.key)
            return false
        }
    }
}
