/// Which snapshots `vault snapshots forget` keeps, in restic's words: each
/// rule adds to what is kept, within each group of snapshots of one host
/// and one set of paths; the newest of a group is always kept. Hours,
/// days, weeks (Monday to Sunday), months and years are UTC, by each
/// snapshot's end time, as `vault forget` counts days for items.
public struct SnapshotPolicy: Sendable, Equatable {
    public var last = 0, hourly = 0, daily = 0, weekly = 0, monthly = 0, yearly = 0
    /// Keep every snapshot that ended within this many seconds of the newest.
    public var within: Int64?
    public init() {}

    public var isEmpty: Bool { self == SnapshotPolicy() }

    /// The snapshots to forget, of `snapshots` (any order, any groups).
    public func forgettable(_ snapshots: [SnapshotReader]) -> [SnapshotReader] {
        let groups = Dictionary(grouping: snapshots) { r in [Array(r.snapshot.host.utf8)] + r.snapshot.paths }
        return groups.values.flatMap { group -> [SnapshotReader] in
            let newestFirst = group.sorted { ($0.snapshot.end.seconds, $0.snapshot.end.nanoseconds, $0.id) > ($1.snapshot.end.seconds, $1.snapshot.end.nanoseconds, $1.id) }
            var keep = Set(newestFirst.prefix(max(1, last)).map(\.id))
            func newestPer(_ n: Int, _ bucket: (Int64) -> Int64) {
                var seen = Set<Int64>()
                for r in newestFirst where seen.count < n {
                    if seen.insert(bucket(r.snapshot.end.seconds)).inserted { keep.insert(r.id) }
                }
            }
            newestPer(hourly) { Self.floor($0, 3600) }
            newestPer(daily) { Self.floor($0, 86_400) }
            // 1970-01-01 was a Thursday: day + 3 counts from a Monday.
            newestPer(weekly) { Self.floor(Self.floor($0, 86_400) + 3, 7) }
            newestPer(monthly) { let (y, m) = Self.yearMonth($0); return y * 12 + m }
            newestPer(yearly) { Self.yearMonth($0).year }
            if let within, let newest = newestFirst.first?.snapshot.end.seconds {
                for r in newestFirst {
                    let (age, overflow) = newest.subtractingReportingOverflow(r.snapshot.end.seconds)
                    if !overflow, age <= within { keep.insert(r.id) }
                }
            }
            return newestFirst.filter { !keep.contains($0.id) }
        }
    }

    static func floor(_ a: Int64, _ d: Int64) -> Int64 {
        let q = a / d
        return (a % d != 0 && a < 0) ? q - 1 : q
    }

    /// The UTC year and month (1...12) of a Unix time (days to civil, H. Hinnant).
    static func yearMonth(_ unix: Int64) -> (year: Int64, month: Int64) {
        let z = floor(unix, 86_400) + 719_468
        let era = floor(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month)
    }
}
