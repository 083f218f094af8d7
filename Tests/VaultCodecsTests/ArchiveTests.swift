// FolderArchive: round trips of a real tree, what is skipped, what GNU tar
// makes of the output, and failure paths that must leave nothing behind.
import Foundation
import Testing
import System
@testable import VaultCodecs
#if canImport(Glibc)
import Glibc
#endif

@Suite struct ArchiveTests {
    /// A tree with everything a folder item keeps, inside `scratch/src`, plus
    /// `scratch/outside/secret` that a symlink points at but must not pull in.
    static func makeTree(in scratch: ArchiveScratch) -> String {
        let src = scratch.sub("src"), outside = scratch.sub("outside")
        for d in [src, outside, src + "/sub", src + "/sub/deeper", src + "/empty-dir", src + "/locked"] {
            #expect(mkdir(d, 0o755) == 0)
        }
        writeFile(outside + "/secret", Array("outside the tree".utf8))
        writeFile(src + "/a.txt", Array("hello\n".utf8))
        writeFile(src + "/empty", [])
        writeFile(src + "/run.sh", Array("#!/bin/sh\necho hi\n".utf8), mode: 0o755)
        writeFile(src + "/private", Array("0600".utf8), mode: 0o600)
        writeFile(src + "/sub/b.txt", Array("bee".utf8))
        writeFile(src + "/sub/deeper/café ü.txt", Array("unicode name".utf8))
        writeFile(src + "/sub/big.bin", archiveNoise(3 << 20, seed: 7))
        // Mostly hole: GNU tar --sparse stores it as a sparse entry.
        writeFile(src + "/sub/sparse", [])
        #expect(truncate(src + "/sub/sparse", 1 << 20) == 0)
        let fdS = open(src + "/sub/sparse", O_WRONLY | O_APPEND)
        _ = "end".withCString { write(fdS, $0, 3) }
        close(fdS)
        writeFile(src + "/locked/inside", Array("in a 0500 directory".utf8))
        // A name that is not UTF-8: Linux names are bytes and must survive as such.
        let raw = Array((src + "/sub/raw-").utf8) + [0xFF, 0xFE] + Array(".bin".utf8)
        let fd = open(raw.cString, O_CREAT | O_WRONLY, 0o640)
        #expect(fd >= 0)
        _ = "not utf-8".withCString { write(fd, $0, 9) }
        close(fd)
        #expect(symlink("../a.txt", src + "/sub/link-in") == 0)
        #expect(symlink(outside + "/secret", src + "/link-out") == 0)
        #expect(symlink("../outside", src + "/link-dir-out") == 0)
        #expect(chmod(src + "/sub/deeper", 0o750) == 0)
        #expect(chmod(src + "/locked", 0o500) == 0)
        var t = 1_600_000_000
        for p in ["/a.txt", "/empty", "/run.sh", "/private", "/sub/b.txt", "/sub/big.bin", "/sub/deeper/café ü.txt",
                  "/locked/inside", "/sub/sparse", "/sub/link-in", "/link-out", "/link-dir-out",
                  "/sub/deeper", "/sub", "/empty-dir", "/locked"] {
            t += 12_345
            setMtime(src + p, seconds: t, nanoseconds: 123_456_789)
        }
        return src
    }

