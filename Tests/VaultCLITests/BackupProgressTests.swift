import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `vault backup` on a terminal: files, bytes, rate, and the time left,
/// measured on what there is to read (a walk beside the backup counts it).
@Suite("Backup progress")
struct BackupProgressTests {
    @Test func onATerminalBackupShowsTheTimeLeft() throws {
        let f = try BackupFixture()
        // 4 GiB of holes: nothing on disk, one piece stored (they are all
        // the same), yet every byte is read. Long enough to be running when
        // it is stopped: 512 MiB of holes were backed up in 0.15 s on a
        // machine whose kernel reads holes fast, and the test then saw no
        // progress line at all.
        let big = f.source + "/disk.img"
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, 4 << 30) == 0)
        // Stopped for 1.5 s a moment after it starts, so it has run past the
        // second before any time left is shown, however fast the machine.
        let r = try PTYDriver.run(["-c", "\"$0\" --vault \"$1\" backup \"$2\" & p=$!; sleep 0.3; kill -STOP $p; sleep 1.5; kill -CONT $p; wait $p",
                                   CLIHarness.binary, f.v.dir, f.source],
                                  steps: [], environment: f.v.environment(f.cacheEnv), timeout: 120, executable: "/bin/bash")
        #expect(r.exit == 0, "\(r.transcript)")
        #expect(r.transcript.contains("backing up: 1 file, ") || r.transcript.contains("backing up: 0 files, "), "\(r.transcript)")
        #expect(r.transcript.contains(" s left"), "\(r.transcript)")
        #expect(!r.transcript.contains("\u{1B}"))
        // The one large file's bytes move while it is read (issue 43, item
        // 10: "0 files, 0 B, 0 B/s" throughout).
        #expect(r.transcript.contains(/backing up: 0 files, [1-9]/), "\(r.transcript)")

        // snapshots restore shows its progress too (before: none).
        let out = f.v.path + "/restored"
        let restore = try PTYDriver.run(["-c", "\"$0\" --vault \"$1\" --password-file \"$2\" snapshots restore latest --to \"$3\" & p=$!; sleep 0.3; kill -STOP $p; sleep 1; kill -CONT $p; wait $p",
                                         CLIHarness.binary, f.v.dir, f.v.passwordFile, out],
                                        steps: [], environment: f.v.environment(f.cacheEnv), timeout: 120, executable: "/bin/bash")
        #expect(restore.exit == 0, "\(restore.transcript)")
        #expect(restore.transcript.contains("restoring: "), "\(restore.transcript)")
        // Piped: no progress line at all.
        let piped = try f.v.add(["backup", f.source], f.cacheEnv)
        #expect(piped.status == 0 && !piped.stderr.contains("backing up"), "\(piped.stderr)")
    }
}
