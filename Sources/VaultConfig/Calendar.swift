#if canImport(Glibc)
import Glibc
#endif

/// A profile's `schedule:`, the systemd calendar (systemd.time(7)) it is
/// written in, evaluated by vault itself where systemd's timers are not
/// there to do it: a crontab line ticks every few minutes and `vault run
/// --if-due` asks `latest(atOrBefore:)` whether a time has come since the
/// last run (which is also how a machine that was off catches up).
///
/// The part of the grammar a backup schedule needs, with systemd's
/// meaning (a weekday and a date must both hold):
///
///     minutely hourly daily weekly monthly yearly annually quarterly semiannually
///     [WEEKDAYS] [[*-]MONTH-DAY] [HOUR:MINUTE[:00]]
///
/// WEEKDAYS is a list of `Mon`/`Monday` … and ranges `Mon..Fri`; every
/// other field a list of `*`, `N`, `N..M`, `N/STEP`, `*/STEP` or
/// `N..M/STEP`. A missing date is every day, a missing time 00:00. What a
/// crontab-driven run cannot honour exactly is refused rather than
/// approximated: a year, a second other than 0, `~` (days from the end of
/// the month) and a time zone.
public struct CalendarSchedule: Equatable, Sendable {
    public var weekdays: Set<Int>  // 0 = Sunday, as tm_wday
    public var months: Set<Int>
    public var days: Set<Int>
    public var hours: Set<Int>
    public var minutes: Set<Int>

    public enum Problem: Error, Equatable {
        /// The text, and what about it is not read.
        case unreadable(String)
    }

    static let shorthands = [
        "minutely": "*-*-* *:*:00", "hourly": "*-*-* *:00:00", "daily": "*-*-* 00:00:00",
        "weekly": "Mon *-*-* 00:00:00", "monthly": "*-*-01 00:00:00", "yearly": "*-01-01 00:00:00",
        "annually": "*-01-01 00:00:00", "quarterly": "*-01,04,07,10-01 00:00:00", "semiannually": "*-01,07-01 00:00:00",
    ]
    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    static let longDayNames = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    public init(parsing text: String) throws(Problem) {
        let trimmed = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        var words = trimmed.count == 1 ? (Self.shorthands[trimmed[0].lowercased()].map { $0.split(separator: " ").map(String.init) } ?? trimmed) : trimmed
        guard !words.isEmpty, words.count <= 3 else { throw .unreadable("expected [WEEKDAYS] [DATE] [TIME]") }
        weekdays = []
        if let first = words.first, first.first?.isLetter == true {
            weekdays = try Self.weekdays(first)
            words.removeFirst()
        }
        var date = "*-*-*", time = "00:00:00"
        for word in words {
            if word.contains(":"), time == "00:00:00", !word.contains("-") { time = word }
            else if word.contains("-"), date == "*-*-*", !word.contains(":") { date = word }
            else { throw .unreadable("'\(word)' is neither a date nor a time (a time zone is not supported)") }
        }
        guard !date.contains("~") else { throw .unreadable("'~' (days from the end of a month) is not supported") }
        var d = date.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        if d.count == 3 {
            guard d[0] == "*" else { throw .unreadable("a year is not supported: use '*-MONTH-DAY'") }
            d.removeFirst()
        }
        guard d.count == 2 else { throw .unreadable("'\(date)' is not MONTH-DAY or *-MONTH-DAY") }
        months = try Self.values(d[0], 1...12, "month")
        days = try Self.values(d[1], 1...31, "day")
        let t = time.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard t.count == 2 || t.count == 3 else { throw .unreadable("'\(time)' is not HOUR:MINUTE") }
        if t.count == 3, !(t[2] == "0" || t[2] == "00") { throw .unreadable("a second other than 00 is not supported") }
        hours = try Self.values(t[0], 0...23, "hour")
        minutes = try Self.values(t[1], 0...59, "minute")
    }

