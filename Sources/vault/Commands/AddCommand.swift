/// `vault add`: drops files into the vault without the password (HPKE to
/// the vault's public key), so it works from cron with no terminal at all.
struct AddCommand: Command {
    static let name = "add"
    static let abstract = "add files without the password"
    static let options: [OptionSpec] = [.value("--name", as: "NAME")]
    static let help = """
        Usage: vault add PATH... [--name NAME]

        Encrypts each PATH into the vault. Needs no password and no terminal:
        items are sealed to the vault's public key and join the list at the next
        command that unlocks the vault. Each item is named after its file unless
        --name is given. '-' reads standard input and needs --name.

        If some inputs cannot be read, the others are still added and vault
        exits with status 3.

        Options:
          --name NAME   the item's name (only with a single PATH)

        Examples:
          vault add passport.pdf tax-2024.pdf
          pg_dump mydb | vault add - --name mydb.sql
          vault --vault /srv/vault add --name report.txt /tmp/r.txt
        """

    let paths: [String]
    /// nil: each item is named after its file.
    let itemName: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        paths = try arguments.oneOrMore("PATH")
        itemName = arguments.value("--name")
        if itemName != nil && paths.count != 1 { throw arguments.usageError("--name needs exactly one PATH") }
        if itemName == nil && paths.contains("-") {
            throw arguments.usageError("reading standard input ('-') needs --name")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.add(self, context)
    }
}
