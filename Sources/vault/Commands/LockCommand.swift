import VaultAgent
import VaultCore

/// `vault lock`: ends this vault's unlock agent (or every one of yours).
struct LockCommand: Command {
    static let name = "lock"
    static let abstract = "end the unlock agent: the password is needed again"
    static let allFlag = FlagOption("--all")
    static let options = [allFlag.spec]
    static let help = """
        Usage: vault lock [--all]

        Ends the agent that 'vault unlock' started for this vault: it erases
        the key and exits, and the next command asks for the password again.
        Nothing happens, and the exit status is 0, if the vault was not unlocked.

        Options:
          --all   end the unlock agents of every vault of yours

        Examples:
          vault lock
          vault lock --all
        """

    let all: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        all = arguments.isSet(Self.allFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        if all {
            let n = try AgentClient.lockAll(environment: context.environment)
            context.terminal.note(n == 0 ? "no vault was unlocked" : "locked \(Format.count(n, "vault"))")
            return .ok
        }
        let vault = try Vault(at: context.vaultDirectory)
        let ended = try AgentClient.lock(vaultID: vault.header.vaultID, environment: context.environment)
        context.terminal.note(ended ? "locked" : "was not unlocked")
        return .ok
    }
}
