import VaultCore
import VaultCrypto

// THE SEAM between the command line and VaultCore: one function per command,
// called from that command's run() after parsing and validation. Everything
// the command line decides is done by then: the vault directory is in
// `context.vaultDirectory`, options are typed fields of `command`, and the
// password sources are resolved but not read (call `password.read()` when the
// vault is known to exist, so a missing vault is exit 10 before any prompt;
// wrap the result as `Password(secret:)`). Write output through
// `context.terminal`; return .ok or .partial; throw VaultError/CryptoError
// freely: ErrorReport turns them into messages and exit codes.
//
// TEMPORARY: every body below throws `CLIError.notWired` until it calls the
// core. Search for "notWired" to find what is left.
enum Wiring {
    static func initVault(_ command: InitCommand, _ context: Context, password: NewPasswordSource) throws -> ExitCode {
        // Reads the password for real, so the password sources are testable
        // before the core is wired; keep reading it before creating the vault.
        _ = try password.read()
        throw CLIError.notWired(InitCommand.name)
    }

    static func add(_ command: AddCommand, _ context: Context) throws -> ExitCode {
        throw CLIError.notWired(AddCommand.name)
    }

    static func list(_ command: ListCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        throw CLIError.notWired(ListCommand.name)
    }

    static func info(_ command: InfoCommand, _ context: Context) throws -> ExitCode {
        throw CLIError.notWired(InfoCommand.name)
    }

    static func get(_ command: GetCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        throw CLIError.notWired(GetCommand.name)
    }

    static func restore(_ command: RestoreCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        throw CLIError.notWired(RestoreCommand.name)
    }

    static func remove(_ command: RemoveCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        throw CLIError.notWired(RemoveCommand.name)
    }

    static func rename(_ command: RenameCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        throw CLIError.notWired(RenameCommand.name)
    }

    static func passwd(_ command: PasswdCommand, _ context: Context, password: PasswordSource,
                       newPassword: NewPasswordSource) throws -> ExitCode {
        throw CLIError.notWired(PasswdCommand.name)
    }

    static func check(_ command: CheckCommand, _ context: Context, password: PasswordSource) throws -> ExitCode {
        throw CLIError.notWired(CheckCommand.name)
    }
}
