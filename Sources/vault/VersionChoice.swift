import System
import VaultCore

/// Which version of an item `get` and `restore` read: `--version N` or
/// `--at DATE`, else the current one.
enum VersionChoice: Equatable, Sendable {
    case current
    case number(UInt32)
    /// The version that was current at this Unix time.
    case at(Int64)

    static let versionOption = ValueOption<UInt32>.number("--version", as: "N")
    static let atOption = ValueOption<String>.text("--at", as: "DATE")
    static let specs = [versionOption.spec, atOption.spec]

    init(parsing arguments: ParsedArguments) throws(CLIError) {
        let number = try arguments.value(Self.versionOption), date = try arguments.value(Self.atOption)
        switch (number, date) {
        case (nil, nil): self = .current
        case (let n?, nil):
            guard n >= 1 else { throw arguments.usageError("versions are numbered from 1") }
            self = .number(n)
        case (nil, let d?):
            guard let t = Self.parseDate(d) else {
                throw arguments.usageError("'\(d)' is not a date: use YYYY-MM-DD, 'YYYY-MM-DD HH:MM[:SS]' or @UNIXSECONDS")
            }
            self = .at(t)
        case (_?, _?): throw arguments.usageError("--version and --at cannot be used together")
        }
    }

    func entry(_ name: String, in vault: UnlockedVault) throws -> ManifestEntry {
        switch self {
        case .current: try vault.entry(named: name)
        case .number(let n): try vault.entry(named: name, version: n)
        case .at(let t): try vault.entry(named: name, at: t)
        }
    }

    /// DATE in local time (as `list` shows dates), the latest second it
    /// names: `2026-11-30` is the end of that day, `2026-11-30 14:05` the end
    /// of that minute. `T` may replace the space; a trailing `Z` means UTC;
    /// `@1767225600` is Unix seconds.
    static func parseDate(_ text: String) -> Int64? {
        if text.hasPrefix("@") { return Int64(text.dropFirst()) }
        var s = Substring(text)
        let utc = s.hasSuffix("Z")
        if utc { s = s.dropLast() }
        let parts = s.split(separator: " ", omittingEmptySubsequences: false).flatMap {
            $0.split(separator: "T", omittingEmptySubsequences: false)
        }
        guard parts.count == 1 || parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        let clock = parts.count == 2 ? parts[1].split(separator: ":", omittingEmptySubsequences: false) : []
        guard date.count == 3, date[0].count == 4, date[1].count == 2, date[2].count == 2,
              clock.isEmpty || clock.count == 2 || clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              (date + clock).allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let y = Int(date[0]), let mo = Int(date[1]), let d = Int(date[2]),
              (1...12).contains(mo), (1...daysIn(month: mo, year: y)).contains(d) else { return nil }
        let c = clock.compactMap { Int($0) }
        let (h, mi, sec) = (c.first ?? 23, c.count > 1 ? c[1] : 59, c.count > 2 ? c[2] : 59)
        // No :60: Unix time has no leap seconds, and mktime would roll it
        // (as it rolls 2026-11-31) into the next minute.
        guard (0...23).contains(h), (0...59).contains(mi), (0...59).contains(sec) else { return nil }
        if utc { return daysFromCivil(y, mo, d) * 86_400 + Int64(h * 3600 + mi * 60 + sec) }
        return Syscall.unixTime(localYear: y, month: mo, day: d, hour: h, minute: mi, second: sec)
    }

    /// The length of `month` (1-12) in the proleptic Gregorian calendar:
    /// dates are checked against it, since mktime and `daysFromCivil` would
    /// both roll 2026-11-31 or 2026-02-29 into the next month.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64(month > 2 ? month - 3 : month + 9)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
