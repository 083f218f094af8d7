import Foundation
import Testing
import VaultCrypto
@testable import VaultCore

/// Versions in the manifest (format version 3), retention, and the
/// operations that keep or trim history.
@Suite("Versions")
struct VersionCoreTests {
    static func entry(_ name: String, version: UInt32 = 1, added: Int64 = 0) throws -> ManifestEntry {
        var e = try ManifestEntry(itemID: SecureRandom.bytes(16), fileKey: FileKey.random(), kind: .file, origin: .droppedIn,
                                  mode: 0o600, size: 1, fileCount: 1, added: added, modified: added, name: name)
        e.version = version
        return e
    }

    // MARK: retention

    /// Versions of one item with these add times, numbered 1…n.
    static func history(_ added: [Int64]) throws -> [ManifestEntry] {
        try added.enumerated().map { try entry("x", version: UInt32($0.offset + 1), added: $0.element) }
    }

    @Test func keepLastKeepsTheNewestAndNeverNone() throws {
        let h = try Self.history([10, 20, 30, 40, 50])
        #expect(RetentionPolicy(keepLast: 2).kept(h) == [4, 5])
        #expect(RetentionPolicy(keepLast: 9).kept(h) == [1, 2, 3, 4, 5])
        // No rule that keeps anything still keeps the current version.
        #expect(RetentionPolicy().kept(h) == [5])
        #expect(RetentionPolicy(keepLast: 1).kept([]) == [])
    }

    @Test func keepDailyTakesTheNewestOfEachRecentDay() throws {
        let day: Int64 = 86_400
        // Day 0: v1, v2; day 1: v3; day 3: v4, v5, v6 (23:59:59 is still day 3).
        let h = try Self.history([100, 200, day + 5, 3 * day, 3 * day + 60, 4 * day - 1])
        #expect(RetentionPolicy(keepDaily: 1).kept(h) == [6])
        #expect(RetentionPolicy(keepDaily: 2).kept(h) == [6, 3])
        #expect(RetentionPolicy(keepDaily: 3).kept(h) == [6, 3, 2])
        #expect(RetentionPolicy(keepDaily: 30).kept(h) == [6, 3, 2])
        // Rules add up: the last two, and the newest of the last two days.
        #expect(RetentionPolicy(keepLast: 2, keepDaily: 2).kept(h) == [6, 5, 3])
    }

    @Test func keepWeeklyUsesMondayToSundayWeeksInUTC() throws {
        // 2026-11-29 is a Sunday, 2026-11-30 a Monday (UTC).
        let sunday: Int64 = 1_795_910_400, monday = sunday + 86_400
        let h = try Self.history([sunday - 7 * 86_400, sunday, sunday + 86_399, monday, monday + 3600])
        #expect(RetentionPolicy(keepWeekly: 1).kept(h) == [5])
        #expect(RetentionPolicy(keepWeekly: 2).kept(h) == [5, 3])
        #expect(RetentionPolicy(keepWeekly: 3).kept(h) == [5, 3, 1])
        // Before 1970 (negative times) days and weeks round down, not towards zero.
        let old = try Self.history([-86_400 * 2, -1, 0])
        #expect(RetentionPolicy(keepDaily: 3).kept(old) == [1, 2, 3])
        #expect(RetentionPolicy(keepDaily: 2).kept(old) == [2, 3])
    }

    @Test func retentionFollowsNumbersWhenClocksDisagree() throws {
        // Version 3 was added "earlier" than version 2 (a skewed clock): it is
        // still the newest, so it is the one kept for its day.
        let h = try Self.history([1000, 3000, 2000])
        #expect(RetentionPolicy(keepDaily: 1).kept(h) == [3])
        #expect(RetentionPolicy(keepLast: 2).kept(h) == [2, 3])
    }

    // MARK: the manifest

    @Test func versionsShareANameWithUniqueNumbers() throws {
        var m = try Manifest()
        try m.add(Self.entry("a", version: 2))
        try m.add(Self.entry("a", version: 7))
        #expect(throws: VaultError.alreadyExists(path: "a")) { try m.add(Self.entry("a", version: 7)) }
        #expect(throws: VaultError.alreadyExists(path: "a")) { try m.add(Self.entry("a", version: 0)) }
        #expect(try m.addVersion(Self.entry("a")).version == 8)
        #expect(try m.addVersion(Self.entry("b")).version == 1)
        #expect(m.versions(named: "a").map(\.version) == [2, 7, 8])
        #expect(m.entry(named: "a")?.version == 8 && m.items.count == 2)
        try m.rename("a", to: "c")
        #expect(m.versions(named: "c").map(\.version) == [2, 7, 8] && !m.contains(name: "a"))
        #expect(try m.remove(named: ["c"]).count == 3)
        #expect(m.entries.map(\.name) == ["b"])
    }

