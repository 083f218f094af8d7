import VaultCore
import VaultCrypto

/// `vault key list|add|remove`: the header's key slots (docs/FORMAT.md,
/// "Vault header, version 2").
struct KeyCommand: Command {
    static let name = "key"
    static let abstract = "list, add or remove key slots (passwords, key files)"
    static let newKeyFileOption = ValueOption<String>.text("--new-key-file", as: "FILE")
    static let generateFlag = FlagOption("--generate")
    static let newPasswordFileOption = ValueOption<String>.text("--new-password-file", as: "FILE")
    static let jsonFlag = FlagOption("--json")
    static let yesFlag = FlagOption("--yes")
    static let options = [newKeyFileOption.spec, generateFlag.spec, newPasswordFileOption.spec, jsonFlag.spec, yesFlag.spec]
        + KDFOptions.specs(lanes: false)
    static let help = """
        Usage: vault key list [--json]
               vault key add NAME [--new-password-file FILE] [--kdf-memory MIB --kdf-passes N]
               vault key add NAME --new-key-file FILE [--generate]
               vault key remove NAME [--yes]

        A vault has 1 to 8 key slots, each opening the same master key: more
        passwords (each with its own Argon2id salt and cost), or key files
        (32 to 4096 random bytes, stretched with HKDF, not Argon2id). A
        password unlocks through any password slot (one Argon2id run per slot
        tried; 'vault passwd --slot NAME' changes one); the global
        --key-file FILE unlocks through a key-file slot.

        list (no password) shows a table, one slot a line: its name, kind,
        cost and when it was added (local time). add and remove need the
        vault opened (password or --key-file); the new header is verified
        before it replaces the old one, and a vault of format version 1 is
        upgraded on the way. remove never takes the last slot, and asks for
        confirmation on a terminal unless --yes. A removed password still
        opens old copies of the header (backups).

        Options:
          --json                     list: one JSON document on standard output
          --new-password-file FILE   add: the new slot's password, from FILE
                                     (else asked twice on the terminal)
          --new-key-file FILE        add: a key-file slot opened by FILE
          --generate                 add: write FILE first (64 random bytes, mode 0600,
                                     never over an existing file)
          --yes                      remove: do not ask for confirmation
        \(KDFOptions.help(lanes: false, prefix: "add: ", column: 27))

        A new password slot's cost is calibrated on this machine unless
        --kdf-memory and --kdf-passes are both given.

        Examples:
          vault key list
          vault key add laptop --new-key-file ~/.config/vault/laptop.key --generate
          vault --key-file ~/.config/vault/laptop.key list
          vault key add spouse
          vault key remove spouse
        """

    enum Action {
        case list(json: Bool)
        case add(name: String, keyFile: String?, generate: Bool, passwordFile: String?)
        case remove(name: String, confirmed: Bool)
    }

