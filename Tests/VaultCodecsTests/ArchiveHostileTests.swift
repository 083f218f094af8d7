// Hand-made hostile tar streams: each must be refused with an error naming
// the entry, and leave nothing at all next to the destination (neither the
// destination nor its ".partial-…" sibling), nor anything outside it.
import Foundation
import Testing
import VaultCodecs
#if canImport(Glibc)
import Glibc
#endif

@Suite struct ArchiveHostileTests {
    /// One hostile archive; `outside` is a directory next to the destination
    /// that entries may try to reach ("OUT" in names is replaced by its path).
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let entry: String
        let reason: ArchiveError.Refusal
        let build: @Sendable (String, inout TarBuilder) -> Void
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "absolute path", entry: "/OUT/x", reason: .absolutePath) { out, t in
            t.add("ok.txt", data: [1]); t.add(out + "/x", data: Array("pwned".utf8))
        },
        Case(name: "absolute /tmp path", entry: "/tmp/x", reason: .absolutePath) { _, t in
            t.add("/tmp/x", data: Array("pwned".utf8))
        },
        Case(name: "dot-dot", entry: "../x", reason: .parentDirectory) { _, t in
            t.add("../x", data: Array("pwned".utf8))
        },
        Case(name: "dot-dot in the middle", entry: "a/../../x", reason: .parentDirectory) { _, t in
            t.add("a/", .directory, mode: 0o755); t.add("a/../../x", data: Array("pwned".utf8))
        },
        Case(name: "pax path overrides an innocent name", entry: "../x", reason: .parentDirectory) { _, t in
            t.pax([("path", "../x")]); t.add("innocent.txt", data: Array("pwned".utf8))
        },
        Case(name: "write through a symlink", entry: "link/evil", reason: .throughSymlink) { out, t in
            t.add("link", .symlink, link: out); t.add("link/evil", data: Array("pwned".utf8))
        },
        Case(name: "write through a symlink to /tmp", entry: "link/evil", reason: .throughSymlink) { _, t in
            t.add("link", .symlink, link: "/tmp"); t.add("link/evil", data: Array("pwned".utf8))
        },
        Case(name: "hard link to /etc/passwd", entry: "passwd", reason: .hardLinkOutside) { _, t in
            t.add("passwd", .hardlink, link: "/etc/passwd")
        },
        Case(name: "hard link with dot-dot", entry: "h", reason: .hardLinkOutside) { _, t in
            t.add("h", .hardlink, link: "../outside/file")
        },
        Case(name: "hard link to a symlink", entry: "h", reason: .hardLinkOutside) { out, t in
            t.add("s", .symlink, link: out + "/file"); t.add("h", .hardlink, link: "s")
        },
        Case(name: "hard link to a later entry", entry: "h", reason: .hardLinkOutside) { _, t in
            t.add("h", .hardlink, link: "f"); t.add("f", data: [1])
        },
        Case(name: "character device", entry: "null", reason: .specialFile(.characterDevice)) { _, t in
            t.add("null", .charDevice, mode: 0o666)
        },
        Case(name: "block device", entry: "disk", reason: .specialFile(.blockDevice)) { _, t in
            t.add("disk", .blockDevice, mode: 0o660)
        },
        Case(name: "fifo", entry: "pipe", reason: .specialFile(.fifo)) { _, t in
            t.add("pipe", .fifo)
        },
        Case(name: "same file twice", entry: "./a", reason: .alreadyExists) { _, t in
            t.add("a", data: Array("first".utf8)); t.add("./a", data: Array("second".utf8))
        },
        Case(name: "file over an implied directory", entry: "d", reason: .alreadyExists) { _, t in
            t.add("d/f", data: [1]); t.add("d", data: [2])
        },
        Case(name: "symlink replacing a directory", entry: "d", reason: .alreadyExists) { out, t in
            t.add("d/", .directory); t.add("d", .symlink, link: out)
        },
        Case(name: "file under a file", entry: "a/b", reason: .parentNotDirectory) { _, t in
            t.add("a", data: [1]); t.add("a/b", data: [2])
        },
        Case(name: "a file named after the root", entry: ".", reason: .emptyPath) { _, t in
            t.add(".", data: [1])
        },
        Case(name: "path longer than PATH_MAX", entry: String(repeating: "d/", count: 2100) + "f", reason: .pathTooLong) { _, t in
            t.pax([("path", String(repeating: "d/", count: 2100) + "f")]); t.add("x", data: [1])
        },
        Case(name: "refusal after a tree deeper than the descriptor limit", entry: "/x", reason: .absolutePath) { _, t in
            t.pax([("path", String(repeating: "d/", count: 1500) + "f")]); t.add("x", data: [1]); t.add("/x")
        },
    ]

    @Test(arguments: cases)
    func refusedAndNothingLeftBehind(_ c: Case) throws {
        let scratch = try ArchiveScratch()
        let outside = scratch.sub("outside")
        #expect(mkdir(outside, 0o755) == 0)
        writeFile(outside + "/file", Array("precious".utf8))
        var t = TarBuilder()
        c.build(outside, &t)
        let entry = c.entry.replacingOccurrences(of: "/OUT", with: outside)
        let dest = scratch.sub("restored")
        #expect(throws: ArchiveError.refused(entry: entry, reason: c.reason)) {
            try FolderArchive.extract(from: ArrayStream(t.finished), into: dest)
        }
        #expect(scratch.contents == ["outside"])
        #expect(archiveSnapshot(outside).keys.sorted() == ["file"])
        #expect(FileManager.default.contents(atPath: outside + "/file") == Data("precious".utf8))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/evil") || c.name != "write through a symlink to /tmp")
    }

    @Test func whatHonestArchivesDoStillWorks() throws {
        // "./" as the root, entries under "./", implied parents, a hard link to
        // an earlier file, setuid and setgid dropped, a directory made read-only.
        var t = TarBuilder()
        t.add("./", .directory, mode: 0o755)
        t.add("./a.txt", data: Array("hello".utf8), mode: 0o4755)
        t.add("deep/er/f", data: Array("implied parents".utf8), mode: 0o2640)
        t.add("deep/", .directory, mode: 0o500)
        t.add("h", .hardlink, link: "./a.txt")
        t.add("s", .symlink, link: "/etc/passwd")
        let scratch = try ArchiveScratch()
        let dest = scratch.sub("restored")
        let summary = try FolderArchive.extract(from: ArrayStream(t.finished, step: 100), into: dest)
        #expect(summary == ArchiveSummary(files: 3, bytes: 20))
        let snap = archiveSnapshot(dest)
        #expect(snap["a.txt"]?.mode == 0o755)
        #expect(snap["deep/er/f"]?.mode == 0o640)
        #expect(snap["h"]?.content == Array("hello".utf8))
        #expect(snap["s"]?.content == Array("/etc/passwd".utf8))
        var a = stat(), h = stat()
        #expect(stat(dest + "/a.txt", &a) == 0 && stat(dest + "/h", &h) == 0 && a.st_ino == h.st_ino)
        #expect(scratch.contents == ["restored"])
    }
}

/// What may follow an archive's end is bounded (a record of zeros past
/// what libarchive reads ahead, and at most 1 MiB past the last entry in
/// all): a small folder item cannot decode to gigabytes `get` would write out.
@Suite struct ArchiveTrailingDataTests {
    static func archive() -> [UInt8] {
        var t = TarBuilder()
        t.add("notes.txt", data: Array("hello".utf8))
        return t.finished
    }

    @Test func aRecordOfZerosMayFollowNothingElse() throws {
        #expect(try FolderArchive.summarize(from: ArrayStream(Self.archive() + [UInt8](repeating: 0, count: 9_000))).files == 1)
        #expect(throws: ArchiveError.trailingData) {
            try FolderArchive.summarize(from: ArrayStream(Self.archive() + [UInt8](repeating: 0, count: 3 << 20)))
        }
        // What libarchive's read-ahead took in with the end is not seen
        // again; past it, only zeros, a record's worth.
        #expect(throws: ArchiveError.trailingData) {
            try FolderArchive.summarize(from: ArrayStream(Self.archive() + [UInt8](repeating: 0, count: 100_000) + [1]))
        }
    }
}
