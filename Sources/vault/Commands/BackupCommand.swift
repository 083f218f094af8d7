import Foundation
import System
import VaultBackup
import VaultCore
import VaultCrypto
import VaultRemote

/// `vault backup`: a snapshot of folders without the password, sealed to
/// the vault's public key as `add` seals a drop-in; only what changed since
/// this host's last snapshot of the same paths is read and stored.
struct BackupCommand: Command {
    static let name = "backup"
    static let abstract = "snapshot folders without the password, storing only what changed"
    static let excludeOption = ValueOption<String>.repeated("--exclude", as: "PATTERN")
    static let excludeFileOption = ValueOption<String>.repeated("--exclude-file", as: "FILE")
    static let excludeCachesFlag = FlagOption("--exclude-caches")
    static let largerThanOption = ValueOption<String>.text("--exclude-larger-than", as: "SIZE")
    static let oneFileSystemFlag = FlagOption("--one-file-system")
    static let tagOption = ValueOption<String>.repeated("--tag", as: "TAG")
    static let hostOption = ValueOption<String>.text("--host", as: "HOST")
    static let dryRunFlag = FlagOption("--dry-run")
    static let jsonFlag = FlagOption("--json")
    static let toOption = AddCommand.toOption
    static let fingerprintOption = AddCommand.fingerprintOption
    static let rebuildCacheFlag = FlagOption("--rebuild-cache")
    static let iexcludeOption = ValueOption<String>.repeated("--iexclude", as: "PATTERN")
    static let excludeIfPresentOption = ValueOption<String>.repeated("--exclude-if-present", as: "NAME")
    static let filesFromOption = ValueOption<String>.repeated("--files-from", as: "FILE")
    static let filesFromVerbatimOption = ValueOption<String>.repeated("--files-from-verbatim", as: "FILE")
    static let filesFromRawOption = ValueOption<String>.repeated("--files-from-raw", as: "FILE")
    static let stdinCommandOption = ValueOption<String>.text("--stdin-from-command", as: "CMD")
    static let stdinFilenameOption = ValueOption<String>.text("--stdin-filename", as: "NAME")
    static let options = [excludeOption.spec, excludeFileOption.spec, excludeCachesFlag.spec, largerThanOption.spec,
                          oneFileSystemFlag.spec, tagOption.spec, hostOption.spec, dryRunFlag.spec, jsonFlag.spec,
                          toOption.spec, fingerprintOption.spec, rebuildCacheFlag.spec, iexcludeOption.spec,
                          excludeIfPresentOption.spec, filesFromOption.spec, filesFromVerbatimOption.spec, filesFromRawOption.spec,
                          stdinCommandOption.spec, stdinFilenameOption.spec]
    static let help = """
        Usage: vault backup PATH... [--exclude PATTERN]... [--exclude-file FILE]...
                            [--iexclude PATTERN]... [--exclude-if-present NAME]...
                            [--exclude-caches] [--exclude-larger-than SIZE]
                            [--files-from FILE]... [--stdin-from-command CMD
                            [--stdin-filename NAME]] [--one-file-system]
                            [--tag TAG]... [--host HOST] [--dry-run] [--json]
                            [--to TARGET [--fingerprint FP]]
               vault backup --rebuild-cache [--host HOST]

        Takes a snapshot of each PATH (folders or files) into the vault without
        the password, as 'vault add' does: it reads only the vault's public
        key. Modes, owners, times, links, extended attributes and ACLs are
        kept with the contents. File contents are cut into pieces of about
        1 MiB where the content itself says (so an insertion moves only
        nearby cuts), and a piece this machine stored before is referenced,
        not stored again; a
        file whose size, times and inode are those of this machine's last
        snapshot of the same paths is not even read. New pieces go into packs
        of about 32 MiB in the inbox; the snapshot itself is written last, so
        a backup stopped at any point leaves no snapshot, and the next one
        reuses what it had stored. The next command that unlocks the vault
        takes packs and snapshots in ('vault snapshots' lists them). A prune
        or a rekey of the vault waits for running backups to end, and a
        backup started during one waits for it.

        After 'vault move', on a new machine, or with the cache lost, the next
        backup would store every piece again. --rebuild-cache (with the
        password) makes this machine's cache again from the vault: the piece
        key of HOST's newest snapshot (default: this machine's name; after a
        move, the old machine's) and where every piece of HOST's snapshots
        is. It holds nothing the vault's owner cannot read, and nothing of
        another host. The next backup then reads the files (their inodes
        are new) but stores only what changed.

        Use 'backup' for folders you save again and again (a home directory
        every night); use 'vault add FOLDER' for one folder kept as a named
        item, with versions.

        This machine keeps a cache in $XDG_CACHE_HOME/vault (else
        ~/.cache/vault): the key that names pieces and what it stored. It
        opens what this machine backed up: keep it as private as the files.
        Without it a backup is slower, never wrong.

        Files that cannot be read are named and left out, and vault exits
        with status 3; so are files that changed while they were read (they
        are kept as read, and flagged; one that grew since the walk is read
        to the size the walk saw, as tar does).

        Options:
          --exclude PATTERN       leave out what matches: a shell pattern on each
                                  name, or on the whole path if it has a '/'
          --exclude-file FILE     patterns from FILE, one a line ('#' comments)
          --iexclude PATTERN      as --exclude, letters matched in either case
          --exclude-if-present NAME
                                  leave out folders holding an entry called NAME
                                  (such as .nobackup)
          --exclude-caches        leave out folders holding a CACHEDIR.TAG
          --exclude-larger-than SIZE
                                  leave out files larger than SIZE (bytes, or with
                                  K, M, G or T: powers of 1024)
          --files-from FILE       more PATHs, one a line ('#' comments and blank
                                  lines skipped, spaces around trimmed)
          --files-from-verbatim FILE
                                  more PATHs, one a line, taken as they are
          --files-from-raw FILE   more PATHs, separated by NUL bytes (find -print0)
          --stdin-from-command CMD
                                  run CMD (with /bin/sh) and keep its output as a
                                  file at the top of the snapshot (a database
                                  dump: 'pg_dump mydb'); if CMD fails, no
                                  snapshot is made
          --stdin-filename NAME   that file's name (default: stdin)
          --one-file-system       stay on each PATH's file system
          --tag TAG               a tag on the snapshot (repeatable)
          --host HOST             the host name recorded (default: this machine's)
          --dry-run               read and count, store nothing
          --json                  one JSON summary on standard output
          --to TARGET             straight into the inbox of the vault copy at
                                  TARGET (an rclone path), as 'vault add --to':
                                  only its header is read, each pack is sent as
                                  it fills, the snapshot last; the owner's
                                  'vault pull' takes them in. Nothing is listed
                                  or deleted there: this host may have rights to
                                  create in its inbox only (README, 'Append-only
                                  hosts'); the owner's record for this host,
                                  which pull and prune publish, says which of
                                  its packs it may reuse
          --fingerprint FP        with --to: refuse unless the remote vault's
                                  public key has this fingerprint (else the
                                  first use remembers it, as 'add --to' does)
          --rebuild-cache         make this machine's backup cache again from
                                  the vault (needs the password; see above)

        Examples:
          vault backup ~/Documents ~/Pictures
          vault backup ~ --exclude-caches --exclude '*.iso' --tag nightly
          vault backup /srv/data --one-file-system --json
          vault backup --stdin-from-command 'pg_dump mydb' --stdin-filename mydb.sql
          vault backup ~/Documents --to s3:my-bucket/vault --fingerprint 3f2a-...
        """

