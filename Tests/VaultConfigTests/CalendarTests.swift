import Foundation
import Testing
@testable import VaultConfig

/// vault's own reading of a systemd calendar (the crontab schedules of
/// issue 42), with systemd-analyze as the oracle: the same next times.
@Suite("Calendar schedules")
struct CalendarTests {
    static let expressions = [
        "minutely", "hourly", "daily", "weekly", "monthly", "yearly", "quarterly", "semiannually",
        "*-*-* 02:00", "02:00", "Mon..Fri 19:30", "Sat,Sun 10:00", "*-*-1,15 04:30", "*:0/15", "0/6:00",
        "Mon *-*-01 03:00", "*-02-29 12:00", "Wed..Sat 8..10:05", "Tuesday *-*-* 23:59:00", "12-25 07:00", "*-1..3/2-* 00:30",
    ]

    /// Next times by `systemd-analyze calendar` in UTC.
    func systemd(_ expression: String, _ n: Int) throws -> [Int64] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        p.arguments = ["calendar", "--iterations=\(n)", "--", expression]
        p.environment = ["TZ": "UTC", "PATH": "/usr/bin:/bin"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "EEE yyyy-MM-dd HH:mm:ss"
        return text.split(separator: "\n").compactMap { line in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("Next elapse: ") || t.hasPrefix("Iter. #"), let colon = t.firstIndex(of: ":") else { return nil }
            let stamp = t[t.index(after: colon)...].trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " UTC", with: "")
            return f.date(from: stamp).map { Int64($0.timeIntervalSince1970) }
        }
    }

    func ours(_ s: CalendarSchedule, from t: Int64, _ n: Int) -> [Int64] {
        var times: [Int64] = [], at = t
        while times.count < n, let next = s.next(after: at, utc: true) { times.append(next); at = next }
        return times
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
    func theNextTimesAreSystemds() throws {
        for e in Self.expressions {
            let s = try CalendarSchedule(parsing: e)
            // A minute that turns between the two answers is asked again.
            for attempt in 0..<3 {
                let before = Int64(Date().timeIntervalSince1970)
                let theirs = try systemd(e, 6)
                let mine = ours(s, from: before, 6)
                if theirs == mine { break }
                #expect(attempt < 2 && Int64(Date().timeIntervalSince1970) / 60 != before / 60, "\(e): \(mine) vs systemd's \(theirs)")
            }
        }
    }

    /// The latest time at or before t holds, and none comes between it and t.
    @Test func theLatestTimeIsTheOneJustBefore() throws {
        var rng = SystemRandomNumberGenerator()
        for e in Self.expressions {
            let s = try CalendarSchedule(parsing: e)
            for _ in 0..<20 {
                let t = Int64.random(in: 1_700_000_000...1_900_000_000, using: &rng)
                let latest = try #require(s.latest(atOrBefore: t, utc: true), "\(e)")
                #expect(latest <= t && latest % 60 == 0)
                #expect(s.next(after: latest, utc: true).map { $0 > t } ?? false, "\(e) at \(t): \(latest)")
                if t % 60 == 0 { #expect(s.latest(atOrBefore: t - 1, utc: true).map { $0 < t } ?? false) }
            }
        }
        // In local time too (whatever zone this machine has).
        let now = Int64(Date().timeIntervalSince1970)
        let daily = try CalendarSchedule(parsing: "daily")
        let l = try #require(daily.latest(atOrBefore: now))
        #expect(now - l < 86_400 + 3600 && daily.next(after: l).map { $0 > now } == true)
    }

    @Test func whatACrontabCannotHonourIsRefused() {
        for bad in ["*-*-* 02:00 Europe/Berlin", "2027-*-* 00:00", "*-*-~1", "*-*-* 02:00:30", "every night", "Mon..", "Fri..Mon 02:00",
                    "*-13-01", "25:00", "*:0/0", "+5:00", ""] {
            #expect(throws: CalendarSchedule.Problem.self, "\(bad)") { try CalendarSchedule(parsing: bad) }
        }
        #expect(CalendarSchedule(parsingOrNil: "*-02-30 00:00").flatMap { $0.next(after: 0, utc: true) } == nil)
    }
}

extension CalendarSchedule {
    init?(parsingOrNil text: String) { try? self.init(parsing: text) }
}
