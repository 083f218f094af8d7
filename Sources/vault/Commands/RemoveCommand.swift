import VaultCore

/// `vault remove`: drops items (their keys first, then their blobs).
struct RemoveCommand: Command {
    static let name = "remove"
    static let abstract = "remove items"
    static let help = """
        Usage: vault remove NAME...

        Removes each item NAME from the vault. Needs the password. The item's
        key is dropped from the encrypted manifest first, then its encrypted
        data is deleted.

        Examples:
          vault remove old-notes.txt
          vault remove draft-1.odt draft-2.odt
        """

    let itemNames: [String]

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemNames = try arguments.oneOrMore("NAME")
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: true)
        try vault.remove(itemNames)
        for name in itemNames { context.terminal.note("removed '\(name)'") }
        return .ok
        }

}
