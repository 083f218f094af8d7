/// `vault kit export` / `vault kit recover`: the recovery kit.
struct KitCommand: Command {
    static let name = "kit"
    static let abstract = "export a recovery kit, or recover the vault with one"
    static let options: [OptionSpec] = [
        .value("--output", "-o", as: "FILE"), .value("--passphrase-file", as: "FILE"), .flag("--generate"),
        .value("--kdf-memory", as: "MIB"), .value("--kdf-passes", as: "N"), .value("--new-password-file", as: "FILE"),
    ]
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
          --kdf-memory MIB           export: Argon2id memory for the kit (default: calibrated)
          --kdf-passes N             export: Argon2id passes for the kit
          --new-password-file FILE   recover: the new vault password, from FILE

        Examples:
          vault kit export -o ~/vault-recovery-kit.txt
          vault kit export --generate -o /media/usb/kit.txt
          vault --vault /mnt/copy/vault kit recover kit.txt
        """

    enum Action { case export(output: String?), recover(kit: String) }

    let action: Action
    let passphraseFile: String?
    let generate: Bool
    let kdfMemoryMiB: UInt32?
    let kdfPasses: UInt32?
    let newPasswordFile: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let words = try arguments.oneOrMore("export|recover")
        passphraseFile = arguments.value("--passphrase-file")
        generate = arguments.flag("--generate")
        kdfMemoryMiB = try arguments.number("--kdf-memory")
        kdfPasses = try arguments.number("--kdf-passes")
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
            guard !generate, arguments.value("--output") == nil, kdfMemoryMiB == nil, kdfPasses == nil else {
                throw arguments.usageError("--generate, --output and --kdf-* are for kit export")
            }
            action = .recover(kit: words[1])
        default:
            throw arguments.usageError("unknown kit action '\(words[0])': use export or recover")
        }
    }

    func validate(environment: [String: String]) throws(CLIError) {
        let weak = environment["VAULT_ALLOW_WEAK_KDF"] == "1"
        if let m = kdfMemoryMiB, m < InitCommand.minimumMemoryMiB && !weak || m > 2048 || m == 0 {
            throw .usage("--kdf-memory \(m) MiB is outside 64...2048 (lower only with VAULT_ALLOW_WEAK_KDF=1)", command: Self.name)
        }
        if let t = kdfPasses, t < InitCommand.minimumPasses && !weak || t > 16 || t == 0 {
            throw .usage("--kdf-passes \(t) is outside 3...16 (lower only with VAULT_ALLOW_WEAK_KDF=1)", command: Self.name)
        }
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
