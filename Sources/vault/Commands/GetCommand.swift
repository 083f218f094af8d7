/// `vault get`: one item to a new file or to stdout.
struct GetCommand: Command {
    static let name = "get"
    static let abstract = "decrypt an item to a file or to standard output"
    static let options: [OptionSpec] = [.value("--output", "-o", as: "FILE")]
    static let help = """
        Usage: vault get NAME [-o FILE]

        Decrypts the item NAME to FILE, or to standard output. Needs the
        password. FILE must not exist yet: vault never overwrites a file.

        Options:
          -o, --output FILE   write to FILE; '-' is standard output (the default)

        Examples:
          vault get passport.pdf -o ~/Desktop/passport.pdf
          vault get notes.txt | less
        """

    let itemName: String
    /// nil: standard output.
    let outputFile: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemName = try arguments.exactly("NAME")[0]
        let output = arguments.value("--output")
        outputFile = output == "-" ? nil : output
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.get(self, context, password: context.passwordSource())
    }
}