    @Test func aNameHoldsAtMostMaxVersionsAndTheReaderAgrees() throws {
        var m = try Manifest()
        for _ in 0..<Manifest.maxVersions { try m.addVersion(Self.entry("many")) }
        #expect(throws: VaultError.tooManyVersions(name: "many")) { try m.addVersion(Self.entry("many")) }
        #expect(!m.canAddVersion(of: "many") && m.canAddVersion(of: "other"))
        let key = try SecretBytes.random(count: 32), id = SecureRandom.bytes(16)
        #expect(try Manifest.open(m.sealed(key: key, vaultID: id), key: key, vaultID: id).entries.count == Manifest.maxVersions)
        // One more, sealed by hand (the writer would not), is refused.
        var plain = [UInt8]()
        let extra = try Self.entry("many", version: UInt32(Manifest.maxVersions) + 1)
        for e in m.entries + [extra] { plain += withUnsafeBytes(of: e.version.bigEndian, Array.init); e.encode(into: &plain) }
        plain = withUnsafeBytes(of: UInt32(m.entries.count + 1).bigEndian, Array.init) + plain
        #expect(throws: VaultError.corruptedOrTampered) { try plain.withUnsafeBytes { try Manifest.parse(plaintext: $0, formatVersion: 3) } }
        // The highest number there is cannot be followed.
        var top = try Manifest()
        try top.add(Self.entry("top", version: .max))
        #expect(throws: VaultError.tooManyVersions(name: "top")) { try top.addVersion(Self.entry("top")) }
    }

    /// Plaintexts only a forger (or a bug) could write are refused whole.
    @Test func malformedVersionRecordsAreRefused() throws {
        func plaintext(_ records: [(UInt32, ManifestEntry)], truncate: Int = 0) -> [UInt8] {
            var p = withUnsafeBytes(of: UInt32(records.count).bigEndian, Array.init)
            for (v, e) in records { p += withUnsafeBytes(of: v.bigEndian, Array.init); e.encode(into: &p) }
            return Array(p.dropLast(truncate))
        }
        let a = try Self.entry("a"), b = try Self.entry("a"), c = try Self.entry("c")
        func parses(_ p: [UInt8], formatVersion: UInt8 = 3) -> Bool {
            (try? p.withUnsafeBytes { try Manifest.parse(plaintext: $0, formatVersion: formatVersion) }) != nil
        }
        #expect(parses(plaintext([(1, a), (2, b), (1, c)])))
        #expect(!parses(plaintext([(0, a)])))                 // numbers start at 1
        #expect(!parses(plaintext([(3, a), (3, b)])))         // one number twice
        #expect(!parses(plaintext([(1, a), (2, a)])))         // one item id twice
        #expect(!parses(plaintext([(1, a), (2, b)], truncate: 1)))
        #expect(!parses(plaintext([(1, a)]) + [0, 0, 0]))     // a version number and nothing after it
        // A version 2 plaintext (no numbers) may not name an item twice.
        var v2 = withUnsafeBytes(of: UInt32(2).bigEndian, Array.init)
        a.encode(into: &v2); b.encode(into: &v2)
        #expect(!parses(v2, formatVersion: 2))
        // Out of order on disk, in order in memory.
        let m = try plaintext([(5, a), (2, b)]).withUnsafeBytes { try Manifest.parse(plaintext: $0, formatVersion: 3) }
        #expect(m.versions(named: "a").map(\.version) == [2, 5] && m.entry(named: "a")?.itemID == a.itemID)
    }

    /// Version 4 records: the dropper's byte, uid and name have one shape each.
    @Test func malformedDroppersAreRefused() throws {
        let a = try Self.entry("a")
        func record(_ dropper: [UInt8]) -> [UInt8] {
            var p = withUnsafeBytes(of: UInt32(1).bigEndian, Array.init) + withUnsafeBytes(of: UInt32(1).bigEndian, Array.init)
            p += dropper
            a.encode(into: &p)
            return p
        }
        func parsed(_ dropper: [UInt8]) -> Dropper?? {
            (try? record(dropper).withUnsafeBytes { try Manifest.parse(plaintext: $0, formatVersion: 4) }).map { $0.entries[0].droppedBy }
        }
        #expect(parsed([0]) == .some(nil))
        #expect(parsed([1, 0, 0, 0x03, 0xe9, 7] + Array("ncshare".utf8)) == .some(Dropper(uid: 1001, name: "ncshare")))
        #expect(parsed([1, 0, 0, 0x03, 0xe9, 0]) == .some(Dropper(uid: 1001, name: nil)))
        #expect(parsed([2]) == nil)                                                  // no such kind
        #expect(parsed([1, 0, 0, 0x03, 0xe9, 33] + Array(repeating: 0x61, count: 33)) == nil)   // name too long
        #expect(parsed([1, 0, 0, 0x03, 0xe9, 2] + [0x1b, 0x5b]) == nil)              // not a login name
        #expect(parsed([1, 0, 0, 0x03]) == nil)                                      // cut short
        // A name that is not a plain login name is kept as the uid alone.
        #expect(Dropper(uid: 5, name: "evil\u{1b}[2J").name == "" && Dropper(uid: 5, name: "a$").name == "a$")
    }

