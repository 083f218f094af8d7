import VaultAgent
import VaultCore

/// What a command's `run` gets: the terminal, where the vault is, and the
/// ways to obtain passwords.
struct Context {
    let terminal: Terminal
    let environment: [String: String]
    let globals: GlobalOptions
    /// From `VaultLocation`; whether a vault is there is VaultCore's to say.
    let vaultDirectory: String
    /// This user's state on this machine (`VaultLocation.stateDirectory`).
    let stateDirectory: String

    /// This machine's memory of the newest manifest seen of each vault.
    var rollbackGuard: RollbackGuard {
        RollbackGuard(stateDirectory: stateDirectory, acceptRollback: globals.acceptRollback)
    }

    /// Where plaintext outputs in progress are recorded.
    var partialOutputs: PartialOutputs { PartialOutputs(stateDirectory: stateDirectory) }

    /// The source of the password that unlocks the vault. Resolved here, so
    /// with no way to get a password the command fails (exit 2) before it
    /// touches the vault, unless this vault's unlock agent runs; read only
    /// when the caller calls `read()`.
    func passwordSource() throws(CLIError) -> PasswordSource {
        do {
            return try PasswordSource.resolve(globals: globals, environment: environment, terminal: terminal)
        } catch {
            guard let vault = try? Vault(at: vaultDirectory) else { throw error }
            // No password here either way: say why it would not help.
            if vault.isSharedWithUs { throw Self.sharedForAddingOnly(vault) }
            let running: Bool
            do { running = try AgentClient.status(vaultID: vault.header.vaultID, environment: environment) != nil } catch let problem {
                terminal.warning("the unlock agent was not used: \(ErrorReport.cliError(for: problem, vaultDirectory: nil).message)")
                running = false
            }
            guard running else { throw error }
            return PasswordSource(origin: .agentOnly(error), terminal: terminal)
        }
    }

    /// init: the vault's first password, from the usual sources, or asked
    /// twice on the terminal.
    func firstPasswordSource() throws(CLIError) -> NewPasswordSource {
        NewPasswordSource(replacing: try passwordSource(), allowWeak: globals.allowWeakPassword)
    }

    /// passwd: the new password, from `file` (--new-password-file), or asked
    /// twice on the terminal. The global sources give the current password.
    func newPasswordSource(file: String?) throws(CLIError) -> NewPasswordSource {
        try NewPasswordSource.resolve(file: file, terminal: terminal, allowWeak: globals.allowWeakPassword)
    }
}
