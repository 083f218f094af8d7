/// The one decision behind `push` and `pull` (docs/FORMAT.md, "Sync
/// decision"): from what each side holds and what this vault remembers of
/// the remote, what to move and what to refuse. Pure: no I/O, so every cell
/// of the table is a test (SyncPlanTests); RemotePush and RemotePull only
/// gather the inputs and move the bytes.
///
/// Manifests are ordered by their generation, headers by their counter
/// (VaultHeaderV4.swift). A pull authenticates both before it acts (the
/// staged copy is opened with this vault's master key); a push cannot (it
/// has no key), so what a hostile remote says can only make a push refuse
/// or overwrite the remote with this vault's own files, never change
/// anything here.
public enum SyncPlan {
    /// One side's header: the digest of its bytes and its counter.
    public struct Header: Equatable, Sendable {
        public let digest: String
        public let counter: UInt64
        public init(digest: String, counter: UInt64) { (self.digest, self.counter) = (digest, counter) }
    }

    public enum HeaderAction: Equatable, Sendable {
        /// Both sides hold the same header.
        case same
        /// Ours is the newer: a push uploads it, a pull keeps it.
        case keepLocal
        /// The remote's is the newer: a pull installs it (its counter
        /// authenticated first), a push leaves it there.
        case takeRemote
    }

    /// Which header wins. `synced` is the digest both sides last held
    /// (nil: not known, then the counters decide). Throws `headersDiverged`
    /// when both changed since, or when neither counter is higher.
    public static func header(local: Header, remote: Header?, synced: String?) throws -> HeaderAction {
        guard let remote else { return .keepLocal }
        if remote.digest == local.digest { return .same }
        var localUnchanged = false
        if let synced {
            switch (local.digest != synced, remote.digest != synced) {
            case (true, true): throw RemoteError.headersDiverged
            case (true, false): return .keepLocal
            default: localUnchanged = true
            }
        }
        // The remote's changed (or nothing is known): only a higher counter
        // is newer. An older one is a rollback, or a lie of a push's
        // unauthenticated read: ours stays, and a push puts it back. An
        // equal one, while ours is unchanged since the last sync, is a
        // sibling another machine chose with `push --replace-header` after
        // both changed: it is taken (ours is the side that did not change).
        if remote.counter > local.counter || (localUnchanged && remote.counter == local.counter) { return .takeRemote }
        if remote.counter < local.counter { return .keepLocal }
        throw RemoteError.headersDiverged
    }

    public enum PullAction: Equatable, Sendable {
        /// Nothing new there; `known` becomes the generation.
        case inStep
        /// Fetch the remote's manifest and the blobs it needs.
        case fetch
        /// The remote is older than ours: a push updates it. `adopt`: it was
        /// never synced (K = 0), so it is ours from now on (K = R).
        case remoteBehind(adopt: Bool)
        /// Both changed since they were last in step: fetch the remote's
        /// manifest and blobs, and merge (ManifestMerge) with ours.
        case merge
    }

    /// K = `known` (last pushed or pulled), L = `local`, R = `remote`.
    /// `sameBytes` is asked only when R = L and K differs.
    public static func pull(local l: UInt64, remote r: UInt64, known k: UInt64,
                            sameBytes: () throws -> Bool) throws -> PullAction {
        if r < k { throw RemoteError.remoteRollback(remote: r, known: k) }
        if r == l {
            if k != r, !(try sameBytes()) { return .merge }
            return .inStep
        }
        if r > l { return l <= k ? .fetch : .merge }
        // Ours is the newer. The remote changed too since K (another
        // machine pushed), unless it was never synced: a remote added by
        // hand over an older copy of this vault is adopted, not merged (a
        // merge with no base would bring back what was removed since).
        return r > k && k != 0 ? .merge : .remoteBehind(adopt: k == 0)
    }

    /// The checks on the staged manifest, once opened with the master key:
    /// its authenticated generation must be the one announced (a remote
    /// that answers a short read with one manifest and the whole read with
    /// another is caught here), above ours, and not below what this vault
    /// knew of the remote.
    public static func checkFetched(authenticated g: UInt64, announced r: UInt64, local l: UInt64, known k: UInt64) throws {
        guard g == r else { throw RemoteError.remoteChangedWhileReading(announced: r, found: g) }
        guard g > l else { throw RemoteError.remoteRollback(remote: g, known: max(k, l)) }
        guard g >= k else { throw RemoteError.remoteRollback(remote: g, known: k) }
    }

    /// The same for a staged manifest about to be merged with ours: the
    /// generation announced, and not below K (it may be below ours).
    public static func checkMergeable(authenticated g: UInt64, announced r: UInt64, known k: UInt64) throws {
        guard g == r else { throw RemoteError.remoteChangedWhileReading(announced: r, found: g) }
        guard g >= k else { throw RemoteError.remoteRollback(remote: g, known: k) }
    }

    public struct PushAction: Equatable, Sendable {
        /// The remote holds the manifest a killed push of ours left there
        /// (PENDING): it is known from now on (K = R).
        public let adoptPending: Bool
        /// Upload our manifest (after the blobs); false when the remote
        /// holds it already.
        public let uploadManifest: Bool
        public init(adoptPending: Bool, uploadManifest: Bool) {
            (self.adoptPending, self.uploadManifest) = (adoptPending, uploadManifest)
        }
    }

    /// R = nil: the remote has no manifest. `pendingThere` is asked only
    /// when R > K: whether the remote's manifest is the one a killed push of
    /// ours was about to put there (its generation and digest; a manifest's
    /// nonce is random per write, so another machine's cannot match). An
    /// R below K (an older copy put back there) is overwritten: the push
    /// makes the remote current again.
    public static func push(local l: UInt64, remote r: UInt64?, known k: UInt64,
                            pendingThere: () throws -> Bool) throws -> PushAction {
        guard let r else { return PushAction(adoptPending: false, uploadManifest: true) }
        var k = k, adopt = false
        if r > k {
            guard try pendingThere() else { throw RemoteError.remoteChanged(remote: r, known: k) }
            (k, adopt) = (r, true)
        }
        return PushAction(adoptPending: adopt, uploadManifest: !(r == l && k == l))
    }
}
