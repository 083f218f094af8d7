import System
import VaultCore
import VaultCrypto

/// What a push did.
public struct PushSummary: Sendable {
    public var uploadedFiles = 0
    public var uploadedBytes: UInt64 = 0
    /// Blobs deleted there because this vault no longer has them.
    public var deletedFiles = 0
    /// The remote's header is newer than ours (a key slot changed on
    /// another machine): it was left there; a pull takes it.
    public var remoteHeaderNewer = false
    /// Remote drop-ins deleted because the pushed manifest holds them.
    public var dropInsCleared = 0
    /// The generation of the manifest now on the remote.
    public var generation: UInt64 = 0
    public var seconds = 0.0
    /// This vault's waiting drop-ins uploaded to the remote's inbox.
    public var dropInsSent = 0
    /// The remote held an older copy of this vault (put back there): this
    /// push made it current again.
    public var remoteWasOlder = false
    /// The remote's manifest generation when another machine had pushed
    /// since this vault last synced: nothing but drop-ins went up, and a
    /// merge (which needs the password) must come first.
    public var remoteMoved: UInt64?
}

/// `vault push`: makes the remote a copy of the vault, without the
/// password (everything pushed is ciphertext). The order is the rule a
/// reader of the remote relies on (docs/FORMAT.md, "Remote copy"):
///
///   0. waiting drop-ins into the remote's inbox (RemoteBase lists them);
///      if another machine pushed since (and it is not our own killed
///      push), stop here: `remoteMoved` says so, and a merge, which needs
///      the password, must come first (the command runs it)
///   1. item blobs the remote lacks (or holds at another size), then the
///      folder indexes it lacks (RemoteIndexes: a cache, in no order)
///   2. the header, if ours is the newer (SyncPlan): to `.push-<id>`, then
///      moved over `vault.header`
///   3. the remote's manifest generation read again: refuse if it moved
///   4. the manifest: to `.push-<id>`, then moved over `manifest`
///   5. the manifest read back: another machine's that landed meanwhile
///      stops the push here, with nothing deleted
///   6. only then deletions: blobs the vault no longer has, remote drop-ins
///      the pushed manifest holds, `.push-*` leftovers
///
/// so at any instant the remote's manifest names only blobs that are there.
/// A killed push rerun uploads only what is missing. The writer lock is
/// held throughout, so the manifest and blobs pushed belong together.
public enum RemotePush {
    /// `progress` learns rclone's (bytes done, bytes in all) while blobs go up.
    /// `replaceHeader`: upload this vault's header even when the remote's
    /// changed too (SyncPlan would refuse): the user chose ours.
    ///
    /// `thin`: a thin vault, whose items/ holds only what was not pushed
    /// yet, so "not in items/" cannot mean "removed here". It deletes a
    /// remote blob only when it is in neither items/ nor `named` (the blobs
    /// its manifest names, read with the key); with `named` nil (no key)
    /// it deletes no blob.
    ///
    /// `lockHeld`: the caller (a rekey) holds the writer lock already.
    public static func push(vault root: String, remote given: RemoteConfig.Remote, rclone: Rclone,
                            replaceHeader: Bool = false, thin: Bool = false, named: Set<String>? = nil,
                            lockHeld: Bool = false, progress: ((UInt64, UInt64) -> Void)? = nil) throws -> PushSummary {
        let started = Syscall.monotonicSeconds()
        var remote = given
        let vault = try Vault(at: root)
        let paths = vault.paths
        let lock = lockHeld ? nil : try WriterLock(paths)
        defer { withExtendedLifetime(lock) {} }
        guard try Syscall.status(of: paths.rekeyPending) == nil else { throw RemoteError.rekeyPending }

        let headerBytes = try VaultDirectory.readFile(paths.header, limit: VaultHeader.maxLength)
        let manifestBytes = try VaultDirectory.readFile(paths.manifest, limit: Manifest.maxFileSize)
        let local = try ManifestPrefix.generation(of: manifestBytes)
        let localIdentity = try ManifestPrefix.identity(of: manifestBytes)
        let localItems = try Self.localItems(paths)
        var summary = PushSummary()
        summary.generation = local

        let target = remote.target
        let listing = try rclone.list(target)
        let remotePrefix = try Self.remotePrefix(listing, target: target, rclone: rclone)
        let remoteGeneration = try remotePrefix.map(ManifestPrefix.generation)
        let remoteIdentity = try remotePrefix.map(ManifestPrefix.identity)
        // The remote's header, if any, must be this vault's (same vault id).
        // Its counter is read without a key: a lie can only make this push
        // refuse, or put our own header back.
        let remoteHeader = listing[RemoteNames.header] == nil ? nil
            : try rclone.head(RemoteNames.join(target, RemoteNames.header), count: VaultHeader.maxLength + 1)
        let remoteParsed = remoteHeader.flatMap { try? VaultHeader(parsing: $0) }
        if remoteHeader != nil, remoteParsed?.vaultID != vault.header.vaultID {
            throw RemoteError.otherVault(target: target)
        }
        // Drop-ins first, whatever else happens (even key slots changed on
        // both sides): they are sealed to the vault's key already, so a push
        // without the password still gets them off this machine
        // (RemoteDropIn's order: contents, then envelopes). Not to a remote
        // whose header carries another public key (rekeyed there): its key
        // would not open them. That header is read without a key: a lie can
        // only send ciphertext there, or hold it back until the next push.
        if remoteParsed == nil || remoteParsed?.publicKey.bytes == vault.header.publicKey.bytes {
            let sent = try Self.sendDropIns(listing, vault: root, remote: remote, rclone: rclone)
            summary.dropInsSent = sent.count
            summary.uploadedFiles += 2 * sent.count
            summary.uploadedBytes += sent.bytes
        }
        let localDigest = try Self.digest(headerBytes)
        let headerAction: SyncPlan.HeaderAction = try {
            let theirs = try remoteHeader.map { SyncPlan.Header(digest: try Self.digest($0), counter: remoteParsed?.counter ?? 0) }
            do {
                return try SyncPlan.header(local: SyncPlan.Header(digest: localDigest, counter: vault.header.counter),
                                           remote: theirs, synced: remote.header)
            } catch RemoteError.headersDiverged where replaceHeader {
                return .keepLocal
            }
        }()
        summary.remoteHeaderNewer = headerAction == .takeRemote

        let plan: SyncPlan.PushAction
        let baseIdentity = try RemoteBase.read(vault: root, remote: remote.name).flatMap { try? ManifestPrefix.identity(of: $0) }
        var pendingManifest: [UInt8]?
        do {
            plan = try SyncPlan.push(local: localIdentity, remote: remoteIdentity, base: baseIdentity,
                                     older: RemoteBase.older(vault: root, remote: remote.name),
                                     remoteGeneration: remoteGeneration ?? 0) {
                guard let pending = remote.pending, pending.generation == remoteGeneration,
                      let there = try rclone.headIfPresent(RemoteNames.join(target, RemoteNames.manifest), count: Manifest.maxFileSize),
                      try digest(there) == pending.digest else { return false }
                pendingManifest = there
                return true
            }
        } catch RemoteError.remoteChanged(let r, _) {
            // Another machine pushed: only a merge can go on from here.
            summary.remoteMoved = r
            summary.generation = r
            summary.seconds = Syscall.monotonicSeconds() - started
            return summary
        }
        summary.remoteWasOlder = plan.remoteWasOlder
        if plan.adoptPending, let r = remoteGeneration, let pendingManifest {
            // The remote holds the manifest a killed push of ours left (one
            // this vault held, so ours descends from it): it is the base
            // from now on. Without this, the pending mark this push is about
            // to write would forget it, and a kill before our own manifest
            // lands would leave the remote "changed by another machine" for
            // good (found by RemoteCrashTests).
            try RemoteBase.write(pendingManifest, vault: root, remote: remote.name)
            remote = try RemoteConfig.modify(vault: root, remote) { ($0.known, $0.pending) = (r, nil) }
        }

        // 1. Blobs.
        // And those a merge kept over another item under their id there (RemoteClaims).
        let claimed = RemoteClaims.ids(vault: root, remote: remote.name)
        let missing = localItems.filter { listing["items/" + $0.key] != $0.value || claimed.contains($0.key) }.map(\.key).sorted()
        try rclone.upload(missing, from: paths.items, to: RemoteNames.join(target, "items"), progress: progress)
        summary.uploadedFiles += missing.count
        summary.uploadedBytes += missing.reduce(UInt64(0)) { $0 + (localItems[$1] ?? 0) }
        // And the folder indexes kept here that the remote lacks (RemoteIndexes).
        let indexes = try RemoteIndexes.upload(listing, paths: paths, target: target, rclone: rclone)
        summary.uploadedFiles += indexes.0
        summary.uploadedBytes += indexes.1

        // 2. Header (its vault id was checked above), only if ours is the newer.
        if headerAction == .keepLocal {
            try Self.replace(RemoteNames.header, with: paths.header, target: target, rclone: rclone)
            summary.uploadedFiles += 1
            summary.uploadedBytes += UInt64(headerBytes.count)
        }

        // 3 and 4. The manifest, unless the remote has this very one.
        if plan.uploadManifest {
            let again = try rclone.headIfPresent(RemoteNames.join(target, RemoteNames.manifest), count: ManifestPrefix.identityLength)
            guard try again.map(ManifestPrefix.identity) == remoteIdentity else {
                throw RemoteError.remoteChanged(remote: try again.map(ManifestPrefix.generation) ?? 0, known: remote.known)
            }
            // Remember what is about to be there: a rerun after a kill
            // recognises its own manifest by this and its bytes.
            let pending = RemoteConfig.Pending(generation: local, digest: try Self.digest(manifestBytes))
            try RemoteConfig.modify(vault: root, remote) { $0.pending = pending }
            try Self.replace(RemoteNames.manifest, with: paths.manifest, target: target, rclone: rclone)
            summary.uploadedFiles += 1
            summary.uploadedBytes += UInt64(manifestBytes.count)
        }
        // Read back: if another machine's manifest landed in between (two
        // pushes that passed step 3 together), ours lost. Delete nothing
        // then (its blobs may be among what we would delete) and refuse.
        let landed = try rclone.headIfPresent(RemoteNames.join(target, RemoteNames.manifest), count: manifestBytes.count + 1)
        guard landed == manifestBytes else {
            throw RemoteError.remoteChanged(remote: landed.flatMap { try? ManifestPrefix.generation(of: $0) } ?? 0, known: remote.known)
        }
        // Both hold this manifest now: the base of the next merge, kept
        // before `remotes` records its generation.
        try RemoteBase.write(manifestBytes, vault: root, remote: remote.name)
        if !claimed.isEmpty { try RemoteClaims.clear(vault: root, remote: remote.name) }
        try RemoteConfig.modify(vault: root, remote) {
            ($0.known, $0.pending) = (local, nil)
            if headerAction != .takeRemote { $0.header = localDigest }
        }

        // 5. Deletions, now that the manifest on the remote no longer needs them.
        var doomed: [String] = []
        var cleared = Set<String>()
        let exchanged = RemoteBase.dropIns(vault: root, remote: remote.name)
        for path in listing.keys.sorted() {
            switch RemoteNames.kind(of: path) {
            case .item(let id) where localItems[id] == nil && (!thin || named.map { !$0.contains(id) } ?? false):
                doomed.append(path)
                summary.deletedFiles += 1
            case .dropInContent(let id), .dropInEnvelope(let id):
                // Absorbed here: its blob is in items/ (so in what was just
                // pushed), or it passed between this vault and that inbox
                // (so it was taken in here and maybe removed since), and
                // its envelope is gone from the local inbox, which
                // absorbing deletes only after the manifest naming it is
                // durable.
                if localItems[id] != nil || exchanged.contains(id) || (thin && named?.contains(id) == true), try Syscall.status(of: paths.dropInEnvelope(id)) == nil {
                    doomed.append(path)
                    cleared.insert(id)
                }
            case .pushTemp:
                doomed.append(path)
            default:
                break
            }
        }
        try rclone.delete(doomed, in: target)
        summary.dropInsCleared = cleared.count
        summary.seconds = Syscall.monotonicSeconds() - started
        return summary
    }

