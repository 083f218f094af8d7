import ByteLayout
import Foundation
import System
import Testing
import TestSupport
import VaultCodecs
import VaultCrypto
@testable import VaultCore

/// Dropped folder indexes (docs/FORMAT.md, "Dropped folder indexes"): the
/// vector read from FORMAT.md (made with Python's `cryptography`); what a
/// reader refuses, including files the dropper sealed under its own key in
/// shapes the format forbids and random plaintexts past the tag (a dropper
/// holds the key of what it drops); and absorb, which keeps a good one as
/// the vault's own index, drops any other, and never loses the item.
@Suite("Dropped folder indexes")
struct DroppedFolderIndexTests {
    static let section = "## Dropped folder indexes"

    static func published(_ name: String) throws -> [UInt8] {
        let hex = try #require(try FormatVectors.assigned(name, section: section))
        return try #require(Hex.decode(hex))
    }

    /// What only the dropper (and, once the envelope opens, the owner) can
    /// seal: `plain` under the item's own dropped-index key.
    static func sealed(_ plain: [UInt8], item: ManifestEntry) throws -> [UInt8] {
        let nonce = FolderIndexFileTests.nonce
        let aead = try DroppedFolderIndex.aead(fileKey: item.fileKey, itemID: item.itemID)
        return DroppedFolderIndex.magic + nonce
            + (try aead.seal(nonce: nonce, aad: DroppedFolderIndex.magic + item.itemID, plaintext: plain))
    }

