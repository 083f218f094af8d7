import System
import VaultCore
import VaultCrypto
import VaultRemote

/// `vault clone`: a remote copy to a new directory on this machine.
struct CloneCommand: Command {
    static let name = "clone"
    static let abstract = "make a vault here from an off-site copy"
    static let jsonFlag = FlagOption("--json"), thinFlag = FlagOption("--thin")
    static let cacheOption = ValueOption<UInt64>.byteSize("--cache-size", as: "SIZE")
    static let options = [jsonFlag.spec, thinFlag.spec, cacheOption.spec]
    static let help = """
        Usage: vault clone TARGET|NAME [DIR] [--thin [--cache-size SIZE]] [--json]

        Downloads the vault at TARGET (any rclone path), or at the target of
        this vault's remote NAME ('vault remote list'), into DIR, which must
        not exist or be empty: a new laptop, a lost disk. Without DIR, into
        the vault's own place (--vault, VAULT_DIR, or the default
        ~/.local/share/vault), where every other command then finds it. Everything lands
        in a staging directory beside DIR; the vault there is unlocked with
        the password and every byte of every item is checked; only then is
        it renamed to DIR. A failure (a damaged item: exit 14) leaves
        nothing at DIR. The new vault knows TARGET as its remote 'origin'.
        A word without ':' or '/' that names one of this vault's remotes
        is that remote; any other word is a target. A clone is a copy of
        its own: even when this machine has seen a newer state of the vault
        elsewhere, it is no rollback.

        With --thin, no blob is downloaded: DIR holds the header, the list of
        items, the drop-ins and a cache of blocks read from the remote, which
        stays the place of every other blob ('vault help thin'). The clone
        checks that the remote holds every blob its list of items names.

        Options:
          --thin              keep the blobs on the remote; read them by range
          --cache-size SIZE   with --thin: the cache's bound (default 2G, at
                              least 64M)
          --json              one JSON summary on standard output

        Examples:
          vault clone s3:my-bucket/vault
          vault clone /mnt/usb/vault ~/vault-copy
          vault clone offsite ~/merged
          vault clone --thin --cache-size 4G s3:my-bucket/vault ~/vault
        """

