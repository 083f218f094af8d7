import System
import VaultCore

/// `vault remove`: drops items (their keys first, then their blobs).
struct RemoveCommand: Command {
    static let name = "remove"
    static let abstract = "remove items"
    static let yesFlag = FlagOption("--yes", "-y")
    static let options = [yesFlag.spec]
    static let help = """
        Usage: vault remove NAME... [--yes]

        Removes each item NAME from the vault, with every version it has.
        Needs the password. The keys are dropped from the encrypted manifest
        first, then the encrypted data is deleted. NAME may be a shell-style
        pattern ('draft-*', quoted so the shell leaves it alone). On a
        terminal vault asks first when a pattern matched or an item has more
        than one version, listing what would go. To drop only old versions,
        see 'vault forget'.

        Options:
          -y, --yes   do not ask

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
        let histories = names.map { ($0, vault.manifest.versions(named: $0).count) }.filter { $0.1 > 1 }
        // Scripts (no terminal) are not asked: remove always removed, as rm does.
        if !yes, widened || !histories.isEmpty, Syscall.isTerminal(0) {
            let counts = Dictionary(histories, uniquingKeysWith: max)
            let shown = names.prefix(10).map { name in
                "'\(name)'" + (counts[name].map { " (\($0) versions)" } ?? "")
            }.joined(separator: ", ") + (names.count > 10 ? ", …" : "")
            let every = histories.isEmpty ? "" : ", with every version"
            guard context.terminal.confirm(Terminal.printable("remove \(Format.count(names.count, "item")): \(shown)\(every)?")) == true else {
                throw CLIError(message: "remove cancelled; nothing changed")
            }
        }
        try vault.remove(names)
        for name in names { context.terminal.note("removed '\(name)'") }
        return .ok
    }
}
