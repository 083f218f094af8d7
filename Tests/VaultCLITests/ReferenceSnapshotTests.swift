import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The independent Python reader of snapshots (scripts/reference/vault_snapshot.py,
/// written from docs/FORMAT.md, "Backups", alone) restores what `vault backup`
/// stored, byte for byte, with modes, nanosecond times and links.
@Suite("Backup reference reader")
struct ReferenceSnapshotTests {
    static let script = CLIHarness.packageRoot + "/scripts/reference/vault_snapshot.py"

    /// Every path under `root` with its type, mode, mtime (ns), size, link target and content hash.
    static func inventory(_ root: String) throws -> [String: String] {
        var out: [String: String] = [:]
        let fm = FileManager.default
        for rel in try fm.subpathsOfDirectory(atPath: root) {
            let st = BackupFixture.stat(root + "/" + rel)
            var line = "\(st.st_mode) \(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec) \(st.st_size) \(st.st_nlink)"
            if st.st_mode & S_IFMT == S_IFLNK { line += " -> " + ((try? fm.destinationOfSymbolicLink(atPath: root + "/" + rel)) ?? "?") }
            else if st.st_mode & S_IFMT == S_IFREG { line += " \(fm.contents(atPath: root + "/" + rel)?.hashValue ?? 0)" }
            out[rel] = line
        }
        return out
    }

    @Test func thePythonReaderRestoresWhatBackupStored() throws {
        let f = try BackupFixture()
        try f.mkdir("d/e", mode: 0o750)
        try f.write("d/e/data", BackupFixture.random(5 << 20 + 17, seed: 5), mode: 0o640)
        try f.write("empty", [])
        // Text: stored as zstd frames, which the reader decodes from the spec.
        try f.write("notes.txt", Array(String(repeating: "a note that compresses\n", count: 100_000).utf8))
        symlink("d/e/data", f.source + "/link")
        link(f.source + "/d/e/data", f.source + "/hard")
        BackupFixture.setTime(f.source + "/d/e/data", seconds: 1_600_000_000, nanoseconds: 999_999_999)
        BackupFixture.setTime(f.source + "/d", seconds: 1_500_000_000, nanoseconds: 1)
        let id = try #require(try f.backup()["snapshot"] as? String)
        #expect(try f.snapshots([]).status == 0)   // absorbed

        let out = f.v.path + "/py"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let env = f.v.environment(["PYTHONDONTWRITEBYTECODE": "1"])
        let list = try CLIHarness.run(["python3", Self.script, "list", f.v.dir, f.v.passwordFile], environment: env,
                                      timeout: 60, executable: "/usr/bin/env")
        #expect(list.status == 0 && list.stdoutText.hasPrefix(id + "\t"), "\(list.stdoutText)\(list.stderr)")
        let r = try CLIHarness.run(["python3", Self.script, "restore", f.v.dir, f.v.passwordFile, String(id.prefix(8)), out],
                                   environment: env, timeout: 60, executable: "/usr/bin/env")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.inventory(out + "/src") == Self.inventory(f.source))
    }

    /// After prune rewrote a pack as a repack, the reader still restores
    /// through the repack's table (docs/FORMAT.md, "Repacking").
    @Test func thePythonReaderRestoresThroughARepack() throws {
        let f = try BackupFixture()
        for (i, name) in ["a", "b", "c"].enumerated() { try f.write(name, BackupFixture.random(300_000, seed: UInt64(60 + i))) }
        let s1 = try #require(try f.backup()["snapshot"] as? String)
        for name in ["b", "c"] { unlink(f.source + "/" + name) }
        let s2 = try #require(try f.backup()["snapshot"] as? String)
        let pruned = try f.snapshots(["forget", s1, "--prune", "--grace", "0"])
        #expect(pruned.status == 0 && pruned.stderr.contains("repacked 1 pack"), "\(pruned.stderr)")
        let out = f.v.path + "/py"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let r = try CLIHarness.run(["python3", Self.script, "restore", f.v.dir, f.v.passwordFile, String(s2.prefix(8)), out],
                                   environment: f.v.environment(["PYTHONDONTWRITEBYTECODE": "1"]), timeout: 60, executable: "/usr/bin/env")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: out + "/src/a") == Data(BackupFixture.random(300_000, seed: 60)))
        #expect(!FileManager.default.fileExists(atPath: out + "/src/b"))
    }
}
