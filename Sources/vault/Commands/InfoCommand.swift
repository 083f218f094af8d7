/// `vault info`: what the clear header says, without the password.
struct InfoCommand: Command {
    static let name = "info"
    static let abstract = "show the vault's format and settings (no password)"
    static let options: [OptionSpec] = [.flag("--json")]
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
        json = arguments.flag("--json")
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.info(self, context)
    }
}
