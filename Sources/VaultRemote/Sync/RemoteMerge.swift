import System
import VaultBackup
import VaultCore

/// A pull (or a push with the password) that finds both sides changed:
/// the remote's manifest, staged and authenticated, merged with ours
/// (ManifestMerge) against the base this vault kept for the remote
/// (RemoteBase). Nothing here changes before the staged copy is opened with
/// this vault's master key and every staged blob is read through.
enum RemoteMerge {
    /// `opened`: the staged copy, opened with this vault's master key (its
    /// generation checked), its blobs we lack staged (`wanted`). `base`:
    /// the manifest both last held, when the sync decision found one both
    /// descend from (nil: none, so only tombstones remove anything).
    static func merge(_ opened: UnlockedVault, staging: StagingDirectory, layout: RemoteLayout, here: [String: UInt64],
                      wanted: [String], local: UnlockedVault, remote: RemoteConfig.Remote,
                      base: Manifest?) throws -> ManifestMerge.Result {
        let verified = try RemotePull.verifyStaged(opened, staged: Set(wanted), here: here)
        let (ours, clashes) = try settleClaimedIDs(local, theirs: opened, staged: Set(verified), remote: remote.name)
        // A snapshot's pack list: ours from items/, theirs staged (or here already).
        let merged = try ManifestMerge.merge(base: baseEntries(local, base: base, theirs: opened.manifest, remote: remote, layout: layout),
                                             baseTombstones: base?.tombstones ?? Tombstones(),
                                             ours: ours, theirs: opened.manifest) { e, side in
            for v in side == .ours ? [local] : [opened, local] {
                // A record that does not open (or is not there) lists nothing
                // (docs/FORMAT.md, Merge, step 0). One that cannot be read
                // stops the merge: the packs it needs could otherwise go.
                do { return try BackupItems.packIDs(inSnapshot: v.snapshotContent(e)) } catch let error as SystemError { throw error } catch {}
            }
            return nil
        }
        let result = ManifestMerge.Result(manifest: merged.manifest, conflicts: clashes + merged.conflicts)
        // Theirs' staged blobs the merge keeps as theirs (an id both hold
        // for two items keeps ours unless the base holds theirs: never
        // their blob under our entry).
        let kept = verified.filter { blob in
            guard let id = Hex.decode(blob), let merged = result.manifest.entry(itemID: id),
                  let theirs = opened.manifest.entry(itemID: id) else { return false }
            return merged.fileKey.same(as: theirs.fileKey)
        }
        try RemotePull.moveIn(kept, from: staging, vault: local)
        // Theirs becomes the base only once the merge is written: a kill in
        // between must not leave the old base beside the merged manifest
        // (a rerun would take the merge's own renames for changes).
        let root = local.vault.paths.root
        try RemoteBase.beginMerge(theirs: VaultDirectory.readFile(staging.path + "/" + RemoteNames.manifest, limit: Manifest.maxFileSize),
                                  generation: result.manifest.generation, vault: root, remote: remote.name)
        try local.install(merged: result.manifest)
        try RemoteBase.finishMerge(vault: root, remote: remote.name)
        return result
    }

    /// One item id, two items: a dropper claimed an id another side holds
    /// (issue 37; the model test found a file lost to a junk pack this way).
    /// The remote's blob under it is staged and read through under theirs
    /// (`staged`, verifyStaged), so theirs keeps the id on every machine,
    /// and ours is kept apart, never lost: a file or folder is sealed again
    /// under a fresh id (its name stays), a snapshot too (its name is its
    /// new id); a pack or repack of ours (snapshots name it by its id, so
    /// it cannot move) goes into quarantine/ as it is. Except two packs
    /// where ours serves a snapshot here and theirs does not (ClaimedPack
    /// reads the pieces the snapshots need from each): theirs is the
    /// forgery, and ours stays; the merge keeps it (the base does not hold
    /// theirs) and lists it, and the next push puts our blob over theirs on
    /// the remote (RemoteClaims). Returns our manifest as the merge must
    /// see it, and a conflict line for each it settled.
    static func settleClaimedIDs(_ local: UnlockedVault, theirs opened: UnlockedVault, staged: Set<String>,
                                 remote: String) throws -> (Manifest, [ManifestMerge.Conflict]) {
        let theirs = opened.manifest
        var ours = local.manifest
        var conflicts: [ManifestMerge.Conflict] = []
        for e in local.manifest.entries {
            guard let t = theirs.entry(itemID: e.itemID), !ManifestMerge.sameItem(e, t), staged.contains(e.blobName) else { continue }
            if e.kind == .pack, t.kind == .pack, ClaimedPack.serving(local, theirs: t, in: opened) == (true, false) {
                try RemoteClaims.add([e.blobName], vault: local.vault.paths.root, remote: remote)
                continue
            }
            if e.kind == .file || e.kind == .folder {
                try ours.substitute(itemID: e.itemID, with: local.copyUnderNewID(e))
                conflicts.append(.init(kind: .idClaimedTwice(kept: .theirs), base: nil, kept: e.name))
            } else if e.kind == .snapshot {
                // Nothing names a snapshot by its id but its own entry: it
                // moves as a file does, its name with its new id.
                var fresh = try local.copyUnderNewID(e)
                fresh.name = BackupItems.snapshotName(fresh.itemID)
                try ours.substitute(itemID: e.itemID, with: fresh)
                conflicts.append(.init(kind: .idClaimedTwice(kept: .theirs), base: e.name, kept: fresh.name))
            } else {
                _ = try local.quarantine([FilePath("items/" + e.blobName)])
                try ours.substitute(itemID: e.itemID, with: t)
                conflicts.append(.init(kind: .idClaimedTwice(kept: .theirs), base: nil, kept: t.name))
            }
        }
        return (ours, conflicts)
    }

