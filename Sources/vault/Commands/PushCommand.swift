import VaultCore
import VaultRemote

/// `vault push`: makes a remote a copy of this vault (no password needed).
struct PushCommand: Command {
    static let name = "push"
    static let abstract = "copy the vault to its off-site remote (no password)"
    static let jsonFlag = FlagOption("--json")
    static let replaceHeaderFlag = FlagOption("--replace-header")
    static let options = [jsonFlag.spec, replaceHeaderFlag.spec]
    static let help = """
        Usage: vault push [NAME] [--replace-header] [--json]

        Makes the remote NAME (without NAME: the vault's first remote, the
        one added first, as 'vault remote list' shows) a copy of this
        vault, through rclone. Needs no password while the remote is as
        this vault last left it: everything it sends is already encrypted.
        Only what the remote lacks is sent; a push that was stopped, run
        again, sends only the rest.

        Drop-ins waiting here ('vault add') go to the remote's inbox first,
        so a cron job's 'vault add ...; vault push' gets them off this
        machine; the next pull with the password, here or on another
        machine, takes them in (once: by their ids). Those of a 'vault add'
        of several files wait in one batch, which a remote's inbox does not
        take: push takes them into the vault first when the password is at
        hand, and otherwise leaves them here, says so and exits 3.

        If another machine pushed since this vault last pushed or pulled,
        push merges first, as 'vault pull' does (see 'vault pull --help'),
        which needs the password; without one it sends only the drop-ins
        and says so (exit 0).

        The order keeps the remote whole at every instant: new items first,
        then the header, then the list of items (the manifest), and only
        then deletions of items removed here. Drop-ins in the remote's
        inbox that this vault has taken in are deleted from there now.

        The header (the key slots and passwords) goes up only if this
        vault's is the newer. One changed on another machine is left on the
        remote for 'vault pull' to take; if both changed since they were
        last in step, the push is refused with exit 11, and --replace-header
        puts this vault's on the remote (other machines then take it).

        Options:
          --replace-header   upload this vault's header even if the remote's changed too
          --json             one JSON summary on standard output

        Examples:
          vault push
          vault push offsite
        """

