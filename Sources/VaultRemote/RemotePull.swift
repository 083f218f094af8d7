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
    }
    public var state = State.inStep(generation: 0)
    public var files = 0
    public var bytes: UInt64 = 0
    /// Drop-ins copied from the remote's inbox into ours.
    public var dropIns = 0
}

/// `vault pull`: brings the remote's changes into this vault, and its
/// drop-ins into our inbox (absorbed by the unlock that follows; deleted
/// from the remote by the next push, once the pushed manifest holds them).
///
/// The generations decide (K: the one last pushed or pulled, L: ours, R:
/// the remote's):
///   R < K            the remote was rolled back: refused
///   R == L           in step (if K differs, the manifests' bytes must match)
///   R > L, L <= K    fetched: new blobs staged and every byte of them
///                    checked, then moved in, then the manifest, then the header
///   R > L, L > K     both changed: refused (`diverged`)
///   K <= R < L       the remote is behind: push updates it
///
/// A remote that was rekeyed elsewhere (another vault key) is refused:
/// clone it instead. A pull never deletes blobs here: those the new
/// manifest does not name stay as orphans for `check --repair`.
public enum RemotePull {
    public static func pull(vault local: UnlockedVault, remote: RemoteConfig.Remote,
                            rclone: Rclone, progress: ((UInt64, UInt64) -> Void)? = nil) throws -> PullSummary {
        let paths = local.vault.paths
        let target = remote.target
        let layout = RemoteLayout(try rclone.list(target))
        try layout.checkVault(target: target)
        let r = try ManifestPrefix.generation(of: rclone.head(RemoteNames.join(target, RemoteNames.manifest), count: ManifestPrefix.length))
        let l = local.manifest.generation, k = remote.known
        var summary = PullSummary()
        var known = k

        if r < k {
            throw RemoteError.remoteRollback(remote: r, known: k)
        } else if r == l {
            if k != r {
                let remoteBytes = try rclone.head(RemoteNames.join(target, RemoteNames.manifest), count: Manifest.maxFileSize)
                guard remoteBytes == (try VaultDirectory.readFile(paths.manifest, limit: Manifest.maxFileSize)) else {
                    throw RemoteError.diverged(local: l, remote: r, known: k)
                }
            }
            summary.state = .inStep(generation: r)
            known = r
        } else if r > l {
            guard l <= k else { throw RemoteError.diverged(local: l, remote: r, known: k) }
            (summary.files, summary.bytes) = try fetch(layout, local: local, target: target, rclone: rclone,
                                                          progress: progress)
            summary.state = .fetched(generation: r)
            known = r
        } else {
            summary.state = .remoteBehind(remote: r, local: l)
            // A remote added by hand over an older copy: from now on it is
            // this vault's, and a push may update it.
            if k == 0 { known = r }
        }
        if known != k {
            var config = try RemoteConfig.read(vault: paths.root)
            var updated = config.remote(named: remote.name) ?? remote
            updated.known = known
            config.update(updated)
            try config.write(vault: paths.root)
        }
        summary.dropIns = try fetchDropIns(layout, paths: paths, target: target, rclone: rclone)
        return summary
    }

    /// Stages the remote's header, manifest and the blobs we lack, opens
    /// the staged manifest with this vault's master key, reads every staged blob to
    /// the end (every chunk authenticated, as `check --read-data`), checks
    /// that every other blob it names is here, then moves the blobs in and
    /// replaces the manifest and the header (each atomically).
    static func fetch(_ layout: RemoteLayout, local: UnlockedVault, target: String,
                      rclone: Rclone, progress: ((UInt64, UInt64) -> Void)?) throws -> (Int, UInt64) {
        let paths = local.vault.paths
        let here = try RemotePush.localItems(paths)
        let wanted = layout.items.filter { here[$0.key] != $0.value }.keys.sorted()
        let staging = try StagingDirectory(beside: paths.root, purpose: "pulling")
        let files = [RemoteNames.header, RemoteNames.manifest] + wanted.map { "items/" + $0 }
        try rclone.download(files, from: target, into: staging.path, progress: progress)
        try staging.syncAll()

        let staged = try Vault(at: staging.path)
        guard staged.header.vaultID == local.vault.header.vaultID else { throw RemoteError.otherVault(target: target) }
        guard staged.header.publicKey.bytes == local.vault.header.publicKey.bytes else {
            throw RemoteError.invalidRemote("the remote was rekeyed on another machine; clone it into a new directory instead")
        }
        // With this vault's master key: the remote's header may carry another
        // password (changed on the other machine), never another key.
        let opened = try local.unlockCopy(staged)
        let stagedBlobs = Set(wanted)
        // Only blobs the staged manifest names, each read through, come in:
        // anything else the remote listed stays behind with the staging.
        var verified: [String] = []
        for entry in opened.manifest.entries {
            let id = Hex.encode(entry.itemID)
            if stagedBlobs.contains(id) {
                verified.append(id)
                do { _ = try opened.read(entry, to: DiscardingSink()) } catch {
                    throw VaultError.itemCorrupted(name: entry.name)
                }
            } else if here[id] == nil {
                throw RemoteError.malformedRemote("the remote's manifest names a blob that is on neither side (\(id))")
            }
        }
        for id in verified {
            do { try Syscall.renameNoReplace(staging.path + "/items/" + id, paths.item(id)) } catch let e as SystemError where e.errno == .fileExists {
                // A blob of the same id here at another size: ours is damaged; replace it.
                try Syscall.rename(staging.path + "/items/" + id, paths.item(id))
            }
        }
        try Syscall.fsyncDirectory(paths.items)
        // The manifest first, then the header: the header can only differ by
        // its password slot (the vault key is the same, checked above), so
        // either header opens either manifest.
        try VaultDirectory.atomicWrite(VaultDirectory.readFile(staging.path + "/manifest", limit: Manifest.maxFileSize), to: paths.manifest)
        let header = try VaultDirectory.readFile(staging.path + "/vault.header", limit: VaultHeader.maxLength)
        if header != (try VaultDirectory.readFile(paths.header, limit: VaultHeader.maxLength)) {
            try VaultDirectory.atomicWrite(header, to: paths.header)
        }
        let bytes = files.reduce(UInt64(0)) { $0 &+ (layout.files[$1] ?? 0) }
        return (files.count, bytes)
    }

    /// Copies the remote's complete drop-ins that are neither in our inbox
    /// nor already absorbed into our inbox: content first, then envelope
    /// (the envelope makes it a drop-in), each renamed in whole.
    static func fetchDropIns(_ layout: RemoteLayout, paths: VaultPaths, target: String, rclone: Rclone) throws -> Int {
        var wanted: [String] = []
        for id in layout.dropIns {
            if try Syscall.status(of: paths.item(id)) != nil || Syscall.status(of: paths.dropInEnvelope(id)) != nil { continue }
            wanted.append(id)
        }
        guard !wanted.isEmpty else { return 0 }
        let staging = try StagingDirectory(beside: paths.root, purpose: "dropins")
        try rclone.download(wanted.flatMap { ["inbox/\($0).item", "inbox/\($0).env"] }, from: target, into: staging.path)
        try staging.syncAll()
        for id in wanted {
            try Syscall.rename(staging.path + "/inbox/\(id).item", paths.dropInContent(id))
        }
        try Syscall.fsyncDirectory(paths.inbox)
        for id in wanted {
            try Syscall.rename(staging.path + "/inbox/\(id).env", paths.dropInEnvelope(id))
        }
        try Syscall.fsyncDirectory(paths.inbox)
        return wanted.count
    }
}
