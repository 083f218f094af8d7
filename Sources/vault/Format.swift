import Foundation
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

    /// One formatter for the whole listing: making one per line costs more
    /// than everything else `list` does.
    private static let dateFormatter: DateFormatter = {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "yyyy-MM-dd HH:mm"
        return f
    }()

    static func date(_ unix: Int64) -> String {
        dateFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(clampedTime(unix))))
    }

    /// Years 1 to 9999: an entry written before absorb refused other times
    /// still prints as a date.
    static func clampedTime(_ unix: Int64) -> Int64 { min(max(unix, ItemRules.earliestTime), ItemRules.latestTime) }

    static func origin(_ o: ItemOrigin) -> String { o == .droppedIn ? "added" : "edited" }

    /// `SIZE  ADDED  KIND  ORIGIN  NAME`: name last, since it may hold spaces.
    /// A folder's kind shows its file count ("folder:12"), its size the total.
    static func listLine(_ e: ManifestEntry) -> String {
        func pad(_ s: String, _ n: Int) -> String { s.padding(toLength: max(n, s.count), withPad: " ", startingAt: 0) }
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

    static func list(_ entries: [ManifestEntry]) throws -> String {
        try encode(["items": entries.map { e -> [String: Any] in
            ["name": e.name, "size": e.size, "kind": e.kind == .folder ? "folder" : "file",
             "files": e.fileCount, "origin": e.origin == .droppedIn ? "dropped-in" : "unlocked",
             "added": iso8601(e.added), "modified": iso8601(e.modified), "mode": Int(e.mode)]
        }])
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
