import VaultCodecs
import VaultCrypto
import System

/// A vault opened with its password (or kit): the manifest decrypted, the
/// writer lock held when it was free. Every change is atomic and ordered so a
/// crash at any instant leaves a vault that opens with every completed item.
public final class UnlockedVault {
    public internal(set) var vault: Vault
    package var keys: VaultKeys
    private(set) var lock: WriterLock?
    public package(set) var manifest: Manifest

    /// Whether this process holds the writer lock (read-only otherwise).
    public var canWrite: Bool { lock != nil }
    /// Opened where this process cannot write (a read-only mount, another
    /// user's copy): nothing is absorbed or tidied, every read works.
    public let readOnly: Bool
    package var paths: VaultPaths { vault.paths }
    package var vaultID: [UInt8] { vault.header.vaultID }

    /// The key slot this unlock used (nil for a recovery kit).
    public internal(set) var unlockedSlot: String?
    /// That slot's key-encryption key (a password slot's): what lets a slot
    /// change re-wrap a version-1 header's password for version 2 without
    /// running Argon2id again. In guarded memory.
    var slotKEK: KeyEncryptionKey?

    /// This machine's memory of the newest manifest seen, if the caller keeps one.
    package let rollbackGuard: RollbackGuard?

    /// A thin vault's remote, where the blobs not in items/ are read
    /// (nil: a full vault, where a missing blob is damage).
    public var fetcher: (any BlobFetcher)? {
        // A remote blob's source keeps recent blocks in memory: fewer such
        // packs opened at once, and fewer opened chunks beside them (a whole
        // thin restore's windows of 12 blocks kept 231-271 MiB with 64).
        didSet {
            packChunks.keepOpened(fetcher == nil ? nil : 4)
            packChunks.keepChunks(fetcher == nil ? nil : 32)
        }
    }
    /// Chunks a forward reader of a random-access item opens ahead
    /// (RandomAccessContent). More where each chunk is a remote request
    /// and every chunk will be read (a thin vault's whole-snapshot restore):
    /// more requests in flight. Where only a part is wanted, each one ahead
    /// past its end is a chunk fetched for nothing.
    public var readAhead: UInt64 = RandomAccessContent.readAhead
    /// The opened chunks of backup packs, shared by every snapshot reader
    /// of this vault (bounded once, however many snapshots are read).
    public let packChunks = PackChunks()

    init(vault: Vault, keys: VaultKeys, lock: WriterLock?, readOnly: Bool = false, rollbackGuard: RollbackGuard? = nil) throws {
        self.readOnly = readOnly
        self.rollbackGuard = rollbackGuard?.scoped(to: vault.paths.root)
        self.vault = vault
        self.keys = keys
        self.lock = lock
        try vault.pendingRekey?.verify(masterKey: keys.master)
        // What was seen here before the manifest is read: a writer of ours
        // that saves a newer one (and remembers it) while we read is no
        // rollback (issue 38, item 7: a `list` beside another `list`'s
        // absorb said "older than one seen here", exit 14).
        let seen = self.rollbackGuard?.remembered(vaultID: vault.header.vaultID)
        let sealed = try vault.pendingRekey.map { Array($0.manifest) } ?? VaultDirectory.readFile(vault.paths.manifest, limit: Manifest.maxFileSize)
        manifest = try Manifest.open(sealed, key: keys.manifest, vaultID: vault.header.vaultID)
        // Before anything acts on this manifest: not older than one seen here.
        try self.rollbackGuard?.check(vaultID: vault.header.vaultID, generation: manifest.generation, seenBefore: seen ?? 0)
        // And the header (authenticated by now: the caller verified its MAC
        // under this key) not older than one seen here.
        do {
            try self.rollbackGuard?.check(vaultID: vault.header.vaultID, headerCounter: vault.header.counter)
        } catch VaultError.headerRollback {
            // The header was read before the password was asked for; a
            // `passwd` or key-slot change of ours since then has put a newer
            // one in place (same master key) and remembered it. The header
            // there now, authenticated under this key and not older, says
            // so; anything else is the rollback it looks like.
            let now = try VaultHeader(parsing: VaultDirectory.readFile(vault.paths.header, limit: VaultHeader.maxLength + 1))
            let seenHeader = self.rollbackGuard?.remembered(vaultID: vault.header.vaultID, header: true) ?? 0
            do { try now.verify(masterKey: keys.master) } catch { throw VaultError.headerRollback(seen: seenHeader, found: vault.header.counter) }
            guard now.counter >= seenHeader else { throw VaultError.headerRollback(seen: seenHeader, found: vault.header.counter) }
        }
        if lock != nil, let pending = vault.pendingRekey { try pending.apply(vault.paths) }
    }

