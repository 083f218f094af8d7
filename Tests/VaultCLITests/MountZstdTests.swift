import Foundation
import Testing
@testable import VaultCore
#if canImport(Glibc)
import Glibc
#endif

/// zstd items through the mount: reads in any order resume at the frame
/// before them (ZstdFrameTable) and give the item's bytes; streams from a
/// dropper whose frame headers lie, or are cut, or are thousands of tiny
/// frames, neither crash nor hang it.
extension MountTests {
    /// Text that compresses, different everywhere (so each 8 MiB frame is a compressed one).
    static func text(_ count: Int, seed: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + 64)
        var n = seed
        while out.count < count {
            out += Array("line \(n) of the text, \(n &* 2_654_435_761 % 1_000_003)\n".utf8)
            n += 1
        }
        return Array(out.prefix(count))
    }

    /// A frame of raw blocks (RFC 8878) whose header says `claimed` content bytes.
    static func rawFrame(_ content: [UInt8], claimed: Int? = nil) -> [UInt8] {
        let size = claimed ?? content.count
        var frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0xA0] + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
        var at = 0
        repeat {
            let n = min(128 << 10, content.count - at)
            let header = (at + n == content.count ? 1 : 0) | n << 3
            frame += (0..<3).map { UInt8(truncatingIfNeeded: header >> (8 * $0)) } + content[at..<(at + n)]
            at += n
        } while at < content.count
        return frame
    }

    /// Reads `(offset, count)` pairs in the order given; what each returned, or its errno.
    func reads(_ path: String, _ list: [(Int, Int)], _ content: [UInt8]) -> [String] {
        list.compactMap { offset, count in
            let got = pread(path, offset, count)
            let want = Array(content[min(offset, content.count)..<min(content.count, offset + count)])
            return got.errno == 0 && got.bytes == want ? nil : "\(path) at \(offset) for \(count): errno \(got.errno)"
        }
    }

    @Test func zstdItemsReadInAnyOrder() throws {
        let big = Self.text(21 << 20, seed: 1)   // three frames
        try add("big.txt", big, ["--compression", "zstd"])
        let folder = v.path + "/docs"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        var files: [(String, [UInt8])] = []
        for i in 0..<24 {   // 24 MiB of text: a folder archive of several frames
            let t = Self.text(1 << 20, seed: 1_000_000 * (i + 2))
            files.append((String(format: "f%02d.txt", i), t))
            try Data(t).write(to: URL(fileURLWithPath: folder + "/" + files[i].0))
        }
        #expect(try v.add(["add", "--compression", "zstd", folder]).status == 0)

        let (p, m) = try mount()
        defer { p.killGroup() }
        var list: [(Int, Int)] = [(big.count - 10, 10), (0, 100), (20 << 20, 1 << 20), (8 << 20, 2), ((8 << 20) - 1, 2),
                                  (16 << 20, 300_000), (5, 5), (big.count, 1)]
        for _ in 0..<30 { list.append((Int.random(in: 0..<big.count), Int.random(in: 1...(1 << 20)))) }
        #expect(reads(m + "/big.txt", list, big) == [])
        #expect(reads(m + "/big.txt", list.shuffled(), big) == [])
        // A folder's files read last to first: each resumes near its place in the archive.
        for (name, t) in files.reversed() {
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: m + "/docs/" + name))) == t, "\(name)")
        }
    }

    @Test func hostileZstdItemsNeitherCrashNorHangTheMount() throws {
        try add("plain.txt", Array("still here".utf8), ["--no-compress"])
        func drop(_ name: String, _ stream: [UInt8], size: Int) throws {
            var d = HostileDropIn()
            d.name = Array(name.utf8)
            d.flags = .zstd
            d.size = UInt64(size)
            try d.drop(into: v.dir, item: try d.item(stream))
        }
        // Frame headers that lie: the first frame says 3 MiB and holds 2.
        let a = randomBytes(2 << 20), b = randomBytes(1 << 20)
        try drop("lying.bin", Self.rawFrame(a, claimed: 3 << 20) + Self.rawFrame(b), size: 4 << 20)
        // Thousands of tiny frames (a valid stream): a table of one entry, reads still right.
        let tiny = randomBytes(9000)
        try drop("tiny.bin", stride(from: 0, to: tiny.count, by: 3).flatMap { Self.rawFrame(Array(tiny[$0..<($0 + 3)])) }, size: tiny.count)
        // A stream cut inside its last frame: no table, EIO where it ends.
        let c = randomBytes(3 << 20)
        try drop("cut.bin", Array((Self.rawFrame(Array(c[..<(2 << 20)])) + Self.rawFrame(Array(c[(2 << 20)...]))).dropLast(5)), size: c.count)
        #expect(try v.run(["list"]).status == 0)   // takes the drop-ins in

        let (p, m) = try mount()
        defer { p.killGroup() }
        // Read in full, the lying one fails (libzstd checks each frame's size); read at its end, it
        // resumes at the second frame and gives that frame's bytes; either way, never a crash or a hang.
        #expect(pread(m + "/lying.bin", 0, 4 << 20).errno == EIO)
        let late = pread(m + "/lying.bin", (3 << 20) + 10, 100)
        #expect(late.errno == EIO || late.bytes == Array(b[10..<110]))
        #expect(pread(m + "/lying.bin", 100, 100).errno == 0)
        #expect(reads(m + "/tiny.bin", [(8000, 900), (3, 6), (8999, 5), (0, 9000)], tiny) == [])
        #expect(pread(m + "/cut.bin", 0, 100).bytes == Array(c[..<100]))
        #expect(pread(m + "/cut.bin", c.count - 100, 100).errno == EIO)
        #expect(pread(m + "/cut.bin", 10, 100).bytes == Array(c[10..<110]))
        #expect(p.poll() == nil, "\(p.stderr)")
        #expect(try String(contentsOfFile: m + "/plain.txt", encoding: .utf8) == "still here")
    }
}
