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

    /// Years 1 to 9999: an entry written before absorb refused other times
    /// still prints as a date.
    static func clampedTime(_ unix: Int64) -> Int64 { min(max(unix, ItemRules.earliestTime), ItemRules.latestTime) }

    static func origin(_ o: ItemOrigin) -> String { o == .droppedIn ? "added" : "edited" }

    /// `s` padded with spaces to `n` characters (never cut).
    static func pad(_ s: String, _ n: Int) -> String {
        let count = s.count
        return count >= n ? s : s + String(repeating: " ", count: n - count)
    }

    /// `SIZE  ADDED  KIND  ORIGIN  NAME`: name last, since it may hold spaces.
    /// A folder's kind shows its file count ("folder:12"), its size the total.
    static func listLine(_ e: ManifestEntry) -> String {
        let kind = e.kind == .folder ? "folder:\(e.fileCount)" : "file"
        return Terminal.printable("\(pad(size(e.size), 9))  \(date(e.added))  \(pad(kind, 11))  \(pad(origin(e.origin), 6))  \(e.name)")
    }
}

/// The `--json` outputs. Their schema is documented in the README
/// ("Machine-readable output") and is stable: fields are only ever added.
enum JSON {
    nonisolated(unsafe) private static let isoFormatter = ISO8601DateFormatter()  // used from the main thread only

    static func iso8601(_ unix: Int64) -> String {
        isoFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(Format.clampedTime(unix))))
    }

    static func encode(_ object: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return escapingInvisible(String(decoding: data, as: UTF8.self))
    }

    /// JSONSerialization escapes only what JSON requires (C0, '"', '\\');
    /// a name's C1 controls, DEL and format characters would reach whoever
    /// prints the JSON raw. They can only occur inside strings, so each is
    /// replaced by its `\uXXXX` escape (a surrogate pair above U+FFFF).
    static func escapingInvisible(_ json: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(json.unicodeScalars.count)
        for scalar in json.unicodeScalars {
            guard (0x7f...0x9f).contains(scalar.value) || Terminal.isInvisible(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 { out += "\\u" + String(format: "%04x", unit) }
        }
        return out
    }

    /// One item of `list --json` (keys in this order, which is sorted).
    struct ListItem: Encodable {
        let added: String
        let files: UInt64
        let kind: String
        let mode: Int
        let modified: String
        let name: String
        let origin: String
        let size: UInt64

        init(_ e: ManifestEntry) {
            (added, files, kind, mode) = (iso8601(e.added), e.fileCount, e.kind == .folder ? "folder" : "file", Int(e.mode))
            (modified, name, origin, size) = (iso8601(e.modified), e.name, e.origin == .droppedIn ? "dropped-in" : "unlocked", e.size)
        }
    }

    /// `{"items":[...]}` on one line, written item by item: one
    /// JSONSerialization object of 130,000 items took 10 s and 560 MiB.
    static func writeList(_ entries: [ManifestEntry], to terminal: Terminal) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try terminal.printBuffered { emit in
            try emit("{\"items\":[")
            for (i, e) in entries.enumerated() {
                var item = String(decoding: try encoder.encode(ListItem(e)), as: UTF8.self)
                if item.utf8.contains(where: { $0 >= 0x7f }) { item = escapingInvisible(item) }
                try emit(i == 0 ? item : "," + item)
            }
            try emit("]}\n")
        }
    }

    static func info(_ vault: Vault, waiting: Int) throws -> String {
        let h = vault.header
        return try encode(["path": vault.paths.root, "format_version": Int(VaultHeader.version),
                           "vault_id": Hex.encode(h.vaultID),
                           "kdf": ["algorithm": "argon2id", "memory_kib": Int(h.kdf.memoryKiB),
                                   "passes": Int(h.kdf.passes), "lanes": Int(h.kdf.lanes)],
                           "waiting_drop_ins": waiting, "public_key_fingerprint": h.fingerprint])
    }

    static func check(_ r: CheckReport, readData: Bool) throws -> String {
        try encode(["ok": r.problems.isEmpty, "items_checked": r.itemsChecked, "read_data": readData,
                    "bytes_checked": r.bytesChecked,
                    "problems": r.problems.map { ["item": $0.item, "message": $0.message] },
                    "leftovers": r.leftovers, "rejected_drop_ins": r.rejectedDropIns, "removed": r.removed])
    }
}
