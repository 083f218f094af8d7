import System

// Forgetting snapshots and pruning packs (docs/FORMAT.md, "Backups:
// forget and prune"). The rule that keeps a running backup whole is the
// drop lock's: a backup holds it shared from before it reads its cache
// until its snapshot has landed (`holdDropLock`), and prune holds it
// exclusively while it decides what is unreferenced and deletes it. So a
// pack prune deletes is one no backup was about to reference: a backup
// that starts afterwards finds it gone from the vault directory and
// stores its pieces again.

/// A held drop lock (shared): `vault backup` holds one for its whole run.
public final class DropLockHold {
    private let lock: AnyObject
    fileprivate init(_ lock: AnyObject) { self.lock = lock }
}

extension Vault {
    /// Takes the drop lock shared, waiting while a prune or a rekey holds
    /// it; `waiting` is told first when it has to.
    public func holdDropLock(waiting: (() -> Void)? = nil) throws -> DropLockHold {
        DropLockHold(try DropLock(paths, exclusive: false, waiting: waiting))
    }
}

extension UnlockedVault {
    /// Drops snapshot (or pack) entries: the manifest without them is
    /// durable first, then their blobs go.
    /// `forgettingHosts`: the host record names (16 bytes each) of the
    /// snapshots among `entries`, kept in the same write (ForgottenHostNames).
    public func removeBackupStorage(_ entries: [ManifestEntry], forgettingHosts hosts: [[UInt8]] = []) throws {
        try replaceBackupStorage(removing: entries, adding: [], forgettingHosts: hosts)
    }

    /// Runs `body` under the drop lock held exclusively (waiting while
    /// backups hold it shared; `waiting` is told first when it has to),
    /// after the inbox is absorbed, with the ids of the packs that the
    /// snapshots still waiting in the inbox list (refused ones: their
    /// packs must stay as they are). Prune (VaultBackup) decides inside.
    /// A waiting snapshot whose record does not read stops it
    /// (`waitingSnapshotUnreadable`): what it needs cannot be known, and
    /// restic stops the same way "to prevent (additional) data loss".
    public func pruning<T>(waiting: (() -> Void)? = nil, _ body: (_ waitingPacks: Set<[UInt8]>) throws -> T) throws -> T {
        try requireLock()
        let lock = try DropLock(paths, exclusive: true, waiting: waiting)
        defer { withExtendedLifetime(lock) {} }
        // Snapshots that landed while we waited for the lock come in first.
        try absorbInbox()
        var listed = Set<[UInt8]>()
        // A waiting envelope that cannot be read might be a snapshot's: prune stops (inboxUnreadable).
        for d in try openInboxWhole(with: keys) where d.entry.kind == .snapshot {
            do {
                listed.formUnion(try BackupItems.packIDs(inSnapshot: snapshotContent(d.entry, at: paths.dropInContent(d.contentStem))))
            } catch {
                throw VaultError.waitingSnapshotUnreadable(dropIn: d.contentStem)
            }
        }
        return try body(listed)
    }

    /// Writes a repack of `pack` (kind repack, named "repack-<pack id>")
    /// straight into items/, durable, not yet in the manifest (until
    /// `replaceBackupStorage` names it, a leftover): `produce` writes its
    /// `length` bytes of content.
    public func storeRepack(of pack: [UInt8], length: UInt64, now: Int64,
                            produce: (ItemWriter) throws -> Void) throws -> ManifestEntry {
        try requireLock()
        let stored = try storeItem(flags: [], expectedLength: length) { w in
            try produce(w)
            return (length, 1)
        }
        return try ManifestEntry(itemID: stored.header.itemID, fileKey: stored.key, kind: .repack, origin: .unlocked,
                                 mode: 0o600, size: length, fileCount: 1, added: now, modified: now,
                                 name: BackupItems.repackName(pack))
    }

    /// One manifest write that drops `removed` (backup storage only; their
    /// ids become tombstones), names `added` (repacks whose blobs are
    /// durable), with `marks` replaces prune's marks, and adds
    /// `forgettingHosts` to the forgotten hosts; then the dropped blobs go.
    /// A kill before the write leaves the old manifest and unnamed blobs;
    /// after it, blobs no manifest names: never a manifest naming a
    /// missing blob.
    public func replaceBackupStorage(removing removed: [ManifestEntry], adding added: [ManifestEntry],
                                     marks: PruneMarks? = nil, forgettingHosts hosts: [[UInt8]] = []) throws {
        try requireLock()
        guard removed.allSatisfy({ $0.kind.isBackupStorage }), added.allSatisfy({ $0.kind == .repack }) else {
            throw VaultError.misuse(.notBackupStorage)
        }
        guard !removed.isEmpty || !added.isEmpty || (marks != nil && marks != manifest.pruneMarks) else { return }
        let before = manifest
        let gone = manifest.remove(itemIDs: removed.map(\.itemID))
        do {
            for e in added { try manifest.add(e) }
            if let marks { manifest.pruneMarks = marks }
            let now = Syscall.now()
            for name in hosts { manifest.forgottenHosts.insert(name, at: now) }
            try saveManifest()
        } catch {
            manifest = before
            throw error
        }
        try removeStored(gone)
    }
}