    /// The base's entries: `base` (nil: none, so nothing counts as removed
    /// but what a side's tombstones say), plus the drop-ins that passed
    /// between this vault and the remote's inbox (RemoteBase) that both
    /// sides have held since:
    ///   - ours that its inbox no longer holds: another machine took them
    ///     in, so theirs lacking one means it was removed there since;
    ///   - theirs that we took in and dropped since (a remove or a forget
    ///     here): in neither our manifest nor our inbox, nor set aside in
    ///     quarantine/ (refused here, so never ours). Theirs holding one
    ///     means it was taken in there too, and without it in the base our
    ///     remove would read as their addition: it would come back
    ///     (MultiMachineTests' random schedules found this). One refused
    ///     here whose quarantined copy was since purged reads as dropped
    ///     too: only local damage, a repair and a purge lead there.
    /// (Manifests since version 5 say the same with their tombstones; this
    /// covers what a version 4 manifest on either side did not record.)
    /// Neither counts where the other side's tombstone of that id carries
    /// another item's digest (version 6): the item let go there was a
    /// forgery under the id, or the forgery is what is held here.
    static func baseEntries(_ local: UnlockedVault, base: Manifest?, theirs: Manifest, remote: RemoteConfig.Remote,
                            layout: RemoteLayout) -> [ManifestEntry] {
        let paths = local.vault.paths
        var entries = base?.entries ?? []
        let exchanged = RemoteBase.dropIns(vault: paths.root, remote: remote.name)
        guard !exchanged.isEmpty else { return entries }
        let inBase = Set(entries.map(\.blobName))
        let ours = Set(local.manifest.entries.map(\.blobName))
        let taken = exchanged.subtracting(layout.dropIns)
        // Not where the other side's tombstone names another item: a
        // forgery dropped under that id was what went there (or here).
        func sameRemoval(_ e: ManifestEntry, _ tombstones: Tombstones) -> Bool {
            !tombstones.contains(e.itemID) || tombstones.removes(e)
        }
        entries += local.manifest.entries.filter {
            taken.contains($0.blobName) && !inBase.contains($0.blobName) && sameRemoval($0, theirs.tombstones)
        }
        let dropped = exchanged.filter { id in
            !inBase.contains(id) && !ours.contains(id) && !Syscall.exists(paths.dropInEnvelope(id))
                && !Syscall.exists(paths.quarantine + "/" + id + ".env")
        }
        entries += theirs.entries.filter { dropped.contains($0.blobName) && sameRemoval($0, local.manifest.tombstones) }
        return entries
    }

    /// After a pull that brought another machine's manifest: drop-ins that
    /// passed between this vault and the remote's inbox and that the inbox
    /// no longer holds were taken in somewhere. Those the new manifest
    /// holds are cleared from our inbox by the next absorb (it finds their
    /// ids); those it does not were removed since, and are set aside here
    /// instead of being taken in again. The list keeps what is still in
    /// the remote's inbox or still waiting in ours. Returns how many were
    /// set aside.
    static func settleDropIns(_ layout: RemoteLayout, vault local: UnlockedVault, remote: RemoteConfig.Remote) throws -> Int {
        let paths = local.vault.paths
        let listed = RemoteBase.dropIns(vault: paths.root, remote: remote.name)
        guard !listed.isEmpty else { return 0 }
        let waitingThere = Set(layout.dropIns)
        let now = try local.openManifest(VaultDirectory.readFile(paths.manifest, limit: Manifest.maxFileSize))
        let held = Set(now.entries.map(\.blobName))
        var removed: [String] = [], keep = Set<String>()
        for id in listed.sorted() {
            let waitingHere = try Syscall.status(of: paths.dropInEnvelope(id)) != nil
            if waitingThere.contains(id) {
                keep.insert(id)
            } else if waitingHere && !held.contains(id) {
                removed.append(id)
            } else if waitingHere {
                keep.insert(id)
            }
        }
        let moved = try removed.isEmpty ? 0 : local.setAside(dropIns: removed)
        try RemoteBase.setDropIns(keep, vault: paths.root, remote: remote.name)
        return moved
    }
}
