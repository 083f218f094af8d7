/// `vault rekey`: a new master key and new file keys, every item re-encrypted.
struct RekeyCommand: Command {
    static let name = "rekey"
    static let abstract = "new master key and file keys, every item re-encrypted"
    static let options: [OptionSpec] = [.flag("--yes")]
    static let help = """
        Usage: vault rekey [--yes]

        Makes a new master key and new keys for every item, and re-encrypts
        everything: the answer to "a copy of my old password or recovery kit
        may have leaked". The password stays the same (change it with
        'vault passwd'). Recovery kits made before stop working: export a new
        one afterwards. A kill or crash at any moment leaves the vault opening
        with the password, in the old state or the new one.

        Asks for confirmation on the terminal unless --yes is given.

        Options:
          --yes   do not ask for confirmation (for scripts)

        Examples:
          vault rekey
          vault rekey --yes --password-file ~/.config/vault/password
        """

    let confirmed: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        confirmed = arguments.flag("--yes")
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.rekey(self, context, password: context.passwordSource())
    }
}
