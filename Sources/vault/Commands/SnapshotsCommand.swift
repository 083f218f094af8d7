import System
import VaultBackup
import VaultCodecs
import VaultConfig
import VaultRemote
import VaultCore
import VaultCrypto

/// `vault snapshots [list]|ls|restore|dump`: what `vault backup` stored,
/// with the password. A subcommand family of its own, so `restore` and
/// `ls` keep meaning items at the top level.
struct SnapshotsCommand: Command {
    static let name = "snapshots"
    static let abstract = "list, browse and restore backup snapshots"
    static let hostOption = ValueOption<String>.text("--host", as: "HOST")
    static let tagOption = ValueOption<String>.repeated("--tag", as: "TAG")
    static let jsonFlag = FlagOption("--json")
    static let toOption = ValueOption<String>.text("--to", as: "DIR")
    static let includeOption = ValueOption<String>.repeated("--include", as: "PATTERN")
    static let excludeOption = ValueOption<String>.repeated("--exclude", as: "PATTERN")
    static let overwriteOption = ValueOption<String>.text("--overwrite", as: "WHEN")
    static let keepOptions = ["last", "hourly", "daily", "weekly", "monthly", "yearly"].map {
        ValueOption<UInt32>.number("--keep-\($0)", as: "N")
    }
    static let keepWithinOption = ValueOption<String>.text("--keep-within", as: "DURATION")
    static let pruneFlag = FlagOption("--prune")
    static let dryRunFlag = FlagOption("--dry-run")
    static let graceOption = ValueOption<String>.text("--grace", as: "DURATION")
    static let outputOption = ValueOption<String>.text("--output", "-o", as: "FILE")
    static let addOption = ValueOption<String>.repeated("--add", as: "TAG")
    static let removeOption = ValueOption<String>.repeated("--remove", as: "TAG")
    static let setOption = ValueOption<String>.repeated("--set", as: "TAG")
    static let archiveOption = ValueOption<String>.text("--archive", as: "FORMAT")
    static let excludeFileOption = ValueOption<String>.repeated("--exclude-file", as: "FILE")
    static let keepFlag = FlagOption("--keep")
    static let repackUnusedFlag = FlagOption("--repack-unused")
    static let options = [outputOption.spec, hostOption.spec, tagOption.spec, jsonFlag.spec, toOption.spec, includeOption.spec, excludeOption.spec,
                          overwriteOption.spec]
        + keepOptions.map(\.spec) + [keepWithinOption.spec, pruneFlag.spec, dryRunFlag.spec, graceOption.spec,
                                     addOption.spec, removeOption.spec, setOption.spec, archiveOption.spec,
                                     excludeFileOption.spec, keepFlag.spec, repackUnusedFlag.spec]
    static let help = """
        Usage: vault snapshots [list] [--host HOST] [--tag TAG]... [--json]
               vault snapshots ls SNAPSHOT [PATH]
               vault snapshots restore SNAPSHOT [--to DIR] [--include PATTERN]... [--exclude PATTERN]...
                                       [--overwrite never|if-changed|always]
               vault snapshots dump SNAPSHOT PATH [-o FILE] [--archive tar|zip]
               vault snapshots find PATTERN [--host HOST] [--tag TAG]...
               vault snapshots diff SNAPSHOT SNAPSHOT
               vault snapshots stats [--json]
               vault snapshots tag SNAPSHOT... [--add TAG]... [--remove TAG]... [--set TAG]...
               vault snapshots forget SNAPSHOT... [--prune] [--dry-run]
               vault snapshots forget [--keep-last N] [--keep-hourly N] [--keep-daily N]
                                      [--keep-weekly N] [--keep-monthly N] [--keep-yearly N]
                                      [--keep-within DURATION] [--host HOST] [--tag TAG]...
                                      [--prune [--grace DURATION]] [--dry-run]
               vault snapshots prune [--grace DURATION] [--repack-unused] [--dry-run]
               vault snapshots rewrite [SNAPSHOT...] --exclude PATTERN...
                                       [--exclude-file FILE]... [--keep]
                                       [--prune [--grace DURATION]] [--dry-run]

        The snapshots 'vault backup' made (it needs no password; these do).
        Waiting snapshots are taken in first; one whose packs are missing or
        damaged is refused by name and waits. SNAPSHOT is an id as 'list'
        shows it, or any prefix of it no other snapshot has, or 'latest'.

        Paths in a snapshot are shown as they were backed up
        ('/home/me/Documents/taxes/2025.pdf'), and accepted that way or
        from the last name of a backed-up path ('Documents/taxes/2025.pdf').

        list shows one snapshot a line, oldest first: id, end time (local),
        host, files, size, tags and paths. --host and --tag keep those with
        that host, or with every given tag.

        ls lists every entry of a snapshot, or those under PATH, one a line:
        type and mode, owner, size, modification time and path.

        restore writes the snapshot under DIR (default: the current
        directory; created if missing), each backed-up path as its last name:
        modes, times to the nanosecond, symbolic links, hard links, extended
        attributes and ACLs, and owners when run as root (file capabilities
        and SELinux labels too; attributes the target refuses are named once
        by namespace); a block of zeros is left a hole, so a sparse disk
        image comes back sparse. Each file is written with no name and named only
        once it is whole, so an interrupted restore leaves no torn file: run
        it again and it completes what is missing. A file or link already
        there is compared: with the snapshot's content it is left as it is
        and counts as restored; with other content it is skipped and named
        (exit 3), unless --overwrite says otherwise. A directory already
        there is used as it is: its mode, owner and time are never changed
        (only those of directories the restore makes). Nothing is written
        outside DIR. With --include, only what matches (and everything under
        it); --exclude leaves out what matches. A pattern without '/' matches
        each name, one with '/' the path from the snapshot's root
        ('/home/me/Documents/*.pdf', or '/Documents/*.pdf').

        dump writes one file of the snapshot to standard output (to a
        terminal only if it is text, unless '-o -'), or to a new FILE with -o.
        With --archive tar or zip, PATH may be a folder ('/': the whole
        snapshot): it is written as one archive, streamed, its names starting
        at the folder's own name; a tar keeps owners, modes, times, symbolic
        and hard links and extended attributes, a zip modes, times and
        symbolic links. An archive
        goes to a pipe or a FILE, not to a terminal (unless '-o -').

        find lists, in every snapshot (or those of --host, --tag), the
        entries that match PATTERN, one a line: snapshot id, time and path.

        diff lists what changed from the first snapshot to the second, one
        path a line: '+' added, '-' removed, 'M' changed (content, type,
        mode, owner, time or extended attributes), then the counts and the
        file bytes added and removed (a changed file: its old size removed,
        its new size added).
        Directories that did not change are not read.

        tag changes the tags of the snapshots named: --set replaces them,
        --remove takes some away, --add adds; host,
        paths, times and content stay. Each changed snapshot is written
        again under a new id (a snapshot is never changed in place) and the
        old one forgotten, as restic's 'tag' does; its packs stay.

        stats shows how many snapshots and packs there are, the bytes the
        snapshots hold, and the bytes the packs store (what deduplication
        saved).

        Every piece is checked against its id as it is read: a damaged or
        tampered one stops the read (exit 14), never writes wrong bytes.

        forget drops the snapshots named, or those the rules given do not
        keep, within each group of snapshots of one host and one set of
        paths, keeping what any rule names and always a group's newest;
        --host and --tag choose which snapshots it looks at. Hours, days,
        weeks (Monday to Sunday), months and years are UTC, by each
        snapshot's end time. prune (or forget --prune) then deletes every
        pack no snapshot needs, in the vault or waiting in its inbox, and
        rewrites each pack at least a quarter unused with only what is
        needed (its hosts' backups keep naming what was kept, as prune's
        notes tell them); it waits for running backups to finish, and
        first brings in the backups waiting in each remote's inbox. A
        remote out of reach is named, and only packs whose grace had ended
        when its inbox was last seen go (exit 3); --dry-run fetches nothing
        and names the inboxes it did not look at.
        A pack goes only once prune has found it unused (or its unused
        part as it is) for the grace, 24 hours unless --grace says
        otherwise, counted from the first prune that found it so: a backup
        another machine is sending has that long to land its snapshot.
        Earlier runs say what waits and until when; --grace 0 deletes at
        once, for when no backup is running anywhere. --repack-unused
        rewrites every pack holding any unused byte, whatever the
        quarter-unused rule says.

        rewrite takes what matches --exclude (the restore patterns) out of
        the snapshots named, or of every snapshot: each becomes a new one
        with the same host, paths, tags and times, and the original is
        forgotten unless --keep. With --prune, a prune follows that purges
        the packs the removed files were in, whatever the quarter-unused
        rule says: a leaked secret is gone from the vault once the grace has
        passed (--grace 0: at once, for a leak, when no backup is running).

        Options:
          --host HOST         list: only snapshots of HOST
          --tag TAG           list: only snapshots with TAG (repeatable)
          --json              list: one JSON document on standard output
          -o, --output FILE   dump: write to FILE, never over an existing one
                              ('-': standard output, even a terminal)
          --archive FORMAT    dump: PATH, a folder or '/', as one tar or zip
          --to DIR            restore: where to write (default: the current directory)
          --include PATTERN   restore: only what matches (repeatable)
          --exclude PATTERN   restore, rewrite: leave out what matches (repeatable)
          --exclude-file FILE rewrite: patterns from FILE, one a line
          --overwrite WHEN    restore: what to do with a file that is there with other
                              content: never (skip it and name it, the default),
                              if-changed (replace it; the same content is left as it
                              is), always (replace every file there, unread)
          --keep-last N       forget: keep the N newest of each group
          --keep-hourly N     forget: the newest of each of the last N hours
                              that have one
          --keep-daily N      forget: the same for days
          --keep-weekly N     forget: the same for weeks
          --keep-monthly N    forget: the same for months
          --keep-yearly N     forget: the same for years
          --keep-within DURATION
                              forget: every snapshot within DURATION of the group's
                              newest (such as 36h, 30d, 2w, 1y: s, m, h, d, w, y)
          --prune             forget, rewrite: then prune (delete or rewrite
                              unused packs)
          --keep              rewrite: keep the original snapshots
          --repack-unused     prune: rewrite every pack with unused bytes
          --grace DURATION    prune, forget|rewrite --prune: how long a pack must
                              have been found unused before it goes (default
                              24h; 0: at once)
          --dry-run           forget, prune, rewrite: only say what would go
          --add TAG           tag: add TAG (repeatable)
          --remove TAG        tag: take TAG away (repeatable)
          --set TAG           tag: replace the tags with these (repeatable)

        Examples:
          vault snapshots
          vault snapshots ls 3fa2c1d0 Documents/taxes
          vault snapshots restore latest --to ~/restored --include '*.pdf'
          vault snapshots dump 3fa2 Documents/notes.txt > notes.txt
          vault snapshots find '*.pdf' --host laptop
          vault snapshots diff 3fa2 latest
          vault snapshots tag latest --add keep-forever
          vault snapshots forget --keep-daily 7 --keep-weekly 4 --keep-monthly 12 --prune
        """

