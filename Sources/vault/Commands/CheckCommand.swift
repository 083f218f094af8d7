import VaultCore

/// `vault check`: verifies the vault; optionally reads every chunk.
struct CheckCommand: Command {
    static let name = "check"
    static let abstract = "verify the vault, optionally every byte of it"
    static let readDataFlag = FlagOption("--read-data"), repairFlag = FlagOption("--repair"), jsonFlag = FlagOption("--json")
    static let options = [readDataFlag.spec, repairFlag.spec, jsonFlag.spec]
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
        readData = arguments.isSet(Self.readDataFlag)
        repair = arguments.isSet(Self.repairFlag)
        json = arguments.isSet(Self.jsonFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: repair, tidy: false)
        let total = vault.manifest.totalSize
        let progress = readData ? ProgressLine.start(context.terminal, "checking", total: total) : nil
        let report = try vault.check(readData: readData, repair: repair, progress: progress?.update)
        progress?.finish()
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Check(report, readData: readData)))
        } else {
            for p in report.problems { context.terminal.report(CLIError(message: "item '\(p.item)': \(p.message)", code: .corrupted)) }
            for f in report.leftovers {
                context.terminal.warning("leftover of an interrupted operation: \(f)", hints: ["'vault check --repair' removes it"])
            }
            for f in report.rejectedDropIns { context.terminal.warning("drop-in that cannot be opened: inbox/\(f)") }
            for f in report.removed { context.terminal.note("removed \(f)") }
            let what = readData ? "\(report.itemsChecked) items, \(Format.size(report.bytesChecked)) read" : "\(report.itemsChecked) items"
            context.terminal.note(report.problems.isEmpty ? "no problems found (\(what))" : "\(report.problems.count) damaged item(s) (\(what))")
        }
        if !report.problems.isEmpty { throw ReportedError(.corrupted) }
        return .ok
        }

}
