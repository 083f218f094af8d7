/// `vault check`: verifies the vault; optionally reads every chunk.
struct CheckCommand: Command {
    static let name = "check"
    static let abstract = "verify the vault, optionally every byte of it"
    static let options: [OptionSpec] = [.flag("--read-data"), .flag("--repair"), .flag("--json")]
    static let help = """
        Usage: vault check [--read-data] [--repair] [--json]

        Verifies the header, the manifest, and that every item's blob is there.
        Needs the password. Leftovers of an interrupted operation (temporary
        files, blobs no item names) are reported as warnings, not errors.

        Options:
          --read-data   also decrypt and authenticate every chunk of every item
          --repair      remove leftovers of interrupted operations
          --json        one JSON report on standard output, for scripts

        Examples:
          vault check
          vault check --read-data
          vault check --repair
        """

    let readData: Bool
    let repair: Bool
    let json: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        readData = arguments.flag("--read-data")
        repair = arguments.flag("--repair")
        json = arguments.flag("--json")
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.check(self, context, password: context.passwordSource())
    }
}
