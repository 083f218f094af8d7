import Foundation
import Testing
import VaultBackup
import VaultCodecs
@testable import VaultCore

/// Snapshots sealed under a dropper's own keys (it holds every key of what
/// it drops): whatever their trees say, restore refuses without a crash, a
/// hang or a byte outside --to.
@Suite("Backup hostile snapshots")
struct BackupHostileTests {
    /// A pack and a snapshot as an attacker makes them, field by field.
    final class Forger {
        let key: PieceKey
        var pack = HostileDropIn()
        var content: [UInt8] = []
        init() throws {
            key = try PieceKey.random()
            pack.kind = 2
            pack.name = Array(BackupItems.packName(pack.itemID).utf8)
        }

        func piece(_ bytes: [UInt8]) throws -> PieceRef {
            defer { content += bytes }
            return PieceRef(pack: pack.itemID, offset: UInt64(content.count), count: UInt32(bytes.count), stored: UInt32(bytes.count), id: try key.id(of: bytes))
        }

        /// `stored` in the pack, claimed to be a compressed piece of `count` bytes named `id`.
        func stored(_ stored: [UInt8], count: UInt32, id: PieceID) -> PieceRef {
            defer { content += stored }
            return PieceRef(pack: pack.itemID, offset: UInt64(content.count), count: count, stored: UInt32(stored.count), id: id)
        }

        func tree(_ entries: [TreeEntry]) throws -> PieceRef { try piece(Tree.encode(entries)) }

        static func entry(_ name: String, _ kind: TreeEntry.Kind, size: UInt64 = 0) -> TreeEntry {
            TreeEntry(name: Array(name.utf8), kind: kind, mode: 0o644, user: 0, group: 0, modified: 1_700_000_000,
                      modifiedNanoseconds: 0, changed: 0, changedNanoseconds: 0, size: size)
        }

        /// Drops the pack, then a snapshot of `root` listing `packs` (default: the pack).
        func drop(into vault: String, root: PieceRef, packs: [[UInt8]]? = nil, counts: BackupCounts = BackupCounts()) throws -> String {
            pack.size = UInt64(content.count)
            try pack.drop(into: vault, item: try pack.item(content))
            var snap = HostileDropIn()
            snap.kind = 3
            snap.name = Array(BackupItems.snapshotName(snap.itemID).utf8)
            let record = try Snapshot(packs: packs ?? [pack.itemID], key: key, host: "attacker", paths: [Array("/src".utf8)],
                                      tags: [], start: (1, 0), end: (2, 0), counts: counts, root: root).encode()
            snap.size = UInt64(record.count)
            try snap.drop(into: vault, item: try snap.item(record))
            return snap.blob
        }
    }

    static func counts(_ n: UInt64) -> BackupCounts {
        var c = BackupCounts()
        c.files = n
        return c
    }