    package func requireLock() throws { guard lock != nil else { throw VaultError.busy } }

    /// Lets other writers in: from here this vault only reads (`vault
    /// mount`, which may stay for days, unlocks, absorbs, then reads only).
    public func releaseWriterLock() { lock = nil }

    /// Writes the manifest with its generation one higher and this copy's
    /// write in its history (Replica.swift), and remembers that generation
    /// (RollbackGuard).
    func saveManifest() throws {
        try requireLock()
        try manifest.recordWrite(by: Replica.id(paths))
        try VaultDirectory.atomicWrite(manifest.sealed(key: keys.manifest, vaultID: vaultID), to: paths.manifest)
        rollbackGuard?.saw(vaultID: vaultID, generation: manifest.generation)
    }

    public func entry(named name: String) throws -> ManifestEntry {
        // A backup's packs and snapshots are no items (`vault snapshots` reads them).
        guard let e = manifest.entry(named: name), !e.kind.isBackupStorage else { throw VaultError.noSuchItem(name: name) }
        return e
    }

    // MARK: Reading

    /// Opens an item's blob and checks it against its entry (ItemRules). A
    /// missing, unreadable, damaged or mismatched blob is `itemCorrupted(name)`.
    public func reader(for entry: ManifestEntry) throws -> ItemReader {
        do {
            return try ItemRules.open(entry, source: blobSource(entry.blobName))
        } catch let error as SystemError where error.errno == .noSuchFile || error.errno == .tooManySymlinks {
            throw VaultError.itemCorrupted(name: entry.name)
        } catch VaultError.corruptedOrTampered, VaultError.unsafeVaultPath {
            throw VaultError.itemCorrupted(name: entry.name)
        } catch VaultError.newerItemFormat(_, let flags) {
            throw VaultError.newerItemFormat(item: entry.name, flags: flags)
        }
    }

    /// Streams an item's content to `sink`, each chunk authenticated first
    /// (and decompressed, if it was stored compressed): a file's bytes, or a
    /// folder's pax archive. Returns the bytes written. What `check
    /// --read-data` verifies is exactly what this releases: a file is
    /// exactly its entry's size, a folder's archive passes restore's checks
    /// and adds up to its entry; otherwise `itemCorrupted`.
    @discardableResult
    public func read(_ entry: ManifestEntry, to sink: ByteSink) throws -> UInt64 {
        try read(entry, with: reader(for: entry), to: sink)
    }

    /// The same, with the item already opened (check has opened it already;
    /// opening again would authenticate the final chunk twice).
    func read(_ entry: ManifestEntry, with r: ItemReader, to sink: ByteSink) throws -> UInt64 {
        try naming(entry) {
            switch entry.kind {
            case .file, .pack, .snapshot, .repack:
                let exact = ExactLengthSink(sink, expected: entry.size)
                if r.header.flags.isCompressed {
                    _ = try codecError { try pump(r.decodedStream(), into: exact) }
                } else {
                    try r.readAll(to: exact)
                }
                try exact.finish()
                return exact.written
            case .folder:
                let tee = TeeStream(try contentStream(r), copyingTo: sink)
                let summary = try archiveError { try FolderArchive.summarize(from: tee) }
                try ItemRules.checkArchive(entry, summary)
                return tee.count
            }
        }
    }