    let target: String
    /// nil: the vault's own place (`context.vaultDirectory`).
    let directoryArgument: String?
    let json: Bool
    /// --thin: the cache's bound; nil for a full clone.
    let thinCache: UInt64?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let words = try arguments.positionals.count == 1 ? arguments.exactly("TARGET") : arguments.exactly("TARGET", "DIR")
        guard let t = RemoteNames.normalizedTarget(words[0]) else {
            throw arguments.usageError("'\(words[0])' cannot be a remote target")
        }
        (target, directoryArgument) = (t, words.count == 2 ? words[1] : nil)
        json = arguments.isSet(Self.jsonFlag)
        let cache = try arguments.value(Self.cacheOption)
        if cache != nil && !arguments.isSet(Self.thinFlag) { throw arguments.usageError("--cache-size goes with --thin") }
        if let cache, cache < ThinVault.minimumCache { throw arguments.usageError("--cache-size is at least 64M") }
        thinCache = arguments.isSet(Self.thinFlag) ? cache ?? ThinVault.defaultCache : nil
    }

    /// TARGET, or the target of this vault's remote of that name.
    func resolvedTarget(_ context: Context) -> String {
        guard !target.contains(":"), !target.contains("/"),
              let remote = try? RemoteConfig.read(vault: context.vaultDirectory).remote(named: target) else { return target }
        return remote.target
    }

    func run(_ context: Context) throws -> ExitCode {
        let target = resolvedTarget(context)
        let directory = directoryArgument ?? context.vaultDirectory
        if let st = try Syscall.status(of: directory), try st.kind != .directory || !Syscall.listDirectory(directory).isEmpty {
            throw CLIError(message: "'\(directory)' already exists and is not empty; clone never overwrites",
                           hints: ["give a new or empty directory"], code: .exists)
        }
        let source = try context.passwordSource()
        let rclone = try context.rclone()
        let staging = try StagingDirectory(beside: directory, purpose: "cloning")
        let stagingPath = staging.path
        let cleanup = Interrupts.register { _ = Eraser.erase(stagingPath) }
        defer { Interrupts.unregister(cleanup) }
        // The header and the list of items first (small): a target with no
        // vault fails before the password is asked for, and a wrong
        // password before any blob or drop-in comes (issue 43, item 3). The
        // password is asked between the two, never while a progress line
        // runs (typed ahead, it would echo in clear into it).
        let (layout, head) = try RemoteClone.head(target: target, rclone: rclone, into: staging)
        var summary = head
        var secret = try source.read()
        // The remote's manifest as it came, before the unlock below absorbs
        // any drop-ins: what the clone and the remote both hold, the base
        // of a later merge.
        let downloaded = try VaultDirectory.readFile(staging.path + "/manifest", limit: Manifest.maxFileSize)
        do {
            let vault = try Vault(at: staging.path)
            let prompts = source.isTerminal ? 3 : 1
            var opened: UnlockedVault?
            for attempt in 1...prompts where opened == nil {
                do {
                    opened = try vault.unlock(password: Password(secret: secret), forWriting: true, rollbackGuard: context.rollbackGuard)
                } catch VaultError.wrongPassword where attempt < prompts {
                    context.terminal.note("wrong password; try again")
                    secret = try source.read()
                }
            }
            guard let unlocked = opened else { throw VaultError.wrongPassword }
            do {
                let meter = TransferMeter(context.terminal, "downloading")
                defer { meter.finish() }
                try RemoteClone.rest(layout, items: thinCache == nil, target: target, rclone: rclone, into: staging,
                                     summary: &summary, progress: meter.update)
            }
            if thinCache != nil {
                // No byte is read here: every blob the list names must be
                // listed on the remote (the reads that need one check it).
                let missing = unlocked.manifest.entries.filter { summary.remoteItems[$0.blobName] == nil }
                for e in missing { context.terminal.report(CLIError(message: "item '\(e.name)': \(ErrorReport.words(for: CheckReport.Problem.Kind.blobMissing))", code: .corrupted)) }
                guard missing.isEmpty else {
                    throw CLIError(message: "the remote copy lacks blobs its list of items names; nothing was kept at '\(directory)'", code: .corrupted)
                }
            }
            if thinCache == nil {
                let report = try unlocked.check(readData: true, repair: false)
                for p in report.problems { context.terminal.report(CLIError(message: "item '\(p.item)': \(ErrorReport.words(for: p.kind))", code: .corrupted)) }
                guard report.problems.isEmpty else {
                    throw CLIError(message: "the remote copy failed its check; nothing was kept at '\(directory)'", code: .corrupted)
                }
            }
            // The folders' indexes, so a first mount here lists them without a pass.
            let indexes = RemoteIndexes.fetch(unlocked, there: RemoteIndexes.listed(layout.files), target: target, rclone: rclone)
            summary.files += indexes.0
            summary.bytes += indexes.1
        }
        var config = RemoteConfig()
        _ = try config.add(name: "origin", target: target)
        config.remotes[0].known = summary.generation
        try RemoteBase.write(downloaded, vault: staging.path, remote: "origin")
        try config.write(vault: staging.path)
        if let thinCache { try ThinVault(remote: "origin", cacheBytes: thinCache).write(vault: staging.path) }
        try staging.commit()
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Transfer(
                remote: "origin", generation: summary.generation, files: summary.files, bytes: summary.bytes,
                deleted: 0, dropIns: 0, seconds: summary.seconds, state: "cloned")))
        } else {
            context.terminal.note("cloned \(Terminal.printable(target)) into '\(directory)': "
                                  + RemoteFormat.transfer(files: summary.files, bytes: summary.bytes, seconds: summary.seconds))
            context.terminal.note(thinCache == nil ? "every item checked; the remote is known here as 'origin'"
                                  : "a thin vault: its blobs stay on 'origin' (the remote's name here), read as needed")
        }
        return .ok
    }
}
