import Foundation
import Testing
import TestSupport
@testable import VaultCrypto
@testable import VaultCore

/// The writer never saves what the reader refuses: names at their limits,
/// clashing names, a manifest at its size cap, many live secrets.
@Suite("Writer limits")
struct WriterLimitTests {
    /// A reproducible generator, so a failing sequence can be replayed from its seed.

    /// Names that sit on every edge the format has.
    static let hostileNames: [String] = [
        String(repeating: "n", count: 1024),
        String(repeating: "€", count: 341),               // 1023 bytes, 3-byte characters
        String(repeating: "😀", count: 256),              // 1024 bytes, 4-byte characters
        String(repeating: "é", count: 512),               // NFC
        String(repeating: "e\u{301}", count: 341),        // the same text in NFD: other bytes, another name
        "." + String(repeating: "x", count: 1023),
        String(repeating: "x", count: 1021) + ".gz",
        "a." + String(repeating: "€", count: 340),
        "x (2)", "x (2).txt", "x.txt", "x", ".bashrc", "a.tar.gz", " ", "evil\u{202E}txt.exe", "csi\u{9B}",
        "", ".", "..", "a/b", "bell\u{7}", "del\u{7F}", String(repeating: "n", count: 1025),
    ]

    @Test(arguments: [1, 2, 3, 4])
    func randomOperationsWithHostileNamesAlwaysReopen(seed: UInt64) throws {
        var rng = SplitMix(state: seed)
        let t = TempVault()
        try t.create()
        var waiting = 0, stored = 0
        for step in 0..<120 {
            let name = Self.hostileNames.randomElement(using: &rng)!
            let valid = (try? ManifestEntry.checkName(name)) != nil
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                do {
                    try t.add(name, [UInt8(step & 0xff)])
                    #expect(valid, "step \(step): add took the invalid name \(name.debugDescription)")
                    waiting += 1
                } catch VaultError.invalidName {
                    #expect(!valid)
                }
            case 5..<7:
                let v = try t.unlock()
                let report = try v.absorbInbox()
                #expect(report.absorbed.count == waiting && report.rejected.isEmpty, "step \(step)")
                stored += waiting
                waiting = 0
            case 7..<9:
                let v = try t.unlock()
                guard let old = v.manifest.entries.randomElement(using: &rng) else { continue }
                do {
                    try v.rename(old.name, to: name)
                    #expect(valid)
                } catch VaultError.invalidName {
                    #expect(!valid)
                } catch VaultError.alreadyExists {
                    #expect(v.manifest.contains(name: name))
                }
            default:
                let v = try t.unlock()
                guard let old = v.manifest.entries.randomElement(using: &rng) else { continue }
                let versions = v.manifest.versions(named: old.name).count   // remove takes them all
                try v.remove([old.name])
                stored -= versions
            }
            // Whatever happened, the vault opens, and every name is one the reader takes.
            let reopened = try t.unlock(forWriting: false)
            let names = reopened.manifest.entries.map(\.name)
            #expect(names.count == stored, "step \(step)")
            // A name added again is a new version: (name, version) pairs are unique.
            #expect(Set(reopened.manifest.entries.map { Array($0.name.utf8) + [UInt8(truncatingIfNeeded: $0.version)] }).count == names.count)
            for n in names { #expect((try? ManifestEntry.checkName(n)) != nil, "step \(step): stored \(n.debugDescription)") }
        }
    }

    /// A manifest of names at the limit fills to its cap: the writer refuses
    /// the entry that would pass it, and what it saved opens. (A 1 MiB cap:
    /// the rule is the same at 256 MiB, where it takes 242,000 entries.)
    @Test func manifestStopsAtTheReadersCap() throws {
        let key = try SecretBytes.random(count: 32), id = SecureRandom.bytes(16)
        let cap = 1 << 20
        var m = try Manifest(entries: [], capacity: cap)
        let prefix = String(repeating: "n", count: ManifestEntry.maxNameLength - 32)
        var i = 0
        while true {
            let e = try ManifestEntry(itemID: SecureRandom.bytes(16), fileKey: FileKey.random(), kind: .file,
                                      origin: .droppedIn, mode: 0o600, size: 1, fileCount: 1, added: 0, modified: 0,
                                      name: prefix + String(format: "%08x", i))
            do { try m.add(e) } catch VaultError.manifestFull { break }
            i += 1
        }
        let sealed = try m.sealed(key: key, vaultID: id)
        #expect(sealed.count <= cap)
        #expect(cap - sealed.count < ManifestEntry.fixedLength + ManifestEntry.maxNameLength)
        #expect(try Manifest.open(sealed, key: key, vaultID: id, capacity: cap).entries.count == i)
        #expect(throws: VaultError.corruptedOrTampered) {
            try Manifest.open(sealed + [0], key: key, vaultID: id, capacity: cap)
        }
        // Filled to the last bytes with short names (in the room of one long
        // one, so there is some whatever the records' lengths), a rename
        // that grows one past the cap is refused too, and changes nothing.
        _ = try m.remove(named: [prefix + String(format: "%08x", i - 1)])
        i -= 1
        var short = 0
        while true {
            let e = try ManifestEntry(itemID: SecureRandom.bytes(16), fileKey: FileKey.random(), kind: .file,
                                      origin: .droppedIn, mode: 0o600, size: 1, fileCount: 1, added: 0, modified: 0,
                                      name: String(format: "s%04d", short))
            do { try m.add(e) } catch VaultError.manifestFull { break }
            short += 1
        }
        #expect(short > 0)
        #expect(throws: VaultError.manifestFull) { try m.rename("s0000", to: "s0000" + String(repeating: "x", count: 200)) }
        #expect(m.contains(name: "s0000"))
        #expect(try Manifest.open(m.sealed(key: key, vaultID: id), key: key, vaultID: id, capacity: cap).entries.count == i + short)
    }

    /// Every secret used to be its own mmap and mlock: the process ran out
    /// of mappings at ~16,000. The arena keeps them in a few regions.
    /// (Other tests allocate at the same time, so the bound is loose: one
    /// mapping per secret would be 40,000 or more.)
    @Test func fortyThousandLiveSecretsFitInFewRegions() throws {
        let keys = try (0..<40_000).map { _ in try FileKey.random() }
        #expect(keys.count == 40_000)
        for _ in 0..<3 { _ = try (0..<40_000).map { _ in try SecretBytes.random(count: 32) } }
        #expect(GuardedArena.regionCount < 1000)
        // A freed slot is zeroed before it is reused.
        let probe = try SecretBytes(count: 32)
        #expect(probe.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
    }
}