    let paths: [String]
    let patterns: [String]
    let excludeFiles: [String]
    let excludeCaches: Bool
    let largerThan: UInt64?
    let oneFileSystem: Bool
    let tags: [String]
    let host: String?
    let dryRun: Bool
    let json: Bool
    /// --to: a remote vault copy's inbox instead of the local vault.
    let remoteTarget: String?
    let fingerprint: String?
    let rebuildCache: Bool
    let caseFolded: [String]
    let ifPresent: [String]
    /// --files-from, --files-from-verbatim, --files-from-raw: each file and how it is read.
    let pathFiles: [(path: String, form: PathListForm)]
    let command: CommandSource?

    /// How a --files-from kind of file lists paths.
    enum PathListForm { case lines, verbatim, raw }

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        rebuildCache = arguments.isSet(Self.rebuildCacheFlag)
        caseFolded = arguments.values(Self.iexcludeOption)
        ifPresent = arguments.values(Self.excludeIfPresentOption)
        pathFiles = arguments.values(Self.filesFromOption).map { ($0, .lines) } + arguments.values(Self.filesFromVerbatimOption).map { ($0, .verbatim) }
            + arguments.values(Self.filesFromRawOption).map { ($0, .raw) }
        let commandText = try arguments.value(Self.stdinCommandOption)
        let fileName = try arguments.value(Self.stdinFilenameOption)
        if fileName != nil && commandText == nil { throw arguments.usageError("--stdin-filename goes with --stdin-from-command") }
        command = try commandText.map { text throws(CLIError) in
            let name = fileName ?? "stdin"
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0"), name.utf8.count <= 255 else {
                throw arguments.usageError("'\(name)' cannot be a file name (one name, no '/')")
            }
            return CommandSource(command: text, name: Array(name.utf8))
        }
        for name in ifPresent where name.isEmpty || name.contains("/") {
            throw arguments.usageError("--exclude-if-present takes a name, not a path: '\(name)'")
        }
        // PATHs may all come from files or the command instead.
        paths = rebuildCache ? try arguments.exactly()
            : pathFiles.isEmpty && command == nil ? try arguments.oneOrMore("PATH") : arguments.positionals
        patterns = arguments.values(Self.excludeOption)
        excludeFiles = arguments.values(Self.excludeFileOption)
        excludeCaches = arguments.isSet(Self.excludeCachesFlag)
        largerThan = try arguments.value(Self.largerThanOption).map { text throws(CLIError) in
            guard let n = Self.size(text) else { throw arguments.usageError("'\(text)' is not a size (such as 500M or 2G)") }
            return n
        }
        oneFileSystem = arguments.isSet(Self.oneFileSystemFlag)
        tags = arguments.values(Self.tagOption)
        host = try arguments.value(Self.hostOption)
        dryRun = arguments.isSet(Self.dryRunFlag)
        json = arguments.isSet(Self.jsonFlag)
        remoteTarget = try arguments.value(Self.toOption).map { text throws(CLIError) in
            guard let t = RemoteNames.normalizedTarget(text) else { throw arguments.usageError("'\(text)' cannot be a remote target") }
            return t
        }
        fingerprint = try arguments.value(Self.fingerprintOption)
        if fingerprint != nil && remoteTarget == nil { throw arguments.usageError("--fingerprint goes with --to") }
        for t in tags + [host].compactMap({ $0 }) where t.utf8.count > Snapshot.maxText || t.contains(where: \.isNewline) {
            throw arguments.usageError("'\(t)' is not a usable tag or host name")
        }
        if paths.contains("-") { throw arguments.usageError("backup reads folders and files, not standard input") }
        if rebuildCache && (remoteTarget != nil || dryRun || !tags.isEmpty || !patterns.isEmpty || !excludeFiles.isEmpty
                            || !caseFolded.isEmpty || !ifPresent.isEmpty || !pathFiles.isEmpty || command != nil) {
            throw arguments.usageError("--rebuild-cache goes with --host only")
        }
    }

    /// "123", "500K", "2G": bytes, or powers of 1024.
    static func size(_ text: String) -> UInt64? {
        let units: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = text.uppercased()
        var unit: UInt64 = 1
        if let last = digits.last, let u = units[last] { unit = u; digits.removeLast() }
        guard let n = UInt64(digits) else { return nil }
        let (v, overflow) = n.multipliedReportingOverflow(by: unit)
        return overflow ? nil : v
    }

    /// --rebuild-cache: this machine's cache for HOST, from the vault.
    private func rebuild(_ context: Context) throws -> ExitCode {
        guard let base = Self.cacheBase(context.environment) else {
            throw CLIError(message: "cannot tell where the backup cache goes: HOME is not set", hints: ["set HOME, or XDG_CACHE_HOME"])
        }
        let vault = try context.unlock(try context.passwordSource(), forWriting: false)
        let name = host ?? Syscall.hostName()
        let s: CacheRebuild.Summary
        do { s = try CacheRebuild.run(vault, base: base, host: name) } catch BackupError.noSuchSnapshot {
            let hosts = Set(SnapshotReader.all(vault).map(\.snapshot.host)).sorted().map { "'\(Terminal.printable($0))'" }
            throw CLIError(message: "no snapshot of host '\(Terminal.printable(name))'",
                           hints: [hosts.isEmpty ? "there are no snapshots yet" : "hosts with snapshots: " + hosts.joined(separator: ", ") + " (give one with --host)"],
                           code: .noSuchItem)
        }
        context.terminal.note("rebuilt this machine's backup cache from \(Format.count(s.snapshots, "snapshot")) of '\(Terminal.printable(name))': "
                              + "\(Format.count(s.pieces, "piece")) in \(Format.count(s.packs, "pack"))",
                              hint: "the next backup reads the files again but stores only what changed")
        return .ok
    }

    /// The cache's base directory: $XDG_CACHE_HOME/vault, else ~/.cache/vault.
    static func cacheBase(_ environment: [String: String]) -> String? {
        if let c = environment.nonEmpty("XDG_CACHE_HOME"), c.hasPrefix("/") { return c + "/vault" }
        return environment.nonEmpty("HOME").map { $0 + "/.cache/vault" }
    }

    func run(_ context: Context) throws -> ExitCode { try perform(context).code }

    /// The run, and what it did (nil: --rebuild-cache), for `vault run`'s
    /// hooks.
    func perform(_ context: Context) throws -> (code: ExitCode, summary: BackupSummary?) {
        if rebuildCache { return (try rebuild(context), nil) }
        // --to: seal into a scratch vault holding only the remote's header,
        // sending each drop-in on as it lands (RemoteDropIn).
        let remote = try remoteTarget.map { try context.remoteDropIn(to: $0, fingerprint: fingerprint) }
        let vault = try remote?.scratch ?? Vault(at: context.vaultDirectory)
        // Held until the snapshot has landed: a prune (which takes it
        // exclusively) never deletes a pack this backup is about to reference.
        let hold = try remote == nil ? vault.holdDropLock { context.terminal.note("waiting for a prune or rekey of the vault to finish") } : nil
        defer { withExtendedLifetime(hold) {} }
        var options = BackupOptions(paths: try absolutePaths(paths + listedPaths()), host: host ?? Syscall.hostName())
        options.tags = tags
        options.dryRun = dryRun
        options.command = command
        options.filter.patterns = patterns.map { Array($0.utf8) }
        options.filter.caseFoldedPatterns = caseFolded.map { Array($0.utf8) }
        options.filter.ifPresent = ifPresent.map { Array($0.utf8) }
        for file in excludeFiles {
            options.filter.patterns += BackupFilter.patterns(inExcludeFile: try FileHandleFD.regularFile(file, what: .excludeFile).readAll(limit: 1 << 20))
        }
        options.filter.excludeCaches = excludeCaches
        options.filter.largerThan = largerThan
        options.filter.oneFileSystem = oneFileSystem
        // A cache that cannot be made or read makes the backup slower (every
        // file read, every piece stored), never wrong.
        var cache: BackupCache?
        var sent: SentLog?
        if let base = Self.cacheBase(context.environment) {
            do {
                if let remote {
                    let directory = try Self.remoteCacheDirectory(base: base, remote)
                    try Vault.ensureDirectory(directory)
                    let log = try SentLog(directory: directory)
                    sent = log
                    let (opened, forgotten) = try Self.remoteCache(directory: directory, sent: log, remote)
                    cache = opened
                    if let forgotten {
                        context.terminal.warning("\(ErrorReport.cliError(for: forgotten, vaultDirectory: nil).message): what this host sent before is stored again")
                    }
                } else {
                    cache = try BackupCache(base: base, vaultID: vault.header.vaultID, vault: vault)
                }
                if let unknown = cache?.unconfirmedPacks, unknown > 0 {
                    context.terminal.warning("cannot tell whether \(Format.count(unknown, "pack")) this host stored earlier \(unknown == 1 ? "is" : "are") still in the vault (permission denied on its items/): what \(unknown == 1 ? "it holds" : "they hold") is stored again",
                                             hints: ["the vault's owner can run 'vault share' again, which lets other users look up their own packs"])
                }
            } catch {
                context.terminal.warning("no backup cache (\(ErrorReport.cliError(for: error, vaultDirectory: nil).message)): every file is read")
            }
        }
        let progress = ProgressLine.start(context.terminal, dryRun ? "reading" : "backing up", total: nil)
        defer { progress?.finish() }
        let started = Date()
        // On a terminal, a walk beside the backup counts what it will read,
        // for the time left.
        let scan = progress.map { _ in BackupScan.start(options: options, cache: cache) }
        defer { scan?.cancel() }
        // Each drop-in is logged as sent once it is whole in the remote's
        // inbox: the order the cache decides from. One that cannot be
        // logged is a pack the next run does not reuse: slower, never wrong.
        let send: ((String) throws -> Void)? = remote.map { r in { try r.upload(blob: $0); try? sent?.append($0) } }
        let summary = try BackupRun(vault: vault, cache: cache, options: options, landed: send) { s in
            let totals = scan?.totals
            progress?.update(s.counts.bytes + s.readingFile, counting: Format.count(s.counts.files, "file"),
                             reading: totals.flatMap { $0.finished ? (s.bytesRead, $0.toRead) : nil })
        }.run()
        progress?.finish()
        let seconds = Date().timeIntervalSince(started)
        for p in summary.unreadable { context.terminal.warning("could not read '\(Terminal.printable(p))'; left out") }
        for p in summary.changedWhileRead { context.terminal.warning("'\(Terminal.printable(p))' changed while it was read; kept as read") }
        for p in summary.skipped { context.terminal.warning("skipped '\(Terminal.printable(p))': not a regular file, folder or symlink") }
        if summary.packsUnconfirmed {
            context.terminal.warning("cannot check that the packs this backup used are still in the vault (permission denied on its items/): if its owner pruned it meanwhile, this snapshot waits refused",
                                     hints: ["the vault's owner can run 'vault share' again, which lets other users look up their own packs"])
        }
        if json {
            try context.terminal.printLine(try JSONOutput.encode(JSONOutput.Backup(summary, host: options.host, seconds: seconds, dryRun: dryRun)))
        } else {
            let c = summary.counts
            let what = "\(Format.count(c.files, "file")), \(Format.count(c.directories, "folder")), \(Format.size(c.bytes))"
            let stored = "\(Format.count(summary.piecesNew, "new piece")) (\(Format.size(summary.bytesNew)), "
                + "\(Format.size(summary.bytesNewCompressed)) compressed), \(summary.filesUnchanged) unchanged"
            if let id = summary.snapshot {
                let inbox = remote.map { "sent to the inbox at \(Terminal.printable($0.target)) (fingerprint \($0.header.fingerprint))" } ?? "added to the inbox"
                context.terminal.note("snapshot \(id.prefix(8)) of \(what): \(stored), \(Format.size(summary.bytesStored)) \(inbox)")
            } else {
                context.terminal.note("dry run of \(what): would store \(stored)")
            }
        }
        let incomplete = !summary.unreadable.isEmpty || !summary.changedWhileRead.isEmpty || !summary.skipped.isEmpty
        return (incomplete ? .partial : .ok, summary)
    }

    /// The cache directory for `--to TARGET`: `<vault id>-to-<h>` (h: 16
    /// hex digits of SHA-256 of the canonical target), apart from the local
    /// vault's, since which of its packs still stand is the remote's.
    static func remoteCacheDirectory(base: String, _ remote: RemoteDropIn) throws -> String {
        base + "/" + Hex.encode(remote.header.vaultID) + "-to-"
            + Hex.encode(Array(try SHA256.hash(Array(RemoteNames.canonicalTarget(remote.target).utf8)).prefix(8)))
    }

    /// The cache for `--to TARGET`, deciding which packs may be reused
    /// without listing anything (a create-only host cannot): from the
    /// owner's record for this host, `hosts/<name>`, and the order this
    /// host sent things in (SentLog). A record that does not open, or is
    /// older than one read before, throws: the caller then stores every
    /// file again, never a reference the owner might refuse. One retired
    /// (the vault holds no snapshot of this host any more), or gone after
    /// one was read, gives the cache with every pack forgotten, and says
    /// why: every file is stored again under this host's own key, so the
    /// owner's next record for it has the name this host reads, and its
    /// backups after that are incremental again.
    static func remoteCache(directory: String, sent: SentLog, _ remote: RemoteDropIn) throws -> (BackupCache, forgotten: BackupError?) {
        let key = try BackupCache.pieceKey(directory: directory)
        let name = try HostRecord.name(key: key, vaultID: remote.header.vaultID)
        let path = RemoteNames.join(remote.target, RemoteHostRecords.directory + "/" + name)
        var record: HostRecord?
        // S3 answers a read of a missing object with 403 to whoever may not
        // list (AWS and SeaweedFS alike): a failed read is taken as no
        // record, which trusts no more than a host that was never sent one
        // (and refuses once a record was read, below).
        let fetched: [UInt8]?
        do { fetched = try remote.rclone.fetch(path, limit: HostRecord.maxLength) } catch RemoteError.rcloneFailed { fetched = nil }
        if fetched == HostRecord.retired {
            return (try BackupCache(directory: directory) { _ in .gone }, .hostRecordRetired)
        }
        if let bytes = fetched {
            let opened = try HostRecord.open(bytes, key: key, vaultID: remote.header.vaultID)
            if let seen = sent.seenGeneration(), opened.generation < seen {
                throw BackupError.hostRecordOlder(seen: seen, served: opened.generation)
            }
            try sent.rememberGeneration(opened.generation)
            record = opened
        } else if sent.seenGeneration() != nil {
            return (try BackupCache(directory: directory) { _ in .gone }, .hostRecordMissing)
        }
        // The repack note beside the record, read only if a pack the cache
        // names is gone, and used only if built from the same manifest as
        // the record: a hint, like the cache (the owner's absorb checks
        // every reference into a repacked pack).
        let repacked = { (key: PieceKey) -> [[UInt8]: RepackTable] in
            guard let record, let name = try? RepackNote.name(key: key, vaultID: remote.header.vaultID),
                  let bytes = try? remote.rclone.fetch(RemoteNames.join(remote.target, RemoteHostRecords.directory + "/" + name),
                                                       limit: RepackNote.maxLength),
                  let note = try? RepackNote.open(bytes, key: key, vaultID: remote.header.vaultID),
                  note.generation == record.generation else { return [:] }
            return note.tables()
        }
        return (try BackupCache(directory: directory, present: { sent.presence(of: $0, record: record) }, repacked: repacked), nil)
    }

    /// The PATHs the --files-from kind of files list (64 MiB each at most).
    private func listedPaths() throws -> [String] {
        try pathFiles.flatMap { (file, form) throws -> [String] in
            let bytes = try FileHandleFD.regularFile(file, what: .filesFrom).readAll(limit: 64 << 20)
            switch form {
            case .raw:
                return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            case .verbatim:
                return bytes.split(separator: 0x0a, omittingEmptySubsequences: false).dropLast(bytes.last == 0x0a ? 1 : 0)
                    .map { String(decoding: $0, as: UTF8.self) }
            case .lines:
                return BackupFilter.patterns(inExcludeFile: bytes).map { String(decoding: $0, as: UTF8.self) }
            }
        }
    }

    /// Each PATH made absolute (not resolving links), with distinct last
    /// names (the command's file's name among them).
    private func absolutePaths(_ paths: [String]) throws -> [[UInt8]] {
        let cwd = FileManager.default.currentDirectoryPath
        var seen = Set<[UInt8]>(command.map { [$0.name] } ?? [])
        if paths.isEmpty && command == nil { throw CLIError(message: "the lists of files name no PATH", code: .usage) }
        return try paths.map { p in
            var full = p.hasPrefix("/") ? p : cwd + "/" + p
            while full.count > 1 && full.hasSuffix("/") { full.removeLast() }
            let parts = full.split(separator: "/").filter { $0 != "." }
            var stack: [Substring] = []
            for part in parts { if part == ".." { _ = stack.popLast() } else { stack.append(part) } }
            guard let last = stack.last else {
                throw CLIError(message: "cannot back up '/' as one path", hints: ["name the folders under it: vault backup /etc /home ..."], code: .usage)
            }
            guard seen.insert(Array(last.utf8)).inserted else {
                throw CLIError(message: "two paths end in the name '\(Terminal.printable(String(last)))'",
                               hints: ["a snapshot keeps each path under its last name; back them up separately"], code: .usage)
            }
            return Array(("/" + stack.joined(separator: "/")).utf8)
        }
    }
}
