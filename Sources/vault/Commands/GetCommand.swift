import VaultCore

/// `vault get`: one item to a new file or to stdout.
struct GetCommand: Command {
    static let name = "get"
    static let abstract = "decrypt an item to a file or to standard output"
    static let outputOption = ValueOption<String>.text("--output", "-o", as: "FILE")
    static let options = [outputOption.spec]
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
        let output = try arguments.value(Self.outputOption)
        outputFile = output == "-" ? nil : output
        try arguments.requireExact(path: outputFile)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: false)
        let entry = try vault.entry(named: itemName)
        let progress = ProgressLine.start(context.terminal, "decrypting \(entry.name)", total: entry.size)
        defer { progress?.finish() }
        if let file = outputFile {
            try PlaintextFiles.export(entry, from: vault, to: file, context: context, progress: progress)
        } else {
            let out = StandardOutputSink(context.terminal)
            try vault.read(entry, to: progress.map { ProgressSink(out, report: $0.update) } ?? out)
        }
        return .ok
        }

}
