/// The names `snapshots/` gives: a host's directory, and a snapshot's
/// directory named by its start time in UTC, sortable and safe in a file
/// name ("2026-12-01T16-05-00Z"; "…Z-2", "…Z-3" for more snapshots of one
/// host started in the same second, in the order they started).
enum SnapshotNames {
    /// The host as a file name: '/' and NUL become '_', and "", "." and
    /// ".." get a leading '_' (the host is whatever the dropper wrote).
    static func host(_ host: String) -> [UInt8] {
        var bytes = Array(host.utf8.prefix(200)).map { $0 == 0x2f || $0 == 0 ? UInt8(ascii: "_") : $0 }
        if bytes.isEmpty || bytes == [0x2e] || bytes == [0x2e, 0x2e] { bytes.insert(UInt8(ascii: "_"), at: 0) }
        return bytes
    }

    /// `seconds` since 1970 as "YYYY-MM-DDTHH-MM-SSZ", clamped to years 0000...9999.
    static func time(_ seconds: Int64) -> String {
        let s = min(max(seconds, -62_167_219_200), 253_402_300_799)   // 0000-01-01 ... 9999-12-31T23:59:59
        let days = s >= 0 ? s / 86_400 : (s - 86_399) / 86_400
        let inDay = s - days * 86_400
        // Civil date from days (H. Hinnant's algorithm), in 400-year eras from 0000-03-01.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ n: Int64, _ width: Int) -> String {
            let t = String(n)
            return String(repeating: "0", count: max(0, width - t.count)) + t
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(inDay / 3600, 2))-\(pad(inDay / 60 % 60, 2))-\(pad(inDay % 60, 2))Z"
    }

    /// A path's components if each is a name a directory can hold; nil otherwise.
    static func components(_ path: [UInt8]) -> [[UInt8]]? {
        let parts = path.split(separator: 0x2f).map(Array.init).filter { $0 != [0x2e] }
        guard parts.allSatisfy({ !$0.isEmpty && $0.count <= 255 && $0 != [0x2e, 0x2e] && !$0.contains(0) }) else { return nil }
        return parts
    }
}
