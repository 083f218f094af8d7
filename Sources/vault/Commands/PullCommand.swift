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

        Brings what changed on the remote NAME (without NAME: the vault's
        first remote, the one added first) into this vault: when another
        machine pushed a newer list of items,
        the new items are downloaded into a staging directory, every byte of
        them is checked, and only then do they and the new list replace
        this vault's. Drop-ins that other machines sent to the remote's
        inbox ('vault add --to', or a 'vault push' there without the
        password) are copied into the inbox here and taken in, each once;
        the next 'vault push' deletes them from the remote. Needs the
        password.
        A password changed on another machine comes along: from then on the
        vault opens here with that password.

        When both this vault and the remote changed since they were last in
        step, the two lists are merged: what either side added stays, what
        either removed goes, renames apply, and versions added on both
        sides all stay. An item both sides renamed differently, or that one
        side removed while the other changed it, is kept under a name
        ending in ' (conflict)' and listed. 'vault push' then puts the
        merge on the remote.

        Refused: a remote list of items older than one this vault already
        had from it (a rollback: exit 14); key slots changed on both sides,
        or keys that differ because one side was rekeyed (exit 11, with
        what to do).

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
        let pulled = try RemoteSync.pull(context, remote, try context.passwordSource())
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Transfer(
                remote: remote.name, generation: pulled.vault.manifest.generation, files: pulled.summary.files,
                bytes: pulled.summary.bytes, deleted: 0, dropIns: pulled.summary.dropIns.count, seconds: pulled.seconds,
                state: RemoteSync.state(pulled.summary.state), conflicts: RemoteSync.conflicts(pulled.summary.state))))
            return .ok
        }
        RemoteSync.report(pulled, remote: remote.name, terminal: context.terminal)
        return .ok
    }
}
