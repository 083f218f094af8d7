import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `vault snapshots forget` and `prune`: policies keep what they say, and
/// prune deletes only packs no snapshot (absorbed or waiting) needs.
@Suite("Backup forget and prune")
struct BackupForgetTests {
    static func items(_ f: BackupFixture) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: f.v.dir + "/items"))
    }

    @Test func forgetThenPruneFreesOnlyWhatIsUnused() throws {
        let f = try BackupFixture()
        try f.write("a", BackupFixture.random(300_000, seed: 1))
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        try f.write("a", BackupFixture.random(300_000, seed: 2))
        _ = try f.backup()
        _ = try f.snapshots([])
        let before = try Self.items(f)
        let dry = try f.snapshots(["forget", "--keep-last", "1", "--prune", "--grace", "0", "--dry-run"])
        #expect(dry.status == 0 && dry.stderr.contains("would forget snapshot \(s1.prefix(8))"), "\(dry.stderr)")
        #expect(try Self.items(f) == before, "a dry run changes nothing")

        let r = try f.snapshots(["forget", "--keep-last", "1", "--prune", "--grace", "0"])
        #expect(r.status == 0 && r.stderr.contains("forgot 1 snapshot, kept 1") && r.stderr.contains("deleted 2 unused packs"), "\(r.stderr)")
        #expect(try Self.items(f).count == before.count - 3, "the old snapshot and its own two packs (its data, its trees)")
        let out = f.v.path + "/out"
        #expect(try f.snapshots(["restore", "latest", "--to", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out + "/src/a") == Data(BackupFixture.random(300_000, seed: 2)))
        #expect(try f.v.run(["check", "--read-data"]).status == 0)
        // The cache forgets the deleted pack: the next backup stores the old
        // content again rather than referencing it.
        try f.write("a", BackupFixture.random(300_000, seed: 1))
        let again = try f.backup()
        #expect(again["pieces_new"] as? Int == 3, "the file and two trees: \(again)")
    }

    @Test func pruneKeepsThePacksOfAWaitingSnapshot() throws {
        let f = try BackupFixture()
        try f.write("a", BackupFixture.random(300_000, seed: 3))
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        _ = try f.snapshots([])
        let firstPacks = try Self.items(f)
        // A second backup reuses the first data pack and adds a data pack
        // and a pack of trees; one of them goes missing, so it waits in the
        // inbox, refused.
        try f.write("b", BackupFixture.random(300_000, seed: 4))
        _ = try f.backup()
        let pack = try #require(try f.inbox(".item").first)
        unlink(f.v.dir + "/inbox/" + pack)
        let r = try f.snapshots(["forget", s1, "--prune", "--grace", "0"])
        #expect(r.status == 0 && r.stderr.contains("was refused") && r.stderr.contains("deleted 1 unused pack"), "\(r.stderr)")
        let left = try Self.items(f)
        // The forgotten snapshot and its own trees went; the data pack the
        // waiting snapshot lists stayed.
        #expect(firstPacks.subtracting(left).count == 2, "\(firstPacks) → \(left)")
    }

    @Test func policiesAndUsage() throws {
        let f = try BackupFixture()
        #expect(try f.snapshots(["forget"]).status == 2)
        #expect(try f.snapshots(["forget", "--keep-last", "0"]).status == 2)
        #expect(try f.snapshots(["forget", "--keep-within", "3x"]).status == 2)
        #expect(try f.snapshots(["ls", "latest", "--prune"]).status == 2)
        try f.write("a", [1])
        for tag in ["one", "two", "three"] { _ = try f.backup(["--tag", tag]) }
        let r = try f.snapshots(["forget", "--keep-within", "1h", "--dry-run"])
        #expect(r.status == 0 && r.stderr.contains("would forget 0 snapshots, kept 3"), "\(r.stderr)")
        let byTag = try f.snapshots(["forget", "--tag", "one", "--keep-last", "1"])
        #expect(byTag.status == 0 && byTag.stderr.contains("forgot 0 snapshots, kept 1"), "\(byTag.stderr)")
        let last = try f.snapshots(["forget", "--keep-last", "2"])
        #expect(last.stderr.contains("forgot 1 snapshot, kept 2"), "\(last.stderr)")
    }
}
