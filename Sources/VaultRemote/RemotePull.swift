import System
import VaultCore
import VaultCrypto

/// What a pull did.
public struct PullSummary: Sendable {
    public enum State: Sendable, Equatable {
        /// The remote's newer manifest (and the blobs it needs) replaced ours.
        case fetched(generation: UInt64)
        /// Nothing new on the remote.
        case inStep(generation: UInt64)
        /// The remote is older than this vault: a push updates it.
        case remoteBehind(remote: UInt64, local: UInt64)
        /// Both had changed: the remote's manifest (`remote`) was merged
        /// with ours into `generation`, which a push puts there.
        case merged(remote: UInt64, generation: UInt64, conflicts: [ManifestMerge.Conflict])
    }
    public var state = State.inStep(generation: 0)
    public var files = 0
    public var bytes: UInt64 = 0
    /// Drop-ins copied from the remote's inbox into ours (their ids).
    public var dropIns: [String] = []
    /// The remote's drop-ins whose envelope does not open with this vault's
    /// key: left there, not copied.
    public var junkDropIns = 0
    /// Files in the remote's inbox that are no whole drop-in (RemoteStrays):
    /// left there for now, and deleted there by this pull.
    public var strays = 0
    public var straysDeleted = 0
    /// The remote's folder index files (RemoteIndexes.listed), for the
    /// fetch after the pull; and how many under `indexes/` that no folder
    /// item named for a day this pull deleted.
    public var remoteIndexes: [String: UInt64] = [:]
    public var indexesDeleted = 0
    /// The host records the remote holds (names in `hosts/`), as listed.
    public var hostRecords = HostRecordNames()
    /// The remote's header (newer, authenticated) replaced ours.
    public var headerTaken = false
    /// Drop-ins this vault had sent to the remote's inbox that were taken
    /// in elsewhere and since removed there: deleted from our inbox
    /// instead of being taken in again.
    public var sentAndRemoved = 0
    /// A fetch of a manifest another machine merged: the conflicts that
    /// merge kept which concern this machine (issue 43, item 2: the
    /// machine that did not merge heard nothing).
    public var conflictsFromElsewhere: [ManifestMerge.Conflict] = []
}

