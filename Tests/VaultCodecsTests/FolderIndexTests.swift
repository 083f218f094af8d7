import Foundation
import System
import Testing
import VaultCodecs

/// FolderIndex (what `vault mount` shows of a folder item): every file's
/// bytes lie exactly at its data offset, pax headers and all; and every
/// hostile archive extraction refuses is refused here too.
@Suite struct FolderIndexTests {
    @Test func offsetsPointAtEachFilesBytes() throws {
        var t = TarBuilder()
        t.add("./", .directory, mode: 0o755)
        t.add("a.txt", data: Array("hello".utf8), mode: 0o4755)
        t.pax([("path", "long/" + String(repeating: "n", count: 150) + ".bin")])   // a pax header before it
        t.add("short", data: archiveNoise(70_000, seed: 1))
        t.add("empty", data: [])
        t.add("deep/er/f", data: archiveNoise(513, seed: 2), mode: 0o640)
        t.add("deep/", .directory, mode: 0o500)
        t.add("h", .hardlink, link: "./a.txt")
        t.add("s", .symlink, link: "/etc/passwd")
        let archive = t.finished
        let index = try FolderIndex.build(from: ArrayStream(archive, step: 777))
        let byPath = Dictionary(uniqueKeysWithValues: index.entries.map { (String(decoding: $0.path, as: UTF8.self), $0) })
        let expected: [String: [UInt8]] = [
            "/a.txt": Array("hello".utf8), "/long/" + String(repeating: "n", count: 150) + ".bin": archiveNoise(70_000, seed: 1),
            "/empty": [], "/deep/er/f": archiveNoise(513, seed: 2), "/h": Array("hello".utf8),
        ]
        for (path, content) in expected {
            guard let e = byPath[path] else { Issue.record("no \(path)"); continue }
            #expect(e.kind == .file && e.size == UInt64(content.count), "\(path)")
            let start = Int(e.dataOffset)
            #expect(Array(archive[start..<start + content.count]) == content, "\(path)")
        }
        #expect(byPath["/a.txt"]?.permissions == 0o755)                 // setuid dropped
        #expect(byPath["/deep"]?.kind == .directory && byPath["/deep"]?.permissions == 0o500)
        #expect(byPath["/s"]?.kind == .symlink && byPath["/s"]?.linkTarget == Array("/etc/passwd".utf8))
        #expect(index.entries.filter { $0.kind == .file }.count == 5)
    }

