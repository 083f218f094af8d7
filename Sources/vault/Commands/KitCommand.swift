import Foundation
import System
import VaultCore
import VaultCrypto

/// `vault kit export` / `vault kit recover`: the recovery kit.
struct KitCommand: Command {
    static let name = "kit"
    static let abstract = "export a recovery kit, or recover the vault with one"
    static let outputOption = ValueOption<String>.text("--output", "-o", as: "FILE")
    static let htmlOption = ValueOption<String>.text("--html", as: "FILE")
    static let passphraseFileOption = ValueOption<String>.text("--passphrase-file", as: "FILE")
    static let newPasswordFileOption = ValueOption<String>.text("--new-password-file", as: "FILE")
    static let generateFlag = FlagOption("--generate")
    static let options = [outputOption.spec, htmlOption.spec, passphraseFileOption.spec, generateFlag.spec, newPasswordFileOption.spec]
        + KDFOptions.specs(lanes: false)
    static let help = """
        Usage: vault kit export [-o FILE | --html FILE] [--passphrase-file FILE | --generate]
               vault kit recover KITFILE [--passphrase-file FILE] [--new-password-file FILE]

        A recovery kit is a printable text file holding the vault's master key
        (not the data), sealed under a kit passphrase with Argon2id. With the
        kit, its passphrase and a copy of the vault directory, anyone can set
        a new password and read everything: keep it offline and safe. It keeps
        working after 'vault passwd'; after 'vault rekey' export a new one.

        export (needs the password) writes the kit to FILE (never over an
        existing file, mode 0600) or to standard output; --html FILE writes it
        as one printable page instead (A4 or Letter: the lines, the QR code,
        what to do with it; nothing loaded from elsewhere). The kit passphrase
        (at least 8 characters) is asked twice on the terminal, read from
        --passphrase-file, or made up with --generate (130 random bits, printed
        once on standard output: write it down).

        recover asks for the kit passphrase and a new vault password (twice,
        or --new-password-file), and makes the vault open with that password.
        KITFILE '-' reads the kit from standard input; on a terminal, type its
        numbered lines (the BEGIN and END lines are optional), then an empty
        line. A mistyped line is named as soon as it is typed, with the
        group to check (or the few a checksum cannot tell apart), and that
        line alone is asked again; so is a mistyped line of a KITFILE when
        a terminal is there (the file is not changed). A passphrase made by
        --generate may be typed in any case, with or without its dashes.

        Options:
          -o, --output FILE          export: where to write the kit
          --html FILE                export: write the kit as a printable HTML page
          --passphrase-file FILE     the kit passphrase, from FILE
          --generate                 export: make a random kit passphrase
          --new-password-file FILE   recover: the new vault password, from FILE
        \(KDFOptions.help(lanes: false, prefix: "export: ", column: 27))

        By default the kit's Argon2id cost is calibrated on this machine.

        Examples:
          vault kit export -o ~/vault-recovery-kit.txt
          vault kit export --generate -o /media/usb/kit.txt
          vault kit export --html ~/vault-kit.html
          vault --vault /mnt/copy/vault kit recover kit.txt
        """

    enum Action { case export(output: String?, html: Bool), recover(kit: String) }

