import ByteLayout
import Foundation
import System
import Testing
import TestSupport
import VaultCodecs
import VaultCrypto
@testable import VaultCore

/// Folder index files (docs/FORMAT.md, "Folder indexes"): the vector read
/// from FORMAT.md (made with Python's `cryptography`); what a reader
/// refuses, including files sealed under the right key whose shape the
/// format forbids (past the tag); and a vault that keeps, uses, refuses
/// and removes them.
@Suite("Folder index files")
struct FolderIndexFileTests {
    static let section = "## Folder indexes"
    static let vaultID = (0x40..<0x50).map { UInt8($0) }
    static let nonce = (0x60..<0x6c).map { UInt8($0) }

    static func master() throws -> MasterKey {
        var b = (0..<32).map { UInt8($0) }
        return try MasterKey(secret: SecretBytes(consuming: &b))
    }

    static func keys(_ vaultID: [UInt8] = vaultID) throws -> FolderIndexKeys {
        try FolderIndexKeys(master: master(), vaultID: vaultID)
    }

    /// Opens `bytes` as the index file of `item`, under its own name, as
    /// a vault reads `indexes/<name>`.
    static func open(_ bytes: [UInt8], item: ManifestEntry, vaultID: [UInt8] = vaultID) throws -> FolderIndex {
        let keys = try keys(vaultID)
        return try FolderIndexFile.open(bytes, item: item, name: FolderIndexFile.name(item: item, keys: keys), keys: keys, vaultID: vaultID)
    }

    static func item(fileKeyFirst: UInt8 = 0xa0, fileCount: UInt64 = 1) throws -> ManifestEntry {
        var key = (0..<32).map { fileKeyFirst &+ UInt8($0) }
        return try ManifestEntry(itemID: (0x80..<0x90).map { UInt8($0) }, fileKey: FileKey(secret: SecretBytes(consuming: &key)),
                                 kind: .folder, origin: .droppedIn, mode: 0o755, size: 5, fileCount: fileCount,
                                 added: 1_700_000_000, modified: 1_700_000_000, name: "photos")
    }

    static let sampleEntries: [FolderIndex.Entry] = [
        .init(path: Array("/d".utf8), kind: .directory, size: 0, permissions: 0o755, mtime: 1_700_000_000, dataOffset: 0, linkTarget: []),
        .init(path: Array("/d/a.txt".utf8), kind: .file, size: 5, permissions: 0o644, mtime: 1_700_000_001, dataOffset: 1536, linkTarget: []),
        .init(path: Array("/l".utf8), kind: .symlink, size: 0, permissions: 0o777, mtime: -1, dataOffset: 0, linkTarget: Array("d/a.txt".utf8)),
    ]

    static func published(_ name: String) throws -> [UInt8] {
        let hex = try #require(try FormatVectors.assigned(name, section: section))
        return try #require(Hex.decode(hex))
    }

    @Test func theVector() throws {
        let index = try FolderIndex.rebuild(Self.sampleEntries)
        #expect(FolderIndexFile.encode(index) == (try Self.published("plain")))
        let name = try FolderIndexFile.name(item: Self.item(), keys: Self.keys())
        #expect(name == Hex.encode(try Self.published("name")))
        let sealed = try #require(try FolderIndexFile.seal(index, name: name, keys: Self.keys(), vaultID: Self.vaultID, nonce: Self.nonce))
        #expect(sealed == (try Self.published("index")))
        let opened = try Self.open(sealed, item: Self.item())
        #expect(opened.entries == index.entries)
        // The tree is the archive's: the file is found under its directory.
        let d = try #require(opened.tree.child(PathTree.root, Array("d".utf8)))
        let a = try #require(opened.tree.child(d, Array("a.txt".utf8)))
        #expect(opened.entry(at: a)?.dataOffset == 1536)
    }