    /// `read` of a folder item to nowhere, with the index its one pass
    /// finds: what `check --read-data` compares a kept index with.
    func readFolder(_ entry: ManifestEntry, with r: ItemReader) throws -> (bytes: UInt64, index: FolderIndex) {
        try naming(entry) {
            let tee = TeeStream(try contentStream(r), copyingTo: DiscardingSink())
            let (index, summary) = try archiveError { try FolderIndex.buildSummarizing(from: tee) }
            try ItemRules.checkArchive(entry, summary)
            return (tee.count, index)
        }
    }

    /// Runs a read of `entry`, its failures named for it: damage is
    /// `itemCorrupted`, an entry restore refuses `unsafeArchiveEntry`.
    private func naming<T>(_ entry: ManifestEntry, _ body: () throws -> T) throws -> T {
        do { return try body() } catch VaultError.corruptedOrTampered, is CodecError {
            throw VaultError.itemCorrupted(name: entry.name)
        } catch VaultError.unsafeArchiveEntry(_, let path, let reason) {
            throw VaultError.unsafeArchiveEntry(item: entry.name, entry: path, reason: reason)
        }
    }

    /// Decrypts an item to a new file at `path`, never over an existing one
    /// and never left half-written (`NewPlaintextFile`). `partial` learns the
    /// temporary name where one is used, so an interrupt handler can erase it.
    /// `keepAttributes`: the item's permissions and time (get, restore);
    /// without, the file stays 0600 (open's private copy).
    public func export(_ entry: ManifestEntry, to path: String, partials: PartialOutputs? = nil,
                       partial: ((String) -> Void)? = nil, progress: ((UInt64) -> Void)? = nil,
                       keepAttributes: Bool = false) throws {
        try exportUncommitted(entry, to: path, partials: partials, partial: partial, progress: progress,
                              keepAttributes: keepAttributes).commit()
    }

    /// `export` up to the commit: the file written, unsynced and not yet at
    /// `path` (the caller commits it, after one syncfs for many such files).
    public func exportUncommitted(_ entry: ManifestEntry, to path: String, partials: PartialOutputs? = nil,
                                  partial: ((String) -> Void)? = nil, progress: ((UInt64) -> Void)? = nil,
                                  keepAttributes: Bool = false) throws -> NewPlaintextFile {
        let output = try NewPlaintextFile(at: path, partials: partials)
        if let p = output.partialPath { partial?(p) }
        try read(entry, to: progress.map { ProgressSink(output.file, report: $0) } ?? output.file)
        if keepAttributes {
            // The source's permission bits and time, as a folder's files get
            // them (FolderArchive) and `tar -p` does; never set-id or sticky.
            try Syscall.chmod(output.file.fd, entry.mode & 0o777)
            try Syscall.setTime(output.file.fd, modified: entry.modified)
        }
        return output
    }

    // MARK: Changes

    /// Drops items: their keys leave the manifest first (durably), then
    /// their blobs are unlinked. Throws noSuchItem before changing anything.
    public func remove(_ names: [String]) throws {
        try requireLock()
        let removed = try manifest.remove(named: names)
        try saveManifest()
        try removeStored(removed)
    }

    /// Unlinks the blobs of `entries`, which the manifest just written no
    /// longer names, and their folder indexes (`remove`, `forget`, prune).
    func removeStored(_ entries: [ManifestEntry]) throws {
        for e in entries { try? Syscall.unlink(paths.item(e.blobName)) }   // best effort: no manifest names it; one left is an orphan `check` reports
        try Syscall.fsyncDirectory(paths.items)
        forgetIndexes(of: entries)
    }

    public func rename(_ name: String, to newName: String) throws {
        try requireLock()
        _ = try entry(named: name)
        try manifest.rename(name, to: newName)
        try saveManifest()
    }
}
