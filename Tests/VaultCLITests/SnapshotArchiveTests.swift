import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `vault snapshots dump SNAPSHOT PATH --archive tar|zip` (issue 44):
/// a folder out of a snapshot as one archive, which tar and unzip read
/// back to the bytes, modes, times and links that were backed up.
@Suite struct SnapshotArchiveTests {
    let f: BackupFixture
    init() throws { f = try BackupFixture() }

    func sh(_ script: String) throws -> CLIHarness.Result {
        try CLIHarness.run(["sh", "-c", script], environment: f.v.environment(), cwd: f.v.path, timeout: 60, executable: "/usr/bin/env")
    }

    func tree() throws -> [UInt8] {
        try f.mkdir("docs/sub")
        let big = BackupFixture.random(3_000_000, seed: 44)
        try f.write("docs/sub/big", big)
        try f.write("docs/secret", Array("mode 600\n".utf8), mode: 0o600)
        #expect(link(f.source + "/docs/secret", f.source + "/docs/again") == 0)
        #expect(symlink("sub/big", f.source + "/docs/link") == 0)
        BackupFixture.setTime(f.source + "/docs/secret", seconds: 1_600_000_000, nanoseconds: 0)
        try f.write("other", [1])
        let set = try sh("python3 -c \"import os; os.setxattr('src/docs/secret', 'user.origin', b'camera')\"")
        #expect(set.status == 0, "\(set.stderr)")
        try f.backup()
        return big
    }

    @Test func aFolderAsATarReadsBackWhole() throws {
        let big = try tree()
        let r = try f.snapshots(["dump", "latest", "src/docs", "--archive", "tar", "-o", f.v.path + "/docs.tar"])
        #expect(r.status == 0 && r.stderr.contains("wrote a tar archive of 3 files"), "\(r.stderr)")
        let listed = try sh("tar -tf docs.tar").stdoutText.split(separator: "\n").sorted()
        #expect(listed == ["docs/", "docs/again", "docs/link", "docs/secret", "docs/sub/", "docs/sub/big"], "\(listed)")
        #expect(try sh("mkdir x && tar -xpf docs.tar -C x").status == 0)
        let out = f.v.path + "/x/docs"
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: out + "/sub/big"))) == big)
        let secret = BackupFixture.stat(out + "/secret"), again = BackupFixture.stat(out + "/again")
        #expect(secret.st_mode & 0o7777 == 0o600 && secret.st_mtim.tv_sec == 1_600_000_000)
        #expect(secret.st_ino == again.st_ino, "a hard link stays one")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: out + "/link") == "sub/big")
        // Extended attributes ride in the tar's pax records.
        #expect(try sh("mkdir y && tar --xattrs --xattrs-include='user.*' -xpf docs.tar -C y").status == 0)
        let origin = try sh("python3 -c \"import os; print(os.getxattr('y/docs/secret', 'user.origin').decode())\"")
        #expect(origin.stdoutText == "camera\n", "\(origin.stderr)")
    }

    @Test func theWholeSnapshotAsAZipToAPipe() throws {
        let big = try tree()
        let r = try sh("\"$VAULT\" --vault \(f.v.dir) --password-file \(f.v.passwordFile) snapshots dump latest / --archive zip > all.zip"
                       .replacingOccurrences(of: "$VAULT", with: CLIHarness.binary))
        #expect(r.status == 0, "\(r.stderr)")
        let listed = try sh("unzip -Z1 all.zip").stdoutText.split(separator: "\n").sorted()
        #expect(listed == ["src/", "src/docs/", "src/docs/again", "src/docs/link", "src/docs/secret", "src/docs/sub/", "src/docs/sub/big", "src/other"],
                "\(listed)")
        #expect(try sh("mkdir z && cd z && unzip -q ../all.zip").status == 0)
        let root = f.v.path + "/z/src/docs"
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: root + "/sub/big"))) == big)
        #expect(try String(contentsOfFile: root + "/again", encoding: .utf8) == "mode 600\n", "a zip has no hard links: the file again")
    }

    @Test func wrongUsesAreRefused() throws {
        _ = try tree()
        let format = try f.snapshots(["dump", "latest", "src", "--archive", "rar"])
        #expect(format.status == 2 && format.stderr.contains("--archive takes tar or zip, not 'rar'"), "\(format.stderr)")
        let missing = try f.snapshots(["dump", "latest", "src/nothing", "--archive", "tar", "-o", f.v.path + "/n.tar"])
        #expect(missing.status != 0 && !FileManager.default.fileExists(atPath: f.v.path + "/n.tar"), "\(missing.stderr)")
        let elsewhere = try f.snapshots(["ls", "latest", "--archive", "tar"])
        #expect(elsewhere.status == 2 && elsewhere.stderr.contains("--archive goes with 'snapshots dump'"))
    }
}