    /// Another item version (another file key), another vault, a flipped
    /// bit anywhere, a cut, a file count that does not agree.
    @Test func whatAReaderRefuses() throws {
        let sealed = try Self.published("index")
        func refused(_ bytes: [UInt8], item: ManifestEntry? = nil, vaultID: [UInt8] = Self.vaultID) throws -> Bool {
            do {
                _ = try Self.open(bytes, item: item ?? Self.item(), vaultID: vaultID)
                return false
            } catch VaultError.corruptedOrTampered { return true }
        }
        #expect(try !refused(sealed))
        #expect(try refused(sealed, item: Self.item(fileKeyFirst: 0xa1)))
        #expect(try refused(sealed, vaultID: [UInt8](repeating: 0x40, count: 16)))
        #expect(try refused(sealed, item: Self.item(fileCount: 2)))
        for i in 0..<sealed.count {
            var bad = sealed
            bad[i] ^= 0x01
            #expect(try refused(bad), "bit flipped at \(i)")
        }
        for n in [0, 8, 20, 35, sealed.count - 1] { #expect(try refused(Array(sealed.prefix(n)))) }
    }

    /// Plaintexts sealed under the right key (as only the owner can seal)
    /// in shapes the format forbids: each is refused, as a whole file.
    @Test(arguments: Self.forbidden)
    func shapesPastTheTagAreRefused(_ c: Forbidden) throws {
        let item = try Self.item(fileCount: c.fileCount)
        let name = try FolderIndexFile.name(item: item, keys: Self.keys())
        let sealed = FolderIndexFile.magic + Self.nonce
            + (try FolderIndexFile.aead(Self.keys()).seal(nonce: Self.nonce, aad: FolderIndexFile.aad(Self.vaultID, name), plaintext: c.plain))
        #expect(throws: VaultError.corruptedOrTampered, "\(c.why)") {
            try Self.open(sealed, item: item)
        }
    }

    struct Forbidden: CustomTestStringConvertible, Sendable {
        let why: String
        let plain: [UInt8]
        var fileCount: UInt64 = 1
        var testDescription: String { why }
    }

    static func entry(_ kind: UInt8, _ path: String, perm: UInt16 = 0o644, size: UInt64 = 0, offset: UInt64 = 0, target: String = "") -> [UInt8] {
        var w = ByteWriter()
        w.u8(kind)
        w.u16(perm)
        w.i64(0)
        w.u64(size)
        w.u64(offset)
        try! w.lengthPrefixed(UInt16.self, Array(path.utf8))
        try! w.lengthPrefixed(UInt16.self, Array(target.utf8))
        return w.bytes
    }

    /// `count`, the entries, then Padmé's zero padding (unless `pad` says otherwise).
    static func plain(_ entries: [[UInt8]], count: UInt32? = nil, pad: ((Int) -> [UInt8])? = nil) -> [UInt8] {
        var b = ByteWriter.bigEndian(count ?? UInt32(entries.count)) + entries.joined()
        let padded = Int(Padme.paddedLength(UInt64(b.count)))
        b += pad?(padded - b.count) ?? [UInt8](repeating: 0, count: padded - b.count)
        return b
    }

    static let file = entry(0, "a", size: 5, offset: 512)
    static let forbidden: [Forbidden] = [
        .init(why: "a kind past 2", plain: plain([entry(3, "a", size: 5, offset: 512)])),
        .init(why: "more entries counted than held", plain: plain([file], count: 2)),
        .init(why: "a count no bytes could hold", plain: plain([file], count: .max)),
        .init(why: "nonzero padding", plain: plain([file, entry(1, "d", perm: 0o755)], pad: { [UInt8](repeating: 0, count: $0 - 1) + [1] })),
        .init(why: "padding one byte short", plain: plain([file, entry(1, "d", perm: 0o755)], pad: { [UInt8](repeating: 0, count: $0 - 1) })),
        .init(why: "padding one byte long", plain: plain([file], pad: { [UInt8](repeating: 0, count: $0 + 1) })),
        .init(why: "permission bits past 0777", plain: plain([entry(0, "a", perm: 0o4755, size: 5, offset: 512)])),
        .init(why: "data inside the first header", plain: plain([entry(0, "a", size: 5, offset: 0)])),
        .init(why: "data off a block boundary", plain: plain([entry(0, "a", size: 5, offset: 1000)])),
        .init(why: "data past 2^64", plain: plain([entry(0, "a", size: .max, offset: 512)])),
        .init(why: "a directory with data", plain: plain([file, entry(1, "d", size: 1, offset: 512)])),
        .init(why: "a link target on a file", plain: plain([entry(0, "a", size: 5, offset: 512, target: "b")])),
        .init(why: "an absolute path", plain: plain([entry(0, "/a", size: 5, offset: 512)])),
        .init(why: "a .. component", plain: plain([entry(0, "../a", size: 5, offset: 512)])),
        .init(why: "a . component", plain: plain([entry(0, "./a", size: 5, offset: 512)])),
        .init(why: "an empty component", plain: plain([entry(0, "d//a", size: 5, offset: 512)])),
        .init(why: "an empty path", plain: plain([entry(0, "", size: 5, offset: 512)])),
        .init(why: "a path named twice", plain: plain([file, entry(0, "a", size: 5, offset: 1024)]), fileCount: 2),
        .init(why: "a path under a file", plain: plain([file, entry(0, "a/b", size: 5, offset: 1024)]), fileCount: 2),
        .init(why: "a path through a symbolic link", plain: plain([entry(2, "l", perm: 0o777, target: "d"), entry(0, "l/b", size: 5, offset: 512)])),
        .init(why: "fewer files than the item counts", plain: plain([file]), fileCount: 2),
    ]

