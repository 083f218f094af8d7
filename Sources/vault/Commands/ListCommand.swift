import VaultCore

/// `vault list`: the items, after absorbing waiting drop-ins.
struct ListCommand: Command {
    static let name = "list"
    static let abstract = "list the items"
    static let jsonFlag = FlagOption("--json")
    static let sortOption = ValueOption<ListOrder>(spec: OptionSpec(names: ["--sort"], valueName: "KEY")) { text, option, command throws(CLIError) in
        guard let order = ListOrder(rawValue: text) else {
            throw .usage("option '\(option)' takes name, size or added, not '\(text)'", command: command)
        }
        return order
    }
    static let options = [jsonFlag.spec, sortOption.spec]
    static let help = """
        Usage: vault list [PATTERN...] [--sort name|size|added] [--json]

        Lists the items: size, when added, kind, origin and name, then the
        totals. Origin is 'dropped-in' for items added with 'vault add' (no
        password) and 'unlocked' for items written with the vault unlocked
        ('vault open'). Needs the password. Items waiting from 'vault add'
        are taken into the vault first. With PATTERN (an exact name or a
        shell-style pattern such as '*.pdf'), only the matching items.

        Options:
          --sort KEY   name (the default), size (largest first) or added
                       (oldest first)
          --json       one JSON document on standard output, for scripts

        Examples:
          vault list
          vault list '*.pdf' --sort size
          vault list --json > items.json
        """

    enum ListOrder: String, Sendable { case name, size, added }

    let patterns: [String]
    let order: ListOrder
    let json: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        patterns = arguments.positionals
        order = try arguments.value(Self.sortOption) ?? .name
        json = arguments.isSet(Self.jsonFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.passwordSource()
        let vault = try context.unlock(password, forWriting: false)
        let selected = patterns.isEmpty ? vault.manifest.entries : try vault.entries(selectedBy: patterns)
        // Byte order, as names are compared (String's < would also be slower).
        let byName: (ManifestEntry, ManifestEntry) -> Bool = { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        let entries: [ManifestEntry]
        switch order {
        case .name: entries = selected.sorted(by: byName)
        case .size: entries = selected.sorted { $0.size != $1.size ? $0.size > $1.size : byName($0, $1) }
        case .added: entries = selected.sorted { $0.added != $1.added ? $0.added < $1.added : byName($0, $1) }
        }
        if json {
            try JSONOutput.writeList(entries, to: context.terminal)
            return .ok
        }
        if entries.isEmpty {
            context.terminal.note("the vault is empty", hint: "add a file with 'vault add FILE'")
            return .ok
        }
        var bytes: UInt64 = 0, files: UInt64 = 0
        try context.terminal.printBuffered { emit in
            try emit(Format.listHeader + "\n")
            for e in entries {
                try emit(Format.listLine(e) + "\n")
                (bytes, files) = (bytes &+ e.size, files &+ e.fileCount)
            }
            try emit("\(Format.count(entries.count, "item")), \(Format.count(files, "file")), \(Format.size(bytes))\n")
        }
        return .ok
    }
}
