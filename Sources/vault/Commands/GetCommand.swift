import System
import VaultCore

/// `vault get`: one item to a new file or to stdout.
struct GetCommand: Command {
    static let name = "get"
    static let abstract = "decrypt an item to a file or to standard output"
    static let outputOption = ValueOption<String>.text("--output", "-o", as: "FILE")
    static let options = [outputOption.spec] + VersionChoice.specs
    static let help = """
        Usage: vault get NAME [-o FILE] [--version N | --at DATE]
               vault get FOLDER/PATH [-o FILE] [--version N | --at DATE]

        Decrypts the item NAME to FILE, or to standard output: its current
        version, or an older one. Needs the password. FILE must not exist
        yet: vault never overwrites a file. An item that is not text is not
        written to a terminal unless asked (a name such as '.pdf' or '.jpg'
        is refused before the password is asked for). A folder item is written as
        one pax (tar) archive of its files.

        FOLDER/PATH is one file inside the folder item FOLDER (its version
        chosen as above): found through the folder's index (kept in the
        vault once made; making it is one pass through the archive), then
        only its own bytes are written. An exact item name always wins;
        item names never hold '/'.

        Options:
          -o, --output FILE   write to FILE; '-' is standard output (the default;
                              give '-o -' to send a binary item to a terminal)
          --version N         version N (see 'vault list --versions NAME')
          --at DATE           the version that was current at DATE, local time:
                              YYYY-MM-DD (the end of that day), 'YYYY-MM-DD HH:MM[:SS]',
                              a trailing Z for UTC, or @UNIXSECONDS

        Examples:
          vault get passport.pdf -o ~/Desktop/passport.pdf
          vault get notes.txt | less
          vault get notes.txt --version 2 -o notes-v2.txt
          vault get notes.txt --at 2026-11-01
          vault get Documents -o documents.tar
          vault get Documents/notes/big-log.txt -o big-log.txt
        """

    let itemName: String
    /// nil: standard output.
    let outputFile: String?
    /// `-o -`: standard output even when it is a terminal and the item is binary.
    let forceStandardOutput: Bool
    let choice: VersionChoice

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemName = try arguments.exactly("NAME")[0]
        choice = try VersionChoice(parsing: arguments)
        let output = try arguments.value(Self.outputOption)
        outputFile = output == "-" ? nil : output
        forceStandardOutput = output == "-"
        try arguments.requireExact(path: outputFile)
    }

    func run(_ context: Context) throws -> ExitCode {
        if let outputFile { try PlaintextFiles.checkTarget(outputFile) }
        if outputFile == nil, !forceStandardOutput, context.terminal.stdoutIsTerminal, TextOnlySink.isBinaryByName(itemName) {
            throw TextOnlySink.refusal(itemName)
        }
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: false)
        if let (item, path) = FolderFileArgument.split(itemName, in: vault) {
            return try getFile(FolderFileArgument.file(item, path, choice, in: vault, terminal: context.terminal), from: vault, context)
        }
        let entry = try choice.entry(itemName, in: vault)
        if let warning = Format.droppedWarning(entry) { context.terminal.warning(warning) }
        let progress = ProgressLine.start(context.terminal, "decrypting \(entry.name)", total: entry.size,
                                          sharing: outputFile == nil ? [1] : [])
        defer { progress?.finish() }
        if let file = outputFile {
            try PlaintextFiles.export(entry, from: vault, to: file, context: context, progress: progress)
        } else {
            let stdout = StandardOutputSink(context.terminal)
            // A binary item would garble the user's terminal (and can drive
            // it): refused there unless asked for with -o -, as age does.
            let out: ByteSink = context.terminal.stdoutIsTerminal && !forceStandardOutput
                ? TextOnlySink(stdout, name: entry.name) : stdout
            try vault.read(entry, to: progress.map { ProgressSink(out, report: $0.update) } ?? out)
            try (out as? TextOnlySink)?.flush()
        }
        return .ok
    }

    /// One file out of a folder item, to FILE or standard output as above.
    private func getFile(_ file: FolderFile, from vault: UnlockedVault, _ context: Context) throws -> ExitCode {
        let name = file.folder.name + "/" + file.path
        let progress = ProgressLine.start(context.terminal, "decrypting \(name)", total: file.size,
                                          sharing: outputFile == nil ? [1] : [])
        defer { progress?.finish() }
        if let target = outputFile {
            var token: Interrupts.Token?
            defer { token.map(Interrupts.unregister) }
            try vault.exportFile(file, to: target, partials: context.partialOutputs, progress: progress?.update, partial: { temp in
                token = Interrupts.register { UserFiles.erase(FilePath(temp)) }
            })
        } else {
            let stdout = StandardOutputSink(context.terminal)
            let out: ByteSink = context.terminal.stdoutIsTerminal && !forceStandardOutput
                ? TextOnlySink(stdout, name: name) : stdout
            try vault.read(file, to: progress.map { ProgressSink(out, report: $0.update) } ?? out)
            try (out as? TextOnlySink)?.flush()
        }
        return .ok
    }
}
