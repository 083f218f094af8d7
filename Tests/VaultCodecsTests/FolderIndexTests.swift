import Foundation
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