    /// Restores the snapshot into a fresh directory; the result and that nothing appeared beside it.
    static func restore(_ v: VaultFixture, _ id: String) throws -> CLIHarness.Result {
        // (Dot files are the sandbox's state and runtime directories.)
        func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: v.path).filter { !$0.hasPrefix(".") }.sorted() }
        let before = try names()
        let r = try v.run(["snapshots", "restore", id, "--to", v.path + "/out"], timeout: 20)
        let after = try names().filter { $0 != "out" }
        #expect(after == before, "restore wrote outside --to: \(after)")
        return r
    }

    @Test(arguments: ["..", "a/b", ".", ""])
    func unsafeNamesAreRefused(_ name: String) throws {
        let v = try VaultFixture()
        let f = try Forger()
        var file = Forger.entry(name, .file, size: 4)
        file.pieces = [try f.piece(Array("evil".utf8))]
        let root = try f.tree([Forger.entry("src", .directory)].map { e in
            var e = e
            e.subtree = try f.tree([file])
            return e
        })
        let id = try f.drop(into: v.dir, root: root, counts: Self.counts(1))
        let r = try Self.restore(v, id)
        #expect(r.status == 14 && r.stderr.contains("corrupted or tampered"), "\(r.status) \(r.stderr)")
    }

    @Test func aPieceThatIsNotItsIdIsRefused() throws {
        let v = try VaultFixture()
        let f = try Forger()
        let honest = try f.piece(Array("good".utf8))
        var file = Forger.entry("x", .file, size: 4)
        // The same place, another id: the bytes there do not hash to it.
        file.pieces = [PieceRef(pack: honest.pack, offset: honest.offset, count: honest.count, stored: honest.stored, id: try f.key.id(of: Array("evil".utf8)))]
        let id = try f.drop(into: v.dir, root: try f.tree([file]), counts: Self.counts(1))
        let r = try v.run(["snapshots", "dump", id, "x"])
        #expect(r.status == 14 && r.stdout.isEmpty && r.stderr.contains("is corrupted or tampered"), "\(r.stderr)")
        #expect(try Self.restore(v, id).status == 14)
        // check reads trees only; --read-data reads every piece, and names the snapshot.
        #expect(try v.run(["check"]).status == 0)
        let check = try v.run(["check", "--read-data"])
        #expect(check.status == 14 && check.stderr.contains("item 'snapshot-\(id)': a piece in pack-"), "\(check.stderr)")
    }

    /// Files are written on other threads (issue 45) and named by the
    /// restore's own, group by group: a piece that fails among good files
    /// still stops the restore (exit 14), its file is never named, and the
    /// good files around it are whole or absent, never torn.
    @Test func aBadPieceAmongGoodFilesNamesOnlyWholeOnes() throws {
        let v = try VaultFixture()
        let f = try Forger()
        var files: [TreeEntry] = []
        for i in 0..<40 {
            var e = Forger.entry(String(format: "f%02d", i), .file, size: 6)
            e.pieces = [try f.piece(Array(String(format: "good%02d", i).utf8))]
            files.append(e)
        }
        // f20: 3,000 good pieces and a last one that is not its id, so its
        // writer is still busy while the group before the names is synced.
        let honest = files[20].pieces[0]
        let good = try (0..<3000).map { try f.piece(BackupFixture.random(1000, seed: UInt64($0))) }
        files[20].pieces = good + [PieceRef(pack: honest.pack, offset: honest.offset, count: honest.count, stored: honest.stored,
                                            id: try f.key.id(of: Array("evil!!".utf8)))]
        files[20].size = 3000 * 1000 + 6
        var src = Forger.entry("src", .directory)
        src.subtree = try f.tree(files)
        let id = try f.drop(into: v.dir, root: try f.tree([src]), counts: Self.counts(41))
        let r = try Self.restore(v, id)
        #expect(r.status == 14 && r.stderr.contains("corrupted or tampered"), "\(r.status) \(r.stderr)")
        let named = (try? FileManager.default.contentsOfDirectory(atPath: v.path + "/out/src")) ?? []
        #expect(!named.contains("f20"), "the file whose piece failed was named")
        #expect(!named.contains { $0.contains(".partial-") }, "\(named)")
        for name in named {
            let i = Int(name.dropFirst())!
            #expect(FileManager.default.contents(atPath: v.path + "/out/src/" + name) == Data(String(format: "good%02d", i).utf8))
        }
    }

    /// Prune cannot know what a snapshot whose trees do not read needs:
    /// it names it, leaves its packs whole, and exits 3; an honest
    /// snapshot beside it is pruned as usual.
    @Test func pruneLeavesThePacksOfASnapshotItCannotReadWhole() throws {
        let v = try VaultFixture()
        let f = try Forger()
        let honest = try f.tree([])
        // The root's place holds an empty tree, its id claims another.
        let root = PieceRef(pack: honest.pack, offset: honest.offset, count: honest.count, stored: honest.stored, id: try f.key.id(of: Array("evil".utf8)))
        _ = try f.piece(Array(repeating: 7, count: 4096))
        let id = try f.drop(into: v.dir, root: root, counts: Self.counts(1))
        #expect(try v.run(["snapshots"]).status == 0)
        let before = try v.filesInVault()
        let r = try v.run(["snapshots", "prune", "--grace", "0"])
        #expect(r.status == 3 && r.stderr.contains("snapshot \(id.prefix(8)) cannot be read whole") && r.stderr.contains("deleted 0 unused packs"),
                "\(r.status) \(r.stderr)")
        // (prune's drop lock file may be new; the items are as they were)
        let after = try v.filesInVault().filter { $0 != "owner.lock" }
        #expect(after == before, "its pack, all of it unused as far as prune can tell, stayed: \(Set(before).symmetricDifference(after))")
    }

    /// Compressed pieces whose frame makes one byte more or less than the
    /// reference says, or has a byte after it: refused by name, nothing
    /// written; the honest frame beside them reads.
    @Test func aFrameThatIsNotExactlyItsPieceIsRefused() throws {
        let v = try VaultFixture()
        let f = try Forger()
        let text = Array(String(repeating: "a line that compresses well\n", count: 400).utf8)
        let encoder = try ZstdPieceEncoder()
        let frame = try #require(try text.withUnsafeBytes { try encoder.encode($0).map(Array.init) })
        let id = try f.key.id(of: text), shorter = try f.key.id(of: Array(text.dropLast()))
        var entries: [TreeEntry] = []
        for (name, ref) in [("good", f.stored(frame, count: UInt32(text.count), id: id)),
                            ("long", f.stored(frame, count: UInt32(text.count - 1), id: shorter)),
                            ("short", f.stored(frame, count: UInt32(text.count + 1), id: id)),
                            ("trailing", f.stored(frame + [0], count: UInt32(text.count), id: id))] {
            var e = Forger.entry(name, .file, size: UInt64(ref.count))
            e.pieces = [ref]
            entries.append(e)
        }
        let snap = try f.drop(into: v.dir, root: try f.tree(entries.sorted { $0.name.lexicographicallyPrecedes($1.name) }),
                              counts: Self.counts(4))
        let good = try v.run(["snapshots", "dump", snap, "good"])
        #expect(good.status == 0 && good.stdout == text, "\(good.stderr)")
        for name in ["long", "short", "trailing"] {
            let r = try v.run(["snapshots", "dump", snap, name])
            #expect(r.status == 14 && r.stdout.isEmpty && r.stderr.contains("is corrupted or tampered"), "\(name): \(r.stderr)")
        }
    }

    @Test func aReferenceOutsideTheListedPacksIsRefused() throws {
        let v = try VaultFixture()
        let f = try Forger()
        var file = Forger.entry("x", .file, size: 4)
        let inside = try f.piece(Array("data".utf8))
        file.pieces = [PieceRef(pack: Array(repeating: 0xee, count: 16), offset: 0, count: 4, stored: 4, id: inside.id)]
        let id = try f.drop(into: v.dir, root: try f.tree([file]), counts: Self.counts(1))
        let r = try v.run(["snapshots", "dump", id, "x"])
        #expect(r.status == 14 && r.stderr.contains("a reference points outside its packs"), "\(r.stderr)")
    }

    /// One tree reused 64 times at each of 6 levels is 64^6 entries to a
    /// naive walk; the walk stops at the count the snapshot declares.
    @Test func aTreeReusedEverywhereDoesNotHang() throws {
        let v = try VaultFixture()
        let f = try Forger()
        var level = try f.tree([Forger.entry("leaf", .file)])
        for _ in 0..<6 {
            level = try f.tree((0..<64).map { i in
                var e = Forger.entry(String(format: "d%02d", i), .directory)
                e.subtree = level
                return e
            })
        }
        let id = try f.drop(into: v.dir, root: level, counts: Self.counts(1000))
        let started = Date()
        let r = try v.run(["snapshots", "ls", id], timeout: 20)
        #expect(r.status == 14 && r.stderr.contains("more entries than it says"), "\(r.stderr)")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func linksAreRestoredAsLinksAndNeverWrittenThrough() throws {
        let v = try VaultFixture()
        let f = try Forger()
        var escape = Forger.entry("l", .symlink)
        escape.target = Array(v.path.utf8)
        var a = Forger.entry("a", .file, size: 2), b = Forger.entry("b", .file, size: 2)
        a.pieces = [try f.piece([1, 2])]
        (a.linkGroup, b.linkGroup, b.pieces) = (1, 1, a.pieces)
        var src = Forger.entry("src", .directory)
        src.subtree = try f.tree([a, b, escape])
        let id = try f.drop(into: v.dir, root: try f.tree([src]), counts: Self.counts(3))
        let r = try Self.restore(v, id)
        #expect(r.status == 0, "\(r.stderr)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: v.path + "/out/src/l")) == v.path)
        let st = try FileManager.default.attributesOfItem(atPath: v.path + "/out/src/b")
        #expect(st[.referenceCount] as? Int == 2)
    }

    @Test func aSnapshotRecordThatDoesNotParseIsRefusedAtAbsorb() throws {
        let v = try VaultFixture()
        var snap = HostileDropIn()
        snap.kind = 3
        snap.name = Array(BackupItems.snapshotName(snap.itemID).utf8)
        let record = BackupItems.snapshotMagic + [0xff, 0xff, 0xff, 0xff]   // 2^32 - 1 packs
        snap.size = UInt64(record.count)
        try snap.drop(into: v.dir, item: try snap.item(record))
        let r = try v.run(["snapshots"])
        #expect(r.status == 0 && r.stderr.contains("backup snapshot-\(snap.blob) was refused: it does not open"), "\(r.stderr)")
        // A pack or snapshot under a name its id does not give it is refused too.
        var misnamed = HostileDropIn()
        misnamed.kind = 2
        misnamed.name = Array("pack-00".utf8)
        try misnamed.drop(into: v.dir, item: try misnamed.item([]))
        let again = try v.run(["snapshots"])
        #expect(again.stderr.contains("2 drop-ins could not be opened"), "\(again.stderr)")
    }
}