/// `vault pull`: brings the remote's changes into this vault, and its
/// drop-ins into our inbox (absorbed by the unlock that follows; deleted
/// from the remote by the next push, once the pushed manifest holds them).
///
/// SyncPlan decides from the generations (K: the one last pushed or pulled,
/// L: ours, R: the remote's) and the headers' digests and counters. Nothing
/// the remote sends replaces a local file before it is authenticated: the
/// header and manifest are staged beside the vault and opened with this
/// vault's master key, the staged manifest's generation (authenticated)
/// must be the one announced, above ours and not below K, and every staged
/// blob is read through. A header is taken only when SyncPlan says the
/// remote's is the newer by its authenticated counter, so an older header
/// (a password since changed, a slot since removed) never comes back.
///
/// When both changed since K, the staged manifest is merged with ours
/// (RemoteMerge, ManifestMerge) against the base kept for the remote.
/// Keys that differ (a rekey on either side) are refused: clone instead.
/// A fetch never deletes blobs here: those the new manifest does not name
/// stay as orphans for `check --repair`; a merge unlinks the blobs of our
/// entries it dropped, once the merged manifest is durable.
public enum RemotePull {
    /// `thin`: a thin vault, whose blobs stay on the remote: none is
    /// downloaded, and the remote's listing stands for "here" where the
    /// new manifest's blobs are checked (they are read from there).
    public static func pull(vault local: UnlockedVault, remote: RemoteConfig.Remote, thin: Bool = false,
                            rclone: Rclone, progress: ((UInt64, UInt64) -> Void)? = nil) throws -> PullSummary {
        let paths = local.vault.paths
        let target = remote.target
        let listed = Syscall.now()
        let layout = RemoteLayout(try rclone.list(target))
        try layout.checkVault(target: target)
        let prefix = try rclone.head(RemoteNames.join(target, RemoteNames.manifest), count: ManifestPrefix.identityLength)
        let r = try ManifestPrefix.generation(of: prefix)
        let remoteIdentity = try ManifestPrefix.identity(of: prefix)
        var remote = remote
        if let merged = try RemoteBase.settleMerge(localGeneration: local.manifest.generation, vault: paths.root, remote: remote.name),
           merged > remote.known {
            // A killed merge was written: theirs is the base now, and K.
            remote = try RemoteConfig.modify(vault: paths.root, remote) { $0.known = merged }
        }
        let localBytes = try VaultDirectory.readFile(paths.manifest, limit: Manifest.maxFileSize)
        let localSide = SyncPlan.Side(identity: try ManifestPrefix.identity(of: localBytes), generation: local.manifest.generation,
                                      history: local.manifest.historyKnown ? local.manifest.history : nil)
        let base = Self.base(of: local, remote: remote)
        var summary = PullSummary()

        // The header always, the manifest unless its identity shows it is
        // ours or the base (then nothing there is new): staged and
        // authenticated before anything here changes.
        let staging = try StagingDirectory(beside: paths.root, purpose: "pulling")
        let cheap: SyncPlan.PullAction? = remoteIdentity == localSide.identity ? .inStep
            : remoteIdentity == base?.side.identity ? .remoteBehind : nil
        try rclone.download([RemoteNames.header] + (cheap == nil ? [RemoteNames.manifest] : []), from: target, into: staging.path)
        try staging.syncAll()
        // The header first: another vault key (a rekey on either side) is
        // refused before the manifest is opened with ours.
        let stagedHeader = try authenticatedHeader(staging.path + "/" + RemoteNames.header, local: local, target: target,
                                                   remoteChanged: remoteIdentity != base?.side.identity)
        let action: SyncPlan.PullAction
        var opened: UnlockedVault?
        if let cheap {
            action = cheap
        } else {
            let copy = try local.unlockCopy(try Vault(at: staging.path))
            try SyncPlan.checkAnnounced(authenticated: copy.manifest.generation, announced: r)
            let remoteSide = SyncPlan.Side(identity: remoteIdentity, generation: r,
                                           history: copy.manifest.historyKnown ? copy.manifest.history : nil)
            do {
                action = try SyncPlan.pull(local: localSide, remote: remoteSide, base: base?.side)
            } catch RemoteError.remoteRollback(let r, let k, false) {
                // An older copy put back there, which ours holds all of
                // (proven): a push may put ours back over it.
                try RemoteBase.addOlder([remoteIdentity], vault: paths.root, remote: remote.name)
                throw RemoteError.remoteRollback(remote: r, known: k, changedSince: false)
            }
            opened = copy
        }
        let merging = if case .merge = action { true } else { false }
        let takesManifest = merging || action == .fetch
        let ours = local.vault.header
        let headerAction = try SyncPlan.header(
            local: SyncPlan.Header(digest: try RemotePush.digest(ours.bytes), counter: ours.counter),
            remote: SyncPlan.Header(digest: try RemotePush.digest(stagedHeader.bytes), counter: stagedHeader.counter),
            synced: remote.header)

        // The blobs a new manifest needs, into the same staging.
        var here = try RemotePush.localItems(paths)
        if thin { here.merge(layout.items) { local, _ in local } }
        var wanted: [String] = []
        if takesManifest && !thin {
            wanted = layout.items.filter { here[$0.key] != $0.value }.keys.sorted()
            // An id both hold for two items: the remote's blob comes too,
            // whatever its size, to be read under theirs (RemoteMerge.settleClaimedIDs).
            if let opened {
                wanted += opened.manifest.entries.filter { t in
                    guard layout.items[t.blobName] != nil, !wanted.contains(t.blobName), let e = local.manifest.entry(itemID: t.itemID) else { return false }
                    return !ManifestMerge.sameItem(e, t)
                }.map(\.blobName)
            }
            try rclone.download(wanted.map { "items/" + $0 }, from: target, into: staging.path, progress: progress)
            try staging.syncAll()
        }
        let stagedManifest = { try VaultDirectory.readFile(staging.path + "/" + RemoteNames.manifest, limit: Manifest.maxFileSize) }

        var known = remote.known
        // The manifest both sides hold after this pull, remembered as the
        // base of the next merge or push (RemoteBase) before K records it.
        var newBase: [UInt8]?
        switch action {
        case .inStep:
            summary.state = .inStep(generation: r)
            known = r
            newBase = localBytes
        case .merge(let withBase):
            // Writes the base itself, in step with the merged manifest.
            let merged = try RemoteMerge.merge(opened!, staging: staging, layout: layout, here: here, wanted: wanted,
                                               local: local, remote: remote, base: withBase ? base?.manifest : nil)
            summary.state = .merged(remote: r, generation: merged.manifest.generation, conflicts: merged.conflicts)
            summary.files = 2 + wanted.count
            summary.bytes = ([RemoteNames.header, RemoteNames.manifest] + wanted.map { "items/" + $0 })
                .reduce(UInt64(0)) { $0 &+ (layout.files[$1] ?? 0) }
            known = r
        case .remoteBehind:
            summary.state = .remoteBehind(remote: r, local: local.manifest.generation)
            // Ours descends from it (proven): a push may replace it.
            newBase = cheap == nil ? try stagedManifest() : nil
            known = r
        case .fetch:
            summary.conflictsFromElsewhere = ManifestMerge.conflictsFromElsewhere(local: local.manifest, fetched: opened!.manifest,
                                                                                  base: base?.manifest)
            (summary.files, summary.bytes) = try fetch(opened!, staging: staging, layout: layout, here: here, wanted: wanted,
                                                       local: local)
            summary.state = .fetched(generation: r)
            known = r
            newBase = try VaultDirectory.readFile(paths.manifest, limit: Manifest.maxFileSize)
        }
        if let newBase { try RemoteBase.write(newBase, vault: paths.root, remote: remote.name) }
        // The manifest (if fetched) is in; then the header, only if the
        // remote's is the newer: either header opens either manifest (the
        // vault key is the same, checked above).
        if headerAction == .takeRemote {
            try VaultDirectory.atomicWrite(stagedHeader.bytes, to: paths.header)
            summary.headerTaken = true
        }
        let synced = headerAction == .keepLocal ? remote.header : try RemotePush.digest(stagedHeader.bytes)
        if known != remote.known || synced != remote.header {
            try RemoteConfig.modify(vault: paths.root, remote) { ($0.known, $0.header) = (known, synced) }
        }
        if takesManifest {
            summary.sentAndRemoved = try RemoteMerge.settleDropIns(layout, vault: local, remote: remote)
        }
        (summary.dropIns, summary.junkDropIns) = try fetchDropIns(layout, vault: local, remote: remote, rclone: rclone)
        RemoteBase.recordSeen(vault: paths.root, remote: remote.name, at: listed)
        // Index files no folder item names, here or in the remote's
        // manifest, wait out the strays' grace too (RemoteIndexes).
        var named = Set(local.folderIndexNames().keys)
        if let opened { named.formUnion(local.folderIndexNames(of: opened.manifest).keys) }
        let indexStrays = RemoteIndexes.strays(layout.files, named: named)
        let due = RemoteStrays.due(layout.strays.merging(indexStrays) { a, _ in a }, vault: paths.root, remote: remote.name, now: listed)
        try rclone.delete(due, in: remote.target)
        summary.indexesDeleted = due.filter { $0.hasPrefix(RemoteIndexes.prefix) }.count
        summary.straysDeleted = due.count - summary.indexesDeleted
        summary.strays = layout.strays.count - summary.straysDeleted
        summary.hostRecords = layout.hostRecordNames
        summary.remoteIndexes = RemoteIndexes.listed(layout.files)
        return summary
    }

