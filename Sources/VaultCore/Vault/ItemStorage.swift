import VaultCrypto
import System

extension UnlockedVault {
    /// Writes a new item straight into items/ (the vault is unlocked, so no
    /// inbox): fresh item id, nonce prefix and file key; `produce` writes the
    /// content stream and returns its size before compression and file count.
    /// The blob is durable before this returns (unless `durable` is false:
    /// then the caller syncs a whole batch before a manifest names any);
    /// until a manifest names it, it is a leftover that cleanup removes.
    func storeItem(flags: ItemFlags, key: FileKey? = nil, durable: Bool = true, expectedLength: UInt64? = nil,
                   produce: (ItemWriter) throws -> (size: UInt64, files: UInt64))
        throws -> (header: ItemHeader, key: FileKey, size: UInt64, files: UInt64) {
        let key = try key ?? FileKey.random()
        let header = try ItemHeader.random(flags: flags)
        let target = paths.item(Hex.encode(header.itemID))
        let temp = try TempFile(beside: target)
        let writer = try ItemWriter(key: key, header: header, sink: temp.file, expectedLength: expectedLength)
        let (size, files) = try produce(writer)
        try writer.finish()
        try temp.commit(to: target, durable: durable)
        return (header, key, size, files)
    }

    /// Saves new content for `old`'s item as its newest version (`open`
    /// saving a change), under a new item id, key and nonce prefix: the new
    /// blob is durable first, then one manifest write adds the version. The
    /// older versions stay (`forget` trims them). Refused before anything
    /// is written when the item has `Manifest.maxVersions` versions.
    @discardableResult
    public func saveVersion(of old: ManifestEntry, flags: ItemFlags, now: Int64,
                            produce: (ItemWriter) throws -> (size: UInt64, files: UInt64)) throws -> ManifestEntry {
        try requireLock()
        guard manifest.canAddVersion(of: old.name) else { throw VaultError.tooManyVersions(name: old.name) }
        let stored = try storeItem(flags: flags, produce: produce)
        var entry = old
        entry.itemID = stored.header.itemID
        entry.fileKey = stored.key
        entry.size = stored.size
        entry.fileCount = stored.files
        entry.added = now
        entry.modified = now
        entry.origin = .unlocked
        entry.droppedBy = nil   // the owner wrote this version, whoever dropped the one it was edited from
        do { entry = try manifest.addVersion(entry) } catch {
            try? Syscall.unlink(paths.item(entry.blobName))   // best effort: no manifest names it; the write's error is the one to report
            throw error
        }
        // A failed write may still have renamed the manifest into place, so
        // the blob stays (an orphan at worst, which `check` reports).
        try saveManifest()
        return entry
    }
}

extension UnlockedVault {
    /// `e`'s content sealed again under a fresh item id and file key,
    /// durable in items/, and its entry with them (name, version, sizes and
    /// times the same): what a merge keeps of ours when the remote holds
    /// another item under `e`'s id (RemoteMerge). Read from items/ before
    /// anything replaces that blob; every chunk authenticated, as `get`.
    package func copyUnderNewID(_ e: ManifestEntry) throws -> ManifestEntry {
        try requireLock()
        let r = try reader(for: e)
        let stored = try storeItem(flags: e.kind == .folder ? .archive : []) { w in (try read(e, with: r, to: w), e.fileCount) }
        var fresh = e
        fresh.itemID = stored.header.itemID
        fresh.fileKey = stored.key
        return fresh
    }
}

extension Vault {
    /// The bytes an item's sealed blob takes on disk (in items/, or waiting
    /// in the inbox): compressed, padded and authenticated content, what
    /// `list` and `add` show as stored. Nil if neither file is there.
    public func storedLength(of entry: ManifestEntry) -> UInt64? {
        for path in [paths.item(entry.blobName), paths.dropInContent(entry.blobName)] {
            // A size to show (`list`, `add`): one that cannot be looked at shows as unknown.
            if let status = try? Syscall.status(of: path), status.kind == .regular {
                return status.size
            }
        }
        return nil
    }

    /// The sealed blobs in items/ and their total size on disk, for `info`
    /// (which needs no password, so it counts files rather than items).
    public func storedBlobs() throws -> (count: Int, bytes: UInt64) {
        var (count, bytes) = (0, UInt64(0))
        for name in try VaultDirectory.names(in: paths.items) where !name.hasPrefix(VaultDirectory.tempPrefix) {
            // Counted for `info` only: a blob that cannot be looked at is left out of the total.
            guard let status = try? Syscall.status(of: paths.item(name)), status.kind == .regular else { continue }
            (count, bytes) = (count + 1, bytes &+ status.size)
        }
        return (count, bytes)
    }
}
