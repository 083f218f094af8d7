import VaultCore
import VaultCrypto

/// `vault passwd`: a new password, or a new Argon2id cost, for one password
/// slot (re-wraps the master key only).
struct PasswdCommand: Command {
    static let name = "passwd"
    static let abstract = "change the password (or its Argon2id cost)"
    static let newPasswordFileOption = ValueOption<String>.text("--new-password-file", as: "FILE")
    static let recalibrateFlag = FlagOption("--recalibrate")
    static let options = [newPasswordFileOption.spec, recalibrateFlag.spec] + KDFOptions.specs(lanes: false)
    static let help = """
        Usage: vault passwd [--new-password-file FILE]
                            [--kdf-memory MIB --kdf-passes N | --recalibrate]

        Changes the password of the password slot the current password opens
        (with the global --slot NAME, slot NAME: its current password unlocks
        it; 'vault key list' shows the slots). The current one comes from the
        usual sources (the terminal, --password-file, ...); the new one is
        asked twice on the terminal, or read from FILE. To replace a slot
        whose password you do not have, remove it and add it again
        ('vault key'). Only the wrapped master key changes: no item is
        re-encrypted, and the new header is verified before the old one is
        replaced. A vault of format version 1 is upgraded on the way.

        The slot keeps its Argon2id cost unless --kdf-memory/--kdf-passes set
        it or --recalibrate measures this machine again (about 0.5-1 s per
        unlock). To change only the cost, give the same password again.

        Options:
          --slot NAME                (global) the password slot to unlock and change
          --new-password-file FILE   read the new password from FILE
          --recalibrate              a new cost, calibrated on this machine
        \(KDFOptions.help(lanes: false, column: 27))

        Examples:
          vault passwd
          vault --password-file old.txt passwd --new-password-file new.txt
          vault --slot spouse passwd --recalibrate
        """

    let newPasswordFile: String?
    let recalibrate: Bool
    let kdf: KDFOptions

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        newPasswordFile = try arguments.value(Self.newPasswordFileOption)
        recalibrate = arguments.isSet(Self.recalibrateFlag)
        kdf = try KDFOptions(parsing: arguments, lanes: false)
        if recalibrate && !kdf.isEmpty { throw arguments.usageError("--recalibrate and --kdf-* contradict each other") }
    }

    func validate(environment: [String: String]) throws(CLIError) {
        try kdf.validate(environment: environment, command: Self.name)
    }

    func run(_ context: Context) throws -> ExitCode {
        // Both sources are resolved before either is read, so a missing way to
        // get the new password is reported before the user types the old one.
        var password = try context.passwordSource().refusingAgent("passwd")
        password.prompt = "current password: "
        let newPassword = try context.newPasswordSource(file: newPasswordFile)
        let vault = try context.unlock(password, forWriting: true, agent: false)
        var cost: Argon2Parameters?
        if recalibrate {
            context.terminal.note("calibrating Argon2id…")
            cost = try KDFCalibration.calibrate().0
        } else if !kdf.isEmpty {
            let name = vault.unlockedSlot
            var current = KDFCalibration.minimum
            if let s = name.flatMap({ vault.vault.header.slot(named: $0) }), case .password(let p, _) = s.kind { current = p }
            cost = try kdf.parameters(calibrated: current)
        }
        let secret = try newPassword.read()
        try vault.changePassword(to: Password(secret: secret), kdf: cost)
        if let cost {
            context.terminal.note("password changed; argon2id: \(cost.memoryKiB / 1024) MiB, \(cost.passes) passes")
        } else {
            context.terminal.note("password changed")
        }
        return .ok
    }
}
