import Foundation
import Testing
import VaultCrypto
@testable import VaultCore

@Suite("Vault operations")
struct VaultTests {
    @Test func createAddUnlockReadBack() throws {
        let t = TempVault()
        try t.create()
        let content = Array("tax papers 2025".utf8)
        try t.add("taxes.pdf", content)
        #expect(try Vault(at: t.root).waitingDropIns() == 1)
        let v = try t.unlock()
        #expect(v.manifest.entries.isEmpty)
        let report = try v.absorbInbox()
        #expect(report.absorbed == ["taxes.pdf"] && report.rejected.isEmpty)
        #expect(try t.read(v, "taxes.pdf") == content)
        let e = try v.entry(named: "taxes.pdf")
        #expect(e.origin == .droppedIn && e.size == UInt64(content.count) && e.mode == 0o644)
        #expect(t.files("inbox").isEmpty && t.files("items") == [e.blobName])
    }

    @Test func wrongPasswordIsRefused() throws {
        let t = TempVault()
        try t.create()
        #expect(throws: VaultError.wrongPassword) { try t.unlock("wrong") }
    }

    @Test func absorbIsIdempotentAcrossAnInterruptedRun() throws {
        let t = TempVault()
        try t.create()
        let e = try t.add("a.txt", Array("aaa".utf8))
        // Simulate a crash after the manifest write but before the envelope went.
        let envelope = try Data(contentsOf: URL(fileURLWithPath: t.root + "/inbox/" + e.blobName + ".env"))
        try t.unlock().absorbInbox()
        try envelope.write(to: URL(fileURLWithPath: t.root + "/inbox/" + e.blobName + ".env"))
        do {
            let v = try t.unlock()
            let again = try v.absorbInbox()
            #expect(again.absorbed.isEmpty && v.manifest.entries.count == 1)
            #expect(t.files("inbox").isEmpty)
        }
        // And a crash after the content moved but before the manifest was written.
        let e2 = try t.add("b.txt", Array("bbb".utf8))
        try FileManager.default.moveItem(atPath: t.root + "/inbox/" + e2.blobName + ".item",
                                         toPath: t.root + "/items/" + e2.blobName)
        let v2 = try t.unlock()
        #expect(try v2.absorbInbox().absorbed == ["b.txt"])
        #expect(try t.read(v2, "b.txt") == Array("bbb".utf8))
    }

