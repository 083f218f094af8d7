/// A Unix time as a UTC calendar date, computed directly (days-from-civil,
/// Howard Hinnant's algorithm, in 400-year eras from 0000-03-01): no libc
/// call, no formatter object shared between threads, any Int64 the caller
/// has clamped to a sane range. `JSONOutputDate` and the mount's snapshot
/// names format it their own ways.
public struct UTCTime: Equatable, Sendable {
    public let year: Int64, month: Int64, day: Int64
    public let hour: Int64, minute: Int64, second: Int64

    /// `seconds` must lie within years 0000...9999 (callers clamp first).
    public init(_ seconds: Int64) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let inDay = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        (hour, minute, second) = (inDay / 3600, inDay / 60 % 60, inDay % 60)
    }

    /// `n` in decimal, zero-padded to `width` digits.
    public static func pad(_ n: Int64, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}
