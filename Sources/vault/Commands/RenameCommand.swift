import VaultCore

/// `vault rename`: a new name for one item.
struct RenameCommand: Command {
    static let name = "rename"
    static let abstract = "rename an item"
    static let help = """
        Usage: vault rename NAME NEWNAME

        Gives the item NAME the name NEWNAME. Needs the password. Fails if an
        item called NEWNAME exists.

        Examples:
          vault rename scan0001.pdf passport.pdf
          vault rename -- -notes.txt notes.txt
        """

    let itemName: String
    let newName: String

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let names = try arguments.exactly("NAME", "NEWNAME")
        itemName = names[0]
        newName = names[1]
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: true)
        try vault.rename(itemName, to: newName)
        context.terminal.note("renamed '\(itemName)' to '\(newName)'")
        return .ok
        }

}
