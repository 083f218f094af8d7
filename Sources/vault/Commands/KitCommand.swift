/// `vault kit export` / `vault kit recover`: the recovery kit.
struct KitCommand: Command {
    static let name = "kit"
    static let abstract = "export a recovery kit, or recover the vault with one"
    static let options: [OptionSpec] = [
        .value("--output", "-o", as: "FILE"), .value("--passphrase-file", as: "FILE"), .flag("--generate"),
        .value("--new-password-file", as: "FILE"),
    ] + KDFOptions.specs(lanes: false)
    static let help = """
        Usage: vault kit export [-o FILE] [--passphrase-file FILE | --generate]
               vault kit recover KITFILE [--passphrase-file FILE] [--new-password-file FILE]

        A recovery kit is a printable text file holding the vault's master key
        (not the data), sealed under a kit passphrase with Argon2id. With the
        kit, its passphrase and a copy of the vault directory, anyone can set
        a new password and read everything: keep it offline and safe. It keeps
        working after 'vault passwd'; after 'vault rekey' export a new one.

        export (needs the password) writes the kit to FILE (never over an
        existing file, mode 0600) or to standard output. The kit passphrase
        (at least 8 characters) is asked twice on the terminal, read from
        --passphrase-file, or made up with --generate (130 random bits, printed
        once on standard output: write it down).

        recover asks for the kit passphrase and a new vault password (twice,
        or --new-password-file), and makes the vault open with that password.
        KITFILE '-' reads a kit typed back in by hand; a mistyped line is
        reported by its number.

        Options:
          -o, --output FILE          export: where to write the kit
          --passphrase-file FILE     the kit passphrase, from FILE
          --generate                 export: make a random kit passphrase
          --new-password-file FILE   recover: the new vault password, from FILE
        \(KDFOptions.help(lanes: false, prefix: "export: ", column: 27))

        By default the kit's Argon2id cost is calibrated on this machine.

        Examples:
          vault kit export -o ~/vault-recovery-kit.txt
          vault kit export --generate -o /media/usb/kit.txt
          vault --vault /mnt/copy/vault kit recover kit.txt
        """

    enum Action { case export(output: String?), recover(kit: String) }

    let action: Action
    let passphraseFile: String?
    let generate: Bool
    let kdf: KDFOptions
    let newPasswordFile: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let words = try arguments.oneOrMore("export|recover")
        passphraseFile = arguments.value("--passphrase-file")
        generate = arguments.flag("--generate")
        kdf = try KDFOptions(parsing: arguments, lanes: false)
        newPasswordFile = arguments.value("--new-password-file")
        switch words[0] {
        case "export":
            guard words.count == 1 else { throw arguments.usageError("kit export takes no arguments") }
            guard newPasswordFile == nil else { throw arguments.usageError("--new-password-file is for kit recover") }
            if generate && passphraseFile != nil {
                throw arguments.usageError("--generate and --passphrase-file contradict each other")
            }
            action = .export(output: arguments.value("--output"))
        case "recover":
            guard words.count == 2 else { throw arguments.usageError("kit recover needs exactly one KITFILE") }
            guard !generate, arguments.value("--output") == nil, kdf.isEmpty else {
                throw arguments.usageError("--generate, --output and --kdf-* are for kit export")
            }
            action = .recover(kit: words[1])
        default:
            throw arguments.usageError("unknown kit action '\(words[0])': use export or recover")
        }
    }

    func validate(environment: [String: String]) throws(CLIError) {
        try kdf.validate(environment: environment, command: Self.name)
    }

    func run(_ context: Context) throws -> ExitCode {
        switch action {
        case .export(let output):
            let passphrase: NewPasswordSource? = generate ? nil : try context.newPasswordSource(file: passphraseFile)
            return try Wiring.kitExport(self, context, password: context.passwordSource(), passphrase: passphrase,
                                        output: output)
        case .recover(let kit):
            let passphrase = try context.newPasswordSource(file: passphraseFile).single
            let new = try context.newPasswordSource(file: newPasswordFile)
            return try Wiring.kitRecover(self, context, kit: kit, passphrase: passphrase, newPassword: new)
        }
    }
}