    let action: Action
    let passphraseFile: String?
    let generate: Bool
    let kdf: KDFOptions
    let newPasswordFile: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let words = try arguments.oneOrMore("export|recover")
        passphraseFile = try arguments.value(Self.passphraseFileOption)
        generate = arguments.isSet(Self.generateFlag)
        kdf = try KDFOptions(parsing: arguments, lanes: false)
        newPasswordFile = try arguments.value(Self.newPasswordFileOption)
        switch words[0] {
        case "export":
            guard words.count == 1 else { throw arguments.usageError("kit export takes no arguments") }
            guard newPasswordFile == nil else { throw arguments.usageError("--new-password-file is for kit recover") }
            if generate && passphraseFile != nil {
                throw arguments.usageError("--generate and --passphrase-file contradict each other")
            }
            let output = try arguments.value(Self.outputOption), html = try arguments.value(Self.htmlOption)
            if output != nil && html != nil { throw arguments.usageError("-o and --html each name the file: give one") }
            action = .export(output: html ?? output, html: html != nil)
        case "recover":
            guard words.count == 2 else { throw arguments.usageError("kit recover needs exactly one KITFILE") }
            guard !generate, try arguments.value(Self.outputOption) == nil, try arguments.value(Self.htmlOption) == nil, kdf.isEmpty else {
                throw arguments.usageError("--generate, --output, --html and --kdf-* are for kit export")
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
        case .export(let output, let html):
            // The vault's password source first: with only the agent, its refusal is the error.
            let password = try context.passwordSource().refusingAgent("kit export")
            let passphrase: NewPasswordSource? = generate ? nil : try context.newPasswordSource(file: passphraseFile)
            return try export(context, password: password, passphrase: passphrase, output: output, html: html)
        case .recover(let kit):
            let passphrase = try context.newPasswordSource(file: passphraseFile).single
            let new = try context.newPasswordSource(file: newPasswordFile)
            return try recover(context, kit: kit, passphrase: passphrase, newPassword: new)
        }
    }

    private func export(_ context: Context, password: PasswordSource,
                          passphrase: NewPasswordSource?, output: String?, html: Bool) throws -> ExitCode {
        if let output, UserFiles.exists(output) { throw VaultError.alreadyExists(path: output) }
        let vault = try context.unlock(password, forWriting: false, agent: false)
        var generated: [UInt8] = []
        defer { SecureZero.zero(&generated) }
        let secret: SecretBytes
        if let passphrase {
            secret = try passphrase.read(what: "kit passphrase")
            // Characters = UTF-8 lead bytes; counted in place, without a copy of the secret.
            guard secret.withUnsafeBytes({ $0.reduce(0) { $0 + ($1 & 0xC0 != 0x80 ? 1 : 0) } }) >= 8 else {
                throw CLIError(message: "the kit passphrase must have at least 8 characters",
                               hints: ["or let vault make one: 'vault kit export --generate'"], code: .usage)
            }
        } else {
            generated = KitArmor.generatedPassphrase()
            secret = try generated.withUnsafeBytes { try SecretBytes(copying: $0) }
        }
        var kdf: Argon2Parameters
        if self.kdf.skipsCalibration {
            kdf = try self.kdf.parameters(calibrated: KDFCalibration.minimum)
        } else {
            context.terminal.note("calibrating Argon2id for the kit…")
            kdf = try self.kdf.parameters(calibrated: KDFCalibration.calibrate().0)
        }
        let kit = try vault.exportKit(passphrase: Password(secret: secret), kdf: kdf)
        let fingerprint = vault.vault.header.fingerprint
        let document = try html ? KitPage.html(kit: kit, fingerprint: fingerprint, created: Date())
                                : KitDocument.text(kit: kit, fingerprint: fingerprint, created: Date())
        if let output {
            try UserFiles.writeNew(Array(document.utf8), to: output)
            context.terminal.note("wrote the recovery kit to '\(output)' (keep it offline; whoever has it and its passphrase can open the vault)")
        } else {
            try context.terminal.printLine(document)
        }
        if !generated.isEmpty {
            try context.terminal.printLine("kit passphrase (shown once, write it down): " + String(decoding: generated, as: UTF8.self))
        }
        return .ok
    }

    /// The kit's lines typed at the terminal, up to an empty line after
    /// the first, the END line, or end of input; at most 64 KiB. Each line
    /// is checked as soon as it is typed (the terminal hands over one line
    /// per read, pasted or typed): a wrong one is named, with its group
    /// where that can be told, and asked again at once, not after all ten.
    static func readTypedKit(_ terminal: Terminal) throws -> [UInt8] {
        Terminal.writeStderr(["type the kit's numbered lines (01 to \(KitArmor.lines)), then an empty line:"])
        var lines: [String] = []
        var size = 0
        while size < 64 << 10 {
            let line: String
            do { guard let l = try terminal.askLine("", limit: 1024) else { break }; line = l } catch {
                break   // end of input: what was typed is decoded, and says what is missing
            }
            if line.allSatisfy(\.isWhitespace) {
                if lines.contains(where: { !$0.allSatisfy(\.isWhitespace) }) { break }
                continue
            }
            lines.append(try Self.checkedLine(line, terminal: terminal))
            size += line.utf8.count + 1
            if line.filter({ $0 != " " }).hasPrefix("-----END") { break }
        }
        return Array(lines.joined(separator: "\n").utf8) + [UInt8(ascii: "\n")]
    }