    /// libarchive borrows a lending stream's blocks (an item's decrypted
    /// chunk) rather than copying them: the index is the same when every
    /// block is scribbled over once the next is asked for, for blocks that
    /// split headers anywhere, as it is when the blocks are copied; and the
    /// trailing-bytes bound holds as before.
    @Test(arguments: [1, 100, 511, 513, 4096, 65_536])
    func aLendingStreamGivesTheSameIndex(step: Int) throws {
        var t = TarBuilder()
        t.add("./", .directory, mode: 0o755)
        t.pax([("path", "long/" + String(repeating: "n", count: 150) + ".bin")])
        t.add("short", data: archiveNoise(70_000, seed: 3))
        for i in 0..<20 { t.add("d/f\(i)", data: archiveNoise(i * 97, seed: UInt64(i))) }
        let archive = t.finished
        let copied = try FolderIndex.build(from: ArrayStream(archive, step: 777))
        let lent = try FolderIndex.build(from: ScribblingLendingStream(archive, step: step))
        #expect(lent.entries.map(\.path) == copied.entries.map(\.path))
        #expect(lent.entries.map(\.dataOffset) == copied.entries.map(\.dataOffset))
        #expect(lent.entries.map(\.size) == copied.entries.map(\.size))
        #expect(copied.entries.count == 21)   // the pax path names "short"; "./" and "d" are not entries
        #expect(throws: ArchiveError.trailingData) {
            try FolderIndex.build(from: ScribblingLendingStream(archive + [UInt8](repeating: 0, count: 200_000), step: step))
        }
    }

    /// The index the writer makes as it writes (`write(indexing:)`, what
    /// a dropper keeps beside its folder) is the index a pass over the
    /// archive finds, entry for entry: for names a ustar header cannot hold
    /// (long, not UTF-8), long link targets, extended attributes (each in a
    /// pax header before the entry), mtimes ustar cannot hold, and files
    /// whose sizes end on, before and after a block's end.
    @Test(arguments: [UInt64(1), 2, 3])
    func theWritersIndexIsThePassesIndex(seed: UInt64) throws {
        let scratch = try ArchiveScratch()
        let root = scratch.sub("tree")
        var rng = seed
        func next(_ n: Int) -> Int {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            return Int((rng >> 33) % UInt64(n))
        }
        mkdir(root, 0o755)
        var dirs = [root]
        for i in 0..<60 {
            let dir = dirs[next(dirs.count)]
            let long = String(repeating: "l", count: 90 + next(150))
            let name = [String(i), "f\(i).txt", long + "\(i)", "caf\u{e9}\(i)"][next(4)]
            let path = dir + "/" + name
            switch next(6) {
            case 0:
                mkdir(path, 0o700 + mode_t(next(0o100)))
                dirs.append(path)
            case 1:
                symlink(String(repeating: "t/", count: next(120)) + "x", path)
            default:
                writeFile(path, archiveNoise([0, 1, 511, 512, 513, 10_240, 70_000][next(7)], seed: UInt64(i)),
                          mode: [0o644, 0o600, 0o4755, 0o400][next(4)])
                if next(3) == 0 { try Syscall.setExtendedAttribute(FilePath(path), Array("user.note\(i)".utf8), Array(repeating: 65, count: 300)) }
                if next(4) == 0 { setMtime(path, seconds: [-1, 9_000_000_000, 1][next(3)], nanoseconds: 5) }
            }
        }
        // A name that is not UTF-8.
        let raw = Array(root.utf8) + Array("/bad-\u{1}".utf8) + [0xff, 0xfe]
        let fd = (raw.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) }
        #expect(fd >= 0)
        close(fd)

        let sink = CollectingSink()
        let summary = try FolderArchive.write(directory: root, to: sink, indexing: true)
        let written = try #require(summary.index)
        let found = try FolderIndex.build(from: ArrayStream(sink.bytes, step: 4093))
        #expect(written.count == found.entries.count)
        for (w, f) in zip(written, found.entries) { #expect(w == f, "\(String(decoding: f.path, as: UTF8.self))") }
        #expect(written.contains { $0.path.last == 0xfe })
        // And the writer's index passes what a kept one must.
        #expect(try FolderIndex.rebuild(written).entries == found.entries)
    }

    /// Past `maxIndexedEntries` the writer keeps no index (its memory stays
    /// flat); at it, it does.
    @Test func theWriterGivesUpItsIndexPastItsBound() throws {
        let scratch = try ArchiveScratch()
        let root = scratch.sub("tree")
        mkdir(root, 0o755)
        for i in 0..<FolderArchive.maxIndexedEntries { close(open(root + "/\(i)", O_CREAT | O_WRONLY, 0o644)) }
        #expect(try FolderArchive.write(directory: root, to: XZBenchTests.CountingSink(), indexing: true).index?.count == FolderArchive.maxIndexedEntries)
        close(open(root + "/one-more", O_CREAT | O_WRONLY, 0o644))
        #expect(try FolderArchive.write(directory: root, to: XZBenchTests.CountingSink(), indexing: true).index == nil)
    }

    @Test(arguments: ArchiveHostileTests.cases)
    func hostileArchivesAreRefusedAsExtractionRefusesThem(_ c: ArchiveHostileTests.Case) throws {
        var t = TarBuilder()
        c.build("/nonexistent-outside", &t)
        let entry = c.entry.replacingOccurrences(of: "/OUT", with: "/nonexistent-outside")
        #expect(throws: ArchiveError.refused(entry: entry, reason: c.reason)) {
            try FolderIndex.build(from: ArrayStream(t.finished))
        }
    }
}
