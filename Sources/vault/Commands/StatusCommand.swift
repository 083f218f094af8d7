import Foundation
import System
import VaultConfig
import VaultCore

/// `vault status`: per profile of the config file, its last run (when, how
/// it ended, its snapshot) and, for a scheduled one, when the next is due,
/// with a warning when a run is overdue (issue 42: "is it still running?").
struct StatusCommand: Command {
    static let name = "status"
    static let abstract = "the profiles' last runs and the next, with overdue ones named"
    static let configOption = RunCommand.configOption
    static let jsonFlag = FlagOption("--json")
    static let options = [configOption.spec, jsonFlag.spec]
    static let help = """
        Usage: vault status [--config FILE] [--json]

        For each profile of the config file (see 'vault run'): when it last
        ran, how that run ended (its exit code) and its snapshot, and, for a
        profile with a schedule, when the next run is due. A scheduled
        profile whose last run started longer ago than one period of its
        schedule and an hour more (or that never ran) is overdue: named in a
        warning, as is a profile whose last run failed, and vault exits 3,
        so a monitor can run 'vault status'.

        Options:
          --config FILE   another config file
          --json          one JSON document on standard output

        Examples:
          vault status
          vault status --json
        """

    let config: String?
    let json: Bool

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        _ = try arguments.exactly()
        config = try arguments.value(Self.configOption)
        json = arguments.isSet(Self.jsonFlag)
    }

    struct Row: Encodable {
        let profile: String
        let schedule: String?
        let last_start: Int64?
        let last_end: Int64?
        let last_exit_code: Int32?
        let last_snapshot: String?
        let next: Int64?
        let overdue: Bool
    }

    func run(_ context: Context) throws -> ExitCode {
        guard let path = config ?? RunCommand.defaultPath(context.environment) else {
            throw CLIError(message: "cannot tell where the config file is: HOME is not set", code: .usage)
        }
        let bytes = try RunCommand.readConfig(path)
        let file: ConfigFile
        do { file = try ConfigFile(parsing: bytes) } catch { throw CLIError(message: RunCommand.words(error, path: path), code: .usage) }
        let now = Syscall.now()
        var rows: [Row] = []
        for name in file.profiles.keys.sorted() {
            let p = file.profiles[name]!
            let last = ProfileRuns.last(context.stateDirectory, profile: name)
            let elapses = p.schedule.flatMap { Self.elapses($0) ?? Self.ownElapses($0, now) } ?? []
            // One period of the schedule (the gap between its next two
            // times), an hour of slack for the timer's random delay and the run.
            let overdue = elapses.count == 2 && (last.map { now - $0.start > elapses[1] - elapses[0] + 3600 } ?? true)
            rows.append(Row(profile: name, schedule: p.schedule, last_start: last?.start, last_end: last?.end, last_exit_code: last?.code,
                            last_snapshot: last?.snapshot, next: elapses.first, overdue: overdue))
        }
        if json {
            try context.terminal.printLine(try JSONOutput.encode(rows))
        } else {
            for r in rows {
                let last = r.last_start.map { "last run \(Format.stamp($0)), exit \(r.last_exit_code ?? -1)" + (r.last_snapshot.map { ", snapshot \($0.prefix(8))" } ?? "") } ?? "never ran"
                let next = r.next.map { "; next \(Format.stamp($0))" } ?? (r.schedule == nil ? "; no schedule" : "")
                try context.terminal.printLine("\(r.profile)  \(last)\(next)")
            }
        }
        for r in rows where r.overdue {
            context.terminal.warning("profile '\(r.profile)' is overdue: " + (r.last_start.map { "its last run started \(Format.stamp($0))" } ?? "it never ran"),
                                     hints: ["'vault schedule --list' shows the timers; 'journalctl --user -u vault-\(r.profile)' what they did"])
        }
        // A last run that failed is as much a monitor's business as a late one.
        for r in rows where !r.overdue {
            guard let code = r.last_exit_code, code != 0, let start = r.last_start else { continue }
            context.terminal.warning("profile '\(r.profile)': its last run (\(Format.stamp(start))) ended with exit \(code)",
                                     hints: ["'vault run \(r.profile)' runs it again and shows why"])
        }
        return rows.contains { $0.overdue || ($0.last_exit_code ?? 0) != 0 } ? .partial : .ok
    }

    /// The next two times by vault's own reading of the calendar (as `run
    /// --if-due` reads it), where there is no systemd-analyze.
    static func ownElapses(_ calendar: String, _ now: Int64) -> [Int64] {
        guard let c = try? CalendarSchedule(parsing: calendar), let a = c.next(after: now), let b = c.next(after: a) else { return [] }
        return [a, b]
    }

    /// The next two times (Unix seconds) of a systemd calendar, by
    /// `systemd-analyze calendar` in UTC; [] when it is not one; nil
    /// without systemd-analyze.
    static func elapses(_ calendar: String) -> [Int64]? {
        guard Syscall.exists("/usr/bin/systemd-analyze") else { return nil }
        let quoted = "'" + calendar.replacingOccurrences(of: "'", with: "'\\''") + "'"
        // Without an answer there is no next time to show: the caller says so.
        guard let (pid, output) = try? Syscall.spawnShell("TZ=UTC /usr/bin/systemd-analyze calendar --iterations=2 -- \(quoted) 2>/dev/null") else { return nil }
        let text = String(decoding: (try? FileHandleFD(owning: output, path: nil).readAll(limit: 1 << 16)) ?? [], as: UTF8.self)
        guard (try? Syscall.wait(pid)) == .exited(0) else { return [] }
        let parser = DateFormatter()
        parser.locale = Locale(identifier: "en_US_POSIX")
        parser.timeZone = TimeZone(identifier: "UTC")
        parser.dateFormat = "EEE yyyy-MM-dd HH:mm:ss"
        return text.split(separator: "\n").compactMap { line -> Int64? in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("Next elapse: ") || t.hasPrefix("Iter. #") else { return nil }
            guard let colon = t.firstIndex(of: ":") else { return nil }
            let stamp = t[t.index(after: colon)...].trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " UTC", with: "")
            return parser.date(from: stamp).map { Int64($0.timeIntervalSince1970) }
        }
    }
}
