import VaultCore

/// `vault add`: drops files into the vault without the password (HPKE to
/// the vault's public key), so it works from cron with no terminal at all.
struct AddCommand: Command {
    static let name = "add"
    static let abstract = "add files without the password"
    static let options: [OptionSpec] = [.value("--name", as: "NAME"), .optionalValue("--compress", as: "LEVEL"),
                                        .flag("--no-compress")]
    static let help = """
        Usage: vault add PATH... [--name NAME] [--compress[=LEVEL] | --no-compress]

        Encrypts each PATH into the vault. Needs no password and no terminal:
        items are sealed to the vault's public key and join the list at the next
        command that unlocks the vault. Each item is named after its file unless
        --name is given. '-' reads standard input and needs --name.

        If some inputs cannot be read, the others are still added and vault
        exits with status 3.

        A PATH that is a folder is stored whole as one item (files, folders,
        symbolic links as links, modes and times); devices, FIFOs and sockets
        inside it are left out with a warning (exit 3).

        Options:
          --name NAME        the item's name (only with a single PATH)
          --compress         compress with xz if a sample of the content shows it
                             pays (incompressible data such as JPEGs is stored raw)
          --compress=LEVEL   always compress, at xz preset LEVEL (0-9; 0-1 are fast)
          --no-compress      store raw, whatever the vault's default ('init --compress')

        Examples:
          vault add passport.pdf tax-2024.pdf
          pg_dump mydb | vault add - --name mydb.sql
          vault --vault /srv/vault add --name report.txt /tmp/r.txt
        """

    let paths: [String]
    /// nil: each item is named after its file.
    let itemName: String?
    /// nil: the vault's default.
    let compression: Compression?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        paths = try arguments.oneOrMore("PATH")
        itemName = arguments.value("--name")
        if arguments.flag("--no-compress") {
            if arguments.flag("--compress") || arguments.value("--compress") != nil {
                throw arguments.usageError("--compress and --no-compress contradict each other")
            }
            compression = Compression.none
        } else if let level = arguments.value("--compress") {
            guard let n = Int(level), (0...9).contains(n) else {
                throw arguments.usageError("--compress=LEVEL needs a level from 0 to 9, not '\(level)'")
            }
            compression = .level(n)
        } else {
            compression = arguments.flag("--compress") ? .auto : nil
        }
        if itemName != nil && paths.count != 1 { throw arguments.usageError("--name needs exactly one PATH") }
        if itemName == nil && paths.contains("-") {
            throw arguments.usageError("reading standard input ('-') needs --name")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.add(self, context)
    }
}