    let action: Action
    let kdf: KDFOptions

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let words = try arguments.oneOrMore("list|add|remove")
        kdf = try KDFOptions(parsing: arguments, lanes: false)
        let keyFile = try arguments.value(Self.newKeyFileOption)
        let generate = arguments.isSet(Self.generateFlag)
        let passwordFile = try arguments.value(Self.newPasswordFileOption)
        let json = arguments.isSet(Self.jsonFlag), yes = arguments.isSet(Self.yesFlag)
        func only(_ allowed: Bool, _ message: String) throws(CLIError) {
            if !allowed { throw arguments.usageError(message) }
        }
        switch words[0] {
        case "list":
            try only(words.count == 1, "key list takes no arguments")
            try only(keyFile == nil && !generate && passwordFile == nil && !yes && kdf.isEmpty, "key list takes only --json")
            action = .list(json: json)
        case "add":
            try only(words.count == 2, "key add needs exactly one NAME")
            try only(!json && !yes, "--json is for key list, --yes for key remove")
            try only(!generate || keyFile != nil, "--generate needs --new-key-file FILE")
            try only(keyFile == nil || (passwordFile == nil && kdf.isEmpty),
                     "a key-file slot has no password and no Argon2id cost")
            action = .add(name: words[1], keyFile: keyFile, generate: generate, passwordFile: passwordFile)
        case "remove":
            try only(words.count == 2, "key remove needs exactly one NAME")
            try only(keyFile == nil && !generate && passwordFile == nil && !json && kdf.isEmpty, "key remove takes only --yes")
            action = .remove(name: words[1], confirmed: yes)
        default:
            throw arguments.usageError("unknown key action '\(words[0])': use list, add or remove")
        }
    }

    func validate(environment: [String: String]) throws(CLIError) {
        try kdf.validate(environment: environment, command: Self.name)
    }

    func run(_ context: Context) throws -> ExitCode {
        switch action {
        case .list(let json): return try list(context, json: json)
        case .add(let name, let keyFile, let generate, let passwordFile):
            do { try KeySlot.checkName(name) } catch { throw CLIError(message: "a key slot name is 1 to 32 letters, digits or -_.@", code: .usage) }
            let current = try context.passwordSource().refusingAgent("key add")
            let newPassword = keyFile == nil ? try context.newPasswordSource(file: passwordFile) : nil
            if let keyFile, generate, UserFiles.exists(keyFile) { throw VaultError.alreadyExists(path: keyFile) }
            // An existing key file is read before the password is asked for:
            // a mistyped path fails at once, not after the unlock.
            var existing: KeyFileSecret?
            if let keyFile, !generate {
                guard UserFiles.exists(keyFile) else {
                    throw CLIError(message: "no key file '\(keyFile)'",
                                   hints: ["add --generate to write a new key file there"], code: .usage)
                }
                existing = try context.readKeyFile(keyFile)
            }
            let vault = try context.unlock(current, forWriting: true, agent: false)
            let credential: SlotCredential
            if let keyFile {
                credential = .keyFile(try existing ?? KeyFileSecret.generate(to: keyFile))
            } else if let newPassword {
                let secret = try newPassword.read(what: "password for slot '\(name)'")
                credential = .password(Password(secret: secret), try cost(context))
            } else { return .usage }
            try vault.addSlot(name: name, credential: credential)
            context.terminal.note("added key slot '\(name)' (\(credential.kindName))"
                                  + (keyFile.map { generate ? "; wrote the key file '\($0)': keep it like a private key" : " with '\($0)'" } ?? ""))
            return .ok
        case .remove(let name, let confirmed):
            let current = try context.passwordSource().refusingAgent("key remove")
            guard try Vault(at: context.vaultDirectory).header.slot(named: name) != nil else {
                throw CLIError(message: "no key slot named '\(name)'", hints: ["'vault key list' shows them"], code: .usage)
            }
            if !confirmed {
                guard let yes = context.terminal.confirm("remove key slot '\(name)'?") else {
                    throw CLIError(message: "key remove needs confirmation", hints: ["run it on a terminal, or add --yes"], code: .usage)
                }
                guard yes else { throw CLIError(message: "key remove cancelled; nothing changed") }
            }
            let vault = try context.unlock(current, forWriting: true, agent: false)
            try vault.removeSlot(name: name)
            context.terminal.note("removed key slot '\(name)'")
            return .ok
        }
    }

    /// The Argon2id cost of a new password slot: both --kdf-* given, or calibrated.
    private func cost(_ context: Context) throws -> Argon2Parameters {
        if kdf.skipsCalibration { return try kdf.parameters(calibrated: KDFCalibration.minimum) }
        context.terminal.note("calibrating Argon2id for the new slot…")
        return try kdf.parameters(calibrated: KDFCalibration.calibrate().0)
    }

    private func list(_ context: Context, json: Bool) throws -> ExitCode {
        let header = try Vault(at: context.vaultDirectory).header
        if json {
            struct Listing: Encodable {
                let formatVersion: Int
                let slots: [JSONOutput.Info.Slot]
                enum CodingKeys: String, CodingKey { case formatVersion = "format_version", slots }
            }
            try context.terminal.printLine(JSONOutput.encode(Listing(formatVersion: Int(header.version),
                                                                     slots: JSONOutput.Info.slots(of: header))))
            return .ok
        }
        // Each cell escaped on its own (Terminal.printable), then padded:
        // escaping a whole line would turn column separators into "\x09".
        let rows = header.slots.map { s in
            var cost = "-"
            if case .password(let p, _) = s.kind {
                cost = "argon2id \(p.memoryKiB / 1024) MiB, \(Format.count(p.passes, "pass", "passes")), \(Format.count(p.lanes, "lane"))"
            } else if case .keyFile = s.kind {
                cost = "hkdf-sha256"
            }
            return [s.name, s.kind.name, cost, s.created == 0 ? "-" : Format.date(s.created)].map(Terminal.printable)
        }
        for line in Format.table(header: ["NAME", "KIND", "COST", "CREATED"], rows: rows) {
            try context.terminal.printLine(line)
        }
        if header.version == 1 {
            context.terminal.note("format version 1: one password; adding a slot upgrades the header")
        }
        return .ok
    }
}

extension KeySlot.Kind {
    /// How `key list`, `info`, their JSON and messages name the kind.
    var name: String {
        switch self {
        case .password: "password"
        case .keyFile: "key file"
        case .other(let k, _): "unknown kind \(k)"
        }
    }
}

extension SlotCredential {
    /// The kind of slot this credential makes, named as `KeySlot.Kind.name` does.
    var kindName: String {
        switch self {
        case .password: "password"
        case .keyFile: "key file"
        }
    }
}
