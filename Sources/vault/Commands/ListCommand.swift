import VaultCore

/// `vault list`: the items, after absorbing waiting drop-ins.
struct ListCommand: Command {
    static let name = "list"
    static let abstract = "list the items"
    static let jsonFlag = FlagOption("--json")
    static let options = [jsonFlag.spec]
    static let help = """
        Usage: vault list [--json]

        Lists the items: name, size, when added, and whether it was dropped in
        with 'vault add'. Needs the password. Items waiting from 'vault add'
        are taken into the vault first.

        Options:
          --json   one JSON document on standard output, for scripts

        Examples:
          vault list
          vault list --json > items.json
        """

    let json: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        json = arguments.isSet(Self.jsonFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: false)
        // Byte order, as names are compared (String's < would also be slower).
        let entries = vault.manifest.entries.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        if json {
            try JSONOutput.writeList(entries, to: context.terminal)
        } else {
            try context.terminal.printBuffered { emit in
                for e in entries { try emit(Format.listLine(e) + "\n") }
            }
        }
        return .ok
        }

}
