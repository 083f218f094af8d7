import VaultCore
import VaultCrypto

/// `vault passwd`: a new password (re-wraps the master key only).
struct PasswdCommand: Command {
    static let name = "passwd"
    static let abstract = "change the password"
    static let newPasswordFileOption = ValueOption<String>.text("--new-password-file", as: "FILE")
    static let options = [newPasswordFileOption.spec]
    static let help = """
        Usage: vault passwd [--new-password-file FILE]

        Changes the password. The current one comes from the usual sources
        (the terminal, --password-file, ...); the new one is asked twice on the
        terminal, or read from FILE. Only the wrapped master key changes: no
        item is re-encrypted, and the new header is verified before the old
        one is replaced.

        Options:
          --new-password-file FILE   read the new password from FILE

        Examples:
          vault passwd
          vault --password-file old.txt passwd --new-password-file new.txt
        """

    let newPasswordFile: String?

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        newPasswordFile = try arguments.value(Self.newPasswordFileOption)
    }

    func run(_ context: Context) throws -> ExitCode {
        // Both sources are resolved before either is read, so a missing way to
        // get the new password is reported before the user types the old one.
        let password = try context.passwordSource()
        let newPassword = try context.newPasswordSource(file: newPasswordFile)
        let vault = try context.unlock(password, forWriting: true)
        let secret = try newPassword.read()
        try vault.changePassword(to: Password(secret: secret))
        context.terminal.note("password changed")
        return .ok
        }

}
