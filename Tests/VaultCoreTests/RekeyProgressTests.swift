import ByteLayout
import Foundation
import Testing
import TestSupport
import VaultCrypto
@testable import VaultCore

/// A thin vault's rekey (docs/FORMAT.md, "Rekey"): `rekey.progress`'s
/// bytes against the published vector, and the rekey against a remote that
/// is a plain directory of blobs (what rclone's directory remote is): new
/// blobs leave items/ a batch at a time, a run cut short sends only the
/// rest, and blobs that left the remote meanwhile stop the switch.
@Suite("Rekey progress")
struct RekeyProgressTests {
    static let section = "## Rekey"

    static func vectorProgress() throws -> RekeyProgress {
        var p = RekeyProgress()
        p.record(old: [UInt8](repeating: 1, count: 16),
                 .init(newID: [UInt8](repeating: 2, count: 16),
                       key: try FileKey(secret: VaultVectorTests.secret([UInt8](repeating: 3, count: 32))), size: 1234))
        return p
    }

    static let vaultID = Array(UInt8(0x40)...UInt8(0x4f))
    static func keys() throws -> VaultKeys {
        try VaultKeys(masterKey: MasterKey(secret: VaultVectorTests.secret(Array(0...31))), vaultID: vaultID)
    }

    @Test func publishedVectorMatchesAndOpens() throws {
        let sealed = try Self.vectorProgress().sealed(keys: Self.keys(), vaultID: Self.vaultID,
                                                      nonce: [UInt8](repeating: 0xaa, count: 12))
        let published = try FormatVectors.published(section: Self.section)
        #expect(published["rekey.progress"] == Hex.encode(sealed))
        let opened = try RekeyProgress.open(sealed, keys: Self.keys(), vaultID: Self.vaultID)
        let d = try #require(opened[[UInt8](repeating: 1, count: 16)])
        #expect(opened.count == 1 && d.newID == [UInt8](repeating: 2, count: 16) && d.size == 1234)
        #expect(d.key.same(as: try FileKey(secret: VaultVectorTests.secret([UInt8](repeating: 3, count: 32)))))
    }

    /// Every byte matters: a flip anywhere, a cut, a byte more, another
    /// vault id or another key does not open.
    @Test func anythingElseDoesNotOpen() throws {
        let sealed = try Self.vectorProgress().sealed(keys: Self.keys(), vaultID: Self.vaultID)
        for i in 0..<sealed.count {
            var b = sealed
            b[i] ^= 0x40
            #expect(throws: VaultError.corruptedOrTampered) { try RekeyProgress.open(b, keys: Self.keys(), vaultID: Self.vaultID) }
        }
        for b in [Array(sealed.dropLast()), sealed + [0], Array(sealed.prefix(20))] {
            #expect(throws: VaultError.corruptedOrTampered) { try RekeyProgress.open(b, keys: Self.keys(), vaultID: Self.vaultID) }
        }
        var otherID = Self.vaultID
        otherID[0] ^= 1
        #expect(throws: VaultError.corruptedOrTampered) { try RekeyProgress.open(sealed, keys: Self.keys(), vaultID: otherID) }
        let other = try VaultKeys(masterKey: MasterKey.random(), vaultID: Self.vaultID)
        #expect(throws: VaultError.corruptedOrTampered) { try RekeyProgress.open(sealed, keys: other, vaultID: Self.vaultID) }
    }

    /// A sealed count that disagrees with the records, under the right key
    /// (what a bug or a forger with the key would write): refused.
    @Test func aCountThatDisagreesIsRefused() throws {
        let keys = try Self.keys()
        let key = try keys.master.rekeyProgressKey(vaultID: Self.vaultID)
        let prefix = RekeyProgress.magic + [1, 0, 0, 0], nonce = [UInt8](repeating: 7, count: 12)
        for (n, records) in [(UInt32(2), 1), (0, 1), (1, 0), (UInt32.max, 1)] {
            var plain = ByteWriter.bigEndian(n)
            for _ in 0..<records { plain += [UInt8](repeating: 9, count: RekeyProgress.recordLength) }
            let file = prefix + nonce + (try AEAD(.aes256GCM, key: key).seal(nonce: nonce, aad: Self.vaultID + prefix, plaintext: plain))
            #expect(throws: VaultError.corruptedOrTampered) { try RekeyProgress.open(file, keys: keys, vaultID: Self.vaultID) }
        }
    }

    /// The remote: a directory holding blobs by name, read and written as
    /// rclone's directory remote would be. `failAfter` batches, it throws
    /// (the kill); `dropOnList` removes that many blobs it holds when next
    /// listed, the last it was sent (another machine's push).
    final class DirectoryRemote: BlobFetcher, BlobOffload {
        let dir: String
        let items: String
        let batchBytes: UInt64 = 1
        var batches = 0
        var sentNames: [String] = []
        var failAfter: Int?
        var dropOnList = 0
        var listings = 0

        init(_ dir: String, items: String) throws {
            (self.dir, self.items) = (dir, items)
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        }

        func source(forBlob name: String) throws -> ByteSource? {
            FileManager.default.fileExists(atPath: dir + "/" + name) ? try FileHandleFD(readingFrom: dir + "/" + name) : nil
        }

        struct Killed: Error {}