    /// Drop-ins under one name become its versions in the order they were
    /// added (here all in one second, so the envelopes' times decide), not
    /// in the random order of their ids.
    @Test func sameNameDropInsBecomeVersionsInAddOrder() throws {
        let t = TempVault()
        try t.create()
        for i in 1...6 { try t.add("notes.txt", Array("v\(i)".utf8)) }
        let v = try t.unlock()
        try v.absorbInbox()
        #expect(Set(v.manifest.entries.map(\.name)) == ["notes.txt"])
        #expect(v.manifest.versions(named: "notes.txt").map(\.version) == [1, 2, 3, 4, 5, 6])
        for i in 1...6 { #expect(try t.read(v, v.entry(named: "notes.txt", version: UInt32(i))) == Array("v\(i)".utf8)) }
        #expect(try t.read(v, "notes.txt") == Array("v6".utf8))
    }

    @Test func removeAndRename() throws {
        let t = TempVault()
        try t.create()
        try t.add("one", [1]); try t.add("two", [2])
        do {
            let v = try t.unlock()
            try v.absorbInbox()
            try v.rename("one", to: "uno")
            #expect(throws: VaultError.alreadyExists(path: "two")) { try v.rename("uno", to: "two") }
            #expect(throws: VaultError.noSuchItem(name: "nope")) { try v.remove(["two", "nope"]) }
            try v.remove(["two"])
        }
        let w = try t.unlock()
        #expect(w.manifest.entries.map(\.name) == ["uno"])
        #expect(t.files("items").count == 1)
    }

    @Test func changePasswordKeepsItems() throws {
        let t = TempVault()
        try t.create("old password")
        try t.add("x", [9, 9])
        do {
            let v = try t.unlock("old password")
            try v.absorbInbox()
            try v.changePassword(to: TempVault.password("new password"))
        }
        #expect(throws: VaultError.wrongPassword) { try t.unlock("old password") }
        #expect(try t.read(t.unlock("new password"), "x") == [9, 9])
    }

    @Test func secondWriterIsBusyButReadersProceed() throws {
        let t = TempVault()
        try t.create()
        let holder = try t.unlock()
        #expect(holder.canWrite)
        #expect(throws: VaultError.busy) { try t.unlock(forWriting: true) }
        let reader = try t.unlock(forWriting: false)
        #expect(!reader.canWrite)
    }

    @Test func headerWithAbsurdKDFIsRefusedBeforeArgon2() throws {
        let t = TempVault()
        try t.create()
        let original = try Data(contentsOf: URL(fileURLWithPath: t.root + "/vault.header"))
        // The first slot's m (version 3: at 1265), as 4 TiB of memory.
        try t.editHeader { $0.replaceSubrange(1265..<1269, with: [0xff, 0xff, 0xff, 0xff]) }
        #expect(throws: VaultError.corruptedOrTampered) { try Vault(at: t.root) }
        // The same bytes without the checksum recomputed are damage.
        var h = original
        h.replaceSubrange(1265..<1269, with: [0xff, 0xff, 0xff, 0xff])
        try h.write(to: URL(fileURLWithPath: t.root + "/vault.header"))
        #expect(throws: VaultError.headerDamaged) { try Vault(at: t.root) }
    }

    @Test func tamperedHeaderFieldsFailTheMAC() throws {
        let t = TempVault()
        try t.create()
        // Public key (a drop-in hijack) and options: covered by the MAC only
        // (edits with the version-3 checksum recomputed: it authenticates nothing).
        for offset in [120, 26] {
            let t2 = TempVault()
            try t2.create()
            try t2.editHeader { $0[offset] ^= 0x01 }
            #expect(throws: (any Error).self) { try t2.unlock() }
        }
        try t.editHeader { $0[$0.count - 64] ^= 0x01 }   // the MAC itself
        #expect(throws: VaultError.corruptedOrTampered) { try t.unlock() }
    }

    @Test func tamperedManifestAndBlob() throws {
        let t = TempVault()
        try t.create()
        let e = try t.add("doc", Array(repeating: 7, count: 5000))
        try t.unlock().absorbInbox()
        try t.flip("items/" + e.blobName, at: 100)
        do {
            let v = try t.unlock()
            #expect(throws: VaultError.itemCorrupted(name: "doc")) { try t.read(v, "doc") }
            let report = try v.check(readData: true, repair: false)
            #expect(report.problems == [.init(item: "doc", kind: .corrupted)])
        }
        try t.flip("manifest", at: 40)
        #expect(throws: VaultError.corruptedOrTampered) { try t.unlock() }
    }

    @Test func notAVault() throws {
        let t = TempVault()
        #expect(throws: VaultError.notAVault) { try Vault(at: t.dir) }
        #expect(throws: VaultError.notAVault) { try Vault(at: t.dir + "/missing") }
    }

    @Test func symlinkedVaultPathsAreRefused() throws {
        let t = TempVault()
        try t.create()
        try FileManager.default.moveItem(atPath: t.root + "/items", toPath: t.dir + "/elsewhere")
        try FileManager.default.createSymbolicLink(atPath: t.root + "/items", withDestinationPath: t.dir + "/elsewhere")
        #expect(throws: VaultError.unsafeVaultPath(t.root + "/items")) { try Vault(at: t.root) }
    }

    @Test func leftoversAreWarningsAndRepairRemovesThem() throws {
        let t = TempVault()
        try t.create()
        try t.add("keep", [1, 2, 3])
        try t.unlock().absorbInbox()
        FileManager.default.createFile(atPath: t.root + "/items/00112233445566778899aabbccddeeff", contents: Data([1]))
        FileManager.default.createFile(atPath: t.root + "/inbox/.tmp-abc", contents: Data([1]))
        FileManager.default.createFile(atPath: t.root + "/.tmp-def", contents: Data([1]))
        let v = try t.unlock(forWriting: true)
        let report = try v.check(readData: true, repair: false)
        #expect(report.problems.isEmpty)
        // The unnamed blob is an orphan: no command deletes it by itself.
        #expect(report.leftovers == ["inbox/.tmp-abc", ".tmp-def"])
        #expect(report.orphans == ["items/00112233445566778899aabbccddeeff"])
        try v.tidy()
        #expect(FileManager.default.fileExists(atPath: t.root + "/items/00112233445566778899aabbccddeeff"))
        #expect(try v.check(readData: false, repair: false).leftovers.isEmpty, "tidy removes leftovers")
        FileManager.default.createFile(atPath: t.root + "/.tmp-ghi", contents: Data([1]))
        let repaired = try v.check(readData: false, repair: true)
        #expect(repaired.removed == [".tmp-ghi"])
        #expect(repaired.movedToQuarantine == ["items/00112233445566778899aabbccddeeff"])
        #expect(repaired.quarantined == ["00112233445566778899aabbccddeeff"])
        let again = try v.check(readData: false, repair: false)
        #expect(again.leftovers.isEmpty && again.orphans.isEmpty)
        #expect(try v.check(readData: false, repair: true, purge: true).quarantined.isEmpty)
        #expect(try t.read(v, "keep") == [1, 2, 3])
    }

    @Test func nothingOnDiskNamesAnItemOrHoldsItsContent() throws {
        let t = TempVault()
        try t.create()
        let secretName = "very-secret-name.txt"
        let content = Array("the quick brown fox keeps its secrets".utf8)
        try t.add(secretName, content)
        let onDisk = try FileManager.default.subpathsOfDirectory(atPath: t.root)
        func scan() throws {
            for p in try FileManager.default.subpathsOfDirectory(atPath: t.root) {
                #expect(!p.contains("secret"))
                var isDir: ObjCBool = false
                FileManager.default.fileExists(atPath: t.root + "/" + p, isDirectory: &isDir)
                if isDir.boolValue { continue }
                let d = try Data(contentsOf: URL(fileURLWithPath: t.root + "/" + p))
                #expect(d.range(of: Data(secretName.utf8)) == nil)
                #expect(d.range(of: Data(content)) == nil)
                #expect(d.range(of: Data("quick brown".utf8)) == nil)
            }
        }
        try scan()
        #expect(!onDisk.isEmpty)
        try t.unlock().absorbInbox()
        try scan()
    }

    @Test func absorbRejectsEnvelopeForAnotherVault() throws {
        let a = TempVault(), b = TempVault()
        try a.create(); try b.create()
        let e = try b.add("foreign", [1])
        for ext in [".env", ".item"] {
            try FileManager.default.copyItem(atPath: b.root + "/inbox/" + e.blobName + ext,
                                             toPath: a.root + "/inbox/" + e.blobName + ext)
        }
        let v = try a.unlock()
        let r = try v.absorbInbox()
        #expect(r.absorbed.isEmpty && r.rejected == [e.blobName + ".env"])
    }

    @Test func manifestEntryNamesAreChecked() {
        for bad in ["", ".", "..", "a/b", "tab\there", String(repeating: "x", count: 1025)] {
            #expect(throws: VaultError.invalidName(bad)) { try ManifestEntry.checkName(bad) }
        }
    }
}

/// A clock the test moves by hand.
final class FakeClock: UnlockClock, @unchecked Sendable {
    var t: Int64 = 1_800_000_000
    func now() -> Int64 { t }
}

@Suite("Attempt delay")
struct AttemptDelayTests {
    @Test func scheduleAfterTheFirstTwo() {
        #expect((1...8).map { AttemptThrottle.delay(afterFailures: $0) } == [0, 0, 5, 30, 120, 600, 1800, 1800])
    }

