import VaultCore

/// `vault remove`: drops items (their keys first, then their blobs).
struct RemoveCommand: Command {
    static let name = "remove"
    static let abstract = "remove items"
    static let yesFlag = FlagOption("--yes", "-y")
    static let options = [yesFlag.spec]
    static let help = """
        Usage: vault remove NAME... [--yes]

        Removes each item NAME from the vault. Needs the password. The item's
        key is dropped from the encrypted manifest first, then its encrypted
        data is deleted. NAME may be a shell-style pattern ('draft-*', quoted
        so the shell leaves it alone); on a terminal, vault then lists what
        the pattern matched and asks before removing it.

        Options:
          -y, --yes   do not ask, even for a pattern on a terminal

        Examples:
          vault remove old-notes.txt
          vault remove draft-1.odt draft-2.odt
          vault remove 'draft-*'
        """

    let itemNames: [String]
    let yes: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemNames = try arguments.oneOrMore("NAME")
        yes = arguments.isSet(Self.yesFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: true)
        let entries = try vault.entries(selectedBy: itemNames)
        let names = entries.map(\.name)
        let widened = itemNames.contains { vault.manifest.entry(named: $0) == nil }
        if widened && !yes {
            let shown = names.prefix(10).map { "'\($0)'" }.joined(separator: ", ") + (names.count > 10 ? ", …" : "")
            // No terminal (a script): the pattern was meant, as with rm.
            if context.terminal.confirm(Terminal.printable("remove \(Format.count(names.count, "item")): \(shown)?")) == false {
                context.terminal.note("nothing removed")
                return .ok
            }
        }
        try vault.remove(names)
        for name in names { context.terminal.note("removed '\(name)'") }
        return .ok
    }
}
