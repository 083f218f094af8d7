import VaultCore

/// `vault list`: the items, after absorbing waiting drop-ins.
struct ListCommand: Command {
    static let name = "list"
    static let abstract = "list the items"
    static let jsonFlag = FlagOption("--json")
    static let versionsOption = ValueOption<String>.text("--versions", as: "NAME")
    static let options = [jsonFlag.spec, versionsOption.spec]
    static let help = """
        Usage: vault list [--versions NAME] [--json]

        Lists the items, each once: size, when its current version was added,
        kind, whether it was dropped in with 'vault add' or edited, how many
        versions it has, and its name. Needs the password. Items waiting from
        'vault add' are taken into the vault first.

        With --versions NAME, lists every version of the item NAME instead,
        oldest first, each with its number (for 'get --version N').

        Options:
          --versions NAME   the versions of one item
          --json            one JSON document on standard output, for scripts

        Examples:
          vault list
          vault list --versions notes.txt
          vault list --json > items.json
        """

    let json: Bool
    let versionsOf: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        json = arguments.isSet(Self.jsonFlag)
        versionsOf = try arguments.value(Self.versionsOption)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: false)
        let rows: [(entry: ManifestEntry, versions: Int)]
        if let name = versionsOf {
            let versions = vault.manifest.versions(named: name)
            guard !versions.isEmpty else { throw VaultError.noSuchItem(name: name) }
            rows = versions.map { ($0, versions.count) }
        } else {
            // Byte order, as names are compared (String's < would also be slower).
            rows = vault.manifest.items.sorted { $0.current.name.utf8.lexicographicallyPrecedes($1.current.name.utf8) }
                .map { ($0.current, $0.versions) }
        }
        if json {
            try JSONOutput.writeList(rows, to: context.terminal)
        } else {
            try context.terminal.printBuffered { emit in
                for row in rows {
                    try emit((versionsOf == nil ? Format.listLine(row.entry, versions: row.versions)
                                                : Format.versionLine(row.entry)) + "\n")
                }
            }
        }
        return .ok
        }

}