    let remoteName: String?
    let json: Bool
    let replaceHeader: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        remoteName = try arguments.optional()
        json = arguments.isSet(Self.jsonFlag)
        replaceHeader = arguments.isSet(Self.replaceHeaderFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        var remote = try context.remote(remoteName)
        let unsent = try takeInBatches(context)
        var summary = try send(context, remote)
        var sent = summary.dropInsSent
        var pulled: RemoteSync.Pulled?
        // Another machine pushed since: merge (a pull), then push the merge.
        // Twice at most: a third machine pushing in between each time is
        // reported as the remote changing while this push ran.
        for _ in 0..<2 where summary.remoteMoved != nil {
            guard let source = try? context.passwordSource() else { return try sentOnly(context, remote, summary) }
            let p = try RemoteSync.pull(context, remote, source)
            p.vault.releaseWriterLock()
            pulled = p
            remote = try context.remote(remote.name)
            summary = try send(context, remote)
            sent += summary.dropInsSent
        }
        if let moved = summary.remoteMoved { throw RemoteError.remoteChanged(remote: moved, known: remote.known) }
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Transfer(
                remote: remote.name, generation: summary.generation, files: summary.uploadedFiles, bytes: summary.uploadedBytes,
                deleted: summary.deletedFiles, dropIns: summary.dropInsCleared, seconds: summary.seconds,
                state: pulled == nil ? "pushed" : "merged", conflicts: pulled.flatMap { RemoteSync.conflicts($0.summary.state) },
                dropInsSent: sent)))
            return try batchesLeft(unsent, context)
        }
        if let pulled { RemoteSync.report(pulled, remote: remote.name, terminal: context.terminal, pushing: true) }
        // Nothing went up: say so rather than "pushed 0 files, 0 B in 0.34 s (0 B/s)" (issue 43, item 13).
        if summary.uploadedFiles == 0 && summary.deletedFiles == 0 && summary.dropInsCleared == 0 && sent == 0 && pulled == nil {
            context.terminal.note("'\(remote.name)' has everything this vault has: nothing to push")
        } else {
            context.terminal.note("pushed to '\(remote.name)': " + RemoteFormat.transfer(files: summary.uploadedFiles,
                                  bytes: summary.uploadedBytes, seconds: summary.seconds))
        }
        if summary.remoteWasOlder {
            context.terminal.note("'\(remote.name)' held an older copy of this vault (put back there): it is current again")
        }
        if summary.deletedFiles > 0 { context.terminal.note("deleted \(Format.count(summary.deletedFiles, "file")) there that this vault no longer has") }
        if summary.remoteHeaderNewer {
            context.terminal.note("the remote's header is newer: its key slots (passwords) were changed on another machine; left there",
                                  hint: "'vault pull' takes it; after that this vault opens with the passwords set there")
        }
        if summary.dropInsCleared > 0 { context.terminal.note("cleared \(Format.count(summary.dropInsCleared, "drop-in")) from the remote's inbox") }
        if sent > 0 && summary.dropInsCleared == 0 {
            context.terminal.note("sent \(Format.count(sent, "drop-in")) to the inbox of '\(remote.name)': the next pull with the password, here or on another machine, takes \(sent == 1 ? "it" : "them") in")
        }
        return try batchesLeft(unsent, context)
    }

    /// A multi-file `vault add` lands as batch envelopes, which a remote's
    /// inbox does not take: they must be taken into the vault here and go
    /// up as items. With the password at hand (a file, a command, the
    /// agent, the terminal) that happens now; without, none can go and the
    /// push says so and exits 3 rather than "nothing to push" over files
    /// still only on this machine. Returns how many stay behind.
    private func takeInBatches(_ context: Context) throws -> Int {
        let vault = try Vault(at: context.vaultDirectory)
        let batched = try vault.waitingBatchedDropIns()
        guard batched > 0 else { return 0 }
        guard let source = try? context.passwordSource() else { return batched }
        let unlocked = try context.unlock(source, forWriting: true, reads: .none)
        unlocked.releaseWriterLock()
        if !json { context.terminal.note("took in \(Format.count(batched, "drop-in")) of a multi-file 'vault add' first, to go up as items") }
        return try vault.waitingBatchedDropIns()
    }

    private func batchesLeft(_ unsent: Int, _ context: Context) throws -> ExitCode {
        guard unsent > 0 else { return .ok }
        context.terminal.warning("\(Format.count(unsent, "drop-in")) of a multi-file 'vault add' \(unsent == 1 ? "waits" : "wait") here, not sent: a remote's inbox takes single drop-ins, and these need the password to go up as items",
                                 hints: ["push again with the password at hand (or the unlock agent running): it takes them in first"])
        return .partial
    }

    func send(_ context: Context, _ remote: RemoteConfig.Remote) throws -> PushSummary {
        let thin = try context.thinVault()
        let named = try thin.flatMap { _ in try blobsNamed(context) }
        let summary = try { () throws -> PushSummary in
            let meter = TransferMeter(context.terminal, "pushing")
            defer { meter.finish() }
            return try RemotePush.push(vault: context.vaultDirectory, remote: remote, rclone: context.rclone(),
                                       replaceHeader: replaceHeader, thin: thin != nil, named: named, progress: meter.update)
        }()
        // A thin vault's own remote now holds what items/ held: proven
        // blob by blob, those leave (ThinEviction).
        if let thin, thin.remote == remote.name, summary.remoteMoved == nil {
            let server = try RcloneServer(rclone: context.rclone(), target: remote.target)
            let (count, bytes) = try ThinEviction.evict(vault: context.vaultDirectory, server: server)
            if count > 0 && !json {
                context.terminal.note("\(Format.count(count, "blob")) (\(Format.size(bytes))) now only on '\(remote.name)': removed here")
            }
        }
        if thin != nil && named == nil && !json {
            context.terminal.note("a thin vault deletes on the remote only what its list of items no longer names, which needs the password",
                                  hint: "the next push with the password (or the unlock agent) deletes what this vault removed")
        }
        return summary
    }

    /// A thin vault's push: the blobs its manifest names, when a password
    /// (or the agent) is at hand; nil without one.
    private func blobsNamed(_ context: Context) throws -> Set<String>? {
        guard let source = try? context.passwordSource() else { return nil }
        let vault = try context.unlock(source, forWriting: false, reads: .none)
        return Set(vault.manifest.entries.map(\.blobName))
    }

    /// No password here, and the remote moved on: nothing can be merged,
    /// but the drop-ins went up. One line, exit 0, so a cron job that adds
    /// and pushes succeeds.
    func sentOnly(_ context: Context, _ remote: RemoteConfig.Remote, _ summary: PushSummary) throws -> ExitCode {
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Transfer(
                remote: remote.name, generation: summary.generation, files: summary.uploadedFiles, bytes: summary.uploadedBytes, deleted: 0,
                dropIns: 0, seconds: summary.seconds, state: "sent-drop-ins", dropInsSent: summary.dropInsSent)))
            return .ok
        }
        let sent = summary.dropInsSent > 0 ? "sent \(Format.count(summary.dropInsSent, "drop-in")) to its inbox" : "sent no drop-ins"
        context.terminal.note("'\(remote.name)' changed on another machine: \(sent); merging this vault's other changes needs the password ('vault push' or 'vault pull' with it)")
        return .ok
    }
}
