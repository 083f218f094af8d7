import Foundation
import VaultCore
import VaultCrypto

/// `vault init`: creates a vault, with Argon2id calibrated on this machine
/// unless overridden.
struct InitCommand: Command {
    static let name = "init"
    static let abstract = "create a vault (asks for the new password twice)"
    static let compressFlag = FlagOption("--compress")
    static let sharedFlag = FlagOption("--shared")
    static let options = KDFOptions.specs(lanes: true) + [compressFlag.spec, sharedFlag.spec]
    static let help = """
        Usage: vault init [--kdf-memory MIB] [--kdf-passes N] [--kdf-lanes N] [--compress] [--shared]

        Creates a vault in the vault directory (see --vault in 'vault --help'),
        made if missing; one that exists is made private (0700) all the same.
        The password is asked twice on the terminal, or read once from
        --password-file or --password-command. Argon2id is calibrated to take
        about half a second to a second on this machine; vault prints what it
        chose. The options override the calibration.

        Options:
        \(KDFOptions.help(lanes: true))
          --compress         nothing for this version, which compresses by default
                             (see 'vault add --compression'); kept for old scripts,
                             it sets the header option older versions read
          --shared           let other users of this machine add items, and
                             nothing else (see 'vault share')

        Values below \(KDFLimits.minimumMemoryMiB) MiB or \(KDFLimits.minimumPasses) passes are refused unless VAULT_ALLOW_WEAK_KDF=1
        is set in the environment. That is for tests and demos only: it makes
        guessing the password from a copy of the vault far cheaper.

        Examples:
          vault init
          vault --vault /mnt/usb/vault init --kdf-memory 1024
          vault init --password-file ~/.config/vault/password
        """

    /// Argon2id overrides; what is not given is calibrated.
    let kdf: KDFOptions
    let compressByDefault: Bool
    let shared: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        kdf = try KDFOptions(parsing: arguments, lanes: true)
        compressByDefault = arguments.isSet(Self.compressFlag)
        shared = arguments.isSet(Self.sharedFlag)
    }

    func validate(environment: [String: String]) throws(CLIError) {
        try kdf.validate(environment: environment, command: Self.name)
    }

    func run(_ context: Context) throws -> ExitCode {
        let password = try context.firstPasswordSource()
        let paths = VaultPaths(root: context.vaultDirectory)
        if (try? Vault(at: paths.root)) != nil {
            throw CLIError(message: "a vault already exists at '\(paths.root)'",
                           hints: ["use it ('vault info' describes it), or make a new one elsewhere with --vault DIR"], code: .exists)
        }
        let secret = try password.read()
        var kdf: Argon2Parameters
        var seconds: Double? = nil
        if self.kdf.skipsCalibration {
            kdf = try self.kdf.parameters(calibrated: KDFCalibration.minimum)
        } else {
            context.terminal.note("calibrating Argon2id on this machine…")
            let (calibrated, measured) = try KDFCalibration.calibrate()
            kdf = try self.kdf.parameters(calibrated: calibrated)
            if kdf == calibrated { seconds = measured }
        }
        let vault = try Vault.create(at: paths.root, password: Password(secret: secret), kdf: kdf,
                                     options: compressByDefault ? [.compressByDefault] : []).vault
        let time = seconds.map { String(format: " (%.2f s per unlock here)", $0) } ?? ""
        context.terminal.note("created a vault at '\(paths.root)'")
        context.terminal.note("argon2id: \(kdf.memoryKiB / 1024) MiB, \(Format.count(kdf.passes, "pass", "passes")), \(Format.count(kdf.lanes, "lane"))\(time)")
        context.terminal.note("public key fingerprint: \(vault.header.fingerprint)")
        // Said once, here: nothing else will (issue 29, item 15).
        context.terminal.note("a lost password means lost data: nobody can reset it",
                              hint: "'vault kit export' makes a recovery kit to print and keep apart from this machine")
        if shared {
            try vault.setShared(true)
            // The vault is made either way; a parent that keeps others out is a warning here.
            do { try ShareCommand.announce(vault, context) } catch let error as CLIError {
                context.terminal.warning(error.message, hints: error.hints)
            }
        }
        if KDFCalibration.isWeak(kdf) {
            context.terminal.warning("these Argon2id settings are weak: for tests and demos only")
        }
        return .ok
    }
}
