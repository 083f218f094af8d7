import VaultCore

/// `vault share`: lets other users of this machine drop items in, or stops it.
struct ShareCommand: Command {
    static let name = "share"
    static let abstract = "let other users add items (and nothing else), or stop"
    static let offFlag = FlagOption("--off")
    static let options = [offFlag.spec]
    static let help = """
        Usage: vault share [--off]

        Lets the other users of this machine add items with 'vault add' (from
        their own accounts, scripts or cron jobs), and nothing else: they can
        enter the vault directory but not list it, read the public key, and
        create files in the inbox that they cannot list, read back, rename or
        delete afterwards. The items, the manifest and everything already
        stored stay yours alone (0700 and 0600). Their drop-ins are copied
        into files of your own when a command of yours takes them in. No
        password is needed: only the file modes change.

        Modes set: the vault directory 0711, vault.header 0644, drop.lock 0644,
        inbox/ 1733 (sticky, like /tmp). --off puts back 0700 and 0600; drop-ins
        already waiting are still taken in.

        Options:
          --off   stop sharing: only you can add again

        Examples:
          vault share
          vault --vault /srv/vault share
          vault share --off
        """

    let off: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        off = arguments.isSet(Self.offFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let vault = try Vault(at: context.vaultDirectory)
        try vault.setShared(!off)
        context.terminal.note(off ? "not shared: only you can add items"
                                  : "shared: other users of this machine can add items, and nothing else")
        return .ok
    }
}
