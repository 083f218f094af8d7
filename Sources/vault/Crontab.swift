import System
import VaultCore

/// The user's crontab, where `vault schedule` puts a profile's line when
/// the machine has no systemd (issue 42). Lines are read and written with
/// the system's `crontab` (which owns the spool file); vault touches only
/// its own lines, each ending in "# vault schedule: PROFILE CALENDAR", and
/// keeps every other line as it was.
///
/// A profile's line ticks every ten minutes and runs `vault run PROFILE
/// --if-due`, which runs the backup only when a time of the schedule has
/// come since the last run: cron has no "persistent" timers, and this is
/// how a machine that was off or asleep catches up.
enum Crontab {
    static let marker = "# vault schedule: "

    enum Failure: Error { case unreadable(String), notInstalled(String) }

    static var available: Bool { Syscall.exists("/usr/bin/crontab") || Syscall.exists("/bin/crontab") }

    /// The current lines; [] when the user has no crontab yet.
    static func lines() throws(Failure) -> [String] {
        let (code, text) = shell("LC_ALL=C crontab -l 2>&1")
        if code == 0 { return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLastEmpty() }
        // Any other failure must not be taken for an empty crontab: the
        // next write would drop the user's own lines.
        guard text.hasPrefix("no crontab for ") else { throw .unreadable(text.split(separator: "\n").first.map(String.init) ?? "crontab -l failed") }
        return []
    }

    /// Installs `lines` as the whole crontab, through a file of ours in
    /// `scratch` (0600) that `crontab FILE` copies into its spool.
    static func install(_ lines: [String], scratch: String) throws {
        try Vault.ensureDirectory(scratch)
        let file = scratch + "/crontab.\(Syscall.processID)"
        try VaultDirectory.atomicWrite(Array((lines.joined(separator: "\n") + "\n").utf8), to: file, mode: 0o600)
        defer { try? Syscall.unlink(file) }  // best effort: a scratch copy of a crontab, never read again
        let (code, text) = shell("LC_ALL=C crontab \(quoted(file)) 2>&1")
        guard code == 0 else { throw Failure.notInstalled(text.split(separator: "\n").first.map(String.init) ?? "crontab failed") }
    }

    /// The profile a line of ours belongs to, and its calendar.
    static func entry(_ line: String) -> (profile: String, calendar: String)? {
        guard let range = line.range(of: marker) else { return nil }
        let rest = line[range.upperBound...]
        guard let space = rest.firstIndex(of: " ") else { return nil }
        return (String(rest[..<space]), String(rest[rest.index(after: space)...]))
    }

    /// The line that runs `binary run PROFILE --config FILE --if-due`. A
    /// '%' is a newline to cron: escaped. Output is dropped (a run is
    /// seen in `vault status`); errors and warnings go to cron's mail.
    static func line(binary: String, profile: String, config: String, calendar: String) -> String {
        let command = "nice -n 10 \(quoted(binary)) run \(profile) --config \(quoted(config)) --if-due >/dev/null"
        return "*/10 * * * * " + command.replacingOccurrences(of: "%", with: "\\%") + " " + marker + profile + " "
            + calendar.replacingOccurrences(of: "%", with: "\\%")
    }

    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    static func shell(_ command: String) -> (Int32, String) {
        // Without a shell there is no crontab to read: the callers say so.
        guard let (pid, output) = try? Syscall.spawnShell(command) else { return (127, "cannot start /bin/sh") }
        let text = String(decoding: (try? FileHandleFD(owning: output, path: nil).readAll(limit: 1 << 20)) ?? [], as: UTF8.self)
        guard case .exited(let code)? = try? Syscall.wait(pid) else { return (128, text) }
        return (code, text)
    }
}

extension Array where Element == String {
    /// Without the empty string a final newline leaves after a split.
    func dropLastEmpty() -> [String] { last == "" ? Array(dropLast()) : self }
}
