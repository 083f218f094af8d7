import System
import VaultCore

/// Plaintext written where the user says (`get -o`, `restore`), never left
/// half-written: an interrupt removes what was written so far.
enum PlaintextFiles {
    /// Writes an item to a new file, removing the partial plaintext if
    /// interrupted (the core removes it on any error).
    static func export(_ entry: ManifestEntry, from vault: UnlockedVault, to path: String,
                               progress: ProgressLine? = nil) throws {
        var token: Interrupts.Token?
        defer { token.map(Interrupts.unregister) }
        try vault.export(entry, to: path, tempFile: { temp in
            token = Interrupts.register { try? Syscall.unlink(temp) }
        }, progress: progress?.update)
    }
}
