import System
import VaultCrypto

/// Drop-ins of one `vault add` of many files, landed in groups so that the
/// disk is synced twice per group instead of four times per file (content,
/// inbox, envelope, inbox). Each drop-in's content lands in the inbox
/// unsynced and stays flock'ed (its TempFile) until its envelope is there;
/// `land` then makes the group's contents durable (one syncfs), seals every
/// envelope to the key read once under the drop lock, writes them unsynced
/// and makes them durable (a second syncfs). Contents before envelopes, as
/// for a single drop-in, so a power cut leaves no envelope whose content is
/// missing: it loses at most the group not yet landed, each of its drop-ins
/// whole or absent (content without an envelope is a leftover the next
/// unlock removes). A kill loses nothing the page cache holds.
/// A group of one is synced file by file, as a single add always was: a
/// syncfs would also wait for every other writer's dirty data.
public final class DropInBatch {
    /// Drop-ins per group: bounds the descriptors held open (one per content).
    public static let groupSize = 128
    private let vault: Vault
    private let perItemSync: Bool
    private var pending: [(entry: ManifestEntry, content: TempFile, landed: () -> Void)] = []

    /// `expected`: how many drop-ins the caller means to add (1: synced file by file).
    public init(into vault: Vault, expected: Int) {
        self.vault = vault
        perItemSync = expected <= 1
    }

    /// Whether the group is full: the caller lands it before adding more.
    public var isFull: Bool { pending.count >= Self.groupSize }

    /// Takes a drop-in whose content `content` has been written and sealed:
    /// renamed into the inbox under its blob name (synced now for a group of
    /// one). `landed` is called once its envelope is durable.
    func add(_ entry: ManifestEntry, content: TempFile, landed: @escaping () -> Void) throws {
        try content.commit(to: vault.paths.dropInContent(entry.blobName), durable: perItemSync)
        pending.append((entry, content, landed))
    }

    /// Lands the waiting envelopes (see the type's comment); nothing waits after it.
    public func land() throws {
        guard let first = pending.first else { return }
        let group = pending
        pending = []
        if !perItemSync { try Syscall.syncFileSystem(of: first.content.file.fd) }
        // The vault's key as it is now, read under the drop lock and held
        // until the envelopes have landed: a rekey that ran while the
        // contents were written has switched keys by now, and one that
        // starts now waits for these envelopes and takes them in (DropLock).
        let dropLock = try DropLock(vault.paths, exclusive: false)
        let current = try Vault(at: vault.paths.root).header
        // One HPKE seal per envelope (~0.1 ms for X-Wing, most of it the
        // two X25519 and the ML-KEM encapsulation): on every core at once.
        let envelopes = try parallelMap(group.count) { i in
            try DropInEnvelope.seal(group[i].entry, to: current.publicKey, vaultID: current.vaultID)
        }
        for (item, envelope) in zip(group, envelopes) {
            // Nameless until linked under its own name: whole or absent.
            let target = vault.paths.dropInEnvelope(item.entry.blobName)
            let temp = try TempFile(beside: target, mode: vault.dropInFileMode, nameless: true)
            try envelope.withUnsafeBytes { try temp.file.write($0) }
            try temp.commit(to: target, durable: perItemSync)
        }
        if !perItemSync { try Syscall.syncFileSystem(of: first.content.file.fd) }
        // The contents' flocks (their TempFiles' descriptors) must outlive
        // the envelopes' landing: without them a `list` takes an
        // envelope-less content for a leftover and deletes it, leaving an
        // envelope that is refused.
        withExtendedLifetime((dropLock, group)) {}
        for item in group { item.landed() }
    }
}
