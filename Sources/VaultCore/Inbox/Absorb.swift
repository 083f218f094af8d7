import System
import VaultCrypto

// Absorbing the inbox (docs/FORMAT.md, "Drop-in envelope: Absorbing"): each
// waiting drop-in's envelope opened with the vault's private key, its
// content checked against it (ItemRules) and renamed into items/, the
// entries added to the manifest in one write, then the envelopes removed.

extension UnlockedVault {
    public struct AbsorbReport: Sendable {
        public var absorbed: [String] = []
        /// Envelopes that failed to open, or whose content is missing, damaged
        /// or disagrees with the envelope (ItemRules); left in place.
        public var rejected: [String] = []
        /// Drop-ins left waiting because the manifest is full (see `manifestFull`).
        public var deferred = 0
        /// Backup snapshots left waiting (also in `rejected`), each with why:
        /// a pack they need is missing or damaged (BackupItems.swift).
        public var refusedSnapshots: [(name: String, reason: SnapshotRefusal)] = []
        /// Another user's drop-ins under a name whose current version is
        /// not theirs, kept under a name of their own instead (`laneName`).
        public var keptApart: [(asked: String, kept: String, by: Dropper)] = []
        /// Drop-ins refused for good and set aside in quarantine/, by the
        /// name they asked for, each with why (`Refusal`).
        public var setAside: [(name: String, why: Refusal)] = []
        public init() {}
    }

    /// Why a drop-in is refused for good (set aside, never taken in).
    public enum Refusal: Sendable, Equatable {
        /// Its item id is one this vault held and let go (a tombstone): a
        /// replayed copy of something removed, forgotten or pruned, or a
        /// pack dropped under the id of one prune rewrote.
        case idRemoved
        /// A file or folder under a name only a backup's pack, snapshot or
        /// repack may carry (BackupItems.isReservedName).
        case reservedName
    }

    /// Moves waiting drop-ins into the manifest. Idempotent and crash-safe:
    /// content is renamed into items/ first, then one manifest write adds all
    /// entries, then the envelopes go. An envelope whose item is already in
    /// the manifest is only removed. A drop-in under a name the vault holds
    /// becomes that item's newest version; several under one name, in the
    /// order they were added. All envelopes that open are held in memory
    /// together (an entry each), for that ordering.
    @discardableResult
    public func absorbInbox() throws -> AbsorbReport {
        var report = AbsorbReport()
        guard lock != nil else { return report }
        // A failure part-way (a full disk) leaves the manifest in memory as it
        // was on disk, so the caller can go on reading: what was moved into
        // items/ is taken in again by the next absorb.
        let before = manifest
        do { return try absorb(into: &report) } catch {
            manifest = before
            throw error
        }
    }

