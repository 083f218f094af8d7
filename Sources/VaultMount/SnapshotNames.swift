import System

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
        // 0000-01-01 ... 9999-12-31T23:59:59
        let t = UTCTime(min(max(seconds, -62_167_219_200), 253_402_300_799))
        let p = UTCTime.pad
        return "\(p(t.year, 4))-\(p(t.month, 2))-\(p(t.day, 2))T\(p(t.hour, 2))-\(p(t.minute, 2))-\(p(t.second, 2))Z"
    }

    /// A path's components if each is a name a directory can hold; nil otherwise.
    static func components(_ path: [UInt8]) -> [[UInt8]]? {
        let parts = path.split(separator: 0x2f).map(Array.init).filter { $0 != [0x2e] }
        guard parts.allSatisfy({ !$0.isEmpty && $0.count <= 255 && $0 != [0x2e, 0x2e] && !$0.contains(0) }) else { return nil }
        return parts
    }
}
