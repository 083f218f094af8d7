import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `vault backup` where root-only set-ups are needed: files another user
/// cannot read (the suite runs as root, who reads everything, so the
/// backup runs as `nobody`), and a second file system mounted inside the
/// source. Without root, each test says why it cannot run and returns.
@Suite("Backup as another user and across mounts", .serialized)
struct BackupUserTests {
    static func shell(_ script: String, _ f: BackupFixture) throws -> CLIHarness.Result {
        try CLIHarness.run(["sh", "-c", script], environment: f.v.environment(), cwd: f.v.path, executable: "/usr/bin/env")
    }

    /// As `nobody`, a file and a folder only root may read are named on
    /// stderr and in --json, left out, counted in the snapshot, and the
    /// exit code is 3 ("incomplete"); what it could read is backed up.
    @Test func unreadableFilesAreNamedAndTheExitCodeSaysIncomplete() throws {
        let f = try BackupFixture()
        let probe = try CLIHarness.run(["runuser", "-u", "nobody", "--", CLIHarness.binary, "--version"],
                                       environment: f.v.environment(), cwd: f.v.path, executable: "/usr/bin/env")
        guard getuid() == 0, probe.status == 0 else {
            print("skipped the unreadable-files test: needs root and a binary 'nobody' can run (\(probe.stderr))")
            return
        }
        try f.write("readable", Array("anyone may read this\n".utf8))
        try f.write("secret", Array("root only\n".utf8), mode: 0o600)
        try f.mkdir("private", mode: 0o700)
        try f.write("private/inside", Array("hidden\n".utf8))
        let setup = try Self.shell("""
            chmod 0755 . && chown -R nobody vault && mkdir cache-nobody && chown nobody cache-nobody \
            && chmod 0755 src && chmod 0644 src/readable
            """, f)
        #expect(setup.status == 0, "\(setup.stderr)")
        let r = try CLIHarness.run(["runuser", "-u", "nobody", "--", "env", "HOME=\(f.v.path)/cache-nobody",
                                    "XDG_CACHE_HOME=\(f.v.path)/cache-nobody", CLIHarness.binary, "--vault", f.v.dir,
                                    "backup", f.source, "--json"],
                                   environment: f.v.environment(), cwd: f.v.path, executable: "/usr/bin/env")
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("could not read 'src/secret'") && r.stderr.contains("could not read 'src/private'"), "\(r.stderr)")
        let json = (try? JSONObject.parse(r.stdout)) ?? [:]
        #expect((json["unreadable"] as? [String] ?? []).sorted() == ["src/private", "src/secret"], "\(json)")
        #expect(json["files"] as? Int == 1, "\(json)")

        #expect(try f.v.run(["snapshots", "list"]).status == 0)   // absorbed, as root with the password
        let listed = try JSONObject.parse(try f.v.run(["snapshots", "list", "--json"]).stdout)["snapshots"] as? [[String: Any]] ?? []
        #expect(listed.count == 1 && listed.first?["unreadable"] as? Int == 2, "\(listed)")
        let out = f.v.path + "/out"
        #expect(try f.v.run(["snapshots", "restore", "latest", "--to", out]).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out + "/src") == ["readable"])
    }

    /// --one-file-system leaves out a file system mounted inside a PATH (a
    /// tmpfs mounted here); without it, the mount's files are backed up.
    @Test func oneFileSystemStaysOnThePathsFileSystem() throws {
        let f = try BackupFixture()
        try f.write("top", Array("on the first file system\n".utf8))
        try f.mkdir("mnt")
        guard getuid() == 0 else {
            print("skipped the --one-file-system test: mounting a tmpfs needs root (uid \(getuid()))")
            return
        }
        let mount = try Self.shell("mount -t tmpfs -o size=1m tmpfs src/mnt && echo other > src/mnt/inside", f)
        defer { _ = try? Self.shell("umount src/mnt", f) }
        guard mount.status == 0 else {
            print("skipped the --one-file-system test: mount refused (\(mount.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))")
            return
        }
        let across = try f.backup()
        #expect(across["files"] as? Int == 2, "\(across)")
        let staying = try f.backup(["--one-file-system"])
        #expect(staying["files"] as? Int == 1, "\(staying)")
        let ls = try f.snapshots(["ls", "latest"])
        #expect(ls.status == 0 && ls.stdoutText.contains("top") && !ls.stdoutText.contains("inside"), "\(ls.stdoutText)")
    }
}
