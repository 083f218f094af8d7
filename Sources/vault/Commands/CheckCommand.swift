import VaultBackup
import VaultCore

/// `vault check`: verifies the vault; optionally reads every chunk.
struct CheckCommand: Command {
    static let name = "check"
    static let abstract = "verify the vault, optionally every byte of it"
    static let readDataFlag = FlagOption("--read-data"), repairFlag = FlagOption("--repair"), jsonFlag = FlagOption("--json")
    static let purgeFlag = FlagOption("--purge")
    static let remoteOption = ValueOption<String>.text("--remote", as: "NAME")
    static let options = [readDataFlag.spec, repairFlag.spec, purgeFlag.spec, jsonFlag.spec, remoteOption.spec]
    static let help = """
        Usage: vault check [--read-data] [--repair [--purge]] [--json]
               vault check --remote NAME [--read-data]

        Verifies the header, the manifest, and that every item's blob is there.
        Needs the password. Leftovers of an interrupted operation (temporary
        files) are warnings, as are orphans: blobs no item names, and files
        vault never writes. No command deletes an orphan by itself (after an
        older manifest was put back, newer items would look orphaned); --repair
        moves orphans, and drop-ins that cannot be opened, into the vault's
        quarantine/ folder, and --purge deletes what is there.

        Options:
          --read-data   also decrypt and authenticate every chunk of every item,
                        with the checks get and restore make, and every piece
                        of every backup snapshot against its id (without it,
                        each snapshot's directories are checked)
          --repair      remove leftovers; move orphans into quarantine/
          --purge       with --repair: delete what is in quarantine/
          --json        one JSON report on standard output, for scripts
          --remote NAME check the off-site copy at remote NAME instead: its
                        list of items opens with the password and every item
                        it names is there at the right size; with --read-data
                        the copy is downloaded to a scratch directory and
                        every chunk of every item is authenticated

        Examples:
          vault check
          vault check --read-data
          vault check --repair
          vault check --remote offsite --read-data
        """

    let readData: Bool
    let repair: Bool
    let purge: Bool
    let json: Bool
    let remote: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        readData = arguments.isSet(Self.readDataFlag)
        repair = arguments.isSet(Self.repairFlag)
        purge = arguments.isSet(Self.purgeFlag)
        if purge && !repair { throw arguments.usageError("--purge goes with --repair") }
        json = arguments.isSet(Self.jsonFlag)
        remote = try arguments.value(Self.remoteOption)
        if remote != nil && (repair || json) { throw arguments.usageError("--remote goes with --read-data only") }
    }

    func run(_ context: Context) throws -> ExitCode {
        if let remote { return try checkRemote(remote, context) }
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: repair, tidy: false)
        let total = vault.manifest.totalSize
        let progress = readData ? ProgressLine.start(context.terminal, "checking", total: total) : nil
        let report = try vault.check(readData: readData, repair: repair, purge: purge, progress: progress?.update)
        progress?.finish()
        // Backup snapshots: every tree, and with --read-data every piece,
        // checked against its reference (SnapshotCheck).
        let problems = report.problems.map { JSONOutput.Check.Problem(item: $0.item, message: ErrorReport.words(for: $0.kind), version: $0.version) }
            + SnapshotCheck.run(vault, readData: readData).map {
                JSONOutput.Check.Problem(item: $0.snapshot, message: ErrorReport.words(for: $0.problem), version: nil)
            }
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Check(report, problems: problems, readData: readData)))
        } else {
            for p in problems { context.terminal.report(CLIError(message: "item '\(p.item)'\(p.version.map { " version \($0)" } ?? ""): \(p.message)", code: .corrupted)) }
            for f in report.leftovers {
                context.terminal.warning("leftover of an interrupted operation: \(f)", hints: ["'vault check --repair' removes it"])
            }
            for f in report.orphans {
                context.terminal.warning("orphan (no item names it): \(f)", hints: ["'vault check --repair' moves it into quarantine/"])
            }
            for f in report.rejectedDropIns { context.terminal.warning("drop-in that cannot be opened: inbox/\(f)") }
            for f in report.movedToQuarantine { context.terminal.note("moved \(f) into quarantine/") }
            for f in report.removed { context.terminal.note("removed \(f)") }
            if !report.quarantined.isEmpty {
                context.terminal.note("\(Format.count(report.quarantined.count, "file")) in quarantine/",
                                      hint: purge ? nil : "'vault check --repair --purge' deletes them")
            }
            let items = Format.items(report.itemsChecked, versions: report.versionsChecked)
            let stored = vault.manifest.entries.reduce(UInt64(0)) { $0 &+ (vault.vault.storedLength(of: $1) ?? 0) }
            // A backup's packs and snapshots apart from the items they are not.
            let backups = report.snapshotsChecked + report.packsChecked == 0 ? ""
                : ", \(Format.count(report.snapshotsChecked, "snapshot")), \(Format.count(report.packsChecked, "pack")) of \(Format.size(report.packBytes))"
            let what = "\(items) of \(Format.size(report.itemBytes))\(backups), \(Format.size(stored)) on disk"
                + (readData ? ", \(Format.size(report.bytesChecked)) read" : "")
            context.terminal.note(problems.isEmpty ? "no problems found (\(what))"
                                  : "\(Format.count(problems.count, "damaged item")) (\(what))")
        }
        if !problems.isEmpty { throw ReportedError(.corrupted) }
        return .ok
    }

}
