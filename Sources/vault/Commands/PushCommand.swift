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

        Makes the remote NAME (or the vault's only remote) a copy of this
        vault, through rclone. Needs no password: everything it sends is
        already encrypted. Only what the remote lacks is sent; a push that
        was stopped, run again, sends only the rest.

        The order keeps the remote whole at every instant: new items first,
        then the header, then the list of items (the manifest), and only
        then deletions of items removed here. Drop-ins that reached the
        remote's inbox and that this vault has taken in (after 'vault pull')
        are deleted from there now.

        If another machine pushed to the remote since this vault last pushed
        or pulled, the push is refused with exit 11: pull first.

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
        let remote = try context.remote(remoteName)
        let waiting = try Vault(at: context.vaultDirectory).waitingDropIns()
        if waiting > 0 {
            context.terminal.warning("\(Format.count(waiting, "drop-in")) wait in the inbox and are not pushed until taken in",
                                     hints: ["any command that unlocks the vault ('vault list') takes them in"])
        }
        let meter = TransferMeter(context.terminal, "pushing")
        let summary = try { () throws -> PushSummary in
            defer { meter.finish() }
            return try RemotePush.push(vault: context.vaultDirectory, remote: remote, rclone: context.rclone(),
                                       replaceHeader: replaceHeader, progress: meter.update)
        }()
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Transfer(
                remote: remote.name, generation: summary.generation, files: summary.uploadedFiles, bytes: summary.uploadedBytes,
                deleted: summary.deletedFiles, dropIns: summary.dropInsCleared, seconds: summary.seconds, state: "pushed")))
        } else {
            context.terminal.note("pushed to '\(remote.name)': " + RemoteFormat.transfer(files: summary.uploadedFiles,
                                  bytes: summary.uploadedBytes, seconds: summary.seconds))
            if summary.deletedFiles > 0 { context.terminal.note("deleted \(Format.count(summary.deletedFiles, "file")) there that this vault no longer has") }
            if summary.remoteHeaderNewer {
                context.terminal.note("the remote's header is newer (key slots changed on another machine): left there",
                                      hint: "'vault pull' takes it")
            }
            if summary.dropInsCleared > 0 { context.terminal.note("cleared \(Format.count(summary.dropInsCleared, "drop-in")) from the remote's inbox") }
        }
        return .ok
    }
}
