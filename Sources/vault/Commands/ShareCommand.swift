import System
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
        stored stay yours alone (0600): they can only look up an item whose
        name they know (their own backups' packs, so those are not stored
        again). Their drop-ins are copied into files of your own when a
        command of yours takes them in. Nothing of theirs can make your
        commands wait: they take no lock of yours. No password is needed:
        only the file modes change.

        Modes set: the vault directory 0711, vault.header 0644, items/ 0711,
        inbox/ 1733 (sticky, like /tmp). --off puts back 0700 and 0600; drop-ins
        already waiting are still taken in. A drop.lock an earlier version
        shared is removed.

        Then it checks that others can reach the vault: every directory
        above it needs o+x (a home directory at 0700 keeps them out). It
        names the one that blocks them (exit 1; the vault's own modes are
        set), or prints the command they run: vault --vault PATH add FILE.
        As another user, 'info' and 'list' say the vault is shared with
        them for adding only.

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
        if off {
            context.terminal.note("not shared: only you can add items")
            return .ok
        }
        try Self.announce(vault, context)
        return .ok
    }

    /// After sharing: that others can now add, and the command they run;
    /// or which directory above the vault still keeps them out (the vault's
    /// own modes are set either way), as an error.
    static func announce(_ vault: Vault, _ context: Context) throws {
        if let (path, mode) = try vault.unreachableParent() {
            let octal = "0" + String(mode, radix: 8)
            let group = mode & 0o010 != 0 ? " (only members of its group can)" : ""
            throw CLIError(message: "'\(path)' is \(octal): other users cannot reach the vault\(group)",
                           hints: ["run 'chmod o+x \(Format.shellWord(path))' or move the vault; its own modes are set for sharing"])
        }
        context.terminal.note("shared: other users of this machine can add items, and nothing else",
                              hint: "they run: \(addCommand(vault))")
    }

    /// What another user runs to drop a file into `vault`.
    static func addCommand(_ vault: Vault) -> String { "vault --vault \(Format.shellWord(vault.resolvedRoot)) add FILE" }

    /// The login name of `vault`'s owner, else "uid N" ("its owner" if the
    /// directory cannot be looked at).
    static func ownerName(_ vault: Vault) -> String {
        guard let uid = vault.ownerID else { return "its owner" }
        return Syscall.userName(of: uid) ?? "uid \(uid)"
    }
}
