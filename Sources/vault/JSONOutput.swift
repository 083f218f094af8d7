import Foundation  // JSONEncoder
import System
import VaultAgent
import VaultCore

/// The `--json` outputs: one Codable type per schema, which README.md
/// ("Machine-readable output") documents. Keys are written sorted; fields
/// are only ever added.
enum JSONOutput {
    /// One item of `list --json`.
    struct ListItem: Encodable {
        let name: String
        let size: UInt64
        /// What the sealed blob takes on disk; absent when the blob is missing.
        let stored: UInt64?
        let kind: String
        let files: UInt64
        let origin: String
        /// Another user's drop-in (a shared inbox): their uid and login name
        /// ("" if none); absent for the owner's own.
        let droppedBy: DroppedBy?
        struct DroppedBy: Encodable {
            let uid: UInt32
            let name: String
        }
        let added: String
        let modified: String
        let mode: Int
        /// This entry's version number, and how many versions its item has.
        let version: UInt32
        let versions: Int

        enum CodingKeys: String, CodingKey {
            case name, size, stored, kind, files, origin, droppedBy = "dropped_by", added, modified, mode, version, versions
        }

        init(_ e: ManifestEntry, stored: UInt64?, versions: Int) {
            (version, self.versions, self.stored) = (e.version, versions, stored)
            (name, size, kind, files) = (e.name, e.size, e.kind == .folder ? "folder" : "file", e.fileCount)
            (origin, mode) = (e.origin == .droppedIn ? "dropped-in" : "unlocked", Int(e.mode))
            droppedBy = e.droppedBy.map { DroppedBy(uid: $0.uid, name: $0.name) }
            (added, modified) = (iso8601(e.added), iso8601(e.modified))
        }
    }

    /// `info --json`.
    struct Info: Encodable {
        struct KDF: Encodable {
            let algorithm = "argon2id"
            let memoryKiB: UInt32
            let passes: UInt32
            let lanes: UInt32
            enum CodingKeys: String, CodingKey { case algorithm, memoryKiB = "memory_kib", passes, lanes }
        }
        let path: String
        let formatVersion: Int
        let vaultID: String
        let kdf: KDF?
        let waitingDropIns: Int
        let shared: Bool
        let leftoverFiles: Int
        let leftoverBytes: UInt64
        /// Sealed blobs in items/ and their size on disk.
        let storedBlobs: Int
        let storedBytes: UInt64
        let publicKeyFingerprint: String
        let kem: String
        let slots: [Slot]
        /// Seconds until this vault's unlock agent ends; nil (null) when none runs.
        let unlockedSecondsLeft: UInt32?
        struct Slot: Encodable {
            let name: String
            let kind: String
            let created: Int64
            let kdf: KDF?
        }
        enum CodingKeys: String, CodingKey {
            case path, formatVersion = "format_version", vaultID = "vault_id", kdf
            case waitingDropIns = "waiting_drop_ins", publicKeyFingerprint = "public_key_fingerprint", kem, slots
            case leftoverFiles = "leftover_files", leftoverBytes = "leftover_bytes", shared
            case unlockedSecondsLeft = "unlocked_seconds_left"
            case storedBlobs = "stored_blobs", storedBytes = "stored_bytes"
        }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(path, forKey: .path)
            try c.encode(formatVersion, forKey: .formatVersion)
            try c.encode(vaultID, forKey: .vaultID)
            try c.encode(kdf, forKey: .kdf)
            try c.encode(waitingDropIns, forKey: .waitingDropIns)
            try c.encode(publicKeyFingerprint, forKey: .publicKeyFingerprint)
            try c.encode(kem, forKey: .kem)
            try c.encode(slots, forKey: .slots)
            try c.encode(shared, forKey: .shared)
            try c.encode(leftoverFiles, forKey: .leftoverFiles)
            try c.encode(leftoverBytes, forKey: .leftoverBytes)
            try c.encode(storedBlobs, forKey: .storedBlobs)
            try c.encode(storedBytes, forKey: .storedBytes)
            try c.encode(unlockedSecondsLeft, forKey: .unlockedSecondsLeft)  // null, not absent, when locked
        }

        static func slots(of h: VaultHeader) -> [Slot] {
            h.slots.map { s in
                var k: KDF?
                if case .password(let p, _) = s.kind { k = KDF(memoryKiB: p.memoryKiB, passes: p.passes, lanes: p.lanes) }
                return Slot(name: s.name, kind: s.kind.name, created: s.created, kdf: k)
            }
        }

