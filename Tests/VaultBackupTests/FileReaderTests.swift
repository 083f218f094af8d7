import Foundation
import System
import Testing
import VaultCore
@testable import VaultBackup
#if canImport(Glibc)
import Glibc
#endif

/// The backup's reading thread: files come back in the order handed in,
/// each with what reading it found, past its queue's bound; what is not
/// a regular file at the path by the time it is opened (a FIFO, a link, a
/// directory, nothing) is unreadable, and never waited on.
@Suite struct FileReaderTests {
    @Test func filesComeBackInOrderAndWhatIsNotARegularFileIsUnreadable() throws {
        let s = try PiecePipelineTests.Scratch()
        let root = s.dir + "-source"
        defer { try? FileManager.default.removeItem(atPath: root) }   // scratch
        for d in ["a", "b"] { try FileManager.default.createDirectory(atPath: root + "/" + d, withIntermediateDirectories: true) }
        // More files than the queue holds, across two directories, so the
        // walk waits for room and the reader changes directory.
        let count = FileReader.maxQueued + 700
        var expected: [String: Int] = [:]
        var paths: [String] = []
        for k in 0..<count {
            let path = root + (k < count / 2 ? "/a/" : "/b/") + String(format: "f%05d", k)
            let size = k % 7 == 0 ? 0 : 100 + k % 3000
            try Data(repeating: UInt8(k & 0xff), count: size).write(to: URL(fileURLWithPath: path))
            (expected[path], paths) = (size, paths + [path])
        }
        let large = root + "/b/large"
        try Data(PiecePipelineTests.random(Chunker.maxSize + 12_345)).write(to: URL(fileURLWithPath: large))
        (expected[large], paths) = (Chunker.maxSize + 12_345, paths + [large])
        // Where the file system has no user attributes, there is none to read back.
        let noted = (try? Syscall.setExtendedAttribute(FilePath(large), Array("user.note".utf8), Array("kept".utf8))) != nil
        #expect(mkfifo(root + "/b/fifo", 0o600) == 0)
        #expect(symlink(large, root + "/b/link") == 0)
        let odd = [root + "/b/fifo", root + "/b/link", root + "/b/gone", root + "/a"]
        paths += odd

        let packs = try PackWriter(vault: s.vault, cache: nil, dryRun: false, landed: nil)
        let pipeline = try PiecePipeline(key: try PieceKey.random(), packs: packs, threads: 2)
        let reader = try FileReader(pipeline: pipeline)
        defer { reader.close(); pipeline.close() }
        // Each with its own status, as the walk gives it (the read stops at its size).
        let st = try #require(try Syscall.status(of: FilePath(root)))
        let requests = try paths.map {
            FileReader.Request(path: Array($0.utf8), relative: Array($0.utf8), status: try Syscall.status(of: FilePath($0), followLinks: false) ?? st)
        }
        for r in requests { try reader.read(r) {} }
        try reader.finish {}
        _ = try pipeline.drain(requests.map(\.pieces))

        var offsets: [UInt64] = []
        for (path, r) in zip(paths, requests) {
            if odd.contains(path) {
                guard case .unreadable = r.outcome else { Issue.record("\(path): \(r.outcome)"); continue }
                continue
            }
            guard case .read(_, let attributes) = r.outcome else { Issue.record("\(path): \(r.outcome)"); continue }
            #expect(r.pieces.size == UInt64(expected[path]!), "\(path)")
            #expect(r.pieces.pieces.reduce(0) { $0 + Int($1.count) } == expected[path]!)
            if path == large {
                #expect(r.pieces.pieces.count >= 2, "cut into pieces")
                #expect(attributes == (noted ? [ExtendedAttribute(name: Array("user.note".utf8), value: Array("kept".utf8))] : []))
            }
            offsets += r.pieces.pieces.map(\.offset)
        }
        // Every content differs and all fit one pack: stored in the order
        // handed in, the offsets only grow.
        #expect(packs.packsLanded == 0 && offsets == offsets.sorted() && Set(offsets).count == offsets.count)
        #expect(reader.filesRead.load(ordering: .relaxed) == UInt64(count + 1), "every regular file, once")
    }

