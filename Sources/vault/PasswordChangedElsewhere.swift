import System
import VaultCore

/// A pull that brought in a header whose password slots differ from this
/// machine's leaves a note in the vault directory (`remote.header-taken`:
/// the remote's name and the time, machine-local like the other
/// `remote.*` files, erased with them by `move`). A wrong password while
/// it is there says plainly that the password changed elsewhere (issue 43,
/// item 11: before, the user's password was "simply wrong"); the first
/// password that opens the vault removes it.
enum PasswordChangedElsewhere {
    static func path(_ vault: String) -> String { VaultPaths(root: vault).root + "/remote.header-taken" }

    static func record(vault: String, remote: String) {
        let text = remote + "\n" + String(Syscall.now()) + "\n"
        // Only a better message depends on it: a note that cannot be written is none.
        try? VaultDirectory.atomicWrite(Array(text.utf8), to: path(vault))
    }

    /// (remote, unix time) of the pull that brought the change, if noted.
    static func noted(vault: String) -> (remote: String, time: Int64)? {
        // Absent (the usual case), unreadable or too long: no note.
        guard let data = try? VaultDirectory.readFile(path(vault), limit: 1024) else { return nil }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        guard lines.count == 2, let time = Int64(lines[1]) else { return nil }
        return (String(lines[0]), time)
    }

    static func clear(vault: String) { try? Syscall.unlink(path(vault)) }   // absent is the usual case

    /// The wrong-password error, in the words of what happened.
    static func wrongPassword(vault: String) -> CLIError? {
        guard let (remote, time) = noted(vault: vault) else { return nil }
        return CLIError(message: "wrong password: this vault's password was changed on another machine, and came here with the pull from '\(Terminal.printable(remote))' on \(Format.stamp(time))",
                        hints: ["use the password set there", "a lost password: 'vault kit recover' with this vault's recovery kit"],
                        code: .wrongPassword)
    }
}
