import VaultCore

/// One pack id, two items: this vault's pack and another copy's (a merge
/// found both). A pack cannot move to a fresh id as a file can (snapshots
/// name it by its id), so one of the two must go, and only reading tells
/// which one the snapshots need: a dropper who learned the id (an inbox
/// file name on a remote) can seal junk under it, but cannot make pieces
/// that match a snapshot's references under its piece key. The model test
/// lost a snapshot so (seed 9415527195587980778): a `backup --to` host's
/// pack, replaced in the remote's inbox by junk under its id, reached one
/// machine as junk and another as it was, and the merge kept the junk.
public enum ClaimedPack {
    /// Whether each item serves the snapshots of `local` that list the pack
    /// id: for each such snapshot, the first `maxPieces` references into
    /// the pack that a walk of its trees (as far as `local` can read them)
    /// finds are read from `local`'s own pack (ours) and from `theirs` as
    /// `other` holds it; a side serves when every reference of some
    /// snapshot reads and verifies from it. Never throws: what cannot be
    /// read serves nothing.
    public static func serving(_ local: UnlockedVault, theirs: ManifestEntry, in other: UnlockedVault,
                               maxPieces: Int = 64) -> (ours: Bool, theirs: Bool) {
        let id = theirs.itemID
        var (ours, theirsServes) = (false, false)
        for entry in local.snapshotEntries {
            // A snapshot that does not open, or lists other packs, says nothing.
            guard let reader = try? SnapshotReader(local, entry), reader.snapshot.packs.contains(id) else { continue }
            var refs: [PieceRef] = reader.snapshot.root.pack == id ? [reader.snapshot.root] : []
            // A walk that fails (a tree in a pack of ours that does not
            // read) finds what it found: the reads below decide.
            try? reader.walk(visit: { _, e in
                guard refs.count < maxPieces else { return false }
                if let sub = e.subtree, sub.pack == id { refs.append(sub) }
                refs += e.pieces.filter { $0.pack == id }.prefix(maxPieces - refs.count)
                return true
            })
            guard !refs.isEmpty else { continue }
            var bytes: [UInt8] = []
            ours = ours || refs.allSatisfy { (try? reader.read($0, into: &bytes, limit: Chunker.maxSize)) != nil }
            theirsServes = theirsServes || refs.allSatisfy { (try? reader.read($0, fromPack: theirs, in: other, into: &bytes)) != nil }
        }
        return (ours, theirsServes)
    }
}