    /// The base kept for the remote (RemoteBase), opened with this vault's
    /// key; nil when none is kept or it does not open (then nothing is
    /// proven by it: a push needs a pull first, and a merge has no base).
    static func base(of local: UnlockedVault, remote: RemoteConfig.Remote) -> (side: SyncPlan.Side, manifest: Manifest)? {
        // A base that cannot be read counts as none: the safe direction
        // (a merge with only tombstones removes nothing else).
        guard let bytes = try? RemoteBase.read(vault: local.vault.paths.root, remote: remote.name),
              let manifest = try? local.openManifest(bytes), let identity = try? ManifestPrefix.identity(of: bytes) else { return nil }
        return (SyncPlan.Side(identity: identity, generation: manifest.generation,
                              history: manifest.historyKnown ? manifest.history : nil), manifest)
    }

    /// The staged header, parsed and verified under this vault's master key:
    /// this vault's id, its public key (a remote rekeyed elsewhere is
    /// refused), its MAC. Only then are its counter and slots worth anything.
    static func authenticatedHeader(_ path: String, local: UnlockedVault, target: String,
                                    remoteChanged: Bool = false) throws -> VaultHeader {
        let header: VaultHeader
        do { header = try VaultHeader(parsing: VaultDirectory.readFile(path, limit: VaultHeader.maxLength)) } catch {
            throw RemoteError.malformedRemote(.notAVaultHeader)
        }
        guard header.vaultID == local.vault.header.vaultID else { throw RemoteError.otherVault(target: target) }
        guard header.publicKey.bytes == local.vault.header.publicKey.bytes else {
            throw RemoteError.keysDiffer(remoteChanged: remoteChanged)
        }
        do { try header.verify(masterKey: local.masterKey) } catch {
            throw RemoteError.malformedRemote(.headerDoesNotVerify)
        }
        return header
    }

