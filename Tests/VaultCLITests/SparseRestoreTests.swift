import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Sparse files (issue 44): a disk image that is mostly holes is stored
/// as its data (the zero pieces are one piece, stored once) and restored
/// sparse, taking about its data's size on the restoring disk, with the
/// same bytes as the original.
@Suite struct SparseRestoreTests {
    @Test func aSparseImageComesBackSparse() throws {
        let f = try BackupFixture()
        let image = f.source + "/disk.img"
        let data = BackupFixture.random(1 << 20, seed: 7)
        // 256 MiB, 1 MiB of data at 100 MiB, 5 bytes at the very end.
        let fd = open(image, O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0 && ftruncate(fd, 256 << 20) == 0)
        _ = data.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 100 << 20) }
        _ = Array("tail\n".utf8).withUnsafeBytes { pwrite(fd, $0.baseAddress, 5, (256 << 20) - 5) }
        close(fd)
        let summary = try f.backup()
        #expect((summary["bytes_stored"] as? Int ?? .max) < 3 << 20, "\(summary)")
        let r = try f.snapshots(["restore", "latest", "--to", f.v.path + "/out"])
        #expect(r.status == 0, "\(r.stderr)")
        let restored = f.v.path + "/out/src/disk.img"
        let st = BackupFixture.stat(restored)
        #expect(st.st_size == 256 << 20)
        #expect(Int(st.st_blocks) * 512 < 4 << 20, "takes \(Int(st.st_blocks) * 512) bytes on disk")
        let cmp = try CLIHarness.run(["cmp", image, restored], environment: f.v.environment(), timeout: 60, executable: "/usr/bin/env")
        #expect(cmp.status == 0, "\(cmp.stdoutText)")
    }
}