    private func absorb(into report: inout AbsorbReport) throws -> AbsorbReport {
        // Open every envelope first: drop-ins under one name become its
        // versions in the order they were added, not in the random order of
        // their ids (dropInOrder). Each envelope costs an HPKE open (~0.1
        // ms) and each drop-in a check of its content: both read only, so on
        // every core at once; what follows (names, versions, the moves) goes
        // one by one.
        // An envelope that cannot be read is left waiting like one that does
        // not open (nothing is decided on it); the next absorb reads it again.
        let (all, unopened, unreadable) = try openInbox(with: keys)
        report.rejected = (unopened + unreadable.map(\.stem)).sorted().map { $0 + ".env" }
        let checks = try parallelMap(all.count) { i -> ContentCheck in
            manifest.entry(itemID: all[i].entry.itemID) != nil || refusal(of: all[i].entry) != nil
                ? .notDone : checkWaitingContent(of: all[i])
        }
        // An envelope goes once every drop-in it names is in the manifest.
        var left: [String: Int] = [:]
        for d in all { left[d.envelope, default: 0] += 1 }
        var waiting: [(dropIn: WaitingDropIn, check: ContentCheck)] = []
        for (d, check) in zip(all, checks) {
            if manifest.entry(itemID: d.entry.itemID) != nil { left[d.envelope, default: 0] -= 1; continue }
            waiting.append((d, check))
        }
        var rejected = Set<String>()
        // Refused for good: set aside, by name, before anything is taken in.
        // Done for their envelope's sake (a batch's others go on); a single
        // one's envelope goes to quarantine/ with its content.
        var refused: [WaitingDropIn] = []
        waiting.removeAll { w in
            guard let why = refusal(of: w.dropIn.entry) else { return false }
            report.setAside.append((w.dropIn.entry.name, why))
            refused.append(w.dropIn)
            left[w.dropIn.envelope, default: 0] -= 1
            return true
        }
        try setAside(refused)
        // Backup snapshots last, so the packs they need (dropped before
        // them) are in the manifest when they are checked.
        waiting = dropInOrder(waiting.filter { $0.dropIn.entry.kind != .snapshot })
            + dropInOrder(waiting.filter { $0.dropIn.entry.kind == .snapshot })
        for (dropIn, check) in waiting {
            var entry = dropIn.entry
            // Two envelopes may name one item id (a dropper's own doing):
            // the first taken in wins, the other's drop-in is done.
            if manifest.entry(itemID: entry.itemID) != nil { left[dropIn.envelope, default: 0] -= 1; continue }
            entry.droppedBy = try dropper(of: dropIn)
            if let by = entry.droppedBy, !entry.kind.isBackupStorage {
                guard let lane = laneName(for: entry.name, by: by) else {
                    report.deferred += 1
                    continue
                }
                if lane != entry.name { report.keptApart.append((entry.name, lane, by)) }
                entry.name = lane
            }
            // A full manifest, or a name with as many versions as it may
            // hold: the drop-in waits in the inbox.
            guard manifest.hasRoom(for: entry), manifest.canAddVersion(of: entry.name) else {
                report.deferred += 1
                continue
            }
            guard BackupItems.checkDropped(entry, in: manifest), entry.kind != .pack || packIsWhole(entry) else {
                rejected.insert(dropIn.envelope)
                continue
            }
            if entry.kind == .snapshot, let reason = snapshotRefusal(entry) {
                report.refusedSnapshots.append((entry.name, reason))
                rejected.insert(dropIn.envelope)
                continue
            }
            guard try adoptContent(of: dropIn, entry: entry, checked: check) else {
                rejected.insert(dropIn.envelope)
                continue
            }
            adoptDroppedIndex(of: dropIn, entry: entry)
            // Another user's snapshot was checked in their file, which they
            // may have changed before we copied it: check our copy again.
            if entry.kind == .snapshot, entry.droppedBy != nil, let reason = snapshotRefusal(entry) {
                try Syscall.unlink(paths.item(entry.blobName))
                report.refusedSnapshots.append((entry.name, reason))
                rejected.insert(dropIn.envelope)
                continue
            }
            try manifest.addVersion(entry)
            report.absorbed.append(entry.name)
            left[dropIn.envelope, default: 0] -= 1
        }
        report.rejected += rejected.sorted().map { $0 + ".env" }
        // A batch one of whose drop-ins waits or was refused keeps its
        // envelope, but the others it named are in the manifest now.
        let done = left.filter { $0.value == 0 }.keys.sorted()
        guard !done.isEmpty || !report.absorbed.isEmpty else { return report }
        try Syscall.fsyncDirectory(paths.items)
        try Syscall.fsyncDirectory(paths.inbox)
        if !report.absorbed.isEmpty { try saveManifest() }
        removeEnvelopes(done)
        try Syscall.fsyncDirectory(paths.inbox)
        return report
    }

    /// Why `entry`, waiting in the inbox, may never be taken in; nil if it may be.
    func refusal(of entry: ManifestEntry) -> Refusal? {
        if manifest.tombstones.contains(entry.itemID) { return .idRemoved }
        if !entry.kind.isBackupStorage, BackupItems.isReservedName(entry.name) { return .reservedName }
        return nil
    }

    /// Moves refused drop-ins to quarantine/: a single one's envelope and
    /// content, a batch member's content (its envelope goes once the
    /// others are done). Kept there, not deleted, until `check --repair
    /// --purge`: what was refused can still be looked at.
    private func setAside(_ refused: [WaitingDropIn]) throws {
        guard !refused.isEmpty else { return }
        let singles = refused.filter { $0.contentStem == $0.envelope }
        _ = try quarantine(singles.map { FilePath("inbox/" + $0.envelope + ".env") })
        _ = try quarantine(refused.map { FilePath("inbox/" + $0.contentStem + ".item") })
        // An index is only ever a hint about its content: nothing to look at.
        for d in refused { try? Syscall.unlink(paths.dropInIndex(d.contentStem)) }   // else a leftover (Vault.leftovers)
    }

