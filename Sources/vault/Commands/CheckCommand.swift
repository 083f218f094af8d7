import VaultBackup
import VaultCore
import VaultRemote

/// `vault check`: verifies the vault; optionally reads every chunk.
struct CheckCommand: Command {
    static let name = "check"
    static let abstract = "verify the vault, optionally every byte of it"
    static let readDataFlag = FlagOption("--read-data"), repairFlag = FlagOption("--repair"), jsonFlag = FlagOption("--json")
    static let purgeFlag = FlagOption("--purge")
    static let remoteOption = ValueOption<String>.text("--remote", as: "NAME")
    static let subsetOption = ValueOption<String>.text("--read-data-subset", as: "N%|n/m")
    static let options = [readDataFlag.spec, repairFlag.spec, purgeFlag.spec, jsonFlag.spec, remoteOption.spec, subsetOption.spec]
    static let help = """
        Usage: vault check [--read-data | --read-data-subset N%|n/m] [--repair [--purge]] [--json]
               vault check --remote NAME [--read-data]

        Verifies the header, the manifest, and that every item's blob is there.
        Needs the password. Leftovers of an interrupted operation (temporary
        files) are warnings, as are orphans: blobs no item names, and files
        vault never writes. No command deletes an orphan by itself (after an
        older manifest was put back, newer items would look orphaned); --repair
        moves orphans, and drop-ins that cannot be opened, into the vault's
        quarantine/ folder, and --purge deletes what is there. A blob found
        damaged or missing is put back by --repair from the first remote
        that holds a copy passing every check (a thin vault's own remote
        first); nothing unchecked is written.

        In a thin vault the blobs on its remote are checked against the
        remote's listing, and read from it with --read-data.

        Options:
          --read-data   also decrypt and authenticate every chunk of every item,
                        with the checks get and restore make, every piece
                        of every backup snapshot against its id (without it,
                        each snapshot's directories are checked), and every
                        folder's kept index against its archive
          --read-data-subset N%|n/m
                        read only a part of the blobs whole: blobs drawn at
                        random until about N percent of the bytes, or part
                        n of m by item id (the m runs with n = 1..m read
                        each blob once); the rest are checked as without
                        --read-data
          --repair      remove leftovers, and kept folder indexes that do not
                        match their archive; move orphans into quarantine/;
                        put back damaged or missing blobs from a remote
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
          vault check --read-data-subset 10%
          vault check --read-data-subset 3/7
          vault check --repair
          vault check --remote offsite --read-data
        """

    let readData: Bool
    let repair: Bool
    let purge: Bool
    let json: Bool
    let remote: String?
    let subset: CheckSubset?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        subset = try arguments.value(Self.subsetOption).map { text throws(CLIError) in
            guard let s = Self.parseSubset(text) else {
                throw arguments.usageError("--read-data-subset takes N% (0 < N <= 100) or n/m (1 <= n <= m), not '\(text)'")
            }
            return s
        }
        if subset != nil && arguments.isSet(Self.readDataFlag) { throw arguments.usageError("--read-data-subset reads a part; --read-data reads all: give one") }
        readData = arguments.isSet(Self.readDataFlag) || subset != nil
        repair = arguments.isSet(Self.repairFlag)
        purge = arguments.isSet(Self.purgeFlag)
        if purge && !repair { throw arguments.usageError("--purge goes with --repair") }
        json = arguments.isSet(Self.jsonFlag)
        remote = try arguments.value(Self.remoteOption)
        if remote != nil && (repair || json || subset != nil) { throw arguments.usageError("--remote goes with --read-data only") }
    }

    static func parseSubset(_ text: String) -> CheckSubset? {
        if text.hasSuffix("%") {
            guard let p = Double(text.dropLast()), p.isFinite, p > 0, p <= 100 else { return nil }
            return .percent(p)
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = UInt32(parts[0]), let m = UInt32(parts[1]), n >= 1, n <= m else { return nil }
        return .part(n, of: m)
    }

    func run(_ context: Context) throws -> ExitCode {
        if let remote { return try checkRemote(remote, context) }
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: repair, tidy: false)
        // A thin vault: what is not here is checked against its remote's
        // listing (one request), read from it where data is read.
        let thin = try context.thinVault()
        let listing = try thin.map { RemoteLayout(try context.rclone().list(try context.remote($0.remote).target)).items }
        if readData { context.readsWholeBlobs(vault) }
        let total = subset == nil ? vault.manifest.totalSize : nil
        let progress = readData ? ProgressLine.start(context.terminal, "checking", total: total) : nil
        var report = try vault.check(readData: readData, repair: repair, purge: purge, subset: subset, remoteListing: listing,
                                     progress: progress?.update)
        progress?.finish()
        if repair { try heal(&report, vault, context, thin: thin) }
        // Backup snapshots: every tree, and with --read-data every piece,
        // checked against its reference (SnapshotCheck).
        let problems = report.problems.map { JSONOutput.Check.Problem(item: $0.item, message: ErrorReport.words(for: $0.kind), version: $0.version) }
            + SnapshotCheck.run(vault, readData: readData && subset == nil).map {
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
            for name in report.disagreeingIndexes where !repair {
                context.terminal.warning("folder '\(Terminal.printable(name))': its kept index does not match its archive (a mount would show other bytes than a restore)",
                                         hints: ["'vault check --read-data --repair' removes the index; the next mount reads the archive"])
            }
            for f in report.movedToQuarantine { context.terminal.note("moved \(f) into quarantine/") }
            for f in report.removed { context.terminal.note("removed \(f)") }
            for (item, remote) in report.healed { context.terminal.note("put back '\(item)' from remote '\(remote)'") }
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

    /// --repair: damaged or missing blobs put back from the remotes (the
    /// thin vault's own first), each copy checked as a reader checks it;
    /// what was put back is no problem any more.
    private func heal(_ report: inout CheckReport, _ vault: UnlockedVault, _ context: Context, thin: ThinVault?) throws {
        let damaged = report.problems.filter { if case .unsafeEntry = $0.kind { return false }; return true }
        guard !damaged.isEmpty else { return }
        var remotes = try RemoteConfig.read(vault: context.vaultDirectory).remotes
        if let thin, let own = remotes.firstIndex(where: { $0.name == thin.remote }) { remotes.insert(remotes.remove(at: own), at: 0) }
        guard !remotes.isEmpty else { return }
        let entries = vault.manifest.entries.filter { e in damaged.contains { $0.item == e.name && ($0.version == nil || $0.version == e.version) } }
        let healed = try BlobHealing.heal(entries, in: vault, remotes: remotes, rclone: context.rclone())
        let names = Dictionary(entries.map { ($0.blobName, $0) }) { a, _ in a }
        for (blob, remote) in healed {
            guard let e = names[blob] else { continue }
            report.problems.removeAll { $0.item == e.name && ($0.version == nil || $0.version == e.version) }
            report.healed.append((item: e.name, remote: remote))
        }
    }

}
