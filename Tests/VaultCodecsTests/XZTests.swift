import Foundation
import Testing
import TestSupport
import VaultCodecs

/// Deterministic test content: SplitMix64, so failures reproduce.
struct TestBytes {
    private var generator: SplitMix
    init(seed: UInt64) { generator = SplitMix(state: seed) }

    mutating func next() -> UInt64 { generator.next() }

    /// Incompressible bytes.
    mutating func random(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { b in
            var i = 0
            while i < count {
                var v = next()
                let n = min(8, count - i)
                withUnsafeBytes(of: &v) { b.baseAddress!.advanced(by: i).copyMemory(from: $0.baseAddress!, byteCount: n) }
                i += n
            }
        }
        return out
    }

    /// Text-like bytes: lines of words drawn with a skewed distribution from
    /// a vocabulary of made-up words, with punctuation and numbers.
    mutating func text(_ count: Int) -> [UInt8] {
        let syllables = ["ka", "to", "ren", "mi", "sul", "ba", "ve", "tri", "on", "da", "lex", "po",
                         "ar", "ni", "que", "st", "el", "mor", "gi", "an", "us", "ph", "ry", "com"]
        var vocabulary: [[UInt8]] = []
        for _ in 0..<4000 {
            var w = ""
            for _ in 0..<(1 + Int(next() % 4)) { w += syllables[Int(next() % UInt64(syllables.count))] }
            vocabulary.append(Array(w.utf8))
        }
        var out: [UInt8] = []
        out.reserveCapacity(count + 100)
        var column = 0
        while out.count < count {
            // Squaring a uniform draw favours the low indices, roughly as word frequencies do.
            let u = Double(next() % 1_000_000) / 1_000_000
            var word = vocabulary[Int(u * u * u * Double(vocabulary.count))]
            if next() % 17 == 0 { word = Array(String(next() % 100_000).utf8) }
            out += word
            column += word.count + 1
            switch next() % 12 {
            case 0: out += Array(". ".utf8)
            case 1: out += Array(", ".utf8)
            default: out.append(0x20)
            }
            if column > 70 { out.append(0x0A); column = 0 }
        }
        return Array(out.prefix(count))
    }
}

/// Compresses `data` in writes of the given sizes (cycled).
func xzCompress(_ data: [UInt8], level: Int, threads: Int, writeSizes: [Int] = [1 << 16]) throws -> [UInt8] {
    let sink = CollectingSink()
    let xz = try XZCompressor(level: level, threads: threads, downstream: sink)
    var offset = 0
    var i = 0
    try data.withUnsafeBytes { all in
        while offset < data.count {
            let n = min(writeSizes[i % writeSizes.count], data.count - offset)
            try xz.write(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + n)]))
            offset += n
            i += 1
        }
    }
    try xz.finish()
    #expect(xz.bytesIn == UInt64(data.count))
    #expect(xz.bytesOut == UInt64(sink.bytes.count))
    return sink.bytes
}

/// Decompresses `data` fed `step` bytes at a time, read `readSize` bytes at a time.
func xzDecompress(_ data: [UInt8], step: Int = 1 << 16, readSize: Int = 1 << 16,
                  memoryLimit: UInt64 = 256 << 20) throws -> [UInt8] {
    let xz = try XZDecompressor(upstream: ArrayStream(data, step: step), memoryLimit: memoryLimit)
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: readSize)
    while true {
        let n = try buf.withUnsafeMutableBytes { try xz.read(into: $0) }
        if n == 0 { break }
        out += buf[..<n]
    }
    return out
}

