import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `vault backup` and `vault snapshots`, through the built binary: a round
/// trip keeps what a restore must keep, and the second backup of the same
/// data reads and stores (almost) nothing.
@Suite("Backup")
struct BackupTests {
    @Test func roundTripKeepsLinksModesAndNanoseconds() throws {
        let f = try BackupFixture()
        try f.mkdir("docs", mode: 0o750)
        try f.write("docs/a.txt", Array("alpha\n".utf8), mode: 0o640)
        try f.write("big.bin", BackupFixture.random(3 << 20, seed: 1), mode: 0o600)
        try f.write("empty", [])
        try f.mkdir("emptydir", mode: 0o700)
        symlink("../big.bin", f.source + "/docs/link")
        link(f.source + "/docs/a.txt", f.source + "/hard.txt")
        BackupFixture.setTime(f.source + "/docs/a.txt", seconds: 1_700_000_000, nanoseconds: 123_456_789)
        BackupFixture.setTime(f.source + "/docs/link", seconds: 1_600_000_000, nanoseconds: 5)
        BackupFixture.setTime(f.source + "/docs", seconds: 1_650_000_000, nanoseconds: 987_654_321)
        let s = try f.backup()
        #expect(s["files"] as? Int == 4 && s["directories"] as? Int == 3 && s["symlinks"] as? Int == 1, "\(s)")

        let out = f.v.path + "/out"
        let r = try f.snapshots(["restore", "latest", "--to", out])
        #expect(r.status == 0, "\(r.stderr)")
        let back = out + "/src"
        #expect(FileManager.default.contents(atPath: back + "/big.bin") == Data(BackupFixture.random(3 << 20, seed: 1)))
        #expect(FileManager.default.contents(atPath: back + "/docs/a.txt") == Data("alpha\n".utf8))
        #expect(FileManager.default.contents(atPath: back + "/empty") == Data())
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: back + "/docs/link")) == "../big.bin")
        let a = BackupFixture.stat(back + "/docs/a.txt"), h = BackupFixture.stat(back + "/hard.txt")
        #expect(a.st_ino == h.st_ino && a.st_nlink == 2, "hard link kept")
        #expect(a.st_mode & 0o7777 == 0o640 && a.st_mtim.tv_sec == 1_700_000_000 && a.st_mtim.tv_nsec == 123_456_789)
        let d = BackupFixture.stat(back + "/docs")
        #expect(d.st_mode & 0o7777 == 0o750 && d.st_mtim.tv_sec == 1_650_000_000 && d.st_mtim.tv_nsec == 987_654_321)
        let l = BackupFixture.stat(back + "/docs/link")
        #expect(l.st_mtim.tv_sec == 1_600_000_000 && l.st_mtim.tv_nsec == 5)
        #expect(BackupFixture.stat(back + "/emptydir").st_mode & 0o7777 == 0o700)
        #expect(BackupFixture.stat(back + "/big.bin").st_mode & 0o7777 == 0o600)

        // dump and ls read the same snapshot; items commands do not see it.
        let dump = try f.snapshots(["dump", "latest", "src/docs/a.txt"])
        #expect(dump.status == 0 && dump.stdoutText == "alpha\n", "\(dump.stderr)")
        let dumped = f.v.path + "/dumped.bin"
        #expect(try f.snapshots(["dump", "latest", "src/big.bin", "-o", dumped]).status == 0)
        #expect(FileManager.default.contents(atPath: dumped) == Data(BackupFixture.random(3 << 20, seed: 1)))
        #expect(try f.snapshots(["dump", "latest", "src/big.bin", "-o", dumped]).status == 15, "never over an existing file")
        let ls = try f.snapshots(["ls", "latest", "src/docs"])
        #expect(ls.stdoutText.contains("  \(f.source)/docs/a.txt\n") && ls.stdoutText.contains("  \(f.source)/docs/link -> ../big.bin")
                && !ls.stdoutText.contains("  \(f.source)/big.bin\n"), "\(ls.stdoutText)")
        let list = try f.v.listed()
        #expect(list.isEmpty, "packs and snapshots are not items: \(list.map(\.name))")
        let snapshotName = "snapshot-" + (try #require(s["snapshot"] as? String))
        for args in [["get", snapshotName], ["remove", snapshotName], ["rename", snapshotName, "x"], ["get", snapshotName, "--version", "1"]] {
            #expect(try f.v.run(args).status == 16, "\(args) treats a snapshot as an item")
        }
        // What is there already with the snapshot's content counts as restored; other content is never overwritten.
        let again = try f.snapshots(["restore", "latest", "--to", out])
        #expect(again.status == 0 && again.stderr.contains("already there"), "\(again.stderr)")
        try Data("not the snapshot's".utf8).write(to: URL(fileURLWithPath: out + "/src/big.bin"))
        let other = try f.snapshots(["restore", "latest", "--to", out])
        #expect(other.status == 3 && other.stderr.contains("skipped 'src/big.bin': it exists with other content"), "never overwrites: \(other.stderr)")
    }

    @Test func unchangedTreeIsNotReadAgain() throws {
        let f = try BackupFixture()
        for i in 0..<20 { try f.write("f\(i)", BackupFixture.random(50_000 + i, seed: UInt64(i))) }
        let first = try f.backup()
        #expect((first["bytes_read"] as? Int ?? 0) > 1_000_000 && first["parent_used"] as? Bool == false, "\(first)")
        let second = try f.backup()
        #expect(second["bytes_read"] as? Int == 0 && second["files_read"] as? Int == 0, "\(second)")
        #expect(second["pieces_new"] as? Int == 0 && second["files_unchanged"] as? Int == 20, "\(second)")
        // Only the snapshot record itself: under 4 KiB sealed.
        #expect((second["bytes_stored"] as? Int ?? .max) < 4096, "\(second)")
        let listed = try f.snapshots(["list", "--json"])
        let snaps = try JSONObject.parse(listed.stdout)["snapshots"] as? [[String: Any]] ?? []
        #expect(snaps.count == 2 && snaps.allSatisfy { $0["files"] as? Int == 20 }, "\(listed.stdoutText)")
    }

    /// Pieces that compress are stored as zstd frames (trees too), random
    /// ones raw; both restore to their bytes, and the reference reader
    /// reads them (ReferenceSnapshotTests) from FORMAT.md alone.
    @Test func textIsStoredCompressedAndRandomRaw() throws {
        let f = try BackupFixture()
        let text = Array(String((0..<60_000).map { "line \($0) of a log that repeats itself\n" }.joined()).utf8)
        let random = BackupFixture.random(2_000_000, seed: 31)
        try f.write("log.txt", text)
        try f.write("noise.bin", random)
        let s = try f.backup()
        let new = try #require(s["bytes_new"] as? Int), compressed = try #require(s["bytes_new_compressed"] as? Int)
        #expect(new > text.count + random.count - 1 && compressed < random.count + text.count / 4, "\(s)")
        #expect(compressed > random.count, "random pieces stay raw: \(s)")
        #expect((s["bytes_stored"] as? Int ?? .max) < compressed + 200_000, "\(s)")
        let out = f.v.path + "/out"
        #expect(try f.snapshots(["restore", "latest", "--to", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out + "/src/log.txt") == Data(text))
        #expect(FileManager.default.contents(atPath: out + "/src/noise.bin") == Data(random))
        #expect(try f.v.run(["check", "--read-data"]).status == 0)
    }

    @Test func duplicateAndAppendedContentCostOnlyWhatIsNew() throws {
        let f = try BackupFixture()
        let content = BackupFixture.random(8 << 20, seed: 7)
        try f.write("one.bin", content)
        _ = try f.backup()
        // The same 8 MiB under another name: no new data piece, only trees.
        try f.write("two.bin", content)
        let dup = try f.backup()
        #expect(dup["files_read"] as? Int == 1 && dup["pieces_new"] as? Int == 2, "only the two new trees: \(dup)")
        #expect((dup["bytes_new"] as? Int ?? .max) < 4096, "\(dup)")
        // 100 KiB appended: the tail pieces and the tree, not the file again.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: f.source + "/one.bin"))
        handle.seekToEndOfFile()
        handle.write(Data(BackupFixture.random(100 << 10, seed: 8)))
        try handle.close()
        let appended = try f.backup()
        let new = appended["bytes_new"] as? Int ?? .max
        #expect(new < 4 << 20 + 200 << 10 && new > 100 << 10, "\(appended)")
        #expect((appended["pieces_reused"] as? Int ?? 0) >= 4, "the unchanged front is reused: \(appended)")
        let dump = try f.snapshots(["dump", "latest", "src/one.bin"])
        #expect(dump.stdout == content + BackupFixture.random(100 << 10, seed: 8))
    }

    @Test func excludesLeaveOutWhatTheySay() throws {
        let f = try BackupFixture()
        try f.write("keep.txt", [1])
        try f.write("drop.log", [2])
        try f.write("large.bin", [UInt8](repeating: 3, count: 5000))
        try f.mkdir("cache")
        try f.write("cache/CACHEDIR.TAG", Array("Signature: 8a477f597d28d172789f06886806bc55\n".utf8))
        try f.write("cache/x", [4])
        try f.mkdir("sub")
        try f.write("sub/skip.me", [5])
        let list = try f.v.sandbox.file("excludes", "# a comment\n\n  */src/sub/skip.*  \n")
        let s = try f.backup(["--exclude", "*.log", "--exclude-caches", "--exclude-larger-than", "4K", "--exclude-file", list,
                              "--tag", "t1", "--tag", "t2", "--host", "box"])
        #expect(s["files"] as? Int == 1 && s["host"] as? String == "box", "\(s)")
        let ls = try f.snapshots(["ls", "latest"])
        #expect(ls.stdoutText.contains("src/keep.txt") && !ls.stdoutText.contains("drop.log") && !ls.stdoutText.contains("large.bin")
                && !ls.stdoutText.contains("cache") && !ls.stdoutText.contains("skip.me"), "\(ls.stdoutText)")
        let byTag = try f.snapshots(["--tag", "t2", "--host", "box", "--json"])
        #expect(BackupFixture.snapshotCount(byTag) == 1, "\(byTag.stdoutText)")
        let other = try f.snapshots(["--host", "elsewhere", "--json"])
        #expect(BackupFixture.snapshotCount(other) == 0)
        let dry = try f.backup(["--dry-run"])
        #expect(dry["dry_run"] as? Bool == true && dry["snapshot"] == nil, "\(dry)")
    }

    /// Issue 44: tags after the fact. The snapshot is written again under
    /// a new id with the new tags, the old one forgotten; content, host,
    /// paths and times stay, and --set, --remove, --add do what they say.
    @Test func tagsChangeAfterTheFact() throws {
        let f = try BackupFixture()
        try f.write("a", Array("a\n".utf8))
        let first = try #require(try f.backup(["--tag", "t1", "--tag", "t2"])["snapshot"] as? String)
        func listed() throws -> [[String: Any]] {
            try JSONObject.parse(try f.snapshots(["--json"]).stdout)["snapshots"] as? [[String: Any]] ?? []
        }
        let before = try #require(try listed().first)
        let changed = try f.snapshots(["tag", String(first.prefix(6)), "--remove", "t1", "--add", "t3", "--add", "t2"])
        #expect(changed.status == 0 && changed.stderr.contains("tags: t2,t3"), "\(changed.stderr)")
        let after = try listed()
        #expect(after.count == 1)
        #expect(after.first?["tags"] as? [String] == ["t2", "t3"])
        #expect(after.first?["id"] as? String != first)
        for key in ["host", "paths", "end", "files", "bytes"] {
            #expect("\(after.first?[key] ?? "-")" == "\(before[key] ?? "-")", "\(key)")
        }
        #expect(try f.snapshots(["tag", "latest", "--set", "only"]).status == 0)
        #expect(try listed().first?["tags"] as? [String] == ["only"])
        let same = try f.snapshots(["tag", "latest", "--add", "only"])
        #expect(same.status == 0 && same.stderr.contains("already has those tags"), "\(same.stderr)")
        #expect(try f.snapshots(["tag", "latest"]).status == 2)
        #expect(try f.snapshots(["tag", "latest", "--set", "x", "--add", "y"]).status == 2)
        let out = f.v.path + "/out"
        #expect(try f.snapshots(["restore", "latest", "--to", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out + "/src/a") == Data("a\n".utf8))
        #expect(try f.v.run(["check", "--read-data"]).status == 0)
    }

    @Test func diffAndStatsSayWhatChanged() throws {
        let f = try BackupFixture()
        try f.mkdir("same")
        try f.write("same/x", [1])
        try f.write("edited", [2])
        try f.write("gone", [3])
        let first = try #require(try f.backup()["snapshot"] as? String)
        try f.write("edited", [2, 2])
        unlink(f.source + "/gone")
        try f.write("new", BackupFixture.random(2 << 20, seed: 9))
        try f.write("copy", BackupFixture.random(2 << 20, seed: 9))
        _ = try f.backup()
        let found = try f.snapshots(["find", "edited"])
        #expect(found.status == 0 && found.stdoutText.split(separator: "\n").count == 2
                && found.stdoutText.hasPrefix(first.prefix(8) + "  ") && found.stdoutText.contains("  \(f.source)/edited\n"), "\(found.stdoutText)")
        #expect(try f.snapshots(["find", "*.nothing"]).status == 16)
        let d = try f.snapshots(["diff", String(first.prefix(8)), "latest"])
        #expect(d.status == 0, "\(d.stderr)")
        let s = f.source
        #expect(d.stdoutText == "M \(s)\n+ \(s)/copy\nM \(s)/edited\n- \(s)/gone\n+ \(s)/new\n", "\(d.stdoutText)")
        // In bytes too (issue 44): copy and new 2 MiB each, edited 1 -> 2 bytes, gone 1 byte.
        #expect(d.stderr.contains("2 added, 1 removed, 2 changed; 4.0 MiB added, 2 B removed"), "\(d.stderr)")
        let stats = try JSONObject.parse(try f.snapshots(["stats", "--json"]).stdout)
        let held = stats["snapshot_bytes"] as? Int ?? 0, stored = stats["stored_bytes"] as? Int ?? .max
        #expect(stats["snapshots"] as? Int == 2 && held > 4 << 20 && stored < 3 << 20, "the copy is stored once: \(stats)")
    }

    /// Packs and snapshots travel as items: a day's push is about a day's
    /// pieces, and a clone restores the snapshot.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rclone")))
    func pushSendsOnlyTheNewPiecesAndACloneRestores() throws {
        let f = try BackupFixture()
        try f.write("big", BackupFixture.random(4 << 20, seed: 11))
        _ = try f.backup()
        let remote = f.v.path + "/remote"
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: false)
        #expect(try f.v.run(["remote", "add", "usb", remote]).status == 0)
        _ = try f.snapshots([])   // push sends the vault's items: the drop-ins are taken in first
        let first = try JSONObject.parse(try f.v.run(["push", "--json"], f.cacheEnv).stdout)
        #expect((first["bytes"] as? Int ?? 0) > 4 << 20, "\(first)")
        try f.write("small", Array("a new file".utf8))
        _ = try f.backup()
        _ = try f.snapshots([])
        let second = try JSONObject.parse(try f.v.run(["push", "--json"], f.cacheEnv).stdout)
        #expect((second["bytes"] as? Int ?? .max) < 64 << 10, "a day's push: \(second)")
        let clone = f.v.path + "/clone"
        #expect(try f.v.run(["clone", remote, clone]).status == 0)
        let out = f.v.path + "/out"
        let r = try CLIHarness.run(["--vault", clone, "--password-file", f.v.passwordFile, "snapshots", "restore", "latest", "--to", out],
                                   environment: f.v.environment(), cwd: f.v.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: out + "/src/big") == Data(BackupFixture.random(4 << 20, seed: 11)))
    }

    /// `backup --to`: from a machine with no vault and no password, each
    /// pack and then the snapshot go straight into a remote copy's inbox;
    /// the next backup there reuses what the remote lists, and the owner's
    /// pull takes both snapshots in, which restore.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rclone")))
    func backupToARemoteIsAbsorbedAfterPullAndRestores() throws {
        let f = try BackupFixture()
        let (remote, fingerprint, sender, source) = try f.remoteAndSender()
        try Data(BackupFixture.random(3 << 20, seed: 51)).write(to: URL(fileURLWithPath: source + "/big"))
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: source + "/notes"))
        func send(_ extra: [String] = []) throws -> [String: Any] {
            let r = try CLIHarness.run(["backup", source, "--to", remote, "--json"] + extra, environment: sender.environment(),
                                       cwd: sender.path, timeout: 60)
            #expect(r.status == 0, "\(r.stderr)")
            return (try? JSONObject.parse(r.stdout)) ?? [:]
        }
        let wrong = try CLIHarness.run(["backup", source, "--to", remote, "--fingerprint", String(repeating: "0", count: 32)],
                                       environment: sender.environment(), cwd: sender.path, timeout: 60)
        #expect(wrong.status == 14, "\(wrong.stderr)")
        let first = try send(["--fingerprint", fingerprint])
        #expect((first["pieces_new"] as? Int ?? 0) >= 3, "\(first)")
        let inbox = try FileManager.default.contentsOfDirectory(atPath: remote + "/inbox")
        #expect(inbox.filter { $0.hasSuffix(".env") }.count == 3, "a pack of data, one of trees and a snapshot: \(inbox)")
        #expect(!FileManager.default.fileExists(atPath: sender.path + "/.local/share/vault"), "no vault was made on the sender")
        let scratch = (try? FileManager.default.subpathsOfDirectory(atPath: sender.path + "/.local/state")) ?? []
        #expect(!scratch.contains { $0.hasSuffix(".item") }, "nothing left in the scratch vault: \(scratch)")

        try Data("notes, edited\n".utf8).write(to: URL(fileURLWithPath: source + "/notes"))
        let second = try send()
        #expect(second["files_unchanged"] as? Int == 1 && (second["bytes_stored"] as? Int ?? .max) < 64 << 10, "\(second)")

        #expect(try f.v.run(["pull"]).status == 0)
        let listed = try f.snapshots(["list", "--json"])
        #expect(BackupFixture.snapshotCount(listed) == 2, "\(listed.stdoutText)\(listed.stderr)")
        let out = f.v.path + "/out"
        #expect(try f.snapshots(["restore", "latest", "--to", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out + "/src/big") == Data(BackupFixture.random(3 << 20, seed: 51)))
        #expect(FileManager.default.contents(atPath: out + "/src/notes") == Data("notes, edited\n".utf8))
        // The remote's check counts them apart from items too.
        #expect(try f.v.run(["push"]).status == 0)
        let check = try f.v.run(["check", "--remote", "usb"])
        #expect(check.status == 0 && check.stderr.contains("no problems found (0 items, 2 snapshots, 4 packs)"), "\(check.stderr)")
    }

    /// check counts a backup's snapshots and packs apart from items: one
    /// added file and one snapshot are "1 item", "1 snapshot", "2 packs"
    /// (its data and its trees).
    @Test func checkCountsSnapshotsAndPacksApartFromItems() throws {
        let f = try BackupFixture()
        try f.write("a", Array("a file in a backup\n".utf8))
        _ = try f.backup()
        #expect(try f.v.add(["add", try f.v.write("added.txt", Array("an item\n".utf8))]).status == 0)
        let plain = try f.v.run(["check"])
        #expect(plain.status == 0 && plain.stderr.hasPrefix("vault: no problems found (1 item of 8 B, 1 snapshot, 2 packs of "), "\(plain.stderr)")
        #expect(plain.stderr.hasSuffix(" on disk)\n"), "\(plain.stderr)")
        let json = try JSONObject.parse(try f.v.run(["check", "--json"]).stdout)
        #expect(json["items_checked"] as? Int == 1 && json["versions_checked"] as? Int == 1, "\(json)")
        #expect(json["snapshots_checked"] as? Int == 1 && json["packs_checked"] as? Int == 2, "\(json)")
    }

    @Test func restoreIncludesAndExcludes() throws {
        let f = try BackupFixture()
        try f.mkdir("docs/deep")
        try f.write("docs/deep/a.txt", [1])
        try f.write("docs/b.pdf", [2])
        try f.mkdir("tmp")
        try f.write("tmp/c.txt", [3])
        _ = try f.backup()
        let one = f.v.path + "/one", two = f.v.path + "/two"
        #expect(try f.snapshots(["restore", "latest", "--to", one, "--include", "*.txt", "--exclude", "tmp"]).status == 0)
        let fm = FileManager.default
        #expect(try fm.subpathsOfDirectory(atPath: one).sorted() == ["src", "src/docs", "src/docs/deep", "src/docs/deep/a.txt"])
        #expect(try f.snapshots(["restore", "latest", "--to", two, "--include", "/src/docs"]).status == 0)
        #expect(try fm.subpathsOfDirectory(atPath: two).sorted() == ["src", "src/docs", "src/docs/b.pdf", "src/docs/deep", "src/docs/deep/a.txt"])
    }
}