    @Test func theVector() throws {
        let item = try FolderIndexFileTests.item()
        let key = try HKDF.deriveKey(ikm: item.fileKey.secret, salt: item.itemID, info: DroppedFolderIndex.label, length: 32)
        #expect(key.withUnsafeBytes { Array($0) } == (try Self.published("key")))
        let index = try FolderIndex.rebuild(FolderIndexFileTests.sampleEntries)
        let sealed = try #require(try DroppedFolderIndex.seal(index, fileKey: item.fileKey, itemID: item.itemID,
                                                               nonce: FolderIndexFileTests.nonce))
        #expect(sealed == (try Self.published("dropped")))
        #expect(try DroppedFolderIndex.open(sealed, item: item).entries == index.entries)
    }

    /// Another file key or item id, a file count that does not agree, a
    /// flipped bit anywhere, a cut, a kept index's magic.
    @Test func whatAReaderRefuses() throws {
        let sealed = try Self.published("dropped")
        let item = try FolderIndexFileTests.item()
        func refused(_ bytes: [UInt8], _ item: ManifestEntry) -> Bool {
            do {
                _ = try DroppedFolderIndex.open(bytes, item: item)
                return false
            } catch VaultError.corruptedOrTampered { return true } catch { return false }
        }
        #expect(!refused(sealed, item))
        #expect(refused(sealed, try FolderIndexFileTests.item(fileKeyFirst: 0xa1)))
        #expect(refused(sealed, try FolderIndexFileTests.item(fileCount: 2)))
        var other = item
        other.itemID[15] ^= 1
        #expect(refused(sealed, other))
        for i in 0..<sealed.count {
            var bad = sealed
            bad[i] ^= 0x01
            #expect(refused(bad, item), "bit flipped at \(i)")
        }
        for n in [0, 8, 20, 35, sealed.count - 1] { #expect(refused(Array(sealed.prefix(n)), item)) }
        #expect(refused(FolderIndexFile.magic + sealed.dropFirst(8), item))
    }

    /// Every shape a kept index may not have, sealed by the dropper under
    /// its own key: refused as a whole file.
    @Test(arguments: FolderIndexFileTests.forbidden)
    func shapesPastTheTagAreRefused(_ c: FolderIndexFileTests.Forbidden) throws {
        let item = try FolderIndexFileTests.item(fileCount: c.fileCount)
        #expect(throws: VaultError.corruptedOrTampered, "\(c.why)") {
            try DroppedFolderIndex.open(Self.sealed(c.plain, item: item), item: item)
        }
    }

    /// Fuzzing past the tag: a good plaintext changed at random (bytes
    /// flipped or set, cut, lengthened, its count changed), sealed under
    /// the dropper's key. Each opens into an index that passes every check
    /// or is refused as `corruptedOrTampered`; nothing else happens.
    @Test(arguments: [UInt64(1), 2])
    func randomPlaintextsPastTheTagOpenOrAreRefused(seed: UInt64) throws {
        var rng = SplitMix(state: seed)
        let entries = [
            FolderIndexFileTests.entry(1, "d", perm: 0o755),
            FolderIndexFileTests.entry(0, "d/a", size: 700, offset: 1024),
            FolderIndexFileTests.entry(2, "l", perm: 0o777, target: "d/a"),
            FolderIndexFileTests.entry(0, "b", size: 0, offset: 2560),
        ]
        let good = FolderIndexFileTests.plain(entries)
        var opened = 0, refused = 0
        for _ in 0..<400 {
            var plain = good
            switch rng.next() % 4 {
            case 0:
                for _ in 0..<(1 + rng.next() % 4) { plain[Int(rng.next() % UInt64(plain.count))] ^= UInt8(1 + rng.next() % 255) }
            case 1: plain = Array(plain.prefix(Int(rng.next() % UInt64(plain.count))))
            case 2: plain += (0..<(1 + rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 3 == 0 ? rng.next() : 0) }
            default: plain.replaceSubrange(0..<4, with: ByteWriter.bigEndian(UInt32(truncatingIfNeeded: rng.next() % 8)))
            }
            let item = try FolderIndexFileTests.item(fileCount: 1 + rng.next() % 3)
            do {
                let index = try DroppedFolderIndex.open(Self.sealed(plain, item: item), item: item)
                #expect(UInt64(index.entries.filter { $0.kind == .file }.count) == item.fileCount)
                opened += 1
            } catch VaultError.corruptedOrTampered {
                refused += 1
            }
        }
        #expect(refused > 300 && opened > 0, "opened \(opened), refused \(refused)")
    }

    // MARK: - Adding and absorbing

    /// A folder of three 600 KiB files and a link, stored uncompressed so
    /// its archive spans three chunks.
    static func folder(_ t: TempVault, _ name: String = "photos") -> String {
        let source = t.dir + "/" + name
        try? FileManager.default.createDirectory(atPath: source + "/sub", withIntermediateDirectories: true)
        for (i, p) in ["a.jpg", "b.jpg", "sub/c.jpg"].enumerated() {
            FileManager.default.createFile(atPath: source + "/" + p, contents: Data((0..<600 * 1024).map { UInt8(truncatingIfNeeded: $0 * 7 + i) }))
        }
        try? FileManager.default.createSymbolicLink(atPath: source + "/link", withDestinationPath: "sub/c.jpg")
        return source
    }

    @discardableResult
    static func dropFolder(_ t: TempVault, _ name: String = "photos", batch: DropInBatch? = nil) throws -> ManifestEntry {
        try Vault(at: t.root).dropIn(folder: folder(t, name), name: name, mode: 0o755, modified: 1_700_000_000,
                                     compression: .none, batch: batch).entry
    }

    /// The dropper's index comes in with the item: a chunk in the middle of
    /// the archive that no longer opens (so a pass would fail) does not
    /// stop the folder from listing; the index is the pass's, entry for
    /// entry; the inbox is left empty.
    @Test func absorbKeepsTheDroppersIndex() throws {
        let t = TempVault()
        try t.create()
        let dropped = try Self.dropFolder(t)
        #expect(t.files("inbox").filter { $0.hasSuffix(".fx") } == [dropped.blobName + ".fx"])
        var v = try t.unlock()
        try v.absorbInbox()
        #expect(t.files("inbox").isEmpty)
        #expect(t.files("indexes").count == 1)
        let entry = try v.entry(named: "photos")
        let kept = try #require(v.keptIndex(of: entry))
        #expect(kept.entries.filter { $0.kind == .file }.count == 3)
        try FileManager.default.removeItem(atPath: t.root + "/indexes/" + t.files("indexes")[0])
        #expect(try v.index(folder: entry).entries == kept.entries)   // the pass, which keeps it anew

        try t.flipMiddle(of: entry)
        v.releaseWriterLock()
        v = try t.unlock()
        #expect(try v.index(folder: entry).entries == kept.entries)
    }

    /// An add of many (a batch envelope): each folder's index is named as
    /// its content, `<batch id>.<item id>.fx`, and each comes in. An add
    /// into a remote's inbox (single envelopes, no batch) writes none.
    @Test func aBatchCarriesAnIndexPerFolderAndARemoteAddNone() throws {
        let t = TempVault()
        try t.create()
        let batch = DropInBatch(into: try Vault(at: t.root), expected: 2)
        let a = try Self.dropFolder(t, "a", batch: batch), b = try Self.dropFolder(t, "b", batch: batch)
        try batch.land()
        let fx = t.files("inbox").filter { $0.hasSuffix(".fx") }
        #expect(fx.count == 2 && fx.allSatisfy { $0.split(separator: ".").count == 3 })
        #expect(Set(fx.map { $0.split(separator: ".")[1] }) == [Substring(a.blobName), Substring(b.blobName)])
        let v = try t.unlock()
        try v.absorbInbox()
        #expect(t.files("inbox").isEmpty && t.files("indexes").count == 2)
        for name in ["a", "b"] { #expect(v.keptIndex(of: try v.entry(named: name)) != nil) }

        let remote = DropInBatch(into: try Vault(at: t.root), expected: 1, batchEnvelopes: false)
        try Self.dropFolder(t, "c", batch: remote)
        try remote.land()
        #expect(t.files("inbox").count == 2 && !t.files("inbox").contains { $0.hasSuffix(".fx") })
    }

    /// A folder whose files all lie in the archive's first chunk gets no
    /// index (keeping one costs what the pass over one chunk does); one
    /// byte past it does.
    @Test func onlyAFolderPastOneChunkGetsAnIndex() throws {
        let t = TempVault()
        try t.create()
        for (name, size) in [("small", ItemCipher.chunkSize - 4096), ("large", ItemCipher.chunkSize)] {
            let source = t.dir + "/" + name
            try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: source + "/f", contents: Data(repeating: 7, count: size))
            try Vault(at: t.root).dropIn(folder: source, name: name, mode: 0o755, modified: 1_700_000_000, compression: .none)
            #expect(t.files("inbox").filter { $0.hasSuffix(".fx") }.count == (name == "small" ? 0 : 1), "\(name)")
        }
    }

    /// What a dropper may leave beside its folder instead of a good index:
    /// each is dropped (and removed from the inbox); the folder comes in
    /// all the same, and the first look inside makes the pass.
    @Test(arguments: ["garbage", "forbidden shape", "another item's", "too few files", "a FIFO", "a symbolic link", "too long"])
    func aBadIndexIsDroppedAndTheFolderStillComesIn(_ kind: String) throws {
        let t = TempVault()
        try t.create()
        let entry = try Self.dropFolder(t)
        let fx = t.root + "/inbox/" + entry.blobName + ".fx"
        let good = Array(try Data(contentsOf: URL(fileURLWithPath: fx)))
        try FileManager.default.removeItem(atPath: fx)
        switch kind {
        case "garbage": FileManager.default.createFile(atPath: fx, contents: Data(repeating: 0x41, count: 300))
        case "forbidden shape":
            let plain = FolderIndexFileTests.plain([FolderIndexFileTests.entry(0, "../a", size: 5, offset: 512)])
            FileManager.default.createFile(atPath: fx, contents: Data(try Self.sealed(plain, item: entry)))
        case "another item's":
            var other = entry
            other.itemID[0] ^= 1
            let index = try FolderIndex.rebuild(FolderIndexFileTests.sampleEntries)
            let sealed = try #require(try DroppedFolderIndex.seal(index, fileKey: entry.fileKey, itemID: other.itemID))
            FileManager.default.createFile(atPath: fx, contents: Data(sealed))
        case "too few files":
            let plain = FolderIndexFileTests.plain([FolderIndexFileTests.entry(0, "a.jpg", size: 5, offset: 512)])
            FileManager.default.createFile(atPath: fx, contents: Data(try Self.sealed(plain, item: entry)))
        case "a FIFO": #expect(mkfifo(fx, 0o600) == 0)
        case "a symbolic link":
            FileManager.default.createFile(atPath: t.dir + "/good.fx", contents: Data(good))
            try FileManager.default.createSymbolicLink(atPath: fx, withDestinationPath: t.dir + "/good.fx")
        default:
            FileManager.default.createFile(atPath: fx, contents: Data(good))
            #expect(truncate(fx, off_t(FolderIndexFile.maxLength + 1)) == 0)
        }
        let v = try t.unlock()
        let report = try v.absorbInbox()
        #expect(report.absorbed == ["photos"])
        #expect(t.files("inbox").isEmpty)
        #expect(t.files("indexes").isEmpty)
        let index = try v.index(folder: try v.entry(named: "photos"))   // the pass
        #expect(index.entries.filter { $0.kind == .file }.count == 3)
        #expect(t.files("indexes").count == 1)
    }

    /// A dropper's index that lies in a way no check of its own can see
    /// (two files of one size, their places swapped) comes in, and a mount
    /// would read each file's bytes as the other's: `check --read-data`
    /// finds it disagrees with the archive and says so, changing nothing;
    /// with `--repair` it removes it, and a check after finds nothing.
    @Test func checkReadDataFindsAnIndexThatLied() throws {
        let t = TempVault()
        try t.create()
        let entry = try Self.dropFolder(t)
        let fx = t.root + "/inbox/" + entry.blobName + ".fx"
        let honest = try DroppedFolderIndex.open(Array(try Data(contentsOf: URL(fileURLWithPath: fx))), item: entry)
        var entries = honest.entries
        let a = try #require(entries.firstIndex { $0.path == Array("/a.jpg".utf8) })
        let b = try #require(entries.firstIndex { $0.path == Array("/b.jpg".utf8) })
        let (oa, ob) = (entries[a].dataOffset, entries[b].dataOffset)
        func moved(_ e: FolderIndex.Entry, to offset: UInt64) -> FolderIndex.Entry {
            .init(path: e.path, kind: e.kind, size: e.size, permissions: e.permissions, mtime: e.mtime, dataOffset: offset, linkTarget: e.linkTarget)
        }
        (entries[a], entries[b]) = (moved(entries[a], to: ob), moved(entries[b], to: oa))
        let lie = try #require(try DroppedFolderIndex.seal(try FolderIndex.rebuild(entries), fileKey: entry.fileKey, itemID: entry.itemID))
        try Data(lie).write(to: URL(fileURLWithPath: fx))

        var v = try t.unlock()
        try v.absorbInbox()
        let kept = t.files("indexes")
        #expect(kept.count == 1)
        let before = try v.check(readData: false, repair: false)
        #expect(before.disagreeingIndexes.isEmpty)   // only a whole read can tell
        let found = try v.check(readData: true, repair: false)
        #expect(found.disagreeingIndexes == ["photos"] && found.problems.isEmpty)
        #expect(t.files("indexes") == kept)
        let repaired = try v.check(readData: true, repair: true)
        #expect(repaired.removed == ["indexes/" + kept[0]])
        #expect(t.files("indexes").isEmpty)
        v.releaseWriterLock()
        v = try t.unlock()
        _ = try v.index(folder: try v.entry(named: "photos"))   // the pass keeps the honest one
        #expect(try v.check(readData: true, repair: false).disagreeingIndexes.isEmpty)
        #expect(v.keptIndex(of: try v.entry(named: "photos"))?.entries == honest.entries)
    }

    /// An index whose content is gone (absorbed before a crash removed it,
    /// or its content a leftover) is a leftover; one beside its content is
    /// not; neither is an orphan for `check`.
    @Test func anIndexWithoutItsContentIsALeftover() throws {
        let t = TempVault()
        try t.create()
        let entry = try Self.dropFolder(t)
        let stray = "00112233445566778899aabbccddeeff.fx"
        FileManager.default.createFile(atPath: t.root + "/inbox/" + stray, contents: Data([1, 2, 3]))
        #expect(try Vault(at: t.root).leftovers().map(\.description) == ["inbox/" + stray])
        let v = try t.unlock()
        #expect(try v.orphans().isEmpty)
        #expect(try v.removeLeftovers(v.leftovers()) == ["inbox/" + stray])   // as every writer's tidy does
        #expect(t.files("inbox").contains(entry.blobName + ".fx"))

        // An add killed after the index, before its envelope: content and
        // index are leftovers together.
        try FileManager.default.removeItem(atPath: t.root + "/inbox/" + entry.blobName + ".env")
        #expect(try v.removeLeftovers(v.leftovers()).sorted() == ["inbox/" + entry.blobName + ".fx", "inbox/" + entry.blobName + ".item"])
        #expect(t.files("inbox").isEmpty)
    }

    /// The owner's own write of a folder version keeps its index as
    /// written: a mount lists it without a pass.
    @Test func savingAFolderVersionKeepsItsIndex() throws {
        let t = TempVault()
        try t.create()
        try Self.dropFolder(t)
        var v = try t.unlock()
        try v.absorbInbox()
        try FileManager.default.removeItem(atPath: t.root + "/indexes")
        let source = Self.folder(t)
        FileManager.default.createFile(atPath: source + "/new.txt", contents: Data("new".utf8))
        let saved = try v.saveFolderVersion(of: try v.entry(named: "photos"), from: source, now: 1_800_000_000, compression: .none)
        let kept = try #require(v.keptIndex(of: saved))
        #expect(kept.entries.contains { $0.path == Array("/new.txt".utf8) })
        try FileManager.default.removeItem(atPath: t.root + "/indexes")
        v.releaseWriterLock()
        v = try t.unlock()
        #expect(try v.index(folder: saved).entries == kept.entries)   // the pass finds what was kept
    }
}
