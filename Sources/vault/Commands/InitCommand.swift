import VaultCrypto

/// `vault init`: creates a vault, with Argon2id calibrated on this machine
/// unless overridden.
struct InitCommand: Command {
    static let name = "init"
    static let abstract = "create a vault (asks for the new password twice)"
    static let options: [OptionSpec] = [
        .value("--kdf-memory", as: "MIB"), .value("--kdf-passes", as: "N"), .value("--kdf-lanes", as: "N"),
        .flag("--compress"),
    ]
    static let help = """
        Usage: vault init [--kdf-memory MIB] [--kdf-passes N] [--kdf-lanes N] [--compress]

        Creates a vault in the vault directory (see --vault in 'vault --help').
        The password is asked twice on the terminal, or read once from
        --password-file or --password-command. Argon2id is calibrated to take
        about half a second to a second on this machine; vault prints what it
        chose. The options override the calibration.

        Options:
          --kdf-memory MIB   Argon2id memory in MiB (at least 64, at most 4096)
          --kdf-passes N     Argon2id passes (at least 3, at most 64)
          --kdf-lanes N      Argon2id lanes (1 to 16)
          --compress         compress new items by default when it pays
                             ('add --no-compress' overrides it per add)

        Values below 64 MiB or 3 passes are refused unless VAULT_ALLOW_WEAK_KDF=1
        is set in the environment. That is for tests and demos only: it makes
        guessing the password from a copy of the vault far cheaper.

        Examples:
          vault init
          vault --vault /mnt/usb/vault init --kdf-memory 1024
          vault init --password-file ~/.config/vault/password
        """

    static let minimumMemoryMiB: UInt32 = 64
    static let minimumPasses: UInt32 = 3

    /// Argon2id overrides; nil means "calibrate".
    let kdfMemoryMiB: UInt32?
    let kdfPasses: UInt32?
    let kdfLanes: UInt32?
    let compressByDefault: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        kdfMemoryMiB = try arguments.number("--kdf-memory")
        kdfPasses = try arguments.number("--kdf-passes")
        kdfLanes = try arguments.number("--kdf-lanes")
        compressByDefault = arguments.flag("--compress")
    }

    func validate(environment: [String: String]) throws(CLIError) {
        let weakAllowed = environment["VAULT_ALLOW_WEAK_KDF"] == "1"
        try check("--kdf-memory", kdfMemoryMiB, unit: " MiB", hard: 1...Argon2Parameters.maxMemoryKiB / 1024,
                  floor: Self.minimumMemoryMiB, weakAllowed: weakAllowed)
        try check("--kdf-passes", kdfPasses, unit: "", hard: 1...Argon2Parameters.maxPasses,
                  floor: Self.minimumPasses, weakAllowed: weakAllowed)
        try check("--kdf-lanes", kdfLanes, unit: "", hard: 1...Argon2Parameters.maxLanes,
                  floor: 1, weakAllowed: weakAllowed)
    }

    private func check(_ option: String, _ value: UInt32?, unit: String, hard: ClosedRange<UInt32>,
                       floor: UInt32, weakAllowed: Bool) throws(CLIError) {
        guard let value else { return }
        if value > hard.upperBound {
            throw .usage("\(option) \(value)\(unit) is above the maximum of \(hard.upperBound)", command: Self.name)
        }
        if value < hard.lowerBound {
            throw .usage("\(option) \(value)\(unit) is below the minimum of \(hard.lowerBound)", command: Self.name)
        }
        if value < floor && !weakAllowed {
            throw CLIError(message: "\(option) \(value)\(unit) is below the minimum of \(floor)",
                           hints: ["weaker settings are for tests and demos only: set VAULT_ALLOW_WEAK_KDF=1 to allow them"],
                           code: .usage)
        }
    }

    /// The parameters to use: each override replaces its calibrated value.
    func kdf(calibrated: Argon2Parameters) throws -> Argon2Parameters {
        try Argon2Parameters(memoryKiB: kdfMemoryMiB.map { $0 * 1024 } ?? calibrated.memoryKiB,
                             passes: kdfPasses ?? calibrated.passes, lanes: kdfLanes ?? calibrated.lanes)
    }

    func run(_ context: Context) throws -> ExitCode {
        try Wiring.initVault(self, context, password: context.firstPasswordSource())
    }
}
