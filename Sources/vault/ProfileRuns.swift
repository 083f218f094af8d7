import System
import VaultCore

/// What `vault run` leaves for `vault status` and for the next run, in
/// `<state directory>/runs/` (0700):
///
///     PROFILE.lock   flock'ed (exclusive, not waited for) while a run goes on:
///                    two runs of one profile never overlap
///     PROFILE.last   "vault run v1\n" start "\t" end "\t" exit code "\t" snapshot id or "-" "\n"
///                    (Unix seconds; written atomically when a run ends)
///     PROFILE.since  "vault since v1\n" Unix seconds "\n": when `vault schedule`
///                    put the profile in the crontab (times before it are not due)
///     PROFILE.checked  "vault checked v1\n" Unix seconds "\n": when its `check:` last passed
enum ProfileRuns {
    struct Last: Equatable {
        var start: Int64, end: Int64, code: Int32, snapshot: String?
    }

    static func directory(_ state: String) -> String { state + "/runs" }

    /// Holds the profile's lock for the life of the returned handle; nil
    /// when another run holds it.
    static func lock(_ state: String, profile: String) throws -> FileHandleFD? {
        try Vault.ensureDirectory(directory(state))
        let path = directory(state) + "/" + profile + ".lock"
        let fd = try Syscall.open(FilePath(path), [.readWrite, .create, .noFollow], mode: 0o600)
        let handle = FileHandleFD(owning: fd, path: path)
        return try Syscall.flock(fd, exclusive: true, wait: false) ? handle : nil
    }

    static func record(_ state: String, profile: String, _ last: Last) {
        let text = "vault run v1\n\(last.start)\t\(last.end)\t\(last.code)\t\(last.snapshot ?? "-")\n"
        // Lost, `vault status` shows the run before: the backup itself stands.
        try? VaultDirectory.atomicWrite(Array(text.utf8), to: directory(state) + "/" + profile + ".last", mode: 0o600)
    }

    /// A time kept for the profile: "since" (`vault schedule` put it in
    /// the crontab) or "checked" (its last passed `check:`).
    enum Stamp: String { case since, checked }

    static func write(_ stamp: Stamp, _ state: String, profile: String, at time: Int64) {
        // Lost, a "since" lets the first tick run for a time that passed
        // before the schedule (one backup early), a "checked" lets the next
        // run check again: nothing worse.
        try? Vault.ensureDirectory(directory(state))
        try? VaultDirectory.atomicWrite(Array("vault \(stamp.rawValue) v1\n\(time)\n".utf8),
                                        to: directory(state) + "/" + profile + "." + stamp.rawValue, mode: 0o600)
    }

    static func read(_ stamp: Stamp, _ state: String, profile: String) -> Int64? {
        guard let bytes = try? VaultDirectory.readFile(directory(state) + "/" + profile + "." + stamp.rawValue, limit: 64) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.count == 2, lines[0] == "vault \(stamp.rawValue) v1" else { return nil }
        return Int64(lines[1])
    }

    static func last(_ state: String, profile: String) -> Last? {
        guard let bytes = try? VaultDirectory.readFile(directory(state) + "/" + profile + ".last", limit: 256) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.count == 2, lines[0] == "vault run v1" else { return nil }
        let f = lines[1].split(separator: "\t")
        guard f.count == 4, let start = Int64(f[0]), let end = Int64(f[1]), let code = Int32(f[2]) else { return nil }
        return Last(start: start, end: end, code: code, snapshot: f[3] == "-" ? nil : String(f[3]))
    }
}
