import VaultCore

/// `vault list`: the items, after absorbing waiting drop-ins.
struct ListCommand: Command {
    static let name = "list"
    static let abstract = "list the items"
    static let jsonFlag = FlagOption("--json")
    static let versionsOption = ValueOption<String>.text("--versions", as: "NAME")
    static let sortOption = ValueOption<ListOrder>(spec: OptionSpec(names: ["--sort"], valueName: "KEY")) { text, option, command throws(CLIError) in
        guard let order = ListOrder(rawValue: text) else {
            throw .usage("option '\(option)' takes name, size or added, not '\(text)'", command: command)
        }
        return order
    }
    static let options = [jsonFlag.spec, sortOption.spec, versionsOption.spec]
    static let help = """
        Usage: vault list [PATTERN...] [--sort name|size|added] [--json]
               vault list --versions NAME [--json]

        Lists the items, each once, under a header line: size, stored size
        (what its sealed blob takes on disk: compressed, padded and
        authenticated), when its current version was added, kind, origin,
        how many versions it has, and its name; then the totals. Origin is 'dropped-in' for items
        added with 'vault add' (no password) and 'unlocked' for items written
        with the vault unlocked ('vault open'); 'dropped in by USER' when
        another user of this machine added it to a shared vault. Needs the password. Items
        waiting from 'vault add' are taken into the vault first. With
        PATTERN (an exact name or a shell-style pattern such as '*.pdf'),
        only the matching items.

        With --versions NAME, lists every version of the item NAME instead,
        oldest first, each with its number (for 'get --version N').

        Options:
          --sort KEY        name (the default), size (largest first) or added
                            (oldest first)
          --versions NAME   the versions of one item
          --json            one JSON document on standard output, for scripts

        Examples:
          vault list
          vault list '*.pdf' --sort size
          vault list --versions notes.txt
          vault list --json > items.json
        """

    enum ListOrder: String, Sendable { case name, size, added }

    let patterns: [String]
    let order: ListOrder
    let json: Bool
    let versionsOf: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        patterns = arguments.positionals
        order = try arguments.value(Self.sortOption) ?? .name
        json = arguments.isSet(Self.jsonFlag)
        versionsOf = try arguments.value(Self.versionsOption)
        if versionsOf != nil && !patterns.isEmpty { throw arguments.usageError("--versions takes one NAME, and no PATTERN") }
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: false, reads: .none)
        let rows: [(entry: ManifestEntry, versions: Int)]
        if let name = versionsOf {
            let versions = vault.manifest.versions(named: name)
            guard !versions.isEmpty else { throw VaultError.noSuchItem(name: name) }
            rows = versions.map { ($0, versions.count) }
        } else {
            let counts = Dictionary(vault.manifest.items.map { ($0.current.name, $0.versions) }, uniquingKeysWith: max)
            let selected = patterns.isEmpty ? vault.manifest.items.map(\.current) : try vault.entries(selectedBy: patterns)
            // Byte order, as names are compared (String's < would also be slower).
            let byName: (ManifestEntry, ManifestEntry) -> Bool = { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            let sorted: [ManifestEntry]
            switch order {
            case .name: sorted = selected.sorted(by: byName)
            case .size: sorted = selected.sorted { $0.size != $1.size ? $0.size > $1.size : byName($0, $1) }
            case .added: sorted = selected.sorted { $0.added != $1.added ? $0.added < $1.added : byName($0, $1) }
            }
            rows = sorted.map { ($0, counts[$0.name] ?? 1) }
        }
        if json {
            try JSONOutput.writeList(rows, stored: vault.vault.storedLength(of:), to: context.terminal)
            return .ok
        }
        if rows.isEmpty {
            // Drop-ins that could not be taken in (a full disk) are not
            // "empty": say they wait (issue 43, item 13).
            let waiting = max((try? vault.vault.waitingDropIns()) ?? 0, (try? vault.vault.waitingEnvelopes()) ?? 0)   // counts to show; unreadable reads as none
            if waiting > 0, patterns.isEmpty, versionsOf == nil {
                context.terminal.note("no items yet: \(Format.count(waiting, "drop-in")) \(waiting == 1 ? "waits" : "wait") in the inbox",
                                      hint: "they are taken in by the next command that can write to the vault")
            } else {
                context.terminal.note("the vault is empty", hint: "add a file with 'vault add FILE'")
            }
            return .ok
        }
        // Conflicts a merge kept, until the user settles each (a new
        // version, a rename or a removal): said under the table.
        let conflicted = MergeConflictMarks.open(vault: context.vaultDirectory, in: vault.manifest)
        defer {
            if !conflicted.isEmpty {
                context.terminal.warning("merge conflicts not yet settled: " + conflicted.map { "'\(Terminal.printable($0))'" }.joined(separator: ", "),
                                         hints: ["'vault list --versions NAME' shows what each side made; a new version, a rename or a removal settles one"])
            }
        }
        var bytes: UInt64 = 0, files: UInt64 = 0, stored: UInt64 = 0
        try context.terminal.printBuffered { emit in
            let width = Format.originWidth(rows.map(\.entry))
            try emit((versionsOf == nil ? Format.listHeader(originWidth: width) : Format.versionHeader(originWidth: width)) + "\n")
            for row in rows {
                let blob = vault.vault.storedLength(of: row.entry)
                try emit((versionsOf == nil ? Format.listLine(row.entry, stored: blob, versions: row.versions, originWidth: width)
                                            : Format.versionLine(row.entry, stored: blob, originWidth: width)) + "\n")
                (bytes, files, stored) = (bytes &+ row.entry.size, files &+ row.entry.fileCount, stored &+ (blob ?? 0))
            }
            let what = versionsOf == nil ? Format.count(rows.count, "item") : Format.count(rows.count, "version")
            try emit("\(what), \(Format.count(files, "file")), \(Format.size(bytes)), \(Format.size(stored)) on disk\n")
        }
        return .ok
    }
}
