import System
import VaultCore
import VaultCrypto
import VaultRemote

/// `vault pull`: brings a remote's changes and drop-ins into this vault.
struct PullCommand: Command {
    static let name = "pull"
    static let abstract = "bring changes and drop-ins from the off-site remote"
    static let jsonFlag = FlagOption("--json")
    static let options = [jsonFlag.spec]
    static let help = """
        Usage: vault pull [NAME] [--json]

        Brings what changed on the remote NAME (or the vault's only remote)
        into this vault: when another machine pushed a newer list of items,
        the new items are downloaded into a staging directory, every byte of
        them is checked, and only then do they and the new list replace
        this vault's. Drop-ins that other machines sent to the remote
        ('vault add --to') are copied into the inbox here and taken in; the
        next 'vault push' deletes them from the remote. Needs the password.
        A password changed on another machine comes along: from then on the
        vault opens here with that password.

        Refused: a remote list of items older than one this vault already
        had from it (a rollback: exit 14), and a remote that changed while
        this vault changed too (exit 11).

        Options:
          --json   one JSON summary on standard output

        Examples:
          vault pull
          vault pull offsite && vault push offsite
        """

    let remoteName: String?
    let json: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        remoteName = try arguments.optional()
        json = arguments.isSet(Self.jsonFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let remote = try context.remote(remoteName)
        let source = try context.passwordSource()
        let rclone = try context.rclone()
        let vault = try Vault(at: context.vaultDirectory)
        let started = Syscall.monotonicSeconds()
        let summary: PullSummary
        let key: MasterKey
        do {
            let unlocked = try context.open(vault, source, forWriting: true)
            key = unlocked.masterKey
            let meter = TransferMeter(context.terminal, "pulling")
            defer { meter.finish() }
            summary = try RemotePull.pull(vault: unlocked, remote: remote, rclone: rclone, progress: meter.update)
        }
        // Opened again (the list of items, even the header, may be new) with
        // the master key, which takes in the drop-ins just fetched.
        let reopened = try Vault(at: context.vaultDirectory).unlock(masterKey: key, forWriting: true,
                                                                     rollbackGuard: context.rollbackGuard)
        if summary.headerTaken {
            context.terminal.note("the key slots were changed on another machine: this vault now opens as that one does",
                                  hint: "'vault key list' shows them")
        }
        try reopened.tidy()
        // Of the drop-ins fetched, those the absorb took in (their envelope is gone).
        let taken = try summary.dropIns.filter { try Syscall.status(of: reopened.vault.paths.dropInEnvelope($0)) == nil }.count
        let seconds = Syscall.monotonicSeconds() - started
        let state: String
        switch summary.state {
        case .fetched: state = "fetched"
        case .inStep: state = "in-step"
        case .remoteBehind: state = "remote-behind"
        }
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Transfer(
                remote: remote.name, generation: reopened.manifest.generation, files: summary.files, bytes: summary.bytes,
                deleted: 0, dropIns: summary.dropIns.count, seconds: seconds, state: state)))
            return .ok
        }
        switch summary.state {
        case .fetched(let g):
            context.terminal.note("pulled generation \(g) from '\(remote.name)': "
                                  + RemoteFormat.transfer(files: summary.files, bytes: summary.bytes, seconds: seconds))
        case .inStep:
            context.terminal.note("'\(remote.name)' has nothing new")
        case .remoteBehind(let r, let l):
            context.terminal.note("'\(remote.name)' is older than this vault (generation \(r) < \(l))",
                                  hint: "'vault push \(remote.name)' updates it")
        }
        if !summary.dropIns.isEmpty {
            context.terminal.note("took in \(taken) of \(Format.count(summary.dropIns.count, "drop-in")) from the remote",
                                  hint: "'vault push' deletes them from the remote's inbox")
        }
        if summary.junkDropIns > 0 {
            context.terminal.note("ignored \(Format.count(summary.junkDropIns, "drop-in")) in the remote's inbox that this vault's key does not open",
                                  hint: "someone who can write to the remote put them there; they stay on the remote")
        }
        return .ok
    }
}
