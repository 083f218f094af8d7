/// `vault restore`: items written out under a directory.
struct RestoreCommand: Command {
    static let name = "restore"
    static let abstract = "write items out under a directory"
    static let options: [OptionSpec] = [.value("--to", as: "DIR")]
    static let help = """
        Usage: vault restore NAME... [--to DIR]

        Writes each item NAME to a file of that name under DIR (the current
        directory by default). Needs the password. Existing files are never
        overwritten.

        Options:
          --to DIR   where to write the items (default: the current directory)

        Examples:
          vault restore passport.pdf tax-2024.pdf
          vault restore photos.tar --to /mnt/backup
        """

    let itemNames: [String]
    let directory: String

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemNames = try arguments.oneOrMore("NAME")
        directory = arguments.value("--to") ?? "."
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.restore(self, context, password: context.passwordSource())
    }
}
