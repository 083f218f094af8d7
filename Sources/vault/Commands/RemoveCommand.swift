import System
import VaultCore

/// `vault remove`: drops items (their keys first, then their blobs).
struct RemoveCommand: Command {
    static let name = "remove"
    static let abstract = "remove items"
    static let yesFlag = FlagOption("--yes")
    static let options = [yesFlag.spec]
    static let help = """
        Usage: vault remove NAME... [--yes]

        Removes each item NAME from the vault, with every version it has.
        Needs the password. The keys are dropped from the encrypted manifest
        first, then the encrypted data is deleted. When an item has more than
        one version and standard input is a terminal, asks first. To drop
        only old versions, see 'vault forget'.

        Options:
          --yes   do not ask

        Examples:
          vault remove old-notes.txt
          vault remove draft-1.odt draft-2.odt
        """

    let itemNames: [String]
    let confirmed: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemNames = try arguments.oneOrMore("NAME")
        confirmed = arguments.isSet(Self.yesFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: true)
        // Scripts (no terminal on stdin) are not asked: remove always removed.
        let histories = itemNames.map { ($0, vault.manifest.versions(named: $0).count) }.filter { $0.1 > 1 }
        if !confirmed, !histories.isEmpty, Syscall.isTerminal(0) {
            let list = histories.map { "'\($0.0)' (\($0.1) versions)" }.joined(separator: ", ")
            guard context.terminal.confirm("remove \(list) with every version?") == true else {
                throw CLIError(message: "remove cancelled; nothing changed")
            }
        }
        try vault.remove(itemNames)
        for name in itemNames { context.terminal.note("removed '\(name)'") }
        return .ok
        }

}