    /// Keeps the index a folder's dropper wrote beside its content
    /// (DroppedFolderIndex) as this vault's own (`keep`), once it opens
    /// under the entry's file key and passes a kept index's checks; then
    /// removes it from the inbox. Anything else is dropped: the index is a
    /// hint, and the first mount makes the pass without it. Called once the
    /// content is in items/, so an index never outlives its content in the
    /// inbox; one a crash leaves behind is a leftover, as is one beside any
    /// other kind of item (not looked for: a file's absorb costs no lookup).
    func adoptDroppedIndex(of dropIn: WaitingDropIn, entry: ManifestEntry) {
        guard entry.kind == .folder else { return }
        let path = paths.dropInIndex(dropIn.contentStem)
        // The dropper's file: read as hostile (a regular file, bounded, never through a link), any failure dropping it.
        if let bytes = try? VaultDirectory.readFile(path, limit: FolderIndexFile.maxLength),
           let index = try? DroppedFolderIndex.open(bytes, item: entry) {   // the same
            // Unsynced: 500 folders with an index each took 0.31 s to
            // absorb synced, 0.20 s not; one a crash leaves unopenable is made anew.
            keep(index, of: entry, durable: false)
        }
        try? Syscall.unlink(path)   // none, or else a leftover (Vault.leftovers)
    }

    /// The user other than us whose files hold drop-in `entry` in the
    /// inbox: the envelope's owner, else its content's (in the inbox until
    /// adopted). Only a shared inbox lets anyone else create files there,
    /// and the inode's owner is the kernel's word, not the dropper's. A file
    /// that is gone (the content already adopted) names no one; one that
    /// cannot be looked at is an error, never "ours": the answer decides
    /// whether the drop-in may become a version of the owner's item.
    func dropper(of dropIn: WaitingDropIn) throws -> Dropper? {
        let me = Syscall.userID
        let owners = try [paths.dropInEnvelope(dropIn.envelope), paths.dropInContent(dropIn.contentStem)]
            .compactMap { try Syscall.status(of: $0)?.owner }
        guard let other = owners.first(where: { $0 != me }) else { return nil }
        return Dropper(uid: other, name: Syscall.userName(of: other))
    }

    /// Where another user's drop-in under `name` goes: `name` itself when
    /// it is new or its current version is that user's too (their own
    /// series of versions); else "NAME (from USER)", then "NAME (from USER,
    /// 2)" and so on, the first such name that is new or theirs. The
    /// owner's data (or a third user's) never becomes an older version
    /// because someone else dropped a file under its name: it stays the
    /// current one, and the drop-in sits beside it, named for who sent it.
    /// nil when no such name fits (the drop-in waits).
    func laneName(for name: String, by dropper: Dropper) -> String? {
        func theirs(_ n: String) -> Bool { manifest.entry(named: n).map { $0.droppedBy?.uid == dropper.uid } ?? true }
        if theirs(name) { return name }
        for i in 1...Self.maxLanes {
            let suffix = " (from \(dropper.display)\(i == 1 ? "" : ", \(i)"))"
            // Cut on a character boundary so the name stays within its limit.
            var base = name
            while base.utf8.count + suffix.utf8.count > ManifestEntry.maxNameLength { base.removeLast() }
            let lane = base + suffix
            if (try? ManifestEntry.checkName(lane)) != nil, theirs(lane) { return lane }   // a name check: its error only says no
        }
        return nil
    }

    /// How many "(from USER, N)" names one name may spawn for one user.
    static let maxLanes = 100

    /// What absorb's parallel phase found of a drop-in's content: our own
    /// file in the inbox that opened and agreed with the entry or did not,
    /// or nothing done (not there, or another user's: adoptContent decides).
    enum ContentCheck { case passed, failed, notDone }

    /// The check adoptContent makes of our own content waiting in the inbox,
    /// made ahead (read only, so on any thread).
    func checkWaitingContent(of dropIn: WaitingDropIn) -> ContentCheck {
        let inInbox = paths.dropInContent(dropIn.contentStem)
        // Only a head start: when this cannot look (or the file is not ours), adoptContent looks again and its error counts.
        guard let waiting = try? Syscall.status(of: inInbox), waiting.owner == Syscall.userID else { return .notDone }
        return contentAgrees(dropIn.entry, at: inInbox) ? .passed : .failed
    }

    /// Whether the sealed item at `path` opens under the entry's file key
    /// and agrees with the entry (ItemRules).
    private func contentAgrees(_ entry: ManifestEntry, at path: String) -> Bool {
        // Any failure is "does not agree": the drop-in waits, refused, and is reported.
        (try? ItemRules.open(entry, at: path, threads: 1)) != nil
    }

