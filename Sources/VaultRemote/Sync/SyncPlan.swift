import VaultCore

/// The one decision behind `push` and `pull` (docs/FORMAT.md, "Sync
/// decision"): from what each side holds and what this vault remembers of
/// the remote, what to move and what to refuse. Pure: no I/O, so every cell
/// of the table is a test (SyncPlanTests); RemotePush and RemotePull only
/// gather the inputs and move the bytes.
///
/// Manifests are related by their histories (ManifestHistory, in
/// VaultCore: authenticated, so only a pull can read them), and by the
/// base this vault kept of the remote (RemoteBase); headers by their
/// counter (VaultHeaderV4.swift). A pull authenticates both before it acts (the
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

    /// One manifest as the decisions see it: the identity of its write
    /// (`ManifestPrefix.identity`: its first 32 bytes, which hold the
    /// random nonce drawn for each write, so equal identities are one
    /// write), its generation, and its history (nil: a manifest from
    /// before version 5, whose ancestry is unknown). For a pull all three
    /// are authenticated (the manifest was opened with the master key).
    public struct Side: Equatable, Sendable {
        public let identity: String
        public let generation: UInt64
        public let history: ManifestHistory?
        public init(identity: String, generation: UInt64, history: ManifestHistory?) {
            (self.identity, self.generation, self.history) = (identity, generation, history)
        }
    }

    public enum PullAction: Equatable, Sendable {
        /// Both hold the same manifest.
        case inStep
        /// The remote's history contains ours: take its manifest (and the
        /// blobs it needs).
        case fetch
        /// Ours contains the remote's: nothing to take; it becomes the base,
        /// and a push updates the remote.
        case remoteBehind
        /// Neither contains the other: fetch the remote's manifest and
        /// blobs, and merge (ManifestMerge) with ours, against the base
        /// (`withBase`) or, when no base both descend from is known, none
        /// (then only tombstones remove anything: a union).
        case merge(withBase: Bool)
    }

    /// The pull decision (docs/FORMAT.md, "Sync decision"). `base` is the
    /// manifest this vault last held in step with the remote (nil: none
    /// kept, as after `remote add`). Proven history decides, never a
    /// comparison of generations (issue 37): a copy's history contains
    /// another's when it holds every write of it (ManifestHistory), or
    /// when the other is the base and the copy contains the base.
    /// Refused as a rollback: a remote that does not hold what this vault
    /// last held in step with it (an older copy put back there; `changed
    /// Since` when it also holds what ours does not).
    public static func pull(local l: Side, remote r: Side, base b: Side?) throws -> PullAction {
        if r.identity == l.identity { return .inStep }
        if let b {
            // The remote must hold what this vault last held in step with it.
            // Without histories on both, only the generations can say (the
            // rule before version 5): a lower one than the base's is a rollback.
            let proven = r.history != nil && b.history != nil
            if proven ? !contains(r, b, base: b, local: false) : r.generation < b.generation {
                throw RemoteError.remoteRollback(remote: r.generation, known: b.generation,
                                                 changedSince: !contains(l, r, base: b, local: true))
            }
        }
        if contains(l, r, base: b, local: true) { return .remoteBehind }
        if contains(r, l, base: b, local: false) { return .fetch }
        return .merge(withBase: b.map { contains(l, $0, base: b, local: true) } ?? false)
    }

    /// Whether `x`'s history contains `y`'s: the same write; or both
    /// histories known and x's holds y's; or, for this vault's own
    /// manifest (`local`), y is the base: ours only moves forward from the
    /// manifest it last held in step (a rollback here is refused by the
    /// rollback guard first). A manifest from before version 5 is known
    /// no other way.
    static func contains(_ x: Side, _ y: Side, base: Side?, local: Bool) -> Bool {
        if x.identity == y.identity { return true }
        if let hx = x.history, let hy = y.history { return hx.contains(hy) }
        return local && base?.identity == y.identity
    }

    /// The checks on the staged manifest, once opened with the master key:
    /// its authenticated generation must be the one announced (a remote
    /// that answers a short read with one manifest and the whole read with
    /// another is caught here).
    public static func checkAnnounced(authenticated g: UInt64, announced r: UInt64) throws {
        guard g == r else { throw RemoteError.remoteChangedWhileReading(announced: r, found: g) }
    }

    public struct PushAction: Equatable, Sendable {
        /// The remote holds the manifest a killed push of ours left there
        /// (PENDING): it becomes the base from now on.
        public let adoptPending: Bool
        /// Upload our manifest (after the blobs); false when the remote
        /// holds it already.
        public let uploadManifest: Bool
        /// The remote holds a manifest older than the base that ours
        /// descends from (an older copy put back there): ours replaces it.
        public let remoteWasOlder: Bool
        public init(adoptPending: Bool, uploadManifest: Bool, remoteWasOlder: Bool = false) {
            (self.adoptPending, self.uploadManifest, self.remoteWasOlder) = (adoptPending, uploadManifest, remoteWasOlder)
        }
    }

    /// The push decision, without a key (docs/FORMAT.md, "Sync decision"):
    /// identities only (ManifestPrefix.identity, read from the remote
    /// without a key). A push replaces the remote's manifest, and deletes
    /// what ours no longer names, only over a manifest this vault's own
    /// descends from: the base (what both last held in step; ours only
    /// moved forward from it), one older than it (`older`: an older copy
    /// put back there), or the one a killed push of ours left there
    /// (`pendingThere`, asked only then: its generation and digest). Any
    /// other manifest there (another machine pushed, or none is known, as
    /// after `remote add`) stops the push: a pull, with the password,
    /// proves how the two relate and merges. `remote` nil: no manifest
    /// there yet.
    public static func push(local: String, remote: String?, base: String?, older: [String] = [], remoteGeneration: UInt64,
                            pendingThere: () throws -> Bool) throws -> PushAction {
        guard let remote else { return PushAction(adoptPending: false, uploadManifest: true) }
        if remote == local { return PushAction(adoptPending: false, uploadManifest: false) }
        if remote == base { return PushAction(adoptPending: false, uploadManifest: true) }
        if older.contains(remote) { return PushAction(adoptPending: false, uploadManifest: true, remoteWasOlder: true) }
        guard try pendingThere() else { throw RemoteError.remoteChanged(remote: remoteGeneration, known: 0) }
        return PushAction(adoptPending: true, uploadManifest: true)
    }
}
