import VaultCore
import VaultRemote

/// `vault remote add|list|remove`: where this vault keeps off-site copies.
struct RemoteCommand: Command {
    static let name = "remote"
    static let abstract = "name the off-site copies of the vault (rclone targets)"
    static let jsonFlag = FlagOption("--json")
    static let options = [jsonFlag.spec]
    static let help = """
        Usage: vault remote add NAME TARGET
               vault remote list [--json]
               vault remote remove NAME

        Names a place for an off-site copy of this vault. TARGET is any rclone
        path: 's3:bucket/vault' (a remote from rclone's config, or from
        RCLONE_CONFIG_<NAME>_* variables), 'sftp-nas:backup/vault', or a
        plain directory such as /mnt/usb/vault. The names are kept in the
        vault directory (file 'remotes'); no credentials are: they stay in
        rclone's own configuration. Needs no password.

        'add' also learns what this machine's credentials may do in the
        copy's inbox (it creates a scratch file there, then deletes or
        rewrites it if it can): 'list' and 'vault info' then say "append-only
        for this machine" or "this machine can delete the backups". 'remove'
        forgets the name; the copy at the target is left as it is.

        Options:
          --json   list: one JSON document on standard output

        Examples:
          vault remote add offsite s3:my-bucket/vault
          vault remote add usb /mnt/usb/vault
          vault remote list
        """

    enum Action { case add(String, String), list, remove(String) }
    let action: Action
    let json: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        json = arguments.isSet(Self.jsonFlag)
        guard let verb = arguments.positionals.first else { throw arguments.usageError("missing add, list or remove") }
        let rest = Array(arguments.positionals.dropFirst())
        switch verb {
        case "add":
            guard rest.count == 2 else { throw arguments.usageError(rest.count < 2 ? "remote add needs NAME and TARGET" : "unexpected argument '\(rest[2])'") }
            action = .add(rest[0], rest[1])
        case "list":
            guard rest.isEmpty else { throw arguments.usageError("unexpected argument '\(rest[0])'") }
            action = .list
        case "remove":
            guard rest.count == 1 else { throw arguments.usageError(rest.isEmpty ? "remote remove needs NAME" : "unexpected argument '\(rest[1])'") }
            action = .remove(rest[0])
        default:
            throw arguments.usageError("unknown remote action '\(verb)': use add, list or remove")
        }
        if json, case .list = action {} else if json { throw arguments.usageError("--json goes with remote list") }
    }

    func run(_ context: Context) throws -> ExitCode {
        _ = try Vault(at: context.vaultDirectory)
        var config = try RemoteConfig.read(vault: context.vaultDirectory)
        switch action {
        case .add(let name, let target):
            let remote = try config.add(name: name, target: target)
            // A base left by an earlier remote of this name is not this one's.
            try RemoteBase.remove(vault: context.vaultDirectory, remote: name)
            try config.write(vault: context.vaultDirectory)
            context.terminal.note("added remote '\(name)' at \(Terminal.printable(remote.target))",
                                  hint: "'vault push \(name)' copies the vault there")
            // What this machine's credentials may do there, shown by `remote
            // list` and `info` (the owner's push and pull need to delete).
            let rights = try? RemoteRights.probe(target: remote.target, rclone: context.rclone())
            if let rights { try RemoteRights.remember(rights, vault: context.vaultDirectory, remote: name) }
            context.sayRights(rights, of: remote.target, host: false)
        case .list:
            if json {
                try context.terminal.printLine(JSONOutput.encode(config.remotes.map {
                    JSONOutput.Remote($0, rights: RemoteRights.remembered(vault: context.vaultDirectory, remote: $0.name))
                }))
            } else {
                // Columns aligned (names and targets vary in length).
                let rows = config.remotes.map { (Terminal.printable($0.name), Terminal.printable($0.target), $0.known,
                                                     RemoteRights.remembered(vault: context.vaultDirectory, remote: $0.name)) }
                let nameWidth = rows.map(\.0.count).max() ?? 0, targetWidth = rows.map(\.1.count).max() ?? 0
                for (name, target, known, rights) in rows {
                    try context.terminal.printLine(name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
                                                   + target.padding(toLength: targetWidth, withPad: " ", startingAt: 0)
                                                   + "  (generation \(known)" + (rights.map { "; " + Self.words($0) } ?? "") + ")")
                }
            }
        case .remove(let name):
            guard config.remote(named: name) != nil else { throw RemoteError.noSuchRemote(name) }
            config.remotes.removeAll { $0.name == name }
            try config.write(vault: context.vaultDirectory)
            try RemoteBase.remove(vault: context.vaultDirectory, remote: name)
            context.terminal.note("removed remote '\(name)'; the copy there was not touched")
        }
        return .ok
    }

    /// How `remote list` and `info` word what this machine may do there.
    static func words(_ rights: RemoteRights) -> String {
        rights == .appendOnly ? "append-only for this machine" : "this machine can delete the backups"
    }
}