        init(_ vault: Vault, waiting: Int, leftovers: (count: Int, bytes: UInt64), stored: (count: Int, bytes: UInt64),
             agent: AgentStatus?) {
            (leftoverFiles, leftoverBytes) = leftovers
            (storedBlobs, storedBytes) = stored
            unlockedSecondsLeft = agent?.secondsLeft
            shared = vault.isShared
            let h = vault.header
            (path, formatVersion, vaultID) = (vault.paths.root, Int(h.version), Hex.encode(h.vaultID))
            let first = h.firstPasswordKDF
            kdf = first.map { KDF(memoryKiB: $0.memoryKiB, passes: $0.passes, lanes: $0.lanes) }
            kem = h.publicKey.isHybrid ? "x-wing" : "x25519"
            slots = Self.slots(of: h)
            (waitingDropIns, publicKeyFingerprint) = (waiting, h.fingerprint)
        }
    }

    /// `check --json`.
    struct Check: Encodable {
        /// `version` only when the item has more than one.
        struct Problem: Encodable { let item: String; let message: String; let version: UInt32? }
        let ok: Bool
        let itemsChecked: Int
        let versionsChecked: Int
        let readData: Bool
        let bytesChecked: UInt64
        let snapshotsChecked: Int, packsChecked: Int
        let problems: [Problem]
        let leftovers: [String]
        let orphans: [String]
        let rejectedDropIns: [String]
        let quarantined: [String]
        let movedToQuarantine: [String]
        let removed: [String]
        let disagreeingIndexes: [String]
        enum CodingKeys: String, CodingKey {
            case ok, itemsChecked = "items_checked", versionsChecked = "versions_checked", readData = "read_data"
            case bytesChecked = "bytes_checked", problems
            case snapshotsChecked = "snapshots_checked", packsChecked = "packs_checked"
            case leftovers, orphans, rejectedDropIns = "rejected_drop_ins", quarantined
            case movedToQuarantine = "moved_to_quarantine", removed
            case disagreeingIndexes = "disagreeing_indexes"
        }

        /// `problems`: the report's and the snapshots' (SnapshotCheck), worded.
        init(_ r: CheckReport, problems: [Problem], readData: Bool) {
            (ok, itemsChecked, versionsChecked) = (problems.isEmpty, r.itemsChecked, r.versionsChecked)
            (self.readData, bytesChecked) = (readData, r.bytesChecked)
            (snapshotsChecked, packsChecked) = (r.snapshotsChecked, r.packsChecked)
            self.problems = problems
            (leftovers, orphans, rejectedDropIns, removed) = (r.leftovers, r.orphans, r.rejectedDropIns, r.removed)
            (quarantined, movedToQuarantine) = (r.quarantined, r.movedToQuarantine)
            disagreeingIndexes = r.disagreeingIndexes
        }
    }

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return escapingInvisible(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// `{"items":[...]}` on one line, written item by item: one object of
    /// 130,000 items took 10 s and 560 MiB.
    static func writeList(_ entries: [(entry: ManifestEntry, versions: Int)], stored: (ManifestEntry) -> UInt64?,
                          to terminal: Terminal) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try terminal.printBuffered { emit in
            try emit("{\"items\":[")
            for (i, e) in entries.enumerated() {
                var item = String(decoding: try encoder.encode(ListItem(e.entry, stored: stored(e.entry), versions: e.versions)), as: UTF8.self)
                if item.utf8.contains(where: { $0 >= 0x7f }) { item = escapingInvisible(item) }
                try emit(i == 0 ? item : "," + item)
            }
            try emit("]}\n")
        }
    }

    /// ISO 8601 in UTC ("2026-11-30T21:40:05Z"), for years 1 to 9999
    /// (other times are clamped to them), through `UTCTime`.
    static func iso8601(_ unix: Int64) -> String {
        let t = UTCTime(Format.clampedTime(unix))
        let p = UTCTime.pad
        return "\(p(t.year, 4))-\(p(t.month, 2))-\(p(t.day, 2))T\(p(t.hour, 2)):\(p(t.minute, 2)):\(p(t.second, 2))Z"
    }

    /// JSONEncoder escapes only what JSON requires (C0, '"', '\\'); a name's
    /// C1 controls, DEL and format characters would reach whoever prints the
    /// JSON raw. They can only occur inside strings, so each is replaced by
    /// its `\uXXXX` escape (a surrogate pair above U+FFFF).
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
}
