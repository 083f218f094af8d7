import System

/// An error ready for the user: one message, optional hints, one exit code.
/// `Terminal.report` prints it as `vault: <message>` and `hint: <hint>` lines.
struct CLIError: Error, Equatable, Sendable {
    /// Lower case, no trailing period, no "error:" prefix.
    var message: String
    var hints: [String] = []
    var code: ExitCode = .failure

    /// A command-line mistake: exit 2, with a pointer to the right help page.
    static func usage(_ message: String, command: String?) -> CLIError {
        let page = command.map { "vault \($0) --help" } ?? "vault --help"
        return CLIError(message: message, hints: ["see '\(page)'"], code: .usage)
    }

    /// Standard output's reader went away; `main` exits 141 and prints nothing.
    static let brokenPipe = CLIError(message: "standard output closed", code: .brokenPipe)

}

/// A failure whose messages the command has already printed (several of
/// them, as `restore` and `check` do); only its exit code remains.
struct ReportedError: Error {
    let code: ExitCode
    init(_ code: ExitCode) { self.code = code }
}

extension Error {
    /// What went wrong, for a message: a system call's strerror text
    /// ("no such file or directory"), else the error itself.
    var systemReason: String { (self as? SystemError)?.reason ?? "\(self)" }
}