    /// Uploads this vault's complete waiting drop-ins that the remote's
    /// inbox does not hold whole (contents, then envelopes) and that never
    /// passed between this vault and that inbox (RemoteBase: each goes up
    /// once; one taken in and removed elsewhere must not go up again), and
    /// records them there after the upload. Returns how many went up, and
    /// their bytes (content and envelope).
    static func sendDropIns(_ listing: [String: UInt64], vault root: String, remote: RemoteConfig.Remote,
                            rclone: Rclone) throws -> (count: Int, bytes: UInt64) {
        let paths = VaultPaths(root: root)
        let names = Set(try VaultDirectory.names(in: paths.inbox))
        let listed = RemoteBase.dropIns(vault: root, remote: remote.name)
        var waiting: [String] = [], missing: [String] = [], bytes: UInt64 = 0
        for name in names.sorted() where name.hasSuffix(".env") {
            let id = String(name.dropLast(4))
            guard RemoteNames.isItemID(Substring(id)), !listed.contains(id), names.contains(id + ".item"),
                  let env = try Syscall.status(of: paths.dropInEnvelope(id)), env.kind == .regular,
                  let content = try Syscall.status(of: paths.dropInContent(id)), content.kind == .regular else { continue }
            waiting.append(id)
            if listing["inbox/\(id).env"] != env.size || listing["inbox/\(id).item"] != content.size {
                missing.append(id)
                bytes += env.size + content.size
            }
        }
        guard !waiting.isEmpty else { return (0, 0) }
        let inbox = RemoteNames.join(remote.target, "inbox")
        try rclone.upload(missing.map { $0 + ".item" }, from: paths.inbox, to: inbox)
        try rclone.upload(missing.map { $0 + ".env" }, from: paths.inbox, to: inbox)
        try RemoteBase.addDropIns(waiting, vault: root, remote: remote.name)
        return (missing.count, bytes)
    }

