import Foundation
import Testing
import VaultCrypto
@testable import VaultCore

@Suite("Rekey")
struct RekeyTests {
    func populated() throws -> (TempVault, [String: [UInt8]]) {
        let t = TempVault()
        try t.create()
        var contents: [String: [UInt8]] = [:]
        for (i, size) in [0, 10, 3 * ItemCipher.chunkSize + 7].enumerated() {
            let c = ItemFixture.content(size, seed: UInt32(i + 1))
            try t.add("item\(i)", c)
            contents["item\(i)"] = c
        }
        try t.unlock().absorbInbox()
        return (t, contents)
    }

    @Test func newKeysSameItemsSamePassword() throws {
        let (t, contents) = try populated()
        let before = try Vault(at: t.root).header
        let oldBlobs = Set(t.files("items"))
        try t.unlock().rekey(password: TempVault.password("correct horse"))
        let after = try Vault(at: t.root).header
        #expect(after.vaultID == before.vaultID && after.publicKey != before.publicKey && after.slots != before.slots)
        #expect(Set(t.files("items")).isDisjoint(with: oldBlobs) && t.files("items").count == 3)
        let v = try t.unlock()
        for (name, c) in contents { #expect(try t.read(v, name) == c) }
        #expect(try v.check(readData: true, repair: false).problems.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: t.root + "/rekey.pending"))
    }

    @Test func anInterruptedSwitchIsTheNewStateForReadersAndIsFinishedByTheNextWriter() throws {
        let (t, contents) = try populated()
        // Run a rekey, then put back the old header and manifest and the
        // switch file, as if killed right after writing the switch.
        let oldHeader = try Data(contentsOf: URL(fileURLWithPath: t.root + "/vault.header"))
        let oldManifest = try Data(contentsOf: URL(fileURLWithPath: t.root + "/manifest"))
        let oldBlobDir = t.dir + "/old-items"
        try FileManager.default.copyItem(atPath: t.root + "/items", toPath: oldBlobDir)
        let (pending, newHeader) = try {
            let rekeyed = try t.unlock()
            try rekeyed.rekey(password: TempVault.password("correct horse"))
            let newHeader = try Data(contentsOf: URL(fileURLWithPath: t.root + "/vault.header"))
            // The switch file as the rekey wrote it (version 3: a version-2 header of its own length).
            let pending = try RekeySwitch(replacing: VaultHeader(parsing: Array(oldHeader)), with: rekeyed.vault.header,
                                          manifest: rekeyed.manifest, manifestKey: rekeyed.keys.manifest,
                                          absorbed: [], masterKey: rekeyed.keys.master)
            return (pending, newHeader)
        }()
        try pending.write(to: t.root + "/rekey.pending")
        try oldHeader.write(to: URL(fileURLWithPath: t.root + "/vault.header"))
        try oldManifest.write(to: URL(fileURLWithPath: t.root + "/manifest"))
        for f in try FileManager.default.contentsOfDirectory(atPath: oldBlobDir) {
            try FileManager.default.copyItem(atPath: oldBlobDir + "/" + f, toPath: t.root + "/items/" + f)
        }
        #expect(try Vault(at: t.root).header.bytes == Array(newHeader))
        do {
            let holder = try t.unlock()            // a writer finishes the switch...
            let reader = try t.unlock(forWriting: false)
            #expect(!reader.canWrite)
            for (name, c) in contents { #expect(try t.read(reader, name) == c) }
            _ = holder
        }
        #expect(!FileManager.default.fileExists(atPath: t.root + "/rekey.pending"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: t.root + "/vault.header")) == newHeader)
        let v = try t.unlock()
        #expect(try v.check(readData: true, repair: false).problems.isEmpty)
        try v.tidy()
        #expect(t.files("items").count == 6)       // the old blobs are orphans: no unlock deletes them
        #expect(try v.check(readData: false, repair: true).movedToQuarantine.count == 3)
        #expect(t.files("items").count == 3 && t.files("quarantine").count == 3)
    }

    /// The rekey gives each entry its new key in place (one manifest in
    /// memory, issue 28); a failure before the switch puts the manifest on
    /// disk back in memory, so the vault goes on with its old keys.
    @Test func aRekeyThatFailsBeforeTheSwitchLeavesTheVaultAsItWas() throws {
        let (t, contents) = try populated()
        let v = try t.unlock()
        let before = v.manifest.entries.map(\.itemID)
        let header = try Data(contentsOf: URL(fileURLWithPath: t.root + "/vault.header"))
        // The last item's blob gone: its copy fails after the others were made.
        try FileManager.default.removeItem(atPath: t.root + "/items/" + v.manifest.entry(named: "item2")!.blobName)
        #expect(throws: (any Error).self) { try v.rekey(password: TempVault.password("correct horse")) }
        #expect(v.manifest.entries.map(\.itemID) == before, "the manifest in memory kept the new ids")
        #expect(try Data(contentsOf: URL(fileURLWithPath: t.root + "/vault.header")) == header)
        #expect(!FileManager.default.fileExists(atPath: t.root + "/rekey.pending"))
        for name in ["item0", "item1"] { #expect(try t.read(v, name) == contents[name]) }
        for name in ["item0", "item1"] { #expect(try t.read(t.unlock(forWriting: false), name) == contents[name]) }
    }

    @Test func dropInsSealedToTheOldKeyDuringARekeyAreKept() throws {
        let (t, _) = try populated()
        let v = try t.unlock()
        // A drop-in sealed to the old public key, arriving after the rekey's
        // first absorb, while it re-encrypts the items.
        var late: ManifestEntry?
        try v.rekey(password: TempVault.password("correct horse"), progress: { _ in
            if late == nil { late = try? t.add("late.txt", Array("late".utf8)) }
        })
        #expect(late != nil)
        #expect(try t.read(v, "late.txt") == Array("late".utf8))
        #expect(t.files("inbox").isEmpty)
        #expect(v.manifest.entry(named: "late.txt")!.itemID != late?.itemID)   // stored anew
        #expect(try t.read(t.unlock(forWriting: false), "late.txt") == Array("late".utf8))
    }

    /// The same for a batch envelope: its drop-ins are stored anew, and its
    /// envelope and contents leave the inbox with the switch.
    @Test func aBatchSealedToTheOldKeyDuringARekeyIsKept() throws {
        let (t, _) = try populated()
        let v = try t.unlock()
        let late = (0..<3).map { (name: "late\($0).txt", content: Array("late \($0)".utf8)) }
        var landed = false
        try v.rekey(password: TempVault.password("correct horse"), progress: { _ in
            if !landed { landed = (try? t.addBatch(late)) != nil }
        })
        #expect(landed)
        for (name, content) in late {
            #expect(try t.read(v, name) == content)
            #expect(try t.read(t.unlock(forWriting: false), name) == content)
        }
        #expect(t.files("inbox").isEmpty)
    }

    /// A version 2 switch as a rekey killed just after writing it leaves:
    /// the vault as it was, plus `rekey.pending`. Returns the switch's bytes
    /// (the vault is put back to its old state).
    func killedRekeySwitch(_ t: TempVault) throws -> [UInt8] {
        let read = { (p: String) in Array(try Data(contentsOf: URL(fileURLWithPath: t.root + "/" + p))) }
        let oldHeader = try read("vault.header"), oldManifest = try read("manifest")
        let saved = t.dir + "/saved-items-" + Hex.encode(SecureRandom.bytes(4))
        try FileManager.default.copyItem(atPath: t.root + "/items", toPath: saved)
        let v = try t.unlock()
        try v.rekey(password: TempVault.password("correct horse"))
        let pending = try RekeySwitch(replacing: VaultHeader(parsing: oldHeader), with: v.vault.header,
                                      manifest: v.manifest, manifestKey: v.keys.manifest, absorbed: [], masterKey: v.keys.master)
        let written = t.dir + "/switch-" + Hex.encode(SecureRandom.bytes(4))
        try pending.write(to: written)
        try Data(oldHeader).write(to: URL(fileURLWithPath: t.root + "/vault.header"))
        try Data(oldManifest).write(to: URL(fileURLWithPath: t.root + "/manifest"))
        for f in try FileManager.default.contentsOfDirectory(atPath: saved) {
            try? FileManager.default.copyItem(atPath: saved + "/" + f, toPath: t.root + "/items/" + f)
        }
        return Array(try Data(contentsOf: URL(fileURLWithPath: written)))
    }

    @Test func aVersion2SwitchIsFinishedAndABadMACIsRefused() throws {
        let (t, contents) = try populated()
        let pending = try killedRekeySwitch(t)
        let url = URL(fileURLWithPath: t.root + "/rekey.pending")
        var forged = pending
        forged[forged.count - 1] ^= 1
        try Data(forged).write(to: url)
        let blobs = t.files("items")
        #expect(throws: VaultError.corruptedOrTampered) { try t.unlock() }
        #expect(t.files("items") == blobs && FileManager.default.fileExists(atPath: url.path), "a refused switch changed files")

        try Data(pending).write(to: url)
        let v = try t.unlock()
        #expect(!FileManager.default.fileExists(atPath: url.path))
        for (name, c) in contents { #expect(try t.read(v, name) == c) }
    }

    /// Another vault's switch, even under the same password, names another
    /// vault id: ignored, and reported by check as an orphan.
    @Test func anotherVaultsSwitchIsIgnored() throws {
        let (t, contents) = try populated()
        let (other, _) = try populated()
        let foreign = try killedRekeySwitch(other)
        let header = try Vault(at: t.root).header
        try Data(foreign).write(to: URL(fileURLWithPath: t.root + "/rekey.pending"))
        let blobs = t.files("items")
        let v = try t.unlock()
        #expect(v.vault.header == header)
        for (name, c) in contents { #expect(try t.read(v, name) == c) }
        #expect(t.files("items") == blobs)
        #expect(try v.check(readData: false, repair: false).orphans == ["rekey.pending"])
    }

    /// This vault's own switch, but one that replaces another header than
    /// the one in place (an old switch put back): ignored.
    @Test func aSwitchForAnotherHeaderIsIgnored() throws {
        let (t, contents) = try populated()
        let stale = try killedRekeySwitch(t)
        try t.unlock().rekey(password: TempVault.password("correct horse"))  // the header moves on
        let header = try Vault(at: t.root).header
        try Data(stale).write(to: URL(fileURLWithPath: t.root + "/rekey.pending"))
        let v = try t.unlock()
        #expect(v.vault.header == header)
        for (name, c) in contents { #expect(try t.read(v, name) == c) }
    }
}
