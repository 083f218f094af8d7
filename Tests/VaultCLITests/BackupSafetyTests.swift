import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A backup is all or nothing, and a snapshot whose packs are not all in
/// the vault never enters it.
@Suite("Backup safety")
struct BackupSafetyTests {
    @Test func aKilledBackupLeavesNoSnapshotAndTheNextReuses() throws {
        let f = try BackupFixture()
        // 3 files of 24 MiB: a pack lands (32 MiB) well before the end.
        for i in 0..<3 { try f.write("f\(i)", BackupFixture.random(24 << 20, seed: UInt64(10 + i))) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIHarness.binary)
        p.arguments = ["--vault", f.v.dir, "backup", f.source]
        p.environment = f.v.environment(f.cacheEnv)
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(30)
        // Killed once a pack has landed and the cache has recorded it (a
        // kill between the two only loses that pack's reuse).
        func recorded() -> Bool {
            let base = f.v.path + "/cache/vault"
            guard let dir = (try? FileManager.default.contentsOfDirectory(atPath: base))?.first else { return false }
            return BackupFixture.stat(base + "/" + dir + "/pieces").st_size > 8
        }
        while p.isRunning, !recorded(), Date() < deadline { usleep(2000) }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal, "the backup ended before it was killed")
        let landed = try f.inbox(".env").count
        #expect(landed >= 1)

        let none = try f.snapshots(["list", "--json"])
        #expect(none.status == 0 && BackupFixture.snapshotCount(none) == 0, "\(none.stderr)")
        let next = try f.backup()
        #expect((next["pieces_reused"] as? Int ?? 0) >= 20, "the killed run's pieces are reused: \(next)")
        #expect((next["bytes_new"] as? Int ?? .max) < 72 << 20 - 24 << 20, "\(next)")
        let restored = f.v.path + "/out"
        let r = try f.snapshots(["restore", "latest", "--to", restored])
        #expect(r.status == 0, "\(r.stderr)")
        for i in 0..<3 {
            #expect(FileManager.default.contents(atPath: restored + "/src/f\(i)") == Data(BackupFixture.random(24 << 20, seed: UInt64(10 + i))))
        }
        let check = try f.v.run(["check", "--read-data"])
        #expect(check.status == 0, "\(check.stderr)")
    }

    /// The pack is the largest drop-in; the snapshot is written last.
    @Test(arguments: ["damaged", "missing"])
    func aSnapshotWithoutItsPackIsRefusedByName(_ how: String) throws {
        let f = try BackupFixture()
        try f.write("data", BackupFixture.random(1 << 20, seed: 3))
        let s = try f.backup()
        let snapshot = try #require(s["snapshot"] as? String)
        let pack = try #require(try f.inbox(".item").first)
        let path = f.v.dir + "/inbox/" + pack
        if how == "damaged" {
            let fd = open(path, O_RDWR)
            var byte: UInt8 = 0
            pread(fd, &byte, 1, 5000)
            byte ^= 0x40
            pwrite(fd, &byte, 1, 5000)
            close(fd)
        } else {
            unlink(path)
            unlink(path.replacingOccurrences(of: ".item", with: ".env"))
        }
        let r = try f.snapshots(["list", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("backup snapshot-\(snapshot) was refused: a pack it needs is missing or damaged"), "\(r.stderr)")
        #expect(BackupFixture.snapshotCount(r) == 0)
        #expect(FileManager.default.fileExists(atPath: f.v.dir + "/inbox/\(snapshot).env"), "the snapshot waits")
        // The way out: repair sets the refused drop-ins aside, the host's
        // cache then forgets the pack, and the next backup stores it again.
        #expect(try f.v.run(["check", "--repair"]).status == 0)
        let again = try f.backup()
        #expect(again["pieces_new"] as? Int == 3, "\(again)")
        #expect(BackupFixture.snapshotCount(try f.snapshots(["list", "--json"])) == 1)
    }

    /// A pieces log of format 1 ("VPIECES1", 60-byte records) is started
    /// anew, never read as records of the new shape: every piece is stored
    /// again, and the log is of the new shape after.
    @Test func anOldShapeCacheIsRebuiltNotMisread() throws {
        let f = try BackupFixture()
        try f.write("a", BackupFixture.random(600_000, seed: 41))
        let first = try f.backup()
        let base = f.v.path + "/cache/vault"
        let pieces = base + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: base).first)) + "/pieces"
        var log = try #require(FileManager.default.contents(atPath: pieces))
        #expect(log.prefix(8) == Data("VPIECES2".utf8))
        log.replaceSubrange(0..<8, with: Data("VPIECES1".utf8))
        try log.write(to: URL(fileURLWithPath: pieces))
        try f.write("a", BackupFixture.random(600_000, seed: 41))   // a new ctime: read again
        let s = try f.backup()
        #expect(s["pieces_new"] as? Int == first["pieces_new"] as? Int, "\(s)")
        #expect(FileManager.default.contents(atPath: pieces)?.prefix(8) == Data("VPIECES2".utf8))
        #expect(try f.snapshots(["restore", "latest", "--to", f.v.path + "/out"]).status == 0)
        #expect(FileManager.default.contents(atPath: f.v.path + "/out/src/a") == Data(BackupFixture.random(600_000, seed: 41)))
    }

    /// Whatever happens to the cache, a backup is right: a damaged file
    /// list or pieces log is read past, a new key starts over.
    @Test(arguments: ["files", "pieces", "key", "all"])
    func aDamagedCacheMakesABackupSlowerNeverWrong(_ what: String) throws {
        let f = try BackupFixture()
        try f.write("a", BackupFixture.random(600_000, seed: 21))
        try f.write("b", BackupFixture.random(600_000, seed: 22))
        _ = try f.backup()
        let base = f.v.path + "/cache/vault"
        let dir = base + "/" + (try #require(try FileManager.default.contentsOfDirectory(atPath: base).first))
        for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
            let path = dir + "/" + name
            let hit = what == "all" || name.hasPrefix(what)
            guard hit else { continue }
            if name == "key" { unlink(path); continue }
            // Flip a byte in the middle: its checksum no longer matches.
            let fd = open(path, O_RDWR)
            var byte: UInt8 = 0
            let at = off_t(BackupFixture.stat(path).st_size / 2)
            pread(fd, &byte, 1, at)
            byte ^= 1
            pwrite(fd, &byte, 1, at)
            close(fd)
        }
        try f.write("b", BackupFixture.random(600_000, seed: 23))
        let s = try f.backup()
        #expect(s["parent_used"] as? Bool == (what == "pieces"), "\(s)")
        let out = f.v.path + "/out"
        #expect(try f.snapshots(["restore", "latest", "--to", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out + "/src/a") == Data(BackupFixture.random(600_000, seed: 21)))
        #expect(FileManager.default.contents(atPath: out + "/src/b") == Data(BackupFixture.random(600_000, seed: 23)))
        #expect(try f.v.run(["check", "--read-data"]).status == 0)
    }
}
