import Foundation
import Testing
import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// The restore's sparse writer: whatever the sizes of the writes (pieces
/// are not block-aligned), the file reads back byte for byte, and only
/// whole aligned zero blocks become holes.
@Suite struct SparseFileSinkTests {
    @Test func oddWritesReadBackAndZeroBlocksAreHoles() throws {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<6 {
            // Runs of zeros and of data, of sizes around the block size.
            var content: [UInt8] = []
            while content.count < 256 << 10 {
                let n = Int.random(in: 1...40_000, using: &rng)
                content += Bool.random(using: &rng) ? [UInt8](repeating: 0, count: n) : [UInt8](repeating: UInt8.random(in: 1...255, using: &rng), count: n)
            }
            if round % 2 == 0 { content += [UInt8](repeating: 0, count: 300_000) }  // ends in a hole
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("sparse-\(UUID().uuidString)").path
            let fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0o600)
            defer { close(fd); unlink(path) }
            let sink = SparseFileSink(fd: fd)
            var at = 0, writes = 0
            while at < content.count {
                writes += 1
                let n = min(Int.random(in: 1...70_000, using: &rng), content.count - at)
                try content[at..<(at + n)].withUnsafeBytes { try sink.write($0) }
                at += n
            }
            try sink.finish()
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == content, "round \(round)")
            var st = stat()
            fstat(fd, &st)
            let dataBlocks = stride(from: 0, to: content.count, by: 4096).filter { content[$0..<min($0 + 4096, content.count)].contains { $0 != 0 } }.count
            // Allocated: the data blocks, and at most the two blocks at the
            // edges of each write (written whole even when zero).
            #expect(Int(st.st_blocks) * 512 <= (dataBlocks + 2 * writes) * 4096, "round \(round)")
        }
    }
}
