import Foundation
import Testing
import VaultBackup
@testable import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// `snapshots/HOST/TIME/...` in the mount: what `vault backup` stored, as
/// the backed-up tree was (bytes, modes, nanosecond times, symlinks), and
/// snapshots sealed under a dropper's own keys that cannot crash or hang it.
extension MountTests {
    /// `find DIR` as a subprocess, killed (and failed) after 60 s: a hang shows as a failure, not a stuck suite.
    func find(_ dir: String) throws -> (status: Int32, lines: [String]) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/find")
        p.arguments = [dir]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()   // ends when find does, or is killed
        let deadline = Date().addingTimeInterval(60)
        while p.isRunning, Date() < deadline { usleep(10_000) }
        if p.isRunning { p.terminate(); throw Failure("find \(dir) still running after 60 s") }
        return (p.terminationStatus, String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init))
    }

    @Test func snapshotsAreTheTreesTheyBackedUp() throws {
        let fm = FileManager.default
        let src = v.path + "/src"
        try fm.createDirectory(atPath: src + "/sub/deeper", withIntermediateDirectories: true)
        let big = randomBytes(9 * Self.chunk + 4321)   // several pieces, in more than one chunk each
        try v.write("src/a.txt", Array("alpha\n".utf8))
        try v.write("src/sub/big.bin", big)
        try v.write("src/sub/deeper/secret.txt", Array("deep".utf8), mode: 0o600)
        try v.write("src/empty", [])
        try fm.createSymbolicLink(atPath: src + "/link", withDestinationPath: "sub/deeper/secret.txt")
        // Nanoseconds that survive only if the mount shows them.
        var times = [timespec(tv_sec: 1_600_000_000, tv_nsec: 123_456_789), timespec(tv_sec: 1_600_000_000, tv_nsec: 123_456_789)]
        #expect(utimensat(AT_FDCWD, src + "/sub/deeper/secret.txt", &times, 0) == 0)
        // An item named "snapshots": the directory wins, the item stays under .versions.
        try add("snapshots", Array("an item".utf8))
        let cache = ["XDG_CACHE_HOME": v.path + "/cache"]
        for _ in 0..<2 {
            let b = try v.add(["backup", "--host", "box", src], cache)
            #expect(b.status == 0, "backup: \(b.stderr)")
        }
        #expect(try v.run(["snapshots"]).status == 0)   // takes the waiting snapshots in

        let (p, m) = try mount()
        defer { p.killGroup() }
        #expect(try fm.contentsOfDirectory(atPath: m).sorted() == [".versions", "snapshots"])
        #expect(try String(contentsOfFile: m + "/.versions/snapshots/1", encoding: .utf8) == "an item")
        #expect(try fm.contentsOfDirectory(atPath: m + "/snapshots") == ["box"])
        let host = m + "/snapshots/box"
        let names = try fm.contentsOfDirectory(atPath: host).filter { $0 != "latest" }.sorted()
        #expect(names.count == 2 && names.allSatisfy { $0.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ(-2)?/) != nil }, "\(names)")
        #expect(try fm.destinationOfSymbolicLink(atPath: host + "/latest") == names.last)

        // The tree under its absolute path, entry by entry as the source is.
        let top = host + "/" + names[0] + src
        func compare(_ relative: String) throws {
            var want = stat(), got = stat()
            #expect(lstat(src + relative, &want) == 0 && lstat(top + relative, &got) == 0, "\(relative)")
            #expect(got.st_mode & 0o170000 == want.st_mode & 0o170000, "\(relative) type")
            #expect(got.st_mtim.tv_sec == want.st_mtim.tv_sec && got.st_mtim.tv_nsec == want.st_mtim.tv_nsec, "\(relative) mtime")
            switch want.st_mode & 0o170000 {
            case 0o040000:
                #expect(got.st_mode & 0o555 == want.st_mode & 0o555, "\(relative) mode")
                let entries = try fm.contentsOfDirectory(atPath: src + relative).sorted()
                #expect(try fm.contentsOfDirectory(atPath: top + relative).sorted() == entries, "\(relative) entries")
                for e in entries { try compare(relative + "/" + e) }
            case 0o120000:
                #expect(try fm.destinationOfSymbolicLink(atPath: top + relative) == fm.destinationOfSymbolicLink(atPath: src + relative))
            default:
                #expect(got.st_mode & 0o7777 == want.st_mode & 0o555 && got.st_size == want.st_size, "\(relative) mode, size")
                #expect(try Data(contentsOf: URL(fileURLWithPath: top + relative)) == Data(contentsOf: URL(fileURLWithPath: src + relative)),
                        "\(relative) bytes")
            }
        }
        try compare("")
        // Reads at any offset, across pieces, in any order.
        var reads: [(Int, Int)] = [(0, 1), (big.count - 3, 3), (big.count - 3, 100), (big.count, 10), (0, big.count)]
        for _ in 0..<40 { reads.append((Int.random(in: 0..<big.count), Int.random(in: 1...3 * Self.chunk))) }
        for (offset, count) in reads.shuffled() {
            let got = pread(top + "/sub/big.bin", offset, count)
            #expect(got.errno == 0 && got.bytes == Array(big[min(offset, big.count)..<min(big.count, offset + count)]), "at \(offset) for \(count)")
        }
        #expect(open(top + "/a.txt", O_WRONLY) < 0 && [EROFS, EACCES].contains(errno))
    }

    /// A tree reused at every level (64^6 paths for a 1,000-entry snapshot)
    /// and a piece that is not its id: `find` over the mount ends, the bad
    /// file is EIO, and the mount still serves.
    @Test func hostileSnapshotsNeitherCrashNorHangTheMount() throws {
        typealias Forger = BackupHostileTests.Forger
        try add("plain.txt", Array("still here".utf8))
        let f = try Forger()
        var level = try f.tree([Forger.entry("leaf", .file)])
        for _ in 0..<6 {
            level = try f.tree((0..<64).map { i in
                var e = Forger.entry(String(format: "d%02d", i), .directory)
                e.subtree = level
                return e
            })
        }
        let good = try f.piece(Array("good".utf8))
        var bad = Forger.entry("bad", .file, size: 4)
        bad.pieces = [PieceRef(pack: good.pack, offset: good.offset, count: good.count, stored: good.stored, id: try f.key.id(of: Array("evil".utf8)))]
        var deep = Forger.entry("deep", .directory)
        deep.subtree = level
        _ = try f.drop(into: v.dir, root: try f.tree([bad, deep]), counts: BackupHostileTests.counts(1000))
        #expect(try v.run(["snapshots"]).status == 0)

        let (p, m) = try mount()
        defer { p.killGroup() }
        let times = try FileManager.default.contentsOfDirectory(atPath: m + "/snapshots/attacker").filter { $0 != "latest" }
        #expect(times.count == 1)
        let top = m + "/snapshots/attacker/" + times[0]
        let walked = try find(top)
        // The directories past the snapshot's 1,000 entries are EIO to find (status 1), not a walk without end.
        #expect(walked.status == 1 && walked.lines.count > 100 && walked.lines.count < 2_000, "\(walked.status) \(walked.lines.count)")
        #expect(pread(top + "/bad", 0, 4).errno == EIO)
        #expect(p.poll() == nil, "\(p.stderr)")
        #expect(try String(contentsOfFile: m + "/plain.txt", encoding: .utf8) == "still here")
    }
}