    /// With the header, manifest and the blobs we lack staged, and the
    /// staged copy opened with this vault's master key (`opened`, its
    /// generation checked against the announced one): reads every staged
    /// blob to the end (every chunk authenticated, as `check --read-data`),
    /// checks that every other blob it names is here, then moves the blobs
    /// in and replaces the manifest (atomically).
    /// `here`: the blobs in our items/ (RemotePush.localItems), listed once.
    static func fetch(_ opened: UnlockedVault, staging: StagingDirectory, layout: RemoteLayout, here: [String: UInt64],
                      wanted: [String], local: UnlockedVault) throws -> (Int, UInt64) {
        let paths = local.vault.paths
        let verified = try verifyStaged(opened, staged: Set(wanted), here: here)
        try moveIn(verified, from: staging, vault: local)
        try VaultDirectory.atomicWrite(VaultDirectory.readFile(staging.path + "/manifest", limit: Manifest.maxFileSize), to: paths.manifest)
        // Blobs of ours it no longer names were removed by the write it
        // descends from (a fetch is taken only when its history contains ours).
        try local.unlinkBlobs(of: local.manifest, droppedBy: opened.manifest)
        let files = [RemoteNames.header, RemoteNames.manifest] + wanted.map { "items/" + $0 }
        let bytes = files.reduce(UInt64(0)) { $0 &+ (layout.files[$1] ?? 0) }
        return (files.count, bytes)
    }

    /// Reads through every staged blob the opened copy's manifest names
    /// (every chunk authenticated, as `check --read-data`) and checks that
    /// every other blob it names is here. Returns the staged blobs it names.
    static func verifyStaged(_ opened: UnlockedVault, staged: Set<String>, here: [String: UInt64]) throws -> [String] {
        // Only blobs the staged manifest names, each read through, come in:
        // anything else the remote listed stays behind with the staging.
        var verified: [String] = []
        for entry in opened.manifest.entries {
            let id = entry.blobName
            if staged.contains(id) {
                verified.append(id)
                do { _ = try opened.read(entry, to: DiscardingSink()) } catch {
                    throw VaultError.itemCorrupted(name: entry.name)
                }
            } else if here[id] == nil {
                throw RemoteError.malformedRemote(.blobOnNeitherSide(id))
            }
        }
        return verified
    }

