import Dispatch
import Foundation  // Thread
import System
import VaultCrypto

/// Drop-ins of one `vault add` of many files, landed in groups so that the
/// disk is synced twice per group instead of four times per file (content,
/// inbox, envelope, inbox). Each drop-in's content lands in the inbox
/// unsynced and stays flock'ed (its TempFile) until its envelope is there;
/// landing a group then makes its contents durable (one syncfs), seals every
/// envelope to the key read once under the drop lock, writes them unsynced
/// and makes them durable (a second syncfs). Contents before envelopes, as
/// for a single drop-in, so a power cut leaves no envelope whose content is
/// missing: it loses at most the groups not yet landed, each of their
/// drop-ins whole or absent (content without an envelope is a leftover the
/// next unlock removes). A kill loses nothing the page cache holds.
/// A group of one is synced file by file, as a single add always was: a
/// syncfs would also wait for every other writer's dirty data.
///
/// A group of an add of many files shares one batch envelope (docs/
/// FORMAT.md, "Drop-in envelope"): one seal, one file, and at absorb one
/// open and one unlink for up to 128 drop-ins. Its contents are named
/// `<batch id>.<item id>.item`, the batch id drawn when the group begins,
/// so each content is paired with its envelope by name. A single add keeps
/// the single envelope, and so does an add into a remote's inbox (`add
/// --to`: remote inboxes hold single drop-ins only), one seal each.
///
/// `landInBackground` lands a full group on a thread of its own while the
/// caller writes the next group's contents: the seals and the syncfs waits
/// overlap the reading, compressing and sealing of contents. At most one
/// group lands at a time; its `landed` calls are made on the caller's
/// thread, when it next lands or waits (`finishLanding`).
public final class DropInBatch {
    /// Drop-ins per group: bounds the descriptors held open (one per
    /// content; two groups' worth while one lands in the background), and
    /// what one batch envelope holds.
    public static let groupSize = DropInEnvelope.maxBatch
    private let vault: Vault
    private let perItemSync: Bool
    /// Whether a group lands as one batch envelope (else one each).
    private let batching: Bool
    /// Whether a folder's index is written beside its content: not into a
    /// remote's inbox, which takes contents and envelopes only (RemotePush).
    let keepsFolderIndexes: Bool
    private var pending: [Pending] = []
    /// The hex id of the batch envelope the waiting group will land under.
    private var batchID = ""
    /// The group landing on another thread, if any.
    private var inFlight: Landing?
    /// Each drop-in's sealed size by blob name: a batched content's file is
    /// named for its batch, where `Vault.storedLength` does not look.
    private var storedSizes: [String: UInt64] = [:]

    /// `expected`: how many drop-ins the caller means to add (1: synced file
    /// by file). `batchEnvelopes`: false for drop-ins bound for a remote's
    /// inbox, which takes single envelopes only.
    public init(into vault: Vault, expected: Int, batchEnvelopes: Bool = true) {
        self.vault = vault
        perItemSync = expected <= 1
        batching = batchEnvelopes && !perItemSync
        keepsFolderIndexes = batchEnvelopes
    }

    /// A group left landing when the batch goes (its caller failed) is
    /// waited for: nothing of it is left half done by this process.
    deinit { inFlight?.done.wait() }

    /// The sealed size of a drop-in this batch took, once known.
    public func storedLength(of entry: ManifestEntry) -> UInt64? { storedSizes[entry.blobName] }

    /// Whether the group is full: the caller lands it before adding more.
    public var isFull: Bool { pending.count >= Self.groupSize }

    /// Takes a drop-in whose content `content` has been written and sealed:
    /// renamed into the inbox under its blob name (synced now for a group of
    /// one). `landed` is called once its envelope is durable. `index`: a
    /// folder's sealed index (DroppedFolderIndex), linked beside the
    /// content after it, before the envelope: an envelope never lands
    /// before what it names, and an index is never there without its
    /// content (Vault.leftovers).
    func add(_ entry: ManifestEntry, content: TempFile, index: [UInt8]? = nil, landed: @escaping () -> Void) throws {
        if pending.isEmpty, batching { batchID = Hex.encode(SecureRandom.bytes(ItemHeader.itemIDLength)) }
        let stem = batching ? batchID + "." + entry.blobName : entry.blobName
        // For `add`'s note only (a size it cannot tell it leaves out).
        if let size = try? Syscall.status(content.file.fd).size { storedSizes[entry.blobName] = size }
        try content.commit(to: vault.paths.dropInContent(stem), durable: perItemSync)
        if let index {
            let target = vault.paths.dropInIndex(stem)
            let temp = try TempFile(beside: target, mode: vault.dropInFileMode, nameless: true)
            try index.withUnsafeBytes { try temp.file.write($0) }
            try temp.commit(to: target, durable: perItemSync)
        }
        pending.append(Pending(entry: entry, content: content, landed: landed))
    }

