import System
import VaultCore

/// Plaintext written where the user says (`get -o`, `restore`), never left
/// half-written: nameless until complete where the file system allows, else
/// erased by an interrupt, and recorded so the next command erases what a
/// kill left.
enum PlaintextFiles {
    /// Writes an item to a new file.
    static func export(_ entry: ManifestEntry, from vault: UnlockedVault, to path: String, context: Context,
                       progress: ProgressLine? = nil) throws {
        var token: Interrupts.Token?
        defer { token.map(Interrupts.unregister) }
        try vault.export(entry, to: path, partials: context.partialOutputs, partial: { temp in
            token = Interrupts.register { UserFiles.erase(FilePath(temp)) }
        }, progress: progress?.update)
    }
}