    enum Action {
        case list(host: String?, tags: [String], json: Bool)
        case ls(snapshot: String, path: String?)
        case restore(snapshot: String, to: String, includes: [String], excludes: [String], overwrite: RestoreOverwrite)
        case dump(snapshot: String, path: String, output: String?, archive: ExportArchive.Format?)
        case forget(ids: [String], policy: SnapshotPolicy, host: String?, tags: [String], prune: Bool, dryRun: Bool)
        case prune(dryRun: Bool, repackUnused: Bool)
        case diff(String, String)
        case find(pattern: String, host: String?, tags: [String])
        case stats(json: Bool)
        case tag(ids: [String], add: [String], remove: [String], set: [String]?)
        case rewrite(ids: [String], excludes: [String], keep: Bool, prune: Bool, dryRun: Bool)
    }

    let action: Action
    /// prune's grace, in seconds (PruneSafety.deleteGrace unless --grace).
    let grace: Int64

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let words = arguments.positionals.isEmpty ? ["list"] : arguments.positionals
        let host = try arguments.value(Self.hostOption), tags = arguments.values(Self.tagOption)
        let json = arguments.isSet(Self.jsonFlag), to = try arguments.value(Self.toOption)
        let includes = arguments.values(Self.includeOption), excludes = arguments.values(Self.excludeOption)
        let overwriteText = try arguments.value(Self.overwriteOption)
        let overwrite = try overwriteText.map { text throws(CLIError) in
            guard let o = RestoreOverwrite(rawValue: text) else {
                throw arguments.usageError("--overwrite takes never, if-changed or always, not '\(text)'")
            }
            return o
        } ?? .never
        var policy = SnapshotPolicy()
        let keeps = try Self.keepOptions.map { option throws(CLIError) in try arguments.value(option).map(Int.init) }
        (policy.last, policy.hourly, policy.daily) = (keeps[0] ?? 0, keeps[1] ?? 0, keeps[2] ?? 0)
        (policy.weekly, policy.monthly, policy.yearly) = (keeps[3] ?? 0, keeps[4] ?? 0, keeps[5] ?? 0)
        policy.within = try arguments.value(Self.keepWithinOption).map { text throws(CLIError) in
            guard let s = Self.duration(text) else { throw arguments.usageError("'\(text)' is not a duration (such as 36h, 30d or 1y)") }
            return s
        }
        let prune = arguments.isSet(Self.pruneFlag), dryRun = arguments.isSet(Self.dryRunFlag)
        let graceText = try arguments.value(Self.graceOption)
        grace = try graceText.map { text throws(CLIError) in
            guard let s = text == "0" ? 0 : Self.duration(text) else { throw arguments.usageError("'\(text)' is not a duration (such as 0, 12h or 2d)") }
            return s
        } ?? PruneSafety.deleteGrace
        if graceText != nil && !(words[0] == "prune" || ((words[0] == "forget" || words[0] == "rewrite") && prune)) {
            throw arguments.usageError("--grace goes with 'snapshots prune' and 'snapshots forget|rewrite --prune'")
        }
        let keep = arguments.isSet(Self.keepFlag), repackUnused = arguments.isSet(Self.repackUnusedFlag)
        let excludeFiles = arguments.values(Self.excludeFileOption)
        if keep || !excludeFiles.isEmpty, words[0] != "rewrite" { throw arguments.usageError("--keep and --exclude-file go with 'snapshots rewrite'") }
        if repackUnused, words[0] != "prune" { throw arguments.usageError("--repack-unused goes with 'snapshots prune'") }
        let adding = arguments.values(Self.addOption), removing = arguments.values(Self.removeOption)
        let setting = arguments.values(Self.setOption)
        let tagging = !adding.isEmpty || !removing.isEmpty || !setting.isEmpty
        if tagging && words[0] != "tag" { throw arguments.usageError("--add, --remove and --set go with 'snapshots tag'") }
        for t in adding + removing + setting where t.utf8.count > Snapshot.maxText || t.contains(where: \.isNewline) {
            throw arguments.usageError("'\(t)' is not a usable tag")
        }
        let output = try arguments.value(Self.outputOption)
        if output != nil && words[0] != "dump" { throw arguments.usageError("-o goes with 'snapshots dump'") }
        let archive = try arguments.value(Self.archiveOption).map { text throws(CLIError) in
            guard words[0] == "dump" else { throw arguments.usageError("--archive goes with 'snapshots dump'") }
            guard let f = ExportArchive.Format(rawValue: text) else { throw arguments.usageError("--archive takes tar or zip, not '\(text)'") }
            return f
        }
        let forgetOptions = !policy.isEmpty || prune || dryRun
        let listOptions = (host != nil || !tags.isEmpty || json) && words[0] != "forget" && words[0] != "find"
        let restoreOptions = to != nil || !includes.isEmpty || !excludes.isEmpty || overwriteText != nil
        let prunes = words[0] == "prune" && !prune && policy.isEmpty, rewrites = words[0] == "rewrite" && policy.isEmpty
        if forgetOptions && words[0] != "forget" && !prunes && !rewrites {
            throw arguments.usageError("--keep-*, --prune and --dry-run go with 'snapshots forget' (--prune and --dry-run also with 'rewrite', --dry-run with 'prune')")
        }
        func only(_ allowed: Bool, _ message: String) throws(CLIError) {
            if !allowed { throw arguments.usageError(message) }
        }
        switch words[0] {
        case "list":
            try only(words.count == 1, "snapshots list takes no arguments")
            try only(!restoreOptions, "--to, --include, --exclude and --overwrite go with 'snapshots restore'")
            action = .list(host: host, tags: tags, json: json)
        case "ls":
            try only((2...3).contains(words.count), "snapshots ls takes SNAPSHOT and perhaps a PATH")
            try only(!restoreOptions && !listOptions, "snapshots ls takes no options")
            action = .ls(snapshot: words[1], path: words.count == 3 ? words[2] : nil)
        case "restore":
            try only(words.count == 2, "snapshots restore takes one SNAPSHOT")
            try only(!listOptions, "--host, --tag and --json go with 'snapshots list'")
            action = .restore(snapshot: words[1], to: to ?? ".", includes: includes, excludes: excludes, overwrite: overwrite)
        case "dump":
            try only(words.count == 3, "snapshots dump takes SNAPSHOT and PATH")
            try only(!restoreOptions && !listOptions, "snapshots dump takes no options")
            action = .dump(snapshot: words[1], path: words[2], output: output, archive: archive)
        case "forget":
            let ids = Array(words.dropFirst())
            try only(ids.isEmpty != policy.isEmpty, ids.isEmpty ? "say what to keep: --keep-last, --keep-daily, --keep-within, ..."
                                                               : "name snapshots or give --keep-* rules, not both")
            try only(keeps.allSatisfy { $0 != 0 }, "keep counts start at 1")
            try only(!restoreOptions && !json, "snapshots forget takes --keep-*, --host, --tag, --prune and --dry-run")
            action = .forget(ids: ids, policy: policy, host: host, tags: tags, prune: prune, dryRun: dryRun)
        case "find":
            try only(words.count == 2, "snapshots find takes one PATTERN")
            try only(!restoreOptions && !json, "snapshots find takes --host and --tag")
            action = .find(pattern: words[1], host: host, tags: tags)
        case "diff":
            try only(words.count == 3, "snapshots diff takes two SNAPSHOTs")
            try only(!restoreOptions && !listOptions, "snapshots diff takes no options")
            action = .diff(words[1], words[2])
        case "stats":
            try only(words.count == 1, "snapshots stats takes no arguments")
            try only(!restoreOptions && host == nil && tags.isEmpty, "snapshots stats takes only --json")
            action = .stats(json: json)
        case "tag":
            try only(words.count >= 2, "snapshots tag takes one or more SNAPSHOTs")
            try only(tagging, "say what to change: --add, --remove or --set")
            try only(setting.isEmpty || (adding.isEmpty && removing.isEmpty), "--set replaces the tags: not with --add or --remove")
            try only(!restoreOptions && !listOptions && !forgetOptions, "snapshots tag takes --add, --remove and --set")
            action = .tag(ids: Array(words.dropFirst()), add: adding, remove: removing,
                          set: setting.isEmpty ? nil : setting)
        case "prune":
            try only(words.count == 1, "snapshots prune takes no arguments")
            try only(!restoreOptions && !listOptions, "snapshots prune takes only --dry-run")
            action = .prune(dryRun: dryRun, repackUnused: repackUnused)
        case "rewrite":
            try only(!listOptions && to == nil && includes.isEmpty && overwriteText == nil,
                     "snapshots rewrite takes --exclude, --exclude-file, --keep, --prune, --grace and --dry-run")
            var patterns = excludes
            for file in excludeFiles {
                // Read here, once: the patterns are the user's words, as for backup's --exclude-file.
                guard let bytes = try? VaultDirectory.readFile(file, limit: 1 << 20) else { throw arguments.usageError("cannot read the exclude file '\(file)'") }
                patterns += BackupFilter.patterns(inExcludeFile: bytes).map { String(decoding: $0, as: UTF8.self) }
            }
            try only(!patterns.isEmpty, "say what to take out: --exclude PATTERN or --exclude-file FILE")
            try only(!(keep && prune), "--keep keeps the originals: nothing for --prune to free")
            action = .rewrite(ids: Array(words.dropFirst()), excludes: patterns, keep: keep, prune: prune, dryRun: dryRun)
        default:
            throw arguments.usageError("unknown subcommand '\(words[0])': list, ls, restore, dump, find, diff, stats, tag, rewrite, forget or prune")
        }
    }

    func run(_ context: Context) throws -> ExitCode {
        let writes: Bool
        // A thin vault keeps the trees the listings read in its cache;
        // restore and dump read each byte once.
        var reads = RemoteReads.cached
        switch action {
        case .forget(_, _, _, _, _, let dryRun), .prune(let dryRun, _), .rewrite(_, _, _, _, let dryRun): writes = !dryRun
        case .tag: writes = true
        case .restore, .dump: writes = false; reads = .uncached
        default: writes = false
        }
        let vault = try context.unlock(try context.passwordSource(), forWriting: writes, reads: reads)
        switch action {
        case .forget(let ids, let policy, let host, let tags, let prune, let dryRun):
            let (seenUntil, reached) = prune && !dryRun ? try fetchRemoteInboxes(vault, context) : (nil, [])
            let chosen = SnapshotReader.all(vault).filter { r in (host == nil || r.snapshot.host == host) && tags.allSatisfy(r.snapshot.tags.contains) }
            let named = Array(Dictionary(try ids.map { try Self.find(vault, $0) }.map { ($0.id, $0) }) { a, _ in a }.values)
            let doomed = (ids.isEmpty ? policy.forgettable(chosen) : named).sorted { $0.snapshot.end.seconds < $1.snapshot.end.seconds }
            for r in doomed {
                context.terminal.note("\(dryRun ? "would forget" : "forgetting") snapshot \(r.id.prefix(8)) of \(Format.stamp(r.snapshot.end.seconds)) (\(Terminal.printable(r.snapshot.host)))")
            }
            if !dryRun {
                // Their hosts are retired at the next publication, on any
                // machine, where no record is current (ForgottenHosts).
                let hosts = try ForgottenHosts.names(hostsOf: doomed.map(\.snapshot), vaultID: vault.vault.header.vaultID,
                                                     vault: context.vaultDirectory)
                try vault.removeBackupStorage(doomed.map(\.entry), forgettingHosts: hosts)
                ForgottenHosts.removeLegacy(vault: context.vaultDirectory)
            }
            context.terminal.note("\(dryRun ? "would forget" : "forgot") \(Format.count(doomed.count, "snapshot"))"
                                  + (ids.isEmpty ? ", kept \(chosen.count - doomed.count)" : ""))
            return prune ? try self.prune(vault, context, dryRun: dryRun, forgetting: Set(doomed.map(\.id)), seenUntil: seenUntil, reached: reached) : .ok
        case .tag(let ids, let add, let remove, let set):
            return try tag(vault, context, ids: ids, add: add, remove: remove, set: set)
        case .prune(let dryRun, let repackUnused):
            let (seenUntil, reached) = dryRun ? (nil, []) : try fetchRemoteInboxes(vault, context)
            return try prune(vault, context, dryRun: dryRun, forgetting: [], seenUntil: seenUntil, reached: reached,
                             purge: repackUnused ? .all : .none)
        case .rewrite(let ids, let excludes, let keep, let prune, let dryRun):
            return try rewrite(vault, context, ids: ids, excludes: excludes, keep: keep, prune: prune, dryRun: dryRun)
        case .find(let pattern, let host, let tags):
            var found = 0
            try context.terminal.printBuffered { emit in
                for r in SnapshotReader.all(vault) where (host == nil || r.snapshot.host == host) && tags.allSatisfy(r.snapshot.tags.contains) {
                    let spelling = SnapshotPaths(r.snapshot.paths)
                    let patterns = [spelling.pattern(Array(pattern.utf8))]
                    try r.walk(visit: { path, e in
                        let text = path.reduce([UInt8]()) { $0 + [0x2f] + $1 }
                        if BackupFilter.matches(patterns, name: e.name, path: text) {
                            found += 1
                            try emit("\(r.id.prefix(8))  \(Format.stamp(r.snapshot.end.seconds))  "
                                     + Terminal.printable(String(decoding: spelling.display(path), as: UTF8.self)) + "\n")
                        }
                        return true
                    })
                }
            }
            guard found > 0 else {
                throw CLIError(message: "nothing in the snapshots matches '\(Terminal.printable(pattern))'", code: .noSuchItem)
            }
            context.terminal.note(Format.count(found, "match", "matches"))
            return .ok
        case .diff(let first, let second):
            let (a, b) = (try Self.find(vault, first), try Self.find(vault, second))
            let spelling = SnapshotPaths(a.snapshot, b.snapshot)
            var counts: [SnapshotDiff.Change: Int] = [:]
            var moved = SnapshotDiff.Bytes()
            try context.terminal.printBuffered { emit in
                try SnapshotDiff.run(a, b) { path, change, bytes in
                    counts[change, default: 0] += 1
                    moved.added &+= bytes.added
                    moved.removed &+= bytes.removed
                    try emit(change.symbol + " " + Terminal.printable(String(decoding: spelling.display(path), as: UTF8.self)) + "\n")
                }
            }
            // As restic's summary: what changed in file bytes too (a changed
            // file counts its old size removed and its new size added).
            context.terminal.note("\(counts[.added] ?? 0) added, \(counts[.removed] ?? 0) removed, \(counts[.changed] ?? 0) changed; "
                                  + "\(Format.size(moved.added)) added, \(Format.size(moved.removed)) removed")
            return .ok
        case .stats(let json):
            let snapshots = SnapshotReader.all(vault)
            let packs = vault.manifest.entries.filter { $0.kind == .pack || $0.kind == .repack }
            let stats = JSONOutput.BackupStats(snapshots: snapshots.count, packs: packs.count,
                                               snapshotBytes: snapshots.reduce(0) { $0 &+ $1.snapshot.counts.bytes },
                                               storedBytes: packs.reduce(0) { $0 &+ $1.size })
            if json { return try printLine(context, try JSONOutput.encode(stats)) }
            try context.terminal.printLine("\(Format.count(stats.snapshots, "snapshot")) holding \(Format.size(stats.snapshotBytes)); "
                                           + "\(Format.count(stats.packs, "pack")) storing \(Format.size(stats.storedBytes))")
            return .ok
        case .list(let host, let tags, let json):
            let all = SnapshotReader.all(vault) { id, error in
                context.terminal.warning("snapshot \(id.prefix(8)) cannot be read: \(ErrorReport.cliError(for: error, vaultDirectory: nil).message)")
            }
            let chosen = all.filter { r in (host == nil || r.snapshot.host == host) && tags.allSatisfy(r.snapshot.tags.contains) }
            if json { return try printLine(context, try JSONOutput.encode(JSONOutput.Snapshots(snapshots: chosen.map(JSONOutput.SnapshotItem.init)))) }
            let rows = chosen.map { r -> [String] in
                let s = r.snapshot
                return [String(r.id.prefix(8)), Format.stamp(s.end.seconds), Terminal.printable(s.host), String(s.counts.files),
                        Format.size(s.counts.bytes), s.tags.map(Terminal.printable).joined(separator: ","),
                        s.paths.map { Terminal.printable(String(decoding: $0, as: UTF8.self)) }.joined(separator: " ")]
            }
            try context.terminal.printBuffered { emit in
                for line in Format.table(header: ["ID", "TIME", "HOST", "FILES", "SIZE", "TAGS", "PATHS"], rows: rows) { try emit(line + "\n") }
                try emit(Format.count(chosen.count, "snapshot") + "\n")
            }
            return .ok
        case .ls(let id, let path):
            let reader = try Self.find(vault, id)
            let spelling = SnapshotPaths(reader.snapshot.paths)
            let prefix = spelling.components(Array((path ?? "").utf8))
            try context.terminal.printBuffered { emit in
                try reader.walk(visit: { p, e in
                    let under = p.count >= prefix.count && Array(p[..<prefix.count]) == prefix
                    if under { try emit(Self.line(spelling.display(p), e) + "\n") }
                    // Go down only along PATH, then everything under it.
                    return under || (p.count < prefix.count && Array(prefix[..<p.count]) == p)
                })
            }
            return .ok
        case .restore(let id, let to, let includes, let excludes, let overwrite):
            // A whole restore reads every chunk of its packs.
            if includes.isEmpty { context.readsWholeBlobs(vault) }
            let reader = try Self.find(vault, id)
            if let st = try Syscall.status(of: to, followLinks: true) {
                guard st.isDirectory else { throw CLIError(message: "'\(to)' is not a directory") }
            } else {
                try Syscall.mkdir(to, mode: 0o700)
                context.terminal.note("created '\(to)'")
            }
            var options = RestoreOptions(target: to)
            let spelling = SnapshotPaths(reader.snapshot.paths)
            options.includes = includes.map { spelling.pattern(Array($0.utf8)) }
            options.excludes = excludes.map { spelling.pattern(Array($0.utf8)) }
            options.overwrite = overwrite
            options.journalDirectory = context.stateDirectory + "/restore"
            options.partials = context.partialOutputs
            // The total: the snapshot's bytes, or unknown when only a part is restored.
            let whole = includes.isEmpty && excludes.isEmpty
            let progress = ProgressLine.start(context.terminal, "restoring", total: whole ? reader.snapshot.counts.bytes : nil)
            defer { progress?.finish() }
            if let progress { options.progress = { (done: UInt64) -> Void in progress.update(done, counting: nil) } }
            let summary = try SnapshotRestore(reader, options: options).run()
            progress?.finish()
            for p in summary.linksApart {
                context.terminal.warning("'\(Terminal.printable(p))' is a hard link in the snapshot whose content differs from its group's: restored as a file of its own")
            }
            for (p, reason) in summary.skipped { context.terminal.warning("skipped '\(Terminal.printable(p))': \(ErrorReport.words(for: reason))") }
            for (namespace, refused) in summary.attributesRefused.sorted(by: { $0.key < $1.key }) {
                context.terminal.warning("the \(Terminal.printable(namespace)).* extended attributes of \(Format.count(refused.entries, "entry", "entries")) were not restored: \(refused.reason.description)",
                                         hints: namespace == "security" || namespace == "trusted" ? ["as root they are (file capabilities, SELinux labels)"] : [])
            }
            var line = "restored \(Format.count(summary.files, "file")) (\(Format.size(summary.bytes))), "
                + "\(Format.count(summary.directories, "folder")), \(Format.count(summary.symlinks, "symbolic link")) from snapshot \(reader.id.prefix(8))"
            if summary.unchanged > 0 { line += "; \(summary.unchanged) already there" }
            if summary.replaced > 0 { line += "; \(summary.replaced) replaced" }
            context.terminal.note(line)
            return summary.skipped.isEmpty ? .ok : .partial
        case .dump(let id, let path, let output, let archive):
            let reader = try Self.find(vault, id)
            if let archive { return try dumpArchive(reader, path: path, format: archive, output: output, context) }
            let e: TreeEntry
            do { e = try reader.entry(at: SnapshotPaths(reader.snapshot.paths).components(Array(path.utf8))) } catch BackupError.noSuchPath {
                throw BackupError.noSuchPath(path)   // named as the user wrote it, not as the tree spells it
            }
            guard e.kind == .file else { throw CLIError(message: "'\(Terminal.printable(path))' is not a file in that snapshot") }
            if let output, output != "-" {
                // A new file only, never half-written: the temp name is committed when whole.
                let file = try NewPlaintextFile(at: output, partials: context.partialOutputs)
                try reader.write(e, to: file.file)
                try file.commit()
                return .ok
            }
            // A binary file would garble the user's terminal (and can drive
            // it): to a terminal only text passes, as for 'vault get'.
            let stdout = StandardOutputSink(context.terminal)
            let out: ByteSink = context.terminal.stdoutIsTerminal && output == nil ? TextOnlySink(stdout, name: path) : stdout
            try reader.write(e, to: out)
            try (out as? TextOnlySink)?.flush()
            return .ok
        }
    }

    /// `snapshots rewrite`: each snapshot that holds a match written again
    /// without it (SnapshotRewrite), taken in, then, unless --keep, the
    /// original forgotten; with --prune, a prune that purges the packs the
    /// removed entries were in, whatever the quarter-unused rule says. A kill
    /// before the originals go leaves both, each whole.
    private func rewrite(_ vault: UnlockedVault, _ context: Context, ids: [String], excludes: [String], keep: Bool,
                         prune: Bool, dryRun: Bool) throws -> ExitCode {
        guard vault.canWrite || dryRun else { throw VaultError.busy }
        let (seenUntil, reached) = prune && !dryRun ? try fetchRemoteInboxes(vault, context) : (nil, [])
        let named = ids.isEmpty ? SnapshotReader.all(vault)
            : Array(Dictionary(try ids.map { try Self.find(vault, $0) }.map { ($0.id, $0) }) { a, _ in a }.values)
        var replaced: [(old: SnapshotReader, new: String, counts: BackupCounts)] = [], purge = Set<[UInt8]>()
        for r in named.sorted(by: { $0.snapshot.end.seconds < $1.snapshot.end.seconds }) {
            let spelling = SnapshotPaths(r.snapshot.paths)
            let patterns = excludes.map { spelling.pattern(Array($0.utf8)) }
            guard let out = try SnapshotRewrite.rewrite(r, excluding: patterns, dryRun: dryRun) else { continue }
            for p in out.removed {
                context.terminal.note("\(dryRun ? "would take" : "taking") '\(Terminal.printable(String(decoding: spelling.display(p), as: UTF8.self)))' out of snapshot \(r.id.prefix(8))")
            }
            if dryRun { replaced.append((r, "", out.counts)); continue }
            var content = try out.snapshot.encode()
            defer { SecureZero.zero(&content) }
            let drop = try StreamedDropIn(into: vault.vault, kind: .snapshot, name: BackupItems.snapshotName, expectedLength: UInt64(content.count))
            try content.withUnsafeBytes { try drop.write($0) }
            _ = try drop.land(modified: out.snapshot.end.seconds)
            replaced.append((r, Hex.encode(drop.itemID), out.counts))
            purge.formUnion(out.purge)
        }
        let removedFiles = replaced.reduce(UInt64(0)) { $0 + $1.counts.files }
        guard !replaced.isEmpty else {
            context.terminal.note("nothing in \(ids.isEmpty ? "any snapshot" : "those snapshots") matches: nothing was changed")
            return .ok
        }
        if dryRun {
            context.terminal.note("would rewrite \(Format.count(replaced.count, "snapshot")), taking out \(Format.count(Int(removedFiles), "file"))")
            return .ok
        }
        try vault.tidy()   // takes the new snapshots (and their pack) in
        let landed = Set(SnapshotReader.all(vault).map(\.id))
        let done = replaced.filter { landed.contains($0.new) }
        if !keep { try vault.removeBackupStorage(done.map(\.old.entry)) }
        for (old, new, counts) in done {
            context.terminal.note("snapshot \(old.id.prefix(8)) is now \(new.prefix(8)), without \(Format.count(Int(counts.files), "file")) (\(Format.size(counts.bytes)))"
                                  + (keep ? "; the original is kept" : ""))
        }
        guard done.count == replaced.count else {
            throw CLIError(message: "\(Format.count(replaced.count - done.count, "rewritten snapshot")) could not be taken in; the originals stay",
                           hints: ["run 'vault check'"])
        }
        if prune { return try self.prune(vault, context, dryRun: false, forgetting: [], seenUntil: seenUntil, reached: reached, purge: .packs(purge)) }
        if !keep {
            context.terminal.note("what only the originals held stays in the packs until a prune",
                                  hint: "'vault snapshots prune --repack-unused' purges it whatever the quarter-unused rule says (--grace 0: now)")
        }
        return .ok
    }

    /// `snapshots dump --archive`: PATH ('/' for all of it) as one tar or
    /// zip, to a new FILE (committed whole) or to standard output (never
    /// a terminal unless '-o -': an archive is binary).
    private func dumpArchive(_ reader: SnapshotReader, path: String, format: ExportArchive.Format, output: String?,
                             _ context: Context) throws -> ExitCode {
        var components: [[UInt8]] = []
        if path != "/" {
            do { components = SnapshotPaths(reader.snapshot.paths).components(Array(path.utf8)); _ = try reader.entry(at: components) }
            catch BackupError.noSuchPath { throw BackupError.noSuchPath(path) }
        }
        let summary: SnapshotExport.Summary
        if let output, output != "-" {
            let file = try NewPlaintextFile(at: output, partials: context.partialOutputs)
            summary = try SnapshotExport.write(reader, path: components, format: format, to: file.file)
            try file.commit()
        } else {
            guard !(context.terminal.stdoutIsTerminal && output == nil) else {
                throw CLIError(message: "a \(format.rawValue) archive is not for a terminal", hints: ["write it to a file with -o FILE, or pipe it ('| tar -t')"], code: .usage)
            }
            summary = try SnapshotExport.write(reader, path: components, format: format, to: StandardOutputSink(context.terminal))
        }
        context.terminal.note("wrote a \(format.rawValue) archive of \(Format.count(Int(summary.files), "file")) (\(Format.size(summary.bytes))), "
                              + "\(Format.count(Int(summary.directories), "folder")) and \(Format.count(Int(summary.symlinks), "symbolic link"))")
        return .ok
    }

    /// `snapshots tag`: each changed snapshot written again with its new
    /// tags (a new id: a sealed snapshot is never changed in place), taken
    /// in, then the old one forgotten. A kill between the two leaves both,
    /// each whole; nothing is lost.
    private func tag(_ vault: UnlockedVault, _ context: Context, ids: [String], add: [String], remove: [String],
                     set: [String]?) throws -> ExitCode {
        guard vault.canWrite else { throw VaultError.busy }
        let named = Array(Dictionary(try ids.map { try Self.find(vault, $0) }.map { ($0.id, $0) }) { a, _ in a }.values)
            .sorted { $0.snapshot.end.seconds < $1.snapshot.end.seconds }
        var replaced: [(old: SnapshotReader, new: String)] = []
        for r in named {
            var tags: [String] = []
            for t in (set ?? r.snapshot.tags).filter({ !remove.contains($0) }) + add where !tags.contains(t) { tags.append(t) }
            guard tags != r.snapshot.tags else {
                context.terminal.note("snapshot \(r.id.prefix(8)) already has those tags")
                continue
            }
            guard tags.count <= Snapshot.maxTags else { throw CLIError(message: "a snapshot holds at most \(Snapshot.maxTags) tags", code: .usage) }
            var snapshot = r.snapshot
            snapshot.tags = tags
            var content = try snapshot.encode()
            defer { SecureZero.zero(&content) }
            let drop = try StreamedDropIn(into: vault.vault, kind: .snapshot, name: BackupItems.snapshotName,
                                          expectedLength: UInt64(content.count))
            try content.withUnsafeBytes { try drop.write($0) }
            _ = try drop.land(modified: snapshot.end.seconds)
            replaced.append((r, Hex.encode(drop.itemID)))
        }
        guard !replaced.isEmpty else { return .ok }
        try vault.tidy()   // takes the new snapshots in
        let landed = Dictionary(SnapshotReader.all(vault).map { ($0.id, $0.snapshot.tags) }) { a, _ in a }
        let done = replaced.filter { landed[$0.new] != nil }
        try vault.removeBackupStorage(done.map(\.old.entry))
        for (old, new) in done {
            let tags = landed[new] ?? []
            context.terminal.note("snapshot \(old.id.prefix(8)) is now \(new.prefix(8)), tags: "
                                  + (tags.isEmpty ? "none" : tags.map(Terminal.printable).joined(separator: ",")))
        }
        guard done.count == replaced.count else {
            throw CLIError(message: "\(Format.count(replaced.count - done.count, "snapshot")) with new tags could not be taken in; the old ones stay",
                           hints: ["run 'vault check'"])
        }
        return .ok
    }

    /// Backups sent to a remote's inbox (`backup --to`) may need packs
    /// prune would delete: their drop-ins come in first, as a pull brings
    /// them (and before forget changes anything). A remote out of reach is
    /// named and the prune goes on with what was past its grace when that
    /// inbox was last seen (`Prune.run`'s `seenUntil`: returned here, the
    /// earliest over the remotes not seen; nil when all were). A dry run,
    /// which changes nothing, does not look, and says so. Also returns the
    /// remotes reached, which then get the host records prune changes.
    private func fetchRemoteInboxes(_ vault: UnlockedVault, _ context: Context) throws
        -> (Int64?, [(remote: RemoteConfig.Remote, there: HostRecordNames)]) {
        let remotes = try RemoteConfig.read(vault: context.vaultDirectory).remotes
        guard !remotes.isEmpty else { return (nil, []) }
        let rclone = try context.rclone()
        var seenUntil: Int64?
        var reached: [(remote: RemoteConfig.Remote, there: HostRecordNames)] = []
        for remote in remotes {
            do {
                reached.append((remote, try RemotePull.fetchInbox(vault: vault, remote: remote, rclone: rclone).hostRecords))
            } catch let error as RemoteError {
                let cause = ErrorReport.cliError(for: error)
                let seen = RemoteBase.seen(vault: context.vaultDirectory, remote: remote.name)
                seenUntil = min(seenUntil ?? .max, seen)
                context.terminal.warning("cannot see what waits in the inbox of remote '\(remote.name)' (\(cause.message)): "
                                         + "a backup sent there may need packs that are unused here, so "
                                         + (seen > 0 ? "only those past their grace when that inbox was last seen (\(Format.stamp(seen))) go"
                                                     : "no unused pack goes: that inbox was never seen"),
                                         hints: ["run it again once the remote can be reached, or remove the remote ('vault remote remove \(remote.name)')"])
            }
        }
        return (seenUntil, reached)
    }

    /// Deletes the packs no snapshot needs and rewrites those at least a
    /// quarter unused (a dry run after a dry-run forget cannot count what
    /// that forget would free: it says so).
    private func prune(_ vault: UnlockedVault, _ context: Context, dryRun: Bool, forgetting: Set<String>,
                       seenUntil: Int64?, reached: [(remote: RemoteConfig.Remote, there: HostRecordNames)],
                       purge: Prune.Purge = .none) throws -> ExitCode {
        let remotes = try RemoteConfig.read(vault: context.vaultDirectory).remotes
        let s = try Prune.run(vault, dryRun: dryRun, grace: grace, seenUntil: seenUntil, purge: purge) {
            context.terminal.note("waiting for running backups to finish")
        }
        // Marks and deletions are what `backup --to` hosts must hear of
        // first: each remote reached gets them now, before a push deletes.
        if !dryRun { context.publishHostRecords(vault, to: reached) }
        for id in s.unreadable {
            context.terminal.warning("snapshot \(id.prefix(8)) cannot be read whole: its packs were left as they are (run 'vault check')")
        }
        var line = "\(dryRun ? "would delete" : "deleted") \(Format.count(s.deleted, "unused pack")) (\(Format.size(s.deletedBytes)))"
        if s.repacked > 0 {
            line += ", \(dryRun ? "would repack" : "repacked") \(Format.count(s.repacked, "pack")) (\(Format.size(s.repackedFrom)) to \(Format.size(s.repackedTo)))"
        }
        if s.waiting > 0, let due = s.nextDue {
            line += "; \(Format.count(s.waiting, "pack")) (\(Format.size(s.waitingBytes))) \(dryRun ? "would wait" : "wait") out the grace, the first until \(Format.time(due))"
        }
        if s.heldForRemotes > 0 {
            line += "; \(Format.count(s.heldForRemotes, "pack")) past the grace \(s.heldForRemotes == 1 ? "was" : "were") kept for a remote whose inbox could not be seen"
        }
        if dryRun && !forgetting.isEmpty { line += ", not counting what the snapshots above would free" }
        context.terminal.note(line)
        if dryRun && !remotes.isEmpty {
            context.terminal.warning("a dry run did not look at the inboxes of " + remotes.map { "'\($0.name)'" }.joined(separator: ", ")
                                     + ": a backup waiting there can keep some of these packs, which a prune that runs fetches first")
        }
        return s.unreadable.isEmpty && seenUntil == nil ? .ok : .partial
    }

    /// "36h", "30d", "1y2w": seconds (VaultConfig's reading, shared with the config file).
    static func duration(_ text: String) -> Int64? { durationSeconds(text) }

    private func printLine(_ context: Context, _ line: String) throws -> ExitCode {
        try context.terminal.printLine(line)
        return .ok
    }

    /// An id, an id's prefix, or "latest" (the newest by end time).
    static func find(_ vault: UnlockedVault, _ text: String) throws -> SnapshotReader {
        if text == "latest" {
            // A snapshot that does not open could be the newest, so which
            // is the latest is not known: its damage, not an older one
            // (nor "no snapshot" where the only one is unreadable).
            var damage: (any Error)?
            let all = SnapshotReader.all(vault) { _, error in damage = damage ?? error }
            if let damage { throw damage }
            guard let newest = all.last else { throw BackupError.noSuchSnapshot(text) }
            return newest
        }
        return try SnapshotReader.find(vault, text)
    }

    /// "drwxr-xr-x  1000/1000  4096  2026-11-02 10:00  /home/me/Documents/taxes".
    static func line(_ path: [UInt8], _ e: TreeEntry) -> String {
        let type: Character = e.kind == .directory ? "d" : e.kind == .symlink ? "l" : "-"
        let bits = "rwxrwxrwx"
        var mode = String(type)
        for (i, c) in bits.enumerated() { mode.append(e.mode & (1 << (8 - i)) != 0 ? c : "-") }
        let name = Terminal.printable(String(decoding: path, as: UTF8.self))
        let target = e.kind == .symlink ? " -> " + Terminal.printable(String(decoding: e.target, as: UTF8.self)) : ""
        return "\(mode)  \(e.user)/\(e.group)  \(Format.padLeft(String(e.size), 10))  \(Format.stamp(e.modified))  \(name)\(target)"
    }
}