/// Compresses `input` with the system `xz` and `arguments`.
func systemXZ(_ arguments: [String], input: [UInt8]) throws -> [UInt8] {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("xz-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let inURL = dir.appendingPathComponent("in")
    try Data(input).write(to: inURL)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/xz")
    p.arguments = arguments + ["--keep", "--force", inURL.path]
    try p.run()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    return Array(try Data(contentsOf: inURL.appendingPathExtension("xz")))
}

@Suite struct XZTests {
    static let text = { var g = TestBytes(seed: 1); return g.text(5 << 20) }()
    static let random = { var g = TestBytes(seed: 2); return g.random(5 << 20) }()

    enum Content: String, CaseIterable { case empty, one, text, random }
    static func bytes(_ c: Content) -> [UInt8] {
        switch c {
        case .empty: return []
        case .one: return [0x41]
        case .text: return text
        case .random: return random
        }
    }

    @Test(arguments: Content.allCases, [(0, 1), (1, 2), (3, 1), (6, 2)])
    func roundTrip(_ content: Content, _ setting: (level: Int, threads: Int)) throws {
        let data = Self.bytes(content)
        // Uneven writes, one of them larger than the 1 MiB buffer.
        let packed = try xzCompress(data, level: setting.level, threads: setting.threads,
                                    writeSizes: [7, 100_000, 3 << 20, 1])
        #expect(try xzDecompress(packed, step: 4093, readSize: 65_521) == data)
        if content == .text { #expect(packed.count < data.count / 2) }
    }

    @Test func roundTripWithTinyReads() throws {
        let data = Array(Self.text.prefix(300_000))
        let packed = try xzCompress(data, level: 1, threads: 2)
        #expect(try xzDecompress(packed, step: 1, readSize: 1000) == data)
        #expect(try xzDecompress(packed, step: 1 << 20, readSize: 1) .count == data.count)
    }

    @Test func systemXZDecodesOurOutput() throws {
        for (data, level) in [(Self.text, 1), (Self.random, 0), ([], 6)] {
            let packed = try xzCompress(data, level: level, threads: 2)
            // `xz -dc` would do, but a pipe needs a reader thread; a file does not.
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("xz-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let xzURL = dir.appendingPathComponent("data.xz")
            try Data(packed).write(to: xzURL)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/xz")
            p.arguments = ["-d", "--keep", xzURL.path]
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
            #expect(Array(try Data(contentsOf: dir.appendingPathComponent("data"))) == data)
        }
    }

    @Test func outputIsWhatSystemXZWrites() throws {
        // Same liblzma, same options (preset, CRC64, block size): same bytes.
        for (level, threads) in [(1, 2), (6, 2), (1, 1), (0, 1)] {
            let ours = try xzCompress(Self.text, level: level, threads: threads, writeSizes: [70_000])
            let theirs = try systemXZ(["-T\(threads)", "-\(level)"], input: Self.text)
            #expect(ours == theirs, "level \(level), \(threads) threads")
        }
    }

    @Test func weDecodeSystemXZOutput() throws {
        for args in [["-T2", "-1"], ["-T1", "-6"], ["-0", "--check=crc32"], ["-1", "--check=sha256"]] {
            let packed = try systemXZ(args, input: Self.text)
            #expect(try xzDecompress(packed, step: 10_007) == Self.text)
        }
    }

    @Test func truncatedStreamsAreErrors() throws {
        let packed = try xzCompress(Array(Self.text.prefix(1 << 20)), level: 1, threads: 1)
        for keep in [0, 1, 12, packed.count / 2, packed.count - 12, packed.count - 1] {
            #expect(throws: XZError.truncated) { try xzDecompress(Array(packed.prefix(keep)), step: 1000) }
        }
    }

    @Test func flippedBytesAreErrors() throws {
        // Random bytes are stored in uncompressed LZMA2 chunks, so a flip in
        // the middle decodes cleanly and only the CRC64 catches it.
        let data = Array(Self.random.prefix(200_000))
        let packed = try xzCompress(data, level: 0, threads: 1)
        var flipped = packed
        flipped[100_000] ^= 0x01
        #expect(throws: XZError.corrupt) { try xzDecompress(flipped) }
        // Flips in the compressed text, the headers and the index.
        let text = try xzCompress(Array(Self.text.prefix(100_000)), level: 1, threads: 1)
        for at in [6, 14, text.count / 2, text.count - 20, text.count - 3] {
            var t = text
            t[at] ^= 0x40
            #expect(throws: XZError.self) { try xzDecompress(t) }
        }
    }

    @Test func trailingDataIsAnError() throws {
        let packed = try xzCompress(Array(Self.text.prefix(10_000)), level: 1, threads: 1)
        // Garbage, xz stream padding, and a second stream (xz -d would accept the last two).
        for tail in [[0x78], [0, 0, 0, 0], packed] {
            #expect(throws: XZError.trailingData) { try xzDecompress(packed + tail) }
            #expect(throws: XZError.trailingData) { try xzDecompress(packed + tail, step: 1) }
        }
    }

    @Test func notXZIsAnError() throws {
        #expect(throws: XZError.notXZ) { try xzDecompress(Array("hello, world".utf8)) }
    }

    @Test func memoryLimitIsEnforced() throws {
        // Preset 6 names an 8 MiB dictionary in the block header, whatever the content size.
        let packed = try xzCompress(Array("small".utf8), level: 6, threads: 1)
        #expect(throws: XZError.self) { try xzDecompress(packed, memoryLimit: 4 << 20) }
        do {
            _ = try xzDecompress(packed, memoryLimit: 4 << 20)
        } catch let XZError.memoryLimitExceeded(limit) {
            #expect(limit == 4 << 20)
        }
        #expect(try xzDecompress(packed, memoryLimit: 16 << 20) == Array("small".utf8))
    }

    @Test func invalidParametersAreRejected() {
        for (level, threads) in [(-1, 1), (10, 1), (1, 0)] {
            #expect(throws: XZError.self) {
                _ = try XZCompressor(level: level, threads: threads, downstream: CollectingSink())
            }
        }
    }

    @Test func memoryUsageIsBounded() throws {
        let one = try #require(XZCompressor.memoryUsage(level: 1, threads: 2))
        let six = try #require(XZCompressor.memoryUsage(level: 6, threads: 2))
        #expect(one < 40 << 20)
        #expect(six < 360 << 20)
        #expect(XZCompressor.memoryUsage(level: 10, threads: 2) == nil)
    }
}
