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
    public func removeBackupStorage(_ entries: [ManifestEntry]) throws {
        try requireLock()
        guard entries.allSatisfy({ $0.kind.isBackupStorage }) else {
            throw VaultError.invalidArgument("only backup packs and snapshots are removed this way")
        }
        guard !entries.isEmpty else { return }
        let removed = manifest.remove(itemIDs: entries.map(\.itemID))
        try saveManifest()
        for e in removed { try? Syscall.unlink(paths.item(e.blobName)) }
        try Syscall.fsyncDirectory(paths.items)
    }

    /// Deletes every pack no snapshot names, in the manifest or waiting in
    /// the inbox, under the drop lock held exclusively; the packs deleted
    /// (none with `dryRun`). A snapshot that does not open stops the prune:
    /// what it needs cannot be known.
    public func prunePacks(dryRun: Bool, waiting: (() -> Void)? = nil) throws -> [ManifestEntry] {
        try requireLock()
        let lock = try DropLock(paths, exclusive: true, waiting: waiting)
        defer { withExtendedLifetime(lock) {} }
        // Snapshots that landed while we waited for the lock come in first.
        try absorbInbox()
        var referenced = Set<[UInt8]>()
        for s in snapshotEntries {
            guard let ids = try? BackupItems.packIDs(inSnapshot: snapshotContent(s)) else {
                throw VaultError.itemCorrupted(name: s.name)
            }
            referenced.formUnion(ids)
        }
        for blob in try inboxEnvelopes() {
            guard let e = openEnvelope(blob, with: keys), e.kind == .snapshot,
                  let content = try? snapshotContent(e, at: paths.dropInContent(blob)),
                  let ids = try? BackupItems.packIDs(inSnapshot: content) else { continue }
            referenced.formUnion(ids)
        }
        let names = Set(referenced.map(BackupItems.packName))
        let unused = manifest.entries.filter { $0.kind == .pack && !names.contains($0.name) }
        if !dryRun { try removeBackupStorage(unused) }
        return unused
    }
}