    /// Moves a drop-in's content into items/ once it opens under the entry's
    /// file key and agrees with the entry (ItemRules); false, touching
    /// nothing, if it does not. Content already in items/ (an absorb
    /// interrupted after the rename) is checked where it is. `checked`: the
    /// result of checkWaitingContent, if it ran, for our own content still
    /// in the inbox (only we can replace a file of ours there).
    func adoptContent(of dropIn: WaitingDropIn, entry: ManifestEntry, checked: ContentCheck = .notDone) throws -> Bool {
        let inInbox = paths.dropInContent(dropIn.contentStem), stored = paths.item(entry.blobName)
        let waiting = try Syscall.status(of: inInbox)
        if let waiting, waiting.owner != Syscall.userID {
            return try adoptCopy(of: entry, from: inInbox, to: stored)
        }
        let agrees = waiting != nil && checked != .notDone ? checked == .passed
            : contentAgrees(entry, at: waiting != nil ? inInbox : stored)
        guard agrees else { return false }
        if waiting != nil { try Syscall.rename(inInbox, stored) }
        return true
    }

    /// Another user's drop-in (a shared inbox): its content is copied into
    /// a file of our own, the copy is checked, and only then does it land
    /// in items/ and the original go. Renaming it would keep the dropper as
    /// the owner of a stored item, able to change it through a hard link
    /// after it was checked.
    private func adoptCopy(of entry: ManifestEntry, from inInbox: String, to stored: String) throws -> Bool {
        // The dropper's file is hostile: one that cannot be opened as a
        // regular file or read is refused like a bad item (false); a
        // failure to write our copy (a full disk) is an error.
        guard let source = try? FileHandleFD(readingFrom: inInbox) else { return false }   // refused, left waiting: see above
        let copy = try TempFile(beside: stored)
        let buffer = try PageBuffer(count: 1 << 20)
        var copied: UInt64 = 0
        while true {
            guard let n = try? source.readSequential(into: buffer.raw) else { return false }   // the same: the dropper's file
            if n == 0 { break }
            try copy.file.write(UnsafeRawBufferPointer(rebasing: buffer.raw[..<n]))
            copied += UInt64(n)
            // A sealed item is never longer than its padded stream allows.
            guard copied <= ItemCipher.maxSealedLength else { return false }
        }
        // Our copy is what lands, so our copy is what is checked: the
        // dropper may change their file after any check of it (issue 38).
        // A backup's pack or snapshot is read whole, every chunk
        // authenticated, as `packIsWhole` read theirs.
        guard let r = try? ItemRules.open(entry, at: copy.path, threads: 1) else { return false }   // refused: the dropper's content
        if entry.kind.isBackupStorage { guard (try? r.readAll(to: DiscardingSink())) != nil else { return false } }   // the same
        try copy.commit(to: stored, noReplace: true)
        try Syscall.unlink(inInbox)
        return true
    }

    /// Drop-ins in the order they were added: by `added` (whole seconds),
    /// then by the envelope's modification time to the nanosecond (two adds
    /// in one second), then by envelope name and place in it. Both times
    /// are whatever the inbox's writer made them, as every field of a
    /// drop-in is; they only order versions.
    func dropInOrder<T>(_ waiting: [(dropIn: WaitingDropIn, check: T)]) -> [(dropIn: WaitingDropIn, check: T)] {
        var times: [String: (Int64, Int)] = [:]
        for w in waiting where times[w.dropIn.envelope] == nil {
            let s = try? Syscall.status(of: paths.dropInEnvelope(w.dropIn.envelope))   // orders versions only: unknown sorts first
            times[w.dropIn.envelope] = (s?.modified ?? 0, s?.modifiedNanoseconds ?? 0)
        }
        func key(_ d: WaitingDropIn) -> (Int64, Int64, Int, String, Int) {
            let t = times[d.envelope] ?? (0, 0)
            return (d.entry.added, t.0, t.1, d.envelope, d.index)
        }
        return waiting.sorted { key($0.dropIn) < key($1.dropIn) }
    }

    /// Whether `envelope` (bytes from elsewhere: a remote's inbox) opens
    /// with this vault's key as the drop-in `blob`, by the rules absorb
    /// applies.
    package func opensEnvelope(_ envelope: [UInt8], blob: String) -> Bool {
        // Bytes in memory: whichever check fails, the answer is no.
        guard let entry = try? DropInEnvelope.open(envelope, with: keys, vaultID: vaultID),
              entry.blobName == blob, (try? ItemRules.checkEntry(entry)) != nil else { return false }
        return true
    }
}