    @Test func version2ManifestsOpenAndBecomeVersion3() throws {
        let t = TempVault()
        do {
            let v = try t.create()
            // Write a version 2 manifest by hand, as an earlier vault would have.
            try t.add("a.txt", [1])
            try v.absorbInbox()
            var old = v.manifest
            old.generation += 1
            try VaultDirectory.atomicWrite(old.sealed(key: v.keys.manifest, vaultID: v.vaultID, formatVersion: 2),
                                           to: v.paths.manifest)
            #expect(try VaultDirectory.readFile(v.paths.manifest, limit: 1 << 20)[8] == 2)
        }
        try t.add("a.txt", [2])
        let w = try t.unlock()
        #expect(try w.absorbInbox().absorbed == ["a.txt"])
        #expect(try VaultDirectory.readFile(w.paths.manifest, limit: 1 << 20)[8] == Manifest.version)
        #expect(w.manifest.versions(named: "a.txt").map(\.version) == [1, 2])
        #expect(try t.read(w, "a.txt") == [2])
        // Version 2 cannot say "version 2": the writer refuses.
        #expect(throws: VaultError.misuse(.manifestVersion(2))) { try w.manifest.sealed(key: w.keys.manifest, vaultID: w.vaultID, formatVersion: 2) }
    }

    // MARK: operations

    @Test func savingAChangeAddsAVersionAndForgetTrimsIt() throws {
        let t = TempVault()
        try t.create()
        try t.add("n.txt", Array("one".utf8))
        try savedAndTrimmed(t)
        let w = try t.unlock()
        #expect(w.manifest.versions(named: "n.txt").map(\.version) == [3])
        #expect(try t.read(w, "n.txt") == Array("three".utf8))
        // Never an item's every version.
        #expect(throws: VaultError.forgetsEveryVersion) { try w.forget(w.manifest.versions(named: "n.txt")) }
        #expect(throws: VaultError.noSuchItem(name: "nope")) { try w.forgettable(["nope"], policy: RetentionPolicy(keepLast: 1)) }
    }

    func savedAndTrimmed(_ t: TempVault) throws {
        let v = try t.unlock()
        try v.absorbInbox()
        for text in ["two", "three"] {
            let bytes = Array(text.utf8)
            try v.saveVersion(of: v.entry(named: "n.txt"), flags: [], now: 1_800_000_000) { w in
                try w.write(bytes)
                return (UInt64(bytes.count), 1)
            }
        }
        #expect(v.manifest.versions(named: "n.txt").map(\.version) == [1, 2, 3])
        #expect(try t.read(v, v.entry(named: "n.txt", version: 1)) == Array("one".utf8))
        #expect(try t.read(v, "n.txt") == Array("three".utf8))
        #expect(try v.entry(named: "n.txt", at: 1_800_000_000).version == 3)
        #expect(throws: VaultError.noSuchVersion(name: "n.txt", version: .number(9))) { try v.entry(named: "n.txt", version: 9) }
        #expect(t.files("items").count == 3)

        let doomed = try v.forgettable(["n.txt"], policy: RetentionPolicy(keepLast: 1))
        #expect(doomed.map(\.version).sorted() == [1, 2])
        try v.forget(doomed)
        #expect(t.files("items") == [try v.entry(named: "n.txt").blobName])
    }

    @Test func rekeyKeepsEveryVersion() throws {
        let t = TempVault()
        try t.create()
        for i in 1...3 { try t.add("r.txt", [UInt8(i)]) }
        try t.add("s.txt", [9])
        do {
            let v = try t.unlock()
            try v.absorbInbox()
            try v.forget(v.forgettable(nil, policy: RetentionPolicy(keepLast: 2)))   // a gap: versions 2, 3
            try v.rekey(password: TempVault.password("correct horse"))
        }
        let w = try t.unlock()
        #expect(w.manifest.versions(named: "r.txt").map(\.version) == [2, 3])
        #expect(try t.read(w, w.entry(named: "r.txt", version: 2)) == [2])
        #expect(try t.read(w, "r.txt") == [3])
        #expect(t.files("items").count == 3)
    }
}

/// A file that an earlier vault stored under a name now reserved for
/// backup storage keeps opening, renamed (version 4 and older only).
@Suite struct ReservedNameCompatibilityTests {
    @Test func anOldFileUnderAReservedNameIsRenamedNotRefused() throws {
        let name = "pack-" + String(repeating: "0a", count: 16)
        var e = try ManifestEntry(itemID: SecureRandom.bytes(16), fileKey: FileKey.random(), kind: .file, origin: .droppedIn,
                                  mode: 0o600, size: 1, fileCount: 1, added: 1, modified: 1, name: "placeholder")
        e.name = name   // as a version 4 writer could store it
        var plain = withUnsafeBytes(of: UInt32(1).bigEndian, Array.init) + withUnsafeBytes(of: UInt32(1).bigEndian, Array.init) + [0]
        e.encode(into: &plain)
        let old = try plain.withUnsafeBytes { try Manifest.parse(plaintext: $0, formatVersion: 4) }
        #expect(old.entries.map(\.name) == [name + " (file)"])
        #expect(throws: VaultError.corruptedOrTampered) {
            try (plain + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).withUnsafeBytes { try Manifest.parse(plaintext: $0, formatVersion: 5) }
        }
    }
}
