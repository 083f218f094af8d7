extension UnlockedVault {
    /// Opens another copy of this vault (a remote copy staged by a pull or
    /// a check) with this vault's master key, read-only: the copy's header
    /// must carry this vault's id and verify under this key (its MAC), so a
    /// copy whose password was changed elsewhere opens, and a forged or
    /// rekeyed one does not. No Argon2 runs, no password is read.
    package func unlockCopy(_ copy: Vault) throws -> UnlockedVault {
        guard copy.header.vaultID == vaultID else { throw VaultError.corruptedOrTampered }
        return try copy.unlock(masterKey: keys.master, forWriting: false)
    }
}

extension UnlockedVault {
    /// This vault's master key, for `pull` to open the vault again after it
    /// replaced the header (whose password may have changed elsewhere).
    package var masterKey: MasterKey { keys.master }
}
