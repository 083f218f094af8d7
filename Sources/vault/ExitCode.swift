/// The one exit-code table. Scripts depend on these numbers: never renumber a
/// case. `vault --help` prints `table`; README.md and the man page copy it.
enum ExitCode: Int32, CaseIterable, Sendable {
    /// Success.
    case ok = 0
    /// A failure with no more specific code below.
    case failure = 1
    /// The command line was wrong, or there is no way to get the password.
    case usage = 2
    /// Some inputs were skipped; the others were done.
    case partial = 3
    /// No vault at the given path.
    case noVault = 10
    /// Another process holds the vault's writer lock.
    case busy = 11
    /// The password did not open the vault.
    case wrongPassword = 12
    /// Too many wrong passwords: the attempt delay is running.
    case lockedOut = 13
    /// Stored data failed authentication: corrupted or tampered with.
    case corrupted = 14
    /// The target already exists; vault never overwrites.
    case exists = 15
    /// No item of that name.
    case noSuchItem = 16
    /// The other side of a move did not accept its code (a typo, an old
    /// code, someone in between): checked before anything else is done.
    case moveCodeRefused = 17
    /// The remote could not be reached, or rclone failed there.
    case remote = 20
    /// Stopped by Ctrl-C (SIGINT), SIGTERM or SIGHUP. vault does not exit
    /// with this number: after its cleanup it dies by the signal itself, so
    /// that a shell loop stops too; the shell then shows 128 + the signal
    /// (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP).
    case interrupted = 130
    /// Standard output was closed early (`vault list | head -1`); nothing
    /// is printed, as for a program killed by SIGPIPE (128 + 13).
    case brokenPipe = 141

    /// The line for this code in `table`.
    var summary: String {
        switch self {
        case .ok: "success"
        case .failure: "failure not listed below"
        case .usage: "usage: bad command line, or no way to get the password"
        case .partial: "partial: some inputs were skipped, the others were done"
        case .noVault: "no vault at that path"
        case .busy: "vault busy: another process is writing to it"
        case .wrongPassword: "wrong password"
        case .lockedOut: "locked out: a wrong-password delay is running, try again later"
        case .corrupted: "corrupted or tampered data"
        case .exists: "would overwrite: the target already exists"
        case .noSuchItem: "no such item"
        case .moveCodeRefused: "move: the other side did not accept the code"
        case .remote: "remote unreachable, or rclone failed there"
        case .interrupted: "interrupted: killed by the signal after cleanup (Ctrl-C 130, SIGTERM 143, SIGHUP 129)"
        case .brokenPipe: "output closed early (a reader such as 'head' stopped); nothing is printed"
        }
    }

    /// The table as `vault --help` shows it.
    static var table: String {
        allCases.map { code in
            let number = String(code.rawValue)
            return String(repeating: " ", count: 5 - number.count) + number + "  " + code.summary
        }.joined(separator: "\n")
    }
}
