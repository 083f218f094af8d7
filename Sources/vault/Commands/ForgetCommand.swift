import VaultCore

/// `vault forget`: drops old versions by a retention policy.
struct ForgetCommand: Command {
    static let name = "forget"
    static let abstract = "drop old versions of items"
    static let keepLastOption = ValueOption<UInt32>.number("--keep-last", as: "N")
    static let keepDailyOption = ValueOption<UInt32>.number("--keep-daily", as: "N")
    static let keepWeeklyOption = ValueOption<UInt32>.number("--keep-weekly", as: "N")
    static let dryRunFlag = FlagOption("--dry-run")
    static let options = [keepLastOption.spec, keepDailyOption.spec, keepWeeklyOption.spec, dryRunFlag.spec]
    static let help = """
        Usage: vault forget [NAME...] [--keep-last N] [--keep-daily N] [--keep-weekly N] [--dry-run]

        Drops old versions of the items NAME, or of every item when no NAME
        is given, keeping those the rules name; at least one rule is needed.
        Each rule adds to what is kept, and an item's current (newest)
        version is always kept: forget never removes an item. Needs the
        password. The encrypted manifest without the dropped versions is
        written first, then their encrypted data is deleted.

        Days and weeks (Monday to Sunday) are in UTC, by when each version
        was added to the vault.

        Options:
          --keep-last N     keep the N newest versions
          --keep-daily N    keep the newest version of each of the last N days
                            that have one
          --keep-weekly N   keep the newest version of each of the last N weeks
                            that have one
          --dry-run         only say what would be dropped

        Examples:
          vault forget notes.txt --keep-last 3
          vault forget --keep-last 5 --keep-daily 7 --keep-weekly 4
          vault forget --keep-last 1 --dry-run
        """

    let itemNames: [String]
    let policy: RetentionPolicy
    let dryRun: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        itemNames = arguments.positionals
        let last = try arguments.value(Self.keepLastOption)
        let daily = try arguments.value(Self.keepDailyOption)
        let weekly = try arguments.value(Self.keepWeeklyOption)
        guard last != nil || daily != nil || weekly != nil else {
            throw arguments.usageError("say what to keep: --keep-last, --keep-daily or --keep-weekly")
        }
        guard [last, daily, weekly].allSatisfy({ $0 != 0 }) else {
            throw arguments.usageError("keep counts start at 1 (to drop an item with every version, use 'vault remove')")
        }
        policy = RetentionPolicy(keepLast: Int(last ?? 0), keepDaily: Int(daily ?? 0), keepWeekly: Int(weekly ?? 0))
        dryRun = arguments.isSet(Self.dryRunFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: !dryRun)
        let doomed = try vault.forgettable(itemNames.isEmpty ? nil : itemNames, policy: policy)
            .sorted { a, b in a.name == b.name ? a.version < b.version : a.name.utf8.lexicographicallyPrecedes(b.name.utf8) }
        if !dryRun { try vault.forget(doomed) }
        for e in doomed {
            context.terminal.note("\(dryRun ? "would forget" : "forgot") '\(e.name)' version \(e.version)")
        }
        let items = Set(doomed.map(\.name)).count
        context.terminal.note("\(dryRun ? "would forget" : "forgot") \(doomed.count) version\(doomed.count == 1 ? "" : "s") of \(items) item\(items == 1 ? "" : "s")")
        return .ok
    }
}
