import System
import VaultCrypto

extension UnlockedVault {
    /// Makes a new master key (so new manifest key, header MAC key and key
    /// pair) and re-encrypts every item under a new file key and nonce
    /// prefix; the password stays, under a new salt. The switch from the old
    /// state to the new is one atomic file (RekeySwitch.swift); old blobs are
    /// removed only after the new header and manifest are durable. Recovery
    /// kits made before stop working.
    ///
    /// Drop-ins: those waiting are absorbed first; then, holding the drop
    /// lock exclusively (waiting for adds in progress to land: `waiting` is
    /// told), the ones that arrived meanwhile are opened with the old key
    /// pair and stored under new keys into the new manifest, before the
    /// switch. No add can then seal to the old public key: an add reads the
    /// key under the shared drop lock.
    ///
    /// Key slots: the new master key is wrapped only for `credential` (what
    /// this unlock used), in a slot of the same name (and, for a password,
    /// the same cost); the other slots cannot be re-wrapped without their
    /// secrets and are dropped (their names are returned). The new header is
    /// the current version (4), its counter one above the old header's, so
    /// a rekey also moves a version-1 vault to the hybrid (X-Wing) key.
    ///
    /// `progress` is told the content bytes re-encrypted so far.
    ///
    /// `offload` (a thin vault): each batch of new blobs goes to the remote
    /// as it is written, and leaves items/ once proven there; what was
    /// proven is kept in `rekey.progress` (RekeyProgress.swift), so a run
    /// after a kill re-encrypts only the rest. Before the switch, every new
    /// blob must still be on the remote (`rekeyBlobsGone` otherwise).
    @discardableResult
    public func rekey(password: Password, progress: ((UInt64) -> Void)? = nil, waiting: (() -> Void)? = nil,
                      offload: (any BlobOffload)? = nil) throws -> [String] {
        let name = try unlockedSlot ?? vault.header.passwordSlots().first?.name ?? KeySlot.defaultName
        guard let slot = vault.header.slot(named: name), case .password(let kdf, _) = slot.kind else {
            throw VaultError.rekeyNeedsPassword
        }
        return try rekey(keeping: name, credential: .password(password, kdf), progress: progress, waiting: waiting,
                         offload: offload)
    }

    @discardableResult
    public func rekey(keeping slotName: String, credential: SlotCredential, progress: ((UInt64) -> Void)? = nil,
                      waiting: (() -> Void)? = nil, offload: (any BlobOffload)? = nil) throws -> [String] {
        try requireLock()
        try absorbInbox()
        // Until the switch file is written, the manifest on disk is the
        // truth; a failure before then puts it back in memory too, so this
        // vault goes on as it was (the new blobs are leftovers `tidy` removes).
        do {
            return try rekeyInPlace(keeping: slotName, credential: credential, progress: progress, waiting: waiting,
                                    offload: offload)
        } catch let error where !rekeySwitchWritten {
            manifest = try Manifest.open(VaultDirectory.readFile(paths.manifest, limit: Manifest.maxFileSize),
                                         key: keys.manifest, vaultID: vaultID)
            throw error
        }
    }

    /// Whether the switch is on disk. One that cannot be looked at counts as
    /// written: a failed rekey then leaves memory as it is, rather than
    /// reread a manifest the switch may already have replaced.
    private var rekeySwitchWritten: Bool {
        do { return try Syscall.status(of: paths.rekeyPending) != nil } catch { return true }
    }

