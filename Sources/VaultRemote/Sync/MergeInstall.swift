import System
import VaultCore

// What a merging pull needs of the unlocked vault (docs/FORMAT.md, "Merge"):
// another manifest file opened with this vault's manifest key (the base
// remembered for a remote), and a merged manifest made this vault's.

extension UnlockedVault {
    /// A sealed manifest file (the base kept for a remote) opened and
    /// checked with this vault's manifest key: authenticated, or
    /// `corruptedOrTampered`.
    package func openManifest(_ sealed: [UInt8]) throws -> Manifest {
        try Manifest.open(sealed, key: keys.manifest, vaultID: vaultID)
    }

    /// Makes `merged` this vault's manifest, with its own generation (the
    /// merge put it above both sides): written atomically, remembered by
    /// the rollback guard, and only then the blobs of entries it no longer
    /// names unlinked (a kill in between leaves orphans, never a manifest
    /// naming a missing blob). Every blob it names must be in items/.
    package func install(merged: Manifest) throws {
        try requireLock()
        guard merged.generation > manifest.generation else { throw VaultError.misuse(.mergeNotNewer) }
        // The merge is this copy's write: its history holds both sides' and
        // one more write of ours, so it contains each and neither contains it.
        var merged = merged
        try merged.recordWrite(by: Replica.id(paths), countGeneration: false)
        let before = manifest
        try VaultDirectory.atomicWrite(merged.sealed(key: keys.manifest, vaultID: vaultID), to: paths.manifest)
        manifest = merged
        rollbackGuard?.saw(vaultID: vaultID, generation: merged.generation)
        try unlinkBlobs(of: before, droppedBy: merged)
    }

    /// Unlinks the blobs of `before`'s entries that `after` no longer
    /// names, once `after` is this vault's manifest on disk (a merge's
    /// install, a pull's fetch): a kill in between leaves orphans, never a
    /// manifest naming a missing blob; kept, the next push would send them
    /// back to the remote. One absent already (a thin vault's pushed blob)
    /// is nothing to remove.
    package func unlinkBlobs(of before: Manifest, droppedBy after: Manifest) throws {
        var unlinked = false
        let dropped = before.entries.filter { after.entry(itemID: $0.itemID) == nil }
        for e in dropped {
            if (try? Syscall.unlink(paths.item(e.blobName))) != nil { unlinked = true }   // best effort: see above
        }
        if unlinked { try Syscall.fsyncDirectory(paths.items) }
        // Their folder indexes too: else the next push would send them
        // back to the remote, whose pulls delete them only after a day.
        forgetIndexes(of: dropped)
    }
}

extension UnlockedVault {
    /// Moves these waiting drop-ins (blob names) to quarantine/, envelope
    /// first, so they are not taken in: drop-ins this vault sent to a
    /// remote that another machine took in and that were removed since.
    /// Set aside rather than deleted: the bytes stay until `check --repair
    /// --purge`. Returns how many envelopes moved.
    package func setAside(dropIns blobs: [String]) throws -> Int {
        let envelopes = blobs.map { FilePath("inbox/" + $0 + ".env") }
        let moved = try quarantine(envelopes)
        _ = try quarantine(blobs.map { FilePath("inbox/" + $0 + ".item") })
        return moved.count
    }
}
