import System
import VaultCrypto

/// This machine's memory of the newest manifest it has seen of each copy of
/// a vault: `<state directory>/seen/<vault id hex>-<place>` holds that
/// manifest's generation (decimal), and `seen/<vault id hex>-<place>.header`
/// the newest header counter, where place is the first 8 bytes of SHA-256
/// of the vault directory's resolved path, hex. Per directory, because a
/// second copy of a vault (a clone of a remote that is behind this
/// machine's vault, a copy kept by `move send --keep`) is no rollback of
/// the first; an older copy put back in the same directory is. Without a
/// directory (`scoped` not called) the key is the vault id alone. The
/// header counter
/// (VaultHeaderV4.swift): a header older than that one (an older copy of
/// `vault.header` put back, in which a password since changed or a key slot
/// since removed still opens) is refused the same way. A manifest with a lower generation is an older copy put back
/// in place (a rollback, which would undo later changes and make newer
/// items' blobs look orphaned): unlocking refuses it, unless the user says
/// it was on purpose (`--accept-rollback`, restoring an old backup), which
/// also resets the memory. It covers what this user on this machine has
/// seen, not a fresh machine or another user (docs/SECURITY.md).
public final class RollbackGuard: Sendable {
    let directory: String
    public let acceptRollback: Bool
    /// "-<place>" of the vault directory this guard is for, or "".
    let place: String

    public init(stateDirectory: String, acceptRollback: Bool = false) {
        directory = stateDirectory + "/seen"
        self.acceptRollback = acceptRollback
        place = ""
    }

    private init(directory: String, acceptRollback: Bool, place: String) {
        (self.directory, self.acceptRollback, self.place) = (directory, acceptRollback, place)
    }

    /// The same memory, for the copy in `vaultDirectory`.
    func scoped(to vaultDirectory: String) -> RollbackGuard {
        // Best effort, as `saw`: a path that does not resolve, or a hash
        // that fails (no memory), only files the memory under another name.
        let resolved = (try? Syscall.realPath(vaultDirectory).description) ?? vaultDirectory
        let digest = (try? SHA256.hash(Array(resolved.utf8))) ?? []   // the same
        return RollbackGuard(directory: directory, acceptRollback: acceptRollback, place: "-" + Hex.encode(digest.prefix(8)))
    }

    func path(_ vaultID: [UInt8], header: Bool = false) -> String {
        directory + "/" + Hex.encode(vaultID) + place + (header ? ".header" : "")
    }

    /// The newest generation remembered for this vault (0 if none), or with
    /// `header` the newest header counter.
    public func remembered(vaultID: [UInt8], header: Bool = false) -> UInt64 {
        // None kept, or one that does not read: nothing remembered. This
        // guard only ever refuses, so forgetting weakens it, never loses data.
        guard let raw = try? VaultDirectory.readFile(path(vaultID, header: header), limit: 32),
              let n = UInt64(String(decoding: raw, as: UTF8.self).trimmingCharacters(in: "\n")) else { return 0 }
        return n
    }

    /// Refuses a manifest older than one seen before (unless accepted), and
    /// remembers this one. `seenBefore`: what was remembered before the
    /// manifest was read (a newer one remembered since is another
    /// process's save, not a rollback of the one read).
    func check(vaultID: [UInt8], generation: UInt64, seenBefore seen: UInt64) throws {
        if generation < seen && !acceptRollback { throw VaultError.rollback(seen: seen, found: generation) }
        if generation != seen { saw(vaultID: vaultID, generation: generation, evenIfLower: acceptRollback) }
    }

    /// The same for an authenticated header's counter.
    func check(vaultID: [UInt8], headerCounter counter: UInt64) throws {
        let seen = remembered(vaultID: vaultID, header: true)
        if counter < seen && !acceptRollback { throw VaultError.headerRollback(seen: seen, found: counter) }
        if counter != seen { saw(vaultID: vaultID, headerCounter: counter, evenIfLower: acceptRollback) }
    }

    /// Remembers `generation` if it is newer (best effort: a state directory
    /// that cannot be written only weakens this guard).
    package func saw(vaultID: [UInt8], generation: UInt64, evenIfLower: Bool = false) {
        guard evenIfLower || generation > remembered(vaultID: vaultID) else { return }
        try? Vault.ensureDirectory(directory)   // best effort: see above
        try? VaultDirectory.atomicWrite(Array("\(generation)\n".utf8), to: path(vaultID))   // best effort
    }

    /// Remembers a header counter if it is newer (best effort, as `saw`).
    func saw(vaultID: [UInt8], headerCounter counter: UInt64, evenIfLower: Bool = false) {
        guard evenIfLower || counter > remembered(vaultID: vaultID, header: true) else { return }
        try? Vault.ensureDirectory(directory)   // best effort: as `saw`
        try? VaultDirectory.atomicWrite(Array("\(counter)\n".utf8), to: path(vaultID, header: true))   // best effort
    }
}

private extension String {
    func trimmingCharacters(in set: Character) -> Substring {
        var s = Substring(self)
        while s.last == set { s.removeLast() }
        return s
    }
}