    /// Lands every waiting envelope (the group in flight, then the rest);
    /// nothing waits after it.
    public func land() throws {
        try finishLanding()
        let group = pending
        pending = []
        try Self.land(group, batchID: batching ? batchID : nil, in: vault, perItemSync: perItemSync)
        for item in group { item.landed() }
    }

    /// Starts landing the waiting group on another thread, after waiting for
    /// the one before (its failure is thrown here). A group of one lands at
    /// once, as `land` does.
    public func landInBackground() throws {
        if perItemSync { return try land() }
        try finishLanding()
        guard !pending.isEmpty else { return }
        let landing = Landing(group: pending, batchID: batching ? batchID : nil, vault: vault)
        pending = []
        inFlight = landing
        Thread.detachNewThread {
            do { try Self.land(landing.group, batchID: landing.batchID, in: landing.vault, perItemSync: false) } catch {
                landing.failure = error
            }
            landing.done.signal()
        }
    }

    /// Waits for the group landing in the background, if any: throws its
    /// failure, or makes its `landed` calls.
    public func finishLanding() throws {
        guard let landing = inFlight else { return }
        inFlight = nil
        landing.done.wait()
        if let failure = landing.failure { throw failure }
        for item in landing.group { item.landed() }
    }

    /// Lands `group` (see the type's comment): as the batch envelope
    /// `batchID`, or with nil a single envelope each.
    private static func land(_ group: [Pending], batchID: String?, in vault: Vault, perItemSync: Bool) throws {
        guard let first = group.first else { return }
        if !perItemSync { try Syscall.syncFileSystem(of: first.content.file.fd) }
        // The vault's key as it is now, read under the drop lock and held
        // until the envelopes have landed: a rekey that ran while the
        // contents were written has switched keys by now, and one that
        // starts now waits for these envelopes and takes them in (DropLock).
        // Another user's add holds nothing and checks afterwards (`confirm`).
        let dropLock = try DropLock(vault.paths, exclusive: false)
        let current = try Vault(at: vault.paths.root).header
        // Nameless until linked under its own name: whole or absent.
        func write(_ envelope: [UInt8], as stem: String) throws {
            let target = vault.paths.dropInEnvelope(stem)
            let temp = try TempFile(beside: target, mode: vault.dropInFileMode, nameless: true)
            try envelope.withUnsafeBytes { try temp.file.write($0) }
            try temp.commit(to: target, durable: perItemSync)
        }
        var landed: [DropLock.Landed] = []
        if let batchID {
            let entries = group.map(\.entry)
            try write(DropInEnvelope.seal(batch: entries, to: current.publicKey, vaultID: current.vaultID), as: batchID)
            landed = [DropLock.Landed(stem: batchID) { try DropInEnvelope.seal(batch: entries, to: $0.publicKey, vaultID: $0.vaultID) }]
        } else {
            // One HPKE seal each (~0.1 ms for X-Wing): on every core at once.
            let envelopes = try parallelMap(group.count) { i in
                try DropInEnvelope.seal(group[i].entry, to: current.publicKey, vaultID: current.vaultID)
            }
            for (item, envelope) in zip(group, envelopes) {
                try write(envelope, as: item.entry.blobName)
                let entry = item.entry
                landed.append(DropLock.Landed(stem: entry.blobName) { try DropInEnvelope.seal(entry, to: $0.publicKey, vaultID: $0.vaultID) })
            }
        }
        if !perItemSync { try Syscall.syncFileSystem(of: first.content.file.fd) }
        // Another user's add holds no lock a rekey waits for: it looks again.
        try dropLock.confirm(landed, sealedTo: current.publicKey) { stem, envelope in
            try write(envelope, as: stem)
            if !perItemSync { try Syscall.syncFileSystem(of: first.content.file.fd) }
        }
        // The contents' flocks (their TempFiles' descriptors) must outlive
        // the envelopes' landing: without them a `list` takes an
        // envelope-less content for a leftover and deletes it, leaving an
        // envelope that is refused.
        withExtendedLifetime((dropLock, group)) {}
    }

    private struct Pending {
        let entry: ManifestEntry
        let content: TempFile
        let landed: () -> Void
    }

    /// A group handed to the landing thread; the caller touches it again
    /// only after `done` is signalled.
    // @unchecked Sendable: `group` and `failure` are used by one thread at a
    // time, ordered by the semaphore.
    private final class Landing: @unchecked Sendable {
        let group: [Pending]
        let batchID: String?
        let vault: Vault
        let done = DispatchSemaphore(value: 0)
        var failure: Error?
        init(group: [Pending], batchID: String?, vault: Vault) { (self.group, self.batchID, self.vault) = (group, batchID, vault) }
    }
}
