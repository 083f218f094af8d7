import System

/// This machine's memory of the newest manifest it has seen of each vault:
/// `<state directory>/seen/<vault id hex>` holds that manifest's generation
/// (decimal). A manifest with a lower generation is an older copy put back
/// in place (a rollback, which would undo later changes and make newer
/// items' blobs look orphaned): unlocking refuses it, unless the user says
/// it was on purpose (`--accept-rollback`, restoring an old backup), which
/// also resets the memory. It covers what this user on this machine has
/// seen, not a fresh machine or another user (docs/SECURITY.md).
public final class RollbackGuard: Sendable {
    let directory: String
    public let acceptRollback: Bool

    public init(stateDirectory: String, acceptRollback: Bool = false) {
        directory = stateDirectory + "/seen"
        self.acceptRollback = acceptRollback
    }

    func path(_ vaultID: [UInt8]) -> String { directory + "/" + Hex.encode(vaultID) }

    /// The newest generation remembered for this vault (0 if none).
    public func remembered(vaultID: [UInt8]) -> UInt64 {
        guard let raw = try? VaultDirectory.readFile(path(vaultID), limit: 32),
              let n = UInt64(String(decoding: raw, as: UTF8.self).trimmingCharacters(in: "\n")) else { return 0 }
        return n
    }

    /// Refuses a manifest older than one seen before (unless accepted), and
    /// remembers this one.
    func check(vaultID: [UInt8], generation: UInt64) throws {
        let seen = remembered(vaultID: vaultID)
        if generation < seen && !acceptRollback { throw VaultError.rollback(seen: seen, found: generation) }
        if generation != seen { saw(vaultID: vaultID, generation: generation, evenIfLower: acceptRollback) }
    }

    /// Remembers `generation` if it is newer (best effort: a state directory
    /// that cannot be written only weakens this guard).
    func saw(vaultID: [UInt8], generation: UInt64, evenIfLower: Bool = false) {
        guard evenIfLower || generation > remembered(vaultID: vaultID) else { return }
        try? Vault.ensureDirectory(directory)
        try? VaultDirectory.atomicWrite(Array("\(generation)\n".utf8), to: path(vaultID))
    }
}

private extension String {
    func trimmingCharacters(in set: Character) -> Substring {
        var s = Substring(self)
        while s.last == set { s.removeLast() }
        return s
    }
}