    private func rekeyInPlace(keeping slotName: String, credential: SlotCredential, progress: ((UInt64) -> Void)?,
                              waiting: (() -> Void)?, offload: (any BlobOffload)?) throws -> [String] {
        var done: UInt64 = 0
        var sent = try offload.map { try OffloadedBlobs($0, paths: paths, keys: keys, vaultID: vaultID) }

        // 1. Every item again, under new keys, beside the old blobs. Each
        //    entry takes its new id and key in place, once its item has been
        //    copied: one manifest in memory, not the old and the new side by
        //    side (issue 28: 141 to 132 MiB at 130,000 items). The old ids
        //    are kept packed, 16 bytes each, to delete their blobs at the end.
        var oldIDs = [UInt8]()
        oldIDs.reserveCapacity(manifest.entries.count * ItemHeader.itemIDLength)
        for index in manifest.entries.indices {
            let entry = manifest.entries[index]
            oldIDs += entry.itemID
            if let earlier = sent?.progress[entry.itemID] {
                // Sent and proven by a run that was killed: still there (checked when it was read).
                try manifest.replaceKey(at: index, itemID: earlier.newID, fileKey: earlier.key)
                done += entry.size
                progress?(done)
                continue
            }
            let reader = try reader(for: entry)
            let stored = try storeItem(flags: reader.header.flags, durable: false,
                                       expectedLength: reader.contentLength) { writer in
                try reader.readAll(to: writer)
                done += reader.contentLength
                progress?(done)
                return (entry.size, entry.fileCount)
            }
            try manifest.replaceKey(at: index, itemID: stored.header.itemID, fileKey: stored.key)
            try sent?.add(old: entry.itemID, stored.header.itemID, key: stored.key)
        }
        try sent?.flush()

        // 2. No add may seal to the old key from here; the ones that did join
        //    the new manifest.
        let dropLock = try DropLock(paths, exclusive: true, waiting: waiting)
        let absorbed = try restoreLateDropIns(into: &manifest)
        // One syncfs for every new blob (an fsync each would cost a journal
        // commit per item), then the directory; only then the switch names them.
        try Syscall.syncFileSystem(paths.items)
        try Syscall.fsyncDirectory(paths.items)
        // Every new blob not here (the late drop-ins' stay, for the push)
        // still on the remote, as proven when it was sent.
        try sent?.checkStillThere(manifest)

        // 3. New master key, header and manifest, written as one switch file.
        let master = try MasterKey.random()
        let old = vault.header
        let salt = SecureRandom.bytes(KeySlot.saltLength)
        let (kind, kek) = try Self.kek(for: credential, salt: salt)
        let created = old.slot(named: slotName)?.created ?? Syscall.now()
        let slot = try KeySlot.seal(name: slotName, kind: kind, created: created, kek: kek, masterKey: master,
                                    vaultID: old.vaultID)
        let header = try VaultHeader.seal(vaultID: old.vaultID, options: old.options, masterKey: master, slots: [slot],
                                          counter: try old.nextCounter())
        let newKeys = try VaultKeys(masterKey: master, vaultID: old.vaultID)
        try manifest.recordWrite(by: Replica.id(paths))
        let current = try VaultHeader(parsing: VaultDirectory.readFile(paths.header, limit: VaultHeader.maxLength + 1))
        let pending = try RekeySwitch(replacing: current, with: header, manifest: manifest, manifestKey: newKeys.manifest,
                                      absorbed: absorbed, masterKey: master)
        try pending.write(to: paths.rekeyPending)

        // 4. Apply it; from here on the new keys are the vault's.
        try pending.apply(paths)
        withExtendedLifetime(dropLock) {}
        // Sealed under the old key: nothing could open it now.
        if sent != nil { try RekeyProgress.remove(paths) }
        keys = newKeys
        vault = try Vault(at: paths.root)
        rollbackGuard?.saw(vaultID: old.vaultID, generation: manifest.generation)
        rollbackGuard?.saw(vaultID: old.vaultID, headerCounter: header.counter)

        // 5. The old blobs.
        for start in stride(from: 0, to: oldIDs.count, by: ItemHeader.itemIDLength) {
            // Best effort: no manifest names the old blob now; one left is an orphan `check` reports.
            try? Syscall.unlink(paths.item(Hex.encode(oldIDs[start..<(start + ItemHeader.itemIDLength)])))
        }
        try Syscall.fsyncDirectory(paths.items)
        unlockedSlot = slotName
        return old.slots.map(\.name).filter { $0 != slotName }
    }