    /// The walk takes the older files' pieces while the reader goes on:
    /// fewer files than wake the reader, then many; each take returns (the
    /// reader hands its last job over when it runs out of files), and what
    /// is taken is the files' own pieces.
    @Test func theOlderFilesArePiecesBeforeTheRestAreRead() throws {
        let s = try PiecePipelineTests.Scratch()
        let root = s.dir + "-source"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }   // scratch
        let packs = try PackWriter(vault: s.vault, cache: nil, dryRun: false, landed: nil)
        let key = try PieceKey.random()
        let pipeline = try PiecePipeline(key: key, packs: packs, threads: 2)
        let reader = try FileReader(pipeline: pipeline)
        defer { reader.close(); pipeline.close() }
        let st = try #require(try Syscall.status(of: FilePath(root)))
        var contents: [[UInt8]] = []
        func request(_ k: Int) throws -> FileReader.Request {
            let bytes = Array("file \(k) ".utf8) + PiecePipelineTests.random(200 + k % 500)
            let path = root + "/f\(k)"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            contents.append(bytes)
            let r = FileReader.Request(path: Array(path.utf8), relative: Array(path.utf8),
                                       status: try Syscall.status(of: FilePath(path)) ?? st)
            try reader.read(r) {}
            return r
        }
        var requests: [FileReader.Request] = []
        for batch in [FileReader.wakeBatch / 4, 3 * FileReader.wakeBatch, 1000] {
            let first = requests.count
            for k in first..<(first + batch) { requests.append(try request(k)) }
            let older = Array(requests[first..<(first + batch / 2)])
            try reader.wait(through: older.last!) {}
            _ = try pipeline.take(older.map(\.pieces))
            for r in older {
                guard case .read = r.outcome else { Issue.record("\(r.outcome)"); continue }
                #expect(r.pieces.pieces.count == 1)
            }
        }
        try reader.finish {}
        let rest = requests.filter { $0.pieces.pieces.isEmpty }
        _ = try pipeline.drain(rest.map(\.pieces))
        // Every file's one piece is its own content's.
        for (r, bytes) in zip(requests, contents) {
            let id = try key.id(of: bytes)
            #expect(r.pieces.pieces.count == 1 && r.pieces.pieces.first?.id == id)
        }
    }

    /// A read stops at the size the walk saw, as tar's does (no read(2)
    /// of 0 bytes at the end): a file that grew since is cut there and
    /// comes back changed; one that shrank is read to its end, changed; a
    /// size of 0 (a pseudo-file's says nothing) reads to the end.
    @Test func aReadStopsAtTheWalksSizeAndAFileThatGrewIsChanged() throws {
        let s = try PiecePipelineTests.Scratch()
        let root = s.dir + "-source"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }   // scratch
        let packs = try PackWriter(vault: s.vault, cache: nil, dryRun: false, landed: nil)
        let pipeline = try PiecePipeline(key: try PieceKey.random(), packs: packs, threads: 2)
        let reader = try FileReader(pipeline: pipeline)
        defer { reader.close(); pipeline.close() }
        var cases: [(FileReader.Request, size: UInt64, changed: Bool)] = []
        // "empty": size 0 when the walk looked, as a pseudo-file's says nothing: read to its end.
        for (name, before, after) in [("same", 5000, 5000), ("grew", 3000, 9000), ("shrank", 9000, 3000), ("big", 3 << 20, 3 << 20),
                                      ("empty", 0, 700)] {
            let path = root + "/" + name
            try Data(PiecePipelineTests.random(before)).write(to: URL(fileURLWithPath: path))
            let walked = try #require(try Syscall.status(of: FilePath(path)))
            if after != before {
                usleep(20_000)   // a later mtime on any file system's clock
                try Data(PiecePipelineTests.random(after)).write(to: URL(fileURLWithPath: path))
            }
            cases.append((FileReader.Request(path: Array(path.utf8), relative: Array(path.utf8), status: walked),
                          UInt64(before == 0 ? after : min(before, after)), after != before))
        }
        for c in cases { try reader.read(c.0) {} }
        try reader.finish {}
        _ = try pipeline.drain(cases.map(\.0.pieces))
        for (r, size, changed) in cases {
            guard case .read(let found, _) = r.outcome else { Issue.record("\(r.outcome)"); continue }
            #expect(r.pieces.size == size && found == changed, "\(String(decoding: r.path, as: UTF8.self)): \(r.pieces.size), \(found)")
        }
    }
}