    @Test func roundTripKeepsTheTreeByteForByte() throws {
        let scratch = try ArchiveScratch()
        let src = Self.makeTree(in: scratch)
        let (bytes, written) = try archiveBytes(src)
        #expect(written.files == 10)
        let sizes: [UInt64] = [6, 0, 18, 4, 3, 3 << 20, (1 << 20) + 3, 12, 19, 9]
        #expect(written.bytes == sizes.reduce(0, +))
        #expect(written.skipped.isEmpty)

        let restored = scratch.sub("restored")
        let extracted = try FolderArchive.extract(from: ArrayStream(bytes, step: 7777), into: restored)
        #expect(extracted.files == written.files)
        #expect(extracted.bytes == written.bytes)

        let before = archiveSnapshot(src), after = archiveSnapshot(restored)
        #expect(before.count == 17)
        for (path, node) in before { #expect(after[path] == node, "\(path)") }
        #expect(Set(after.keys) == Set(before.keys))
        #expect(scratch.contents == ["outside", "restored", "src"])
        var st = stat()
        #expect(stat(restored, &st) == 0 && st.st_mode & 0o7777 == 0o700)
    }

    @Test func symlinksAreStoredAsLinksNotFollowed() throws {
        let scratch = try ArchiveScratch()
        let src = Self.makeTree(in: scratch)
        let (bytes, _) = try archiveBytes(src)
        #expect(!bytes.indices.dropLast(15).contains { bytes[$0..<$0 + 16].elementsEqual("outside the tree".utf8) })
        let listing = try FolderArchive.list(from: ArrayStream(bytes))
        #expect(listing.first { $0.path == "link-out" }?.size == 0)
        #expect(!listing.contains { $0.path.contains("secret") })
        let restored = scratch.sub("restored")
        _ = try FolderArchive.extract(from: ArrayStream(bytes), into: restored)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: restored + "/link-out") == scratch.sub("outside/secret"))
    }

    @Test func outputIsDeterministicSortedAndRelative() throws {
        let scratch = try ArchiveScratch()
        let src = Self.makeTree(in: scratch)
        let (first, _) = try archiveBytes(src)
        let (second, _) = try archiveBytes(src)
        #expect(first == second)
        #expect(first.count % 10240 == 0)
        let paths = try FolderArchive.list(from: ArrayStream(first)).map(\.path)
        #expect(paths.first == "a.txt")
        #expect(paths.contains("sub/deeper/café ü.txt"))
        #expect(paths.contains("sub/big.bin"))
        #expect(paths.allSatisfy { !$0.hasPrefix("/") && !$0.hasPrefix("src") && !$0.contains("..") })
        #expect(paths.firstIndex(of: "sub/") ?? 99 < paths.firstIndex(of: "sub/b.txt") ?? -1)
        // No owner names or ids leak into the stream.
        let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
        #expect(!String(decoding: first, as: UTF8.self).contains("\0\(user)\0"))
    }

    @Test func gnuTarReadsWhatWriteProduces() throws {
        let scratch = try ArchiveScratch()
        let src = Self.makeTree(in: scratch)
        let (bytes, _) = try archiveBytes(src)
        let (status, out) = try runTool("/usr/bin/tar", ["-tf", "-"], input: bytes)
        #expect(status == 0)
        let names = String(decoding: out, as: UTF8.self).split(separator: "\n")
        #expect(names.count == 17)
        #expect(names.contains("sub/b.txt") && names.contains("sub/deeper/") && names.contains("link-out"))
        let (verbose, listing) = try runTool("/usr/bin/tar", ["-tvf", "-", "--numeric-owner"], input: bytes)
        #expect(verbose == 0)
        #expect(String(decoding: listing, as: UTF8.self).contains("-rwxr-xr-x 0/0"))
    }

    @Test func extractsWhatGnuTarWrites() throws {
        let scratch = try ArchiveScratch()
        let src = Self.makeTree(in: scratch)
        for format in ["gnu", "pax", "ustar"] {
            let (status, tarred) = try runTool("/usr/bin/tar", ["--format=\(format)"] + (format == "ustar" ? [] : ["--sparse"]) + ["-C", src, "-cf", "-", "."], input: [])
            #expect(status == 0)
            let restored = scratch.sub("from-\(format)")
            _ = try FolderArchive.extract(from: ArrayStream(tarred), into: restored)
            #expect(archiveSnapshot(restored) == archiveSnapshot(src), "\(format)")
        }
    }

    @Test func fifoIsSkippedAndReported() throws {
        let scratch = try ArchiveScratch()
        let src = scratch.sub("src")
        #expect(mkdir(src, 0o755) == 0 && mkdir(src + "/d", 0o755) == 0)
        writeFile(src + "/d/file", Array("x".utf8))
        #expect(mkfifo(src + "/d/pipe", 0o644) == 0)
        let (bytes, summary) = try archiveBytes(src)
        #expect(summary == ArchiveSummary(files: 1, bytes: 1, skipped: ["d/pipe"]))
        #expect(try FolderArchive.list(from: ArrayStream(bytes)).map(\.path) == ["d/", "d/file"])
    }

    @Test func emptyFolderRoundTrips() throws {
        let scratch = try ArchiveScratch()
        #expect(mkdir(scratch.sub("src"), 0o755) == 0)
        let (bytes, summary) = try archiveBytes(scratch.sub("src"))
        #expect(summary == ArchiveSummary())
        #expect(bytes == [UInt8](repeating: 0, count: 10240))
        #expect(try FolderArchive.extract(from: ArrayStream(bytes), into: scratch.sub("out")) == ArchiveSummary())
        #expect(archiveSnapshot(scratch.sub("out")).isEmpty)
    }

    @Test func neverExtractsOverAnExistingDestination() throws {
        let scratch = try ArchiveScratch()
        let src = Self.makeTree(in: scratch)
        let (bytes, _) = try archiveBytes(src)
        for existing in ["dir", "file", "dangling"] {
            let dest = scratch.sub(existing)
            switch existing {
            case "dir": #expect(mkdir(dest, 0o755) == 0)
            case "file": writeFile(dest, Array("keep me".utf8))
            default: #expect(symlink("nowhere", dest) == 0)
            }
            #expect(throws: ArchiveError.destinationExists(path: dest)) {
                try FolderArchive.extract(from: ArrayStream(bytes), into: dest)
            }
        }
        #expect(scratch.contents == ["dangling", "dir", "file", "outside", "src"])
        #expect(FileManager.default.contents(atPath: scratch.sub("file")) == Data("keep me".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.sub("dir")).isEmpty)
    }

    @Test func writingAFileThatIsNotADirectoryFails() throws {
        let scratch = try ArchiveScratch()
        writeFile(scratch.sub("f"), [1])
        #expect(throws: SystemError(operation: .open, path: scratch.sub("f"), errno: .notDirectory)) {
            try archiveBytes(scratch.sub("f"))
        }
    }

    @Test func libarchiveSecureOptionsHoldOnTheirOwn() throws {
        // Behind ExtractionPlan's checks, libarchive's own must still refuse.
        let scratch = try ArchiveScratch()
        let root = scratch.sub("root"), outside = scratch.sub("outside")
        #expect(mkdir(root, 0o700) == 0 && mkdir(outside, 0o755) == 0)
        #expect(symlink(outside, root + "/link") == 0)
        writeFile(root + "/existing", Array("keep".utf8))
        let disk = try DiskWriter(root: root)
        for name in ["../escaped", "link/evil", "a/../../escaped"] {
            do {
                try disk.writeHeader(PaxEntry(path: Array((root + "/" + name).utf8), kind: .regular), name: name)
                Issue.record("libarchive accepted \(name)")
            } catch ArchiveError.refused(let entry, .library(let message)) {
                #expect(entry == name)
                #expect(!message.contains(root + "/"))
            }
        }
        var existing = PaxEntry(path: Array((root + "/existing").utf8), kind: .regular)
        existing.size = 0
        do {
            try disk.writeHeader(existing, name: "existing")
            try disk.finishEntry()
        } catch ArchiveError.refused(_, .library) {}   // refusing is fine too; overwriting is not
        try disk.close()
        #expect(FileManager.default.contents(atPath: root + "/existing") == Data("keep".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        #expect(scratch.contents == ["outside", "root"])
    }

    struct Boom: Error, Equatable {}

    /// A stream that fails after `limit` bytes, as a tampered item would.
    final class FailingStream: ByteStream {
        let inner: ArrayStream, limit: Int
        var given = 0
        init(_ bytes: [UInt8], failAfter limit: Int) { (inner, self.limit) = (ArrayStream(bytes), limit) }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            if given >= limit { throw Boom() }
            let n = try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, limit - given)]))
            given += n
            return n
        }
    }

    final class FailingSink: ByteSink {
        var left: Int
        init(after: Int) { left = after }
        func write(_ b: UnsafeRawBufferPointer) throws {
            if b.count > left { throw Boom() }
            left -= b.count
        }
    }

    @Test func streamAndSinkErrorsComeThroughUnchangedAndLeaveNothing() throws {
        let scratch = try ArchiveScratch()
        let src = Self.makeTree(in: scratch)
        let (bytes, _) = try archiveBytes(src)
        for cut in [0, 100, 5000, 1 << 20, bytes.count - 600] {
            #expect(throws: Boom()) {
                try FolderArchive.extract(from: FailingStream(bytes, failAfter: cut), into: scratch.sub("out"))
            }
        }
        #expect(throws: Boom()) { try FolderArchive.write(directory: src, to: FailingSink(after: 50_000)) }
        #expect(scratch.contents == ["outside", "src"])
    }

    @Test func damagedStreamsFailAndLeaveNothing() throws {
        let scratch = try ArchiveScratch()
        let src = Self.makeTree(in: scratch)
        let (bytes, _) = try archiveBytes(src)
        var flipped = bytes
        flipped[1] ^= 0x55   // the first header's name: its checksum no longer matches
        for bad in [Array(bytes[..<(bytes.count / 2)]), archiveNoise(20_000, seed: 3), [], Array(bytes[..<700]), flipped] {
            #expect(throws: ArchiveError.self) {
                try FolderArchive.extract(from: ArrayStream(bad), into: scratch.sub("out"))
            }
        }
        #expect(scratch.contents == ["outside", "src"])
    }
}