    /// Drop-ins that arrived while the items were re-encrypted (sealed to the
    /// old key, which `keys` still is): stored anew under new file keys and
    /// added to `newManifest`. Returns their item ids, whose inbox files the
    /// switch removes.
    private func restoreLateDropIns(into newManifest: inout Manifest) throws -> [[UInt8]] {
        var absorbed: [[UInt8]] = []
        // In the order they were added, as absorbing orders them.
        // An envelope or a content that is there but cannot be read fails
        // the rekey before the switch too: skipping it would strand a
        // drop-in sealed to the old key (nothing could open it after).
        let late = dropInOrder(try openInboxWhole(with: keys).map { (dropIn: $0, check: ()) })
        for (dropIn, _) in late {
            var entry = dropIn.entry
            // No room (full manifest, or too many versions) fails the rekey
            // before the switch: skipping would strand a drop-in sealed to the old key.
            let reader: ItemReader
            do {
                reader = try ItemRules.open(entry, at: paths.dropInContent(dropIn.contentStem))
            } catch let error as SystemError where error.errno != .noSuchFile && error.errno != .tooManySymlinks {
                throw error
            } catch {
                continue   // absent, a link, damaged or disagreeing with its entry: absorb would refuse it too
            }
            let stored = try storeItem(flags: reader.header.flags, durable: false, expectedLength: reader.contentLength) { writer in
                try reader.readAll(to: writer)
                return (entry.size, entry.fileCount)
            }
            absorbed.append(entry.itemID)
            entry.itemID = stored.header.itemID
            entry.fileKey = stored.key
            try newManifest.addVersion(entry)
        }
        return absorbed
    }
}

/// A thin vault's rekey: the new blobs sent to the remote a batch at a
/// time (`BlobOffload`), and what was proven there recorded in
/// `rekey.progress` after each batch.
private struct OffloadedBlobs {
    /// Blobs, however small, sent at once: one rclone process per batch.
    static let batchCount = 1000

    let offload: any BlobOffload
    let paths: VaultPaths
    let keys: VaultKeys
    let vaultID: [UInt8]
    private(set) var progress: RekeyProgress
    private var batch: [(old: [UInt8], done: RekeyProgress.Done)] = []
    private var batchBytes: UInt64 = 0

    /// What an earlier run proved and the remote still holds whole.
    init(_ offload: any BlobOffload, paths: VaultPaths, keys: VaultKeys, vaultID: [UInt8]) throws {
        (self.offload, self.paths, self.keys, self.vaultID) = (offload, paths, keys, vaultID)
        progress = try RekeyProgress.read(paths, keys: keys, vaultID: vaultID)
        if progress.count > 0 { progress.keep(present: try offload.remoteBlobs()) }
    }

    mutating func add(old: [UInt8], _ newID: [UInt8], key: FileKey) throws {
        let size = try Syscall.status(of: paths.item(Hex.encode(newID)))?.size ?? 0
        batch.append((old, RekeyProgress.Done(newID: newID, key: key, size: size)))
        batchBytes += size
        if batchBytes >= offload.batchBytes || batch.count >= Self.batchCount { try flush() }
    }

    /// Sends the batch, then records it: a kill between the two sends it again.
    mutating func flush() throws {
        guard !batch.isEmpty else { return }
        // Unsynced here: what counts is the copy proven there (a crash
        // leaves the local ones as leftovers, as a full rekey's are).
        try offload.offload(batch.map { Hex.encode($0.done.newID) })
        for (old, done) in batch { progress.record(old: old, done) }
        try progress.write(paths, keys: keys, vaultID: vaultID)
        (batch, batchBytes) = ([], 0)
    }

    /// Throws `rekeyBlobsGone` unless every blob `manifest` names is in
    /// items/ or on the remote at the size it was proven at.
    func checkStillThere(_ manifest: Manifest) throws {
        let there = try offload.remoteBlobs()
        var proven: [String: UInt64] = [:]
        for d in progress.done.values { proven[Hex.encode(d.newID)] = d.size }
        var gone = 0
        for e in manifest.entries where try Syscall.status(of: paths.item(e.blobName)) == nil {
            // Not proven by this rekey, or not there at the size proven.
            if proven[e.blobName].map({ there[e.blobName] != $0 }) ?? true { gone += 1 }
        }
        if gone > 0 { throw VaultError.rekeyBlobsGone(count: gone) }
    }
}