    /// The blobs in items/ with their sizes (names that are item ids only).
    static func localItems(_ paths: VaultPaths) throws -> [String: UInt64] {
        var items: [String: UInt64] = [:]
        for name in try VaultDirectory.names(in: paths.items) where RemoteNames.isItemID(Substring(name)) {
            if let st = try Syscall.status(of: paths.item(name)), st.kind == .regular { items[name] = st.size }
        }
        return items
    }

    /// The first bytes of the remote's manifest, its identity
    /// (ManifestPrefix; nil: the remote has none yet).
    static func remotePrefix(_ listing: [String: UInt64], target: String, rclone: Rclone) throws -> [UInt8]? {
        guard listing[RemoteNames.manifest] != nil else { return nil }
        return try rclone.head(RemoteNames.join(target, RemoteNames.manifest), count: ManifestPrefix.identityLength)
    }

    /// The first 16 bytes of SHA-256, hex: how `remotes` names a manifest.
    static func digest(_ bytes: [UInt8]) throws -> String { Hex.encode(Array(try SHA256.hash(bytes).prefix(16))) }

    /// Uploads `local` as `.push-<random>` and moves it over `name`, so
    /// the remote's `name` is always whole.
    static func replace(_ name: String, with local: String, target: String, rclone: Rclone) throws {
        let temp = RemoteNames.join(target, RemoteNames.pushPrefix + Hex.encode(SecureRandom.bytes(16)))
        try rclone.uploadFile(local, to: temp)
        try rclone.move(temp, to: RemoteNames.join(target, name))
    }
}