        func offload(_ names: [String]) throws {
            if let failAfter, batches >= failAfter { throw Killed() }
            for n in names {
                try FileManager.default.copyItem(atPath: items + "/" + n, toPath: dir + "/" + n)
                try FileManager.default.removeItem(atPath: items + "/" + n)
            }
            batches += 1
            sentNames += names
        }

        func remoteBlobs() throws -> [String: UInt64] {
            listings += 1
            while dropOnList > 0, let n = sentNames.popLast() {
                try FileManager.default.removeItem(atPath: dir + "/" + n)
                dropOnList -= 1
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: dir)
            var out: [String: UInt64] = [:]
            for n in names { out[n] = (try FileManager.default.attributesOfItem(atPath: dir + "/" + n)[.size] as? UInt64) ?? 0 }
            return out
        }
    }

    /// A thin vault: six items whose blobs moved to the remote directory.
    func thinVault() throws -> (TempVault, DirectoryRemote, [String: [UInt8]]) {
        let t = TempVault()
        try t.create()
        var contents: [String: [UInt8]] = [:]
        for (i, size) in [0, 10, 3 * ItemCipher.chunkSize + 7, 100, 5000, ItemCipher.chunkSize].enumerated() {
            contents["item\(i)"] = ItemFixture.content(size, seed: UInt32(i + 1))
            try t.add("item\(i)", contents["item\(i)"]!)
        }
        try t.unlock().absorbInbox()
        let remote = try DirectoryRemote(t.dir + "/remote", items: t.root + "/items")
        for n in t.files("items") {
            try FileManager.default.moveItem(atPath: t.root + "/items/" + n, toPath: remote.dir + "/" + n)
        }
        return (t, remote, contents)
    }

    func unlockThin(_ t: TempVault, _ remote: DirectoryRemote) throws -> UnlockedVault {
        let v = try t.unlock()
        v.fetcher = remote
        return v
    }

    @Test func aThinRekeySendsEachBatchAndKeepsNothingHere() throws {
        let (t, remote, contents) = try thinVault()
        let old = Set(try remote.remoteBlobs().keys)
        try unlockThin(t, remote).rekey(password: TempVault.password("correct horse"), offload: remote)
        #expect(remote.batches == 6 && t.files("items").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: t.root + "/rekey.progress"))
        let v = try unlockThin(t, remote)
        #expect(Set(v.manifest.entries.map(\.blobName)).isDisjoint(with: old))
        for (name, c) in contents { #expect(try t.read(v, name) == c) }
    }

    /// Killed after two batches: the rerun re-encrypts only the other
    /// four; every item reads; a progress file under another key (a
    /// finished rekey's) counts as none.
    @Test func aRunAfterAKillSendsOnlyTheRest() throws {
        let (t, remote, contents) = try thinVault()
        remote.failAfter = 2
        #expect(throws: DirectoryRemote.Killed.self) {
            try unlockThin(t, remote).rekey(password: TempVault.password("correct horse"), offload: remote)
        }
        #expect(FileManager.default.fileExists(atPath: t.root + "/rekey.progress"))
        let firstSent = remote.sentNames
        do {
            // The old state stands meanwhile; the rerun sends the other four.
            let v = try unlockThin(t, remote)
            for (name, c) in contents { #expect(try t.read(v, name) == c) }
            remote.failAfter = nil
            try v.rekey(password: TempVault.password("correct horse"), offload: remote)
        }
        #expect(remote.batches == 6 && remote.sentNames.count == 6, "sent \(remote.sentNames.count)")
        do {
            let v = try unlockThin(t, remote)
            #expect(Set(v.manifest.entries.map(\.blobName)).isSuperset(of: firstSent), "the first run's blobs are the ones named")
            for (name, c) in contents { #expect(try t.read(v, name) == c) }
            // A progress file that does not open under the vault's key (a
            // finished rekey's) is no progress: all six again.
            let stale = try Self.vectorProgress().sealed(keys: Self.keys(), vaultID: v.vault.header.vaultID)
            try Data(stale).write(to: URL(fileURLWithPath: t.root + "/rekey.progress"))
            remote.sentNames = []
            try v.rekey(password: TempVault.password("correct horse"), offload: remote)
        }
        #expect(remote.sentNames.count == 6)
        let v = try unlockThin(t, remote)
        for (name, c) in contents { #expect(try t.read(v, name) == c) }
    }

    /// Blobs that left the remote between their batch and the switch: the
    /// rekey stops with `rekeyBlobsGone`, the old keys stay, and the rerun
    /// sends those again.
    @Test func blobsThatLeftTheRemoteStopTheSwitch() throws {
        let (t, remote, contents) = try thinVault()
        let header = try Vault(at: t.root).header
        do {
            let v = try unlockThin(t, remote)
            // Listed once, at the end (no progress to check at the start): two new blobs go then.
            remote.dropOnList = 2
            #expect(throws: VaultError.rekeyBlobsGone(count: 2)) {
                try v.rekey(password: TempVault.password("correct horse"), offload: remote)
            }
        }
        #expect(try Vault(at: t.root).header == header)
        remote.sentNames = []
        do {
            let again = try unlockThin(t, remote)
            for (name, c) in contents { #expect(try t.read(again, name) == c) }
            try again.rekey(password: TempVault.password("correct horse"), offload: remote)
        }
        #expect(remote.sentNames.count == 2, "sent again: \(remote.sentNames.count)")
        let after = try unlockThin(t, remote)
        for (name, c) in contents { #expect(try t.read(after, name) == c) }
    }
}