    /// Renames verified staged blobs into items/, then fsyncs it.
    static func moveIn(_ blobs: [String], from staging: StagingDirectory, vault local: UnlockedVault) throws {
        let paths = local.vault.paths
        for id in blobs {
            do { try Syscall.renameNoReplace(staging.path + "/items/" + id, paths.item(id)) } catch let e as SystemError where e.errno == .fileExists {
                // A blob of the same id here at another size: ours is damaged; replace it.
                try Syscall.rename(staging.path + "/items/" + id, paths.item(id))
            }
        }
        try Syscall.fsyncDirectory(paths.items)
    }

    /// Only the drop-ins step of a pull: the remote's waiting drop-ins
    /// whose envelopes open, copied into our inbox (and listed), nothing
    /// else. Prune looks there first: a backup sent with `backup --to` may
    /// need a pack it would delete. Returns their ids.
    public static func fetchInbox(vault local: UnlockedVault, remote: RemoteConfig.Remote, rclone: Rclone) throws
        -> (fetched: [String], hostRecords: HostRecordNames) {
        let listed = Syscall.now()
        let layout = RemoteLayout(try rclone.list(remote.target))
        try layout.checkVault(target: remote.target)
        let fetched = try fetchDropIns(layout, vault: local, remote: remote, rclone: rclone).0
        RemoteBase.recordSeen(vault: local.vault.paths.root, remote: remote.name, at: listed)
        return (fetched, layout.hostRecordNames)
    }

    /// Copies the remote's complete drop-ins that are neither in our inbox
    /// nor already absorbed into our inbox: content first, then envelope
    /// (the envelope makes it a drop-in), each renamed in whole. Only those
    /// whose envelope opens with this vault's key come in: anyone who can
    /// write to the remote can put junk in its inbox, and junk in ours would
    /// stay there. Returns (copied, junk).
    static func fetchDropIns(_ layout: RemoteLayout, vault local: UnlockedVault, remote: RemoteConfig.Remote,
                             rclone: Rclone) throws -> ([String], Int) {
        let target = remote.target
        let paths = local.vault.paths
        // One that passed between us and that inbox before came in once
        // already (it may have been removed here since).
        let exchanged = RemoteBase.dropIns(vault: paths.root, remote: remote.name)
        var wanted: [String] = []
        for id in layout.dropIns where !exchanged.contains(id) {
            if try Syscall.status(of: paths.item(id)) != nil || Syscall.status(of: paths.dropInEnvelope(id)) != nil { continue }
            // An id the remote stores as a blob is no fresh drop-in: it was
            // taken in somewhere (the manifest brings it), or it is a copy
            // made by someone who read the remote's listing to claim an id
            // in use (issue 37): either way not taken from the inbox.
            if layout.items[id] != nil { continue }
            // One this vault holds or let go: the same (absorb would refuse it).
            if let bytes = Hex.decode(id), local.manifest.entry(itemID: bytes) != nil || local.manifest.tombstones.contains(bytes) { continue }
            wanted.append(id)
        }
        guard !wanted.isEmpty else { return ([], 0) }
        let staging = try StagingDirectory(beside: paths.root, purpose: "dropins")
        try rclone.download(wanted.flatMap { ["inbox/\($0).item", "inbox/\($0).env"] }, from: target, into: staging.path)
        try staging.syncAll()
        let good = try wanted.filter { id in
            guard let envelope = try? VaultDirectory.readFile(staging.path + "/inbox/\(id).env", limit: DropInEnvelope.maxLength),
                  try Syscall.status(of: staging.path + "/inbox/\(id).item")?.kind == .regular else { return false }
            return local.opensEnvelope(envelope, blob: id)
        }
        for id in good {
            try Syscall.rename(staging.path + "/inbox/\(id).item", paths.dropInContent(id))
        }
        try Syscall.fsyncDirectory(paths.inbox)
        for id in good {
            try Syscall.rename(staging.path + "/inbox/\(id).env", paths.dropInEnvelope(id))
        }
        try Syscall.fsyncDirectory(paths.inbox)
        try RemoteBase.addDropIns(good, vault: paths.root, remote: remote.name)
        return (good, wanted.count - good.count)
    }
}