    @Test func waitsGrowArePersistedAndClearedByTheRightPassword() throws {
        let t = TempVault()
        try t.create()
        let clock = FakeClock()
        func attempt(_ pw: String) throws { _ = try Vault(at: t.root).unlock(password: TempVault.password(pw), forWriting: false, clock: clock) }
        #expect(throws: VaultError.wrongPassword) { try attempt("a") }
        #expect(throws: VaultError.wrongPassword) { try attempt("b") }
        #expect(throws: VaultError.wrongPasswordDelayed(retryInSeconds: 5)) { try attempt("c") }
        // During the wait even the right password is refused, without Argon2.
        #expect(throws: VaultError.lockedOut(retryInSeconds: 5)) { try attempt("correct horse") }
        clock.t += 3
        #expect(throws: VaultError.lockedOut(retryInSeconds: 2)) { try attempt("d") }
        clock.t += 2
        #expect(throws: VaultError.wrongPasswordDelayed(retryInSeconds: 30)) { try attempt("e") }
        clock.t += 30
        try attempt("correct horse")
        #expect(throws: VaultError.wrongPassword) { try attempt("f") }
    }

    @Test func damagedStateCountsAsTheCap() throws {
        let t = TempVault()
        try t.create()
        FileManager.default.createFile(atPath: t.root + "/attempts", contents: Data("garbage".utf8))
        let clock = FakeClock()
        #expect(throws: VaultError.wrongPasswordDelayed(retryInSeconds: 1800)) {
            _ = try Vault(at: t.root).unlock(password: TempVault.password("x"), forWriting: false, clock: clock)
        }
    }
}
