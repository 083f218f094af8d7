import Foundation
import System
import VaultCore

/// Human-readable renderings for `list`, `add`, `check`.
enum Format {
    /// 1536 -> "1.5 KiB"; exact bytes below 1 KiB.
    static func size(_ bytes: UInt64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB"]
        var v = Double(bytes) / 1024, i = 0
        while v >= 1024 && i < units.count - 1 { v /= 1024; i += 1 }
        return String(format: v < 10 ? "%.1f %@" : "%.0f %@", v, units[i])
    }

    /// "2026-11-30 21:40" in local time. localtime_r rather than a
    /// DateFormatter: listing 130,000 items spent a third of its time in ICU.
    static func date(_ unix: Int64) -> String {
        guard let t = Syscall.localTime(clampedTime(unix)) else { return "????-??-?? ??:??" }
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let year = String(t.year)
        return String(repeating: "0", count: max(0, 4 - year.count)) + year + "-" + two(t.month) + "-" + two(t.day)
            + " " + two(t.hour) + ":" + two(t.minute)
    }

    /// "2026-11-30 21:40:05" in local time: always the date, and seconds,
    /// where rows are told apart by time (snapshots taken minutes apart,
    /// entries of a snapshot); a bare "05:55" said too little (issue 43).
    static func stamp(_ unix: Int64) -> String {
        guard let t = Syscall.localTime(clampedTime(unix)) else { return "????-??-?? ??:??:??" }
        return date(unix) + ":" + (t.second < 10 ? "0\(t.second)" : "\(t.second)")
    }

    /// "15:42" in local time, with the date when it is not today.
    static func time(_ unix: Int64) -> String {
        let full = date(unix)
        return full.prefix(10) == date(Syscall.now()).prefix(10) ? String(full.suffix(5)) : full
    }

    /// 90 -> "1 min 30 s", 7200 -> "2 h", 86_400 -> "1 d": whole units, at most two.
    static func duration(_ seconds: UInt32) -> String {
        let parts = [(86_400, "d"), (3600, "h"), (60, "min"), (1, "s")]
        var rest = Int(seconds), out: [String] = []
        for (size, unit) in parts where rest >= size && out.count < 2 {
            out.append("\(rest / size) \(unit)")
            rest %= size
        }
        return out.isEmpty ? "0 s" : out.joined(separator: " ")
    }

    /// Years 1 to 9999: an entry written before absorb refused other times
    /// still prints as a date.
    static func clampedTime(_ unix: Int64) -> Int64 { min(max(unix, ItemRules.earliestTime), ItemRules.latestTime) }

    /// The words JSON uses too: dropped in by `vault add` (no password), or
    /// written by a command that had the vault unlocked.
    static func origin(_ o: ItemOrigin) -> String { o == .droppedIn ? "dropped-in" : "unlocked" }

    /// The ORIGIN cell: `origin`, or "dropped in by USER" for another
    /// user's drop-in (a shared inbox); nothing more for the owner's own.
    static func origin(_ e: ManifestEntry) -> String {
        e.droppedBy.map { "dropped in by " + $0.display } ?? origin(e.origin)
    }

    /// `s` as one shell word: as is when it holds only safe characters,
    /// else in single quotes (a quote inside as '\'').
    static func shellWord(_ s: String) -> String {
        let safe = !s.isEmpty && s.unicodeScalars.allSatisfy { c in
            c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || "/._-+:@%=,".unicodeScalars.contains(c))
        }
        return safe ? s : "'" + s.replacing("'", with: "'\\''") + "'"
    }

    /// The one stderr line `get`, `open` and `restore` give when the
    /// version they read is another user's drop-in; nil for the owner's own.
    static func droppedWarning(_ e: ManifestEntry) -> String? {
        e.droppedBy.map { "'\(e.name)' (version \(e.version)) was dropped in by \($0.display), another user of this machine" }
    }

    /// The ORIGIN column's width for these entries: 10, or the longest "dropped in by USER".
    static func originWidth(_ entries: some Sequence<ManifestEntry>) -> Int {
        entries.reduce(10) { max($0, origin($1).count) }
    }

    /// "1 item", "3 items"; `plural` where adding "s" is wrong.
    static func count(_ n: some BinaryInteger, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) " + (n == 1 ? singular : plural ?? singular + "s")
    }

    /// "3 items", or with history "3 items, 5 versions".
    static func items(_ items: Int, versions: Int) -> String {
        count(items, "item") + (versions > items ? ", " + count(versions, "version") : "")
    }

    /// `s` padded with spaces to `n` characters (never cut).
    static func pad(_ s: String, _ n: Int) -> String {
        let count = s.count
        return count >= n ? s : s + String(repeating: " ", count: n - count)
    }

    /// The column heads over `listLine`'s columns.
    static func listHeader(originWidth: Int = 10) -> String {
        "     SIZE     STORED  ADDED             KIND                \(pad("ORIGIN", originWidth))  VERSIONS  NAME"
    }

    /// `SIZE  STORED  ADDED  KIND  ORIGIN  VERSIONS  NAME`: name last, since
    /// it may hold spaces. A folder's kind shows its file count ("folder, 12
    /// files"), its size the total; STORED is what its sealed blob takes on
    /// disk (compressed, padded; "-" if the blob is missing); VERSIONS is how
    /// many the item has.
    static func listLine(_ e: ManifestEntry, stored: UInt64?, versions: Int, originWidth: Int = 10) -> String {
        Terminal.printable("\(padLeft(size(e.size), 9))  \(padLeft(stored.map(size) ?? "-", 9))  \(date(e.added))  "
                           + "\(pad(kind(e), 18))  \(pad(origin(e), originWidth))  \(padLeft(String(versions), 8))  \(e.name)")
    }

    /// The column heads over `versionLine`'s columns (`list --versions`).
    static func versionHeader(originWidth: Int = 10) -> String {
        "VERSION       SIZE     STORED  ADDED             KIND                \(pad("ORIGIN", originWidth))  NAME"
    }

    /// `VERSION  SIZE  ADDED  KIND  ORIGIN  NAME`, for `list --versions`.
    static func versionLine(_ e: ManifestEntry, stored: UInt64?, originWidth: Int = 10) -> String {
        Terminal.printable("\(padLeft(String(e.version), 7))  \(padLeft(size(e.size), 9))  \(padLeft(stored.map(size) ?? "-", 9))  \(date(e.added))  "
                           + "\(pad(kind(e), 18))  \(pad(origin(e), originWidth))  \(e.name)")
    }

    static func kind(_ e: ManifestEntry) -> String { e.kind == .folder ? "folder, " + count(e.fileCount, "file") : "file" }

    /// `header` over `rows`, each column as wide as its widest cell and two
    /// spaces apart, the last column unpadded (no trailing spaces). Cells
    /// are shown as given: escape them (`Terminal.printable`) first.
    static func table(header: [String], rows: [[String]]) -> [String] {
        let all = [header] + rows
        let widths = header.indices.map { i in all.map { $0[i].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { i in i == row.count - 1 ? row[i] : pad(row[i], widths[i]) }.joined(separator: "  ")
        }
    }

    /// `s` right-aligned in `n` characters (never cut).
    static func padLeft(_ s: String, _ n: Int) -> String {
        let count = s.count
        return count >= n ? s : String(repeating: " ", count: n - count) + s
    }
}