    /// `line`, or, while it is wrong, that line typed again (up to 5 times).
    static func checkedLine(_ line: String, terminal: Terminal) throws -> String {
        var line = line
        for _ in 1...5 {
            guard case .kitLine(let n, let problem)? = KitArmor.problem(inLine: line), problem != .noSuchLine,
                  let again = try retype(n, problem, terminal: terminal) else { break }
            line = KitArmor.replacingLine(n, in: "", with: again).trimmingCharacters(in: .newlines)
        }
        return line
    }

    /// Says what is wrong with line `n` and asks for it again; nil at the
    /// end of input.
    private static func retype(_ n: Int, _ problem: KitLineProblem, terminal: Terminal) throws -> String? {
        terminal.report(ErrorReport.cliError(for: VaultError.kitLine(line: n, problem: problem), vaultDirectory: nil))
        let number = n < 10 ? "0\(n)" : "\(n)"
        terminal.note("type line \(number) again")
        return try terminal.askLine("line \(number): ", limit: 256)
    }

    /// A typed kit with a line that is wrong (a checksum, a length, a
    /// character, missing or typed twice): that line alone is asked again,
    /// up to 5 times, not the whole kit.
    static func fixTypedKit(_ typed: [UInt8], terminal: Terminal) throws -> [UInt8] {
        var text = String(decoding: typed, as: UTF8.self)
        for _ in 1...5 {
            do { _ = try KitArmor.decode(text); break } catch VaultError.kitLine(let n, let problem) where problem != .noSuchLine {
                guard let again = try retype(n, problem, terminal: terminal) else { break }
                text = KitArmor.replacingLine(n, in: text, with: again)
            }
        }
        return Array(text.utf8)
    }

    private func recover(_ context: Context, kit path: String,
                           passphrase: PasswordSource, newPassword: NewPasswordSource) throws -> ExitCode {
        let vault = try Vault(at: context.vaultDirectory)
        var text: [UInt8]
        if path == "-" && Syscall.isTerminal(0) {
            text = try Self.fixTypedKit(Self.readTypedKit(context.terminal), terminal: context.terminal)
        } else if path == "-" {
            text = try FileHandleFD(borrowing: 0).readAll(limit: 64 << 10)
        } else {
            // A regular file only: a FIFO would wait for ever ('-' reads a pipe).
            do { text = try FileHandleFD.regularFile(path, what: .recoveryKit).readAll(limit: 64 << 10) } catch let error as VaultError {
                guard case .notARegularFile = error else { throw error }
                var report = ErrorReport.cliError(for: error, vaultDirectory: nil)
                report.hints = ["to read the kit from a pipe, give '-' and send it to standard input"]
                throw report
            }
            // A kit typed into a file by hand, with a typo: on a terminal,
            // that line alone is typed again (the file is not changed).
            if Syscall.isTerminal(0) { text = try Self.fixTypedKit(text, terminal: context.terminal) }
        }
        let kit = try RecoveryKit(parsing: KitArmor.decode(String(decoding: text, as: UTF8.self)))
        let secret = try passphrase.read(prompt: "kit passphrase: ")
        let unlocked: UnlockedVault
        do { unlocked = try vault.unlock(kit: kit, passphrase: Password(secret: secret), rollbackGuard: context.rollbackGuard) } catch VaultError.wrongPassword {
            throw CLIError(message: "wrong kit passphrase", code: .wrongPassword)
        }
        try unlocked.tidy()
        let new = try newPassword.read()
        try unlocked.changePassword(to: Password(secret: new))
        context.terminal.note("recovered: the vault now opens with the new password")
        return .ok
    }
}