    static func weekdays(_ word: String) throws(Problem) -> Set<Int> {
        func day(_ s: Substring) throws(Problem) -> Int {
            let l = s.lowercased()
            guard let n = dayNames.firstIndex(of: l) ?? longDayNames.firstIndex(of: l) else { throw .unreadable("'\(s)' is not a weekday") }
            return n
        }
        var set = Set<Int>()
        for item in word.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = item.split(separator: ".", omittingEmptySubsequences: true)
            if item.contains("..") {
                guard ends.count == 2 else { throw .unreadable("'\(item)' is not a range of weekdays") }
                // Mon..Sun as systemd reads it: Monday first, so the range
                // goes forward through the week and never wraps.
                let a = (try day(ends[0]) + 6) % 7, b = (try day(ends[1]) + 6) % 7
                guard a <= b else { throw .unreadable("'\(item)' runs backwards") }
                for n in a...b { set.insert((n + 1) % 7) }
            } else {
                set.insert(try day(item))
            }
        }
        return set
    }

    static func values(_ field: String, _ bounds: ClosedRange<Int>, _ what: String) throws(Problem) -> Set<Int> {
        func number(_ s: Substring) throws(Problem) -> Int {
            guard !s.isEmpty, s.count <= 2, s.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(s), bounds.contains(n) else {
                throw .unreadable("'\(s)' is not a \(what) (\(bounds.lowerBound)-\(bounds.upperBound))")
            }
            return n
        }
        var set = Set<Int>()
        for item in field.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { throw .unreadable("'\(item)' has two steps") }
            var step = 1
            if parts.count == 2 {
                guard let s = Int(parts[1]), s >= 1, s <= bounds.upperBound else { throw .unreadable("'\(parts[1])' is not a step") }
                step = s
            }
            let range: ClosedRange<Int>
            if parts[0] == "*" {
                range = bounds
            } else if parts[0].contains("..") {
                let ends = parts[0].split(separator: ".", omittingEmptySubsequences: true)
                guard ends.count == 2 else { throw .unreadable("'\(parts[0])' is not a range") }
                let a = try number(ends[0]), b = try number(ends[1])
                guard a <= b else { throw .unreadable("'\(parts[0])' runs backwards") }
                range = a...b
            } else {
                let a = try number(parts[0])
                // "N/STEP" repeats from N to the end of the field's range.
                range = parts.count == 2 ? a...bounds.upperBound : a...a
            }
            for n in stride(from: range.lowerBound, through: range.upperBound, by: step) { set.insert(n) }
        }
        return set
    }

    /// Whether the minute `tm` (broken-down time) is one of the schedule's.
    func holds(_ tm: tm) -> Bool {
        months.contains(Int(tm.tm_mon) + 1) && days.contains(Int(tm.tm_mday)) && hours.contains(Int(tm.tm_hour))
            && minutes.contains(Int(tm.tm_min)) && (weekdays.isEmpty || weekdays.contains(Int(tm.tm_wday)))
    }

    /// The latest time of the schedule at or before `t` (Unix seconds, on
    /// a whole minute), in local time or UTC; nil when none is found in the
    /// eight years before (`*-02-30` never comes).
    public func latest(atOrBefore t: Int64, utc: Bool = false) -> Int64? {
        var now = time_t(t - ((t % 60) + 60) % 60)
        let floor = t - 8 * 366 * 86_400
        while Int64(now) >= floor {
            var tm = Glibc.tm()
            guard Self.broken(now, utc, &tm) else { return nil }
            if holds(tm) { return Int64(now) }
            // Step back to the last minute of the month, day or hour that
            // cannot hold, else one minute.
            var start = tm
            start.tm_sec = 0; start.tm_min = 0
            if !months.contains(Int(tm.tm_mon) + 1) { start.tm_hour = 0; start.tm_mday = 1 }
            else if !days.contains(Int(tm.tm_mday)) || !(weekdays.isEmpty || weekdays.contains(Int(tm.tm_wday))) { start.tm_hour = 0 }
            else if hours.contains(Int(tm.tm_hour)) { now -= 60; continue }
            let back = Self.make(&start, utc) - 60
            // A clock change can make the start of the hour later than now.
            now = back < now ? back : now - 60
        }
        return nil
    }

    /// The first time of the schedule after `t`; nil when none is found
    /// in the next eight years.
    public func next(after t: Int64, utc: Bool = false) -> Int64? {
        var now = time_t(t - ((t % 60) + 60) % 60 + 60)
        let ceiling = t + 8 * 366 * 86_400
        while Int64(now) <= ceiling {
            var tm = Glibc.tm()
            guard Self.broken(now, utc, &tm) else { return nil }
            if holds(tm) { return Int64(now) }
            var start = tm
            start.tm_sec = 0; start.tm_min = 0
            if !months.contains(Int(tm.tm_mon) + 1) { start.tm_hour = 0; start.tm_mday = 1; start.tm_mon += 1 }
            else if !days.contains(Int(tm.tm_mday)) || !(weekdays.isEmpty || weekdays.contains(Int(tm.tm_wday))) { start.tm_hour = 0; start.tm_mday += 1 }
            else if hours.contains(Int(tm.tm_hour)) { now += 60; continue }
            else { start.tm_hour += 1 }
            let ahead = Self.make(&start, utc)
            now = ahead > now ? ahead : now + 60
        }
        return nil
    }

    static func broken(_ t: time_t, _ utc: Bool, _ tm: inout tm) -> Bool {
        var t = t
        return utc ? gmtime_r(&t, &tm) != nil : localtime_r(&t, &tm) != nil
    }

    static func make(_ tm: inout tm, _ utc: Bool) -> time_t {
        tm.tm_isdst = -1
        return utc ? timegm(&tm) : mktime(&tm)
    }
}
