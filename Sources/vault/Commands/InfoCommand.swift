import VaultCore
import VaultCrypto

/// `vault info`: what the clear header says, without the password.
struct InfoCommand: Command {
    static let name = "info"
    static let abstract = "show the vault's format and settings (no password)"
    static let jsonFlag = FlagOption("--json")
    static let options = [jsonFlag.spec]
    static let help = """
        Usage: vault info [--json]

        Shows what can be known without the password: the format version, the
        Argon2id parameters, how many items are waiting from 'vault add', and
        the fingerprint of the vault's public key. Nothing here is verified
        until the vault is unlocked ('vault check').

        Options:
          --json   one JSON document on standard output, for scripts

        Examples:
          vault info
          vault --vault /mnt/usb/vault info --json
        """

    let json: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        json = arguments.isSet(Self.jsonFlag)
    }

    func run(_ context: Context) throws -> ExitCode {
        let vault = try Vault(at: context.vaultDirectory)
        let waiting = try vault.waitingDropIns()
        let leftovers = try vault.leftoverSize()
        if json {
            try context.terminal.printLine(JSONOutput.encode(JSONOutput.Info(vault, waiting: waiting, leftovers: leftovers)))
        } else {
            let h = vault.header
            for line in ["path: \(vault.paths.root)",
                         "format version: \(VaultHeader.version)",
                         "vault id: \(Hex.encode(h.vaultID))",
                         "argon2id: \(h.kdf.memoryKiB / 1024) MiB, \(Format.count(h.kdf.passes, "pass", "passes")), "
                            + Format.count(h.kdf.lanes, "lane"),
                         "shared: " + (vault.isShared ? "yes (other users can add items)" : "no"),
                         "items waiting to be absorbed: \(waiting)",
                         "leftovers of interrupted commands: \(leftovers.count)"
                            + (leftovers.count > 0 ? " (\(Format.size(leftovers.bytes)); the next unlock removes them)" : ""),
                         "public key fingerprint: \(h.fingerprint)"] {
                try context.terminal.printLine(Terminal.printable(line))
            }
        }
        return .ok
    }
}