    // MARK: - A vault that keeps them

    /// A vault with one folder item of three 600 KiB files, stored
    /// uncompressed so its archive spans three chunks.
    static func vaultWithFolder(_ t: TempVault) throws -> UnlockedVault {
        try t.create()
        let source = t.dir + "/photos"
        try FileManager.default.createDirectory(atPath: source + "/sub", withIntermediateDirectories: true)
        for (i, p) in ["a.jpg", "b.jpg", "sub/c.jpg"].enumerated() {
            FileManager.default.createFile(atPath: source + "/" + p, contents: Data((0..<600 * 1024).map { UInt8(truncatingIfNeeded: $0 * 7 + i) }))
        }
        try Vault(at: t.root).dropIn(folder: source, name: "photos", mode: 0o755, modified: 1_700_000_000, compression: .none)
        let v = try t.unlock()
        try v.absorbInbox()
        return v
    }

    @Test func aKeptIndexIsUsedInPlaceOfThePass() throws {
        let t = TempVault()
        var v = try Self.vaultWithFolder(t)
        let entry = try v.entry(named: "photos")
        let first = try v.index(folder: entry)
        #expect(first.entries.count == 4)
        #expect(t.files("indexes").count == 1)
        // A chunk in the middle of the archive no longer opens: the pass
        // would fail, the kept index does not need it.
        try t.flipMiddle(of: entry)
        v.releaseWriterLock()
        v = try t.unlock()
        #expect(try v.index(folder: entry).entries == first.entries)
        // Without it, the pass runs and finds the damage.
        try FileManager.default.removeItem(atPath: t.root + "/indexes/" + t.files("indexes")[0])
        #expect(throws: VaultError.itemCorrupted(name: "photos")) { try v.index(folder: entry) }
        #expect(t.files("indexes").isEmpty)
    }

    @Test func aRefusedIndexIsWrittenAnew() throws {
        let t = TempVault()
        var v = try Self.vaultWithFolder(t)
        let entry = try v.entry(named: "photos")
        let first = try v.index(folder: entry)
        let name = t.files("indexes")[0]
        try t.flip("indexes/" + name, at: 30)
        v.releaseWriterLock()
        v = try t.unlock()
        #expect(try v.index(folder: entry).entries == first.entries)
        let again = Array(try Data(contentsOf: URL(fileURLWithPath: t.root + "/indexes/" + name)))
        #expect(try FolderIndexFile.open(again, item: entry, name: name, keys: v.keys.folderIndex, vaultID: v.vaultID).entries == first.entries)
    }

    @Test func removingTheItemOrRekeyingRemovesIt() throws {
        let t = TempVault()
        var v = try Self.vaultWithFolder(t)
        _ = try v.index(folder: try v.entry(named: "photos"))
        #expect(t.files("indexes").count == 1)
        try v.remove(["photos"])
        #expect(t.files("indexes").isEmpty)

        let source = t.dir + "/again"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: source + "/x", contents: Data([1, 2, 3]))
        try Vault(at: t.root).dropIn(folder: source, name: "again", mode: 0o755, modified: 1_700_000_000)
        v.releaseWriterLock()
        v = try t.unlock()
        try v.absorbInbox()
        _ = try v.index(folder: try v.entry(named: "again"))
        #expect(t.files("indexes").count == 1)
        try v.rekey(password: TempVault.password("correct horse"))
        #expect(t.files("indexes").isEmpty && !FileManager.default.fileExists(atPath: t.root + "/indexes"))
        v.releaseWriterLock()
        v = try t.unlock()
        _ = try v.index(folder: try v.entry(named: "again"))
        #expect(t.files("indexes").count == 1)
    }

    /// A tidy removes what no folder item names once past the grace, and
    /// nothing else.
    @Test func aTidyRemovesOnlyOldStrays() throws {
        let t = TempVault()
        let v = try Self.vaultWithFolder(t)
        _ = try v.index(folder: try v.entry(named: "photos"))
        let live = t.files("indexes")[0]
        let dir = t.root + "/indexes/"
        for stray in ["00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100"] {
            FileManager.default.createFile(atPath: dir + stray, contents: Data([1]))
        }
        let now = Syscall.now()
        let old = Date(timeIntervalSince1970: TimeInterval(now - UnlockedVault.folderIndexGrace - 10))
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: dir + "00112233445566778899aabbccddeeff")
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: dir + live)
        #expect(v.tidyFolderIndexes(now: now) == 1)
        #expect(t.files("indexes") == [live, "ffeeddccbbaa99887766554433221100"].sorted())
        #expect(v.tidyFolderIndexes(now: now + UnlockedVault.folderIndexGrace) == 1)
        #expect(t.files("indexes") == [live])
    }
}
