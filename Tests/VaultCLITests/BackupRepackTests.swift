import Foundation
import Testing
@testable import VaultBackup
@testable import VaultCore
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Prune's repacking (docs/FORMAT.md, "Repacking"): a pack at least half
/// unused is rewritten with only what the snapshots need, every snapshot
/// left restores byte for byte through the repack's table, a dropper cannot
/// bring a repack in, and a prune killed at any moment leaves every
/// snapshot whole.
@Suite("Backup repack")
struct BackupRepackTests {
    static func items(_ f: BackupFixture) throws -> [String: Int] {
        let dir = f.v.dir + "/items"
        var out: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            out[name] = Int(BackupFixture.stat(dir + "/" + name).st_size)
        }
        return out
    }

    static func content(_ seed: UInt64) -> [UInt8] { BackupFixture.random(200_000, seed: seed) }

    /// Restores `snapshot` into a new folder and compares every file with `expected`.
    static func restores(_ f: BackupFixture, _ snapshot: String, _ expected: [String: [UInt8]],
                         sourceLocation: SourceLocation = #_sourceLocation) throws {
        let out = f.v.path + "/out-\(UInt32.random(in: 0...UInt32.max))"
        let r = try f.snapshots(["restore", snapshot, "--to", out])
        #expect(r.status == 0, "restore: \(r.stderr)", sourceLocation: sourceLocation)
        let names = Set((try? FileManager.default.contentsOfDirectory(atPath: out + "/src")) ?? [])
        #expect(names == Set(expected.keys), sourceLocation: sourceLocation)
        for (name, bytes) in expected {
            #expect(FileManager.default.contents(atPath: out + "/src/" + name) == Data(bytes), "\(name)", sourceLocation: sourceLocation)
        }
        try FileManager.default.removeItem(atPath: out)
    }

    @Test func aMostlyUnusedPackIsRewrittenWithWhatIsNeeded() throws {
        let f = try BackupFixture()
        for (i, name) in ["a", "b", "c", "d"].enumerated() { try f.write(name, Self.content(UInt64(10 + i))) }
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        for name in ["c", "d"] { unlink(f.source + "/" + name) }
        let s2 = try #require(try f.backup()["snapshot"] as? String)   // a and b, in s1's pack
        unlink(f.source + "/b")
        let s3 = try #require(try f.backup()["snapshot"] as? String)   // a only
        _ = try f.snapshots([])

        // s1's pack holds a, b, c, d: forgetting s1 leaves a and b needed, half.
        #expect(try f.snapshots(["forget", s1]).status == 0)
        let before = try Self.items(f)
        let dry = try f.snapshots(["prune", "--grace", "0", "--dry-run"])
        #expect(dry.status == 0 && dry.stderr.contains("would repack 1 pack"), "\(dry.stderr)")
        #expect(try Self.items(f) == before, "a dry run changes nothing")
        let r = try f.snapshots(["prune", "--grace", "0"])
        #expect(r.status == 0 && r.stderr.contains("repacked 1 pack"), "\(r.stderr)")
        let after = try Self.items(f)
        #expect(after.values.reduce(0, +) < before.values.reduce(0, +) - 350_000, "c and d are gone: \(before) → \(after)")
        try Self.restores(f, s2, ["a": Self.content(10), "b": Self.content(11)])
        try Self.restores(f, s3, ["a": Self.content(10)])
        let check = try f.v.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)")

        // Nothing more to do: a second prune changes nothing.
        let again = try f.snapshots(["prune", "--grace", "0"])
        #expect(again.status == 0 && again.stderr.contains("deleted 0 unused packs") && !again.stderr.contains("repack"), "\(again.stderr)")
        #expect(try Self.items(f) == after)

        // A repack is repacked in turn: forgetting s2 leaves only a of a and b.
        let third = try f.snapshots(["forget", s2, "--prune", "--grace", "0"])
        #expect(third.status == 0 && third.stderr.contains("repacked 1 pack"), "\(third.stderr)")
        try Self.restores(f, s3, ["a": Self.content(10)])
        #expect(try f.v.run(["check", "--read-data"]).status == 0)
        let mounted = try f.v.run(["snapshots", "ls", s3])
        #expect(mounted.status == 0 && String(decoding: mounted.stdout, as: UTF8.self).contains("src/a"))

        // Once nothing needs it, the repack goes like a pack (with s3's own pack of trees).
        try f.write("e", Self.content(20))
        unlink(f.source + "/a")
        _ = try f.backup()
        let last = try f.snapshots(["forget", s3, "--prune", "--grace", "0"])
        #expect(last.status == 0 && last.stderr.contains("deleted 2 unused packs"), "\(last.stderr)")
        try Self.restores(f, "latest", ["e": Self.content(20)])
    }

    /// The backup cache's key and the vault id, as the test's host keeps them.
    static func hostKey(_ f: BackupFixture) throws -> (key: PieceKey, vaultID: [UInt8]) {
        let base = f.v.path + "/cache/vault"
        let dir = try #require(try FileManager.default.contentsOfDirectory(atPath: base).first { !$0.contains("-to-") })
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: base + "/" + dir + "/key")))
        return (try PieceKey(secret: SecretBytes(consuming: &bytes)), try #require(Hex.decode(dir)))
    }

    static func notes(_ f: BackupFixture) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: f.v.dir + "/notes")) ?? []).filter { !$0.hasPrefix(".") }
    }

    /// Issue 45: a day's backup after a prune stored again all that the
    /// host's cache knew of every repacked pack (7.5 times a normal day).
    /// The owner's backups now read the repack note prune leaves them and
    /// keep naming what the repack kept; absorb proves each such snapshot
    /// needs nothing the repack dropped before it takes it in.
    @Test func theBackupAfterARepackNamesWhatTheRepackKept() throws {
        let f = try BackupFixture()
        for (i, name) in ["a", "b", "c", "d"].enumerated() { try f.write(name, Self.content(UInt64(40 + i))) }
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        for name in ["c", "d"] { unlink(f.source + "/" + name) }
        _ = try #require(try f.backup()["snapshot"] as? String)
        #expect(try f.snapshots(["forget", s1]).status == 0)
        #expect(Self.notes(f).isEmpty, "no repack, no note")
        let r = try f.snapshots(["prune", "--grace", "0"])
        #expect(r.status == 0 && r.stderr.contains("repacked 1 pack"), "\(r.stderr)")
        let (key, vaultID) = try Self.hostKey(f)
        #expect(Self.notes(f) == [try RepackNote.name(key: key, vaultID: vaultID)])

        // a and b are unchanged and in the repack: not stored again.
        try f.write("e", Self.content(44))
        let s3 = try f.backup()
        let id3 = try #require(s3["snapshot"] as? String)
        #expect((s3["files_unchanged"] as? Int) == 2, "\(s3)")
        #expect(try #require(s3["bytes_new"] as? Int) < 220_000, "only e is new: \(s3)")
        let absorbed = try f.snapshots([])
        #expect(absorbed.status == 0 && !absorbed.stderr.contains("refused") && !absorbed.stderr.contains("repacked"), "\(absorbed.stderr)")
        try Self.restores(f, id3, ["a": Self.content(40), "b": Self.content(41), "e": Self.content(44)])
        let check = try f.v.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)")
        // The repack still holds what a and b need: a prune leaves it.
        let again = try f.snapshots(["prune", "--grace", "0"])
        #expect(again.status == 0 && !again.stderr.contains("repacked 1"), "\(again.stderr)")
        try Self.restores(f, id3, ["a": Self.content(40), "b": Self.content(41), "e": Self.content(44)])
        // A dry run writes no note and removes none.
        let note = try #require(FileManager.default.contents(atPath: f.v.dir + "/notes/" + Self.notes(f)[0]))
        #expect(try f.snapshots(["prune", "--grace", "0", "--dry-run"]).status == 0)
        #expect(FileManager.default.contents(atPath: f.v.dir + "/notes/" + Self.notes(f)[0]) == note)
    }

    /// A note that says a repack kept more than it did (the host's own key
    /// can seal one; so could a bug) makes a backup name a dropped piece:
    /// absorb's walk finds it, the snapshot waits refused, every snapshot
    /// taken in still restores, the note goes, and the next backup stores
    /// the file again and is taken in.
    @Test func aNoteClaimingMoreThanTheRepackKeptIsCaughtAtAbsorb() throws {
        let f = try BackupFixture()
        for (i, name) in ["a", "b", "c", "d"].enumerated() { try f.write(name, Self.content(UInt64(50 + i))) }
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        for name in ["c", "d"] { unlink(f.source + "/" + name) }
        let s2 = try #require(try f.backup()["snapshot"] as? String)
        #expect(try f.snapshots(["forget", s1, "--prune", "--grace", "0"]).status == 0)
        let (key, vaultID) = try Self.hostKey(f)
        let path = f.v.dir + "/notes/" + (try RepackNote.name(key: key, vaultID: vaultID))
        var note = try RepackNote.open([UInt8](try #require(FileManager.default.contents(atPath: path))), key: key, vaultID: vaultID)
        #expect(note.entries.count == 1)
        note.entries[0].ranges = [(0, 1 << 40)]
        try Data(try note.seal(key: key, vaultID: vaultID)).write(to: URL(fileURLWithPath: path))

        // c comes back as it was: its pieces were in the part the repack dropped.
        try f.write("c", Self.content(52))
        let s3 = try f.backup()
        #expect(try #require(s3["bytes_new"] as? Int) < 100_000, "the forged note made c known: \(s3)")
        let refused = try f.snapshots([])
        #expect(refused.stderr.contains("made before a pack it needs was repacked"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path), "the note went")
        try Self.restores(f, s2, ["a": Self.content(50), "b": Self.content(51)])

        let s4 = try f.backup()
        let id4 = try #require(s4["snapshot"] as? String)
        #expect(try #require(s4["bytes_new"] as? Int) >= 200_000, "c stored again: \(s4)")
        let taken = try f.snapshots([])
        #expect(taken.status == 0, "\(taken.stderr)")
        try Self.restores(f, id4, ["a": Self.content(50), "b": Self.content(51), "c": Self.content(52)])
    }

    @Test func aRepackDroppedIntoTheInboxIsRefused() throws {
        let f = try BackupFixture()
        try f.write("a", Self.content(30))
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        _ = try f.snapshots([])
        let before = try Self.items(f)
        // The blob names of a backup's items are their item ids: the one
        // that is not the snapshot is its pack.
        let packName = try #require(before.keys.first { $0 != s1 })
        let packID = try #require(Hex.decode(packName))
        // The dropper holds every key of what it drops: a repack of its
        // own, named for a pack it knows, would shadow it for a reader.
        var repack = HostileDropIn()
        repack.kind = 4
        repack.name = Array(BackupItems.repackName(packID).utf8)
        let content = RepackTable.encode(pack: packID, ranges: [(0, 4)]) + [1, 2, 3, 4]
        repack.size = UInt64(content.count)
        try repack.drop(into: f.v.dir, item: try repack.item(content))
        let r = try f.snapshots([])
        #expect(r.status == 0 && r.stderr.contains("left in the inbox"), "\(r.stderr)")
        #expect(try Self.items(f) == before, "nothing came in")
        try Self.restores(f, s1, ["a": Self.content(30)])
    }

    /// Kills `snapshots prune` at random moments on copies of one vault, in
    /// each of its phases (issue 37): planning and marking (the default
    /// grace: only marks are written), and executing what the marks made
    /// due (`--grace 0` over a vault a prune marked before). After each,
    /// every snapshot restores whole, and a prune run again finishes the job.
    @Test(arguments: [false, true]) func aKilledPruneLeavesEverySnapshotWhole(executing: Bool) throws {
        let f = try BackupFixture()
        for (i, name) in ["a", "b", "c", "d"].enumerated() { try f.write(name, BackupFixture.random(3 << 20, seed: UInt64(40 + i))) }
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        for name in ["b", "c", "d"] { unlink(f.source + "/" + name) }
        let s2 = try #require(try f.backup()["snapshot"] as? String)
        #expect(try f.snapshots(["forget", s1]).status == 0)
        if executing {
            let marked = try f.snapshots(["prune"])
            #expect(marked.stderr.contains("wait out the grace"), "\(marked.stderr)")
        }
        let pristine = f.v.path + "/pristine"
        try FileManager.default.copyItem(atPath: f.v.dir, toPath: pristine)
        let expected = ["a": BackupFixture.random(3 << 20, seed: 40)]
        let runs = min(CrashTests.runs, 12)
        var killed = 0, duration = 0.0, serial = 0
        /// A fresh copy of the pristine vault, and a state directory of its
        /// own (each copy is a new vault to the rollback guard).
        func fresh() throws -> [String: String] {
            serial += 1
            try FileManager.default.removeItem(atPath: f.v.dir)
            try FileManager.default.copyItem(atPath: pristine, toPath: f.v.dir)
            return f.cacheEnv.merging(["XDG_STATE_HOME": f.v.path + "/state-\(serial)"]) { $1 }
        }
        func prune(killAfter delay: Double, _ env: [String: String]) throws -> CLIHarness.Result {
            try runKilled(after: delay, ["--vault", f.v.dir, "--password-file", f.v.passwordFile, "snapshots", "prune"]
                            + (executing ? ["--grace", "0"] : []), environment: f.v.environment(env))
        }
        for run in 0..<runs {
            if run % 10 == 0 { duration = try CrashTests.calibrate { try prune(killAfter: CrashTests.noKill, try fresh()) } }
            let env = try fresh()
            let r = try CrashTests.killedRun(within: &duration) { try prune(killAfter: $0, env) }
            if r.status != 0 {
                #expect(r.status == 137, "prune exited \(r.status): \(r.stderr)")
                killed += 1
            }
            let restored = f.v.path + "/out"
            let restore = try f.v.run(["snapshots", "restore", s2, "--to", restored], env)
            #expect(restore.status == 0, "run \(run): \(restore.stderr)")
            #expect(FileManager.default.contents(atPath: restored + "/src/a") == Data(expected["a"] ?? []), "run \(run)")
            try? FileManager.default.removeItem(atPath: restored)
            let finish = try f.v.run(["snapshots", "prune", "--grace", "0"], env)
            #expect(finish.status == 0, "run \(run): \(finish.stderr)")
            let check = try f.v.run(["check", "--read-data"], env)
            #expect(check.status == 0, "run \(run): \(check.stderr)")
        }
        #expect(killed > 0)
    }
}
