/// `vault list`: the items, after absorbing waiting drop-ins.
struct ListCommand: Command {
    static let name = "list"
    static let abstract = "list the items"
    static let options: [OptionSpec] = [.flag("--json")]
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
        json = arguments.flag("--json")
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.list(self, context, password: context.passwordSource())
    }
}
