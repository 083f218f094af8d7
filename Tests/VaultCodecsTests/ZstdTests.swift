import Foundation
import Testing
@testable import VaultCodecs

/// zstd content (docs/FORMAT.md, "Compressed content"): round trips at the
/// block boundaries, auto mode's raw blocks, the format's vectors, `zstd -d`
/// reading what vault writes, and the decoder's refusals.
@Suite("zstd")
struct ZstdTests {
    static let B = ZstdCompressor.blockSize
    static let text: [UInt8] = { var g = TestBytes(seed: 11); return g.text(2 * B + 12_345) }()
    static let random: [UInt8] = { var g = TestBytes(seed: 12); return g.random(2 * B + 999) }()

    static func compress(_ content: [UInt8], level: Int = 3, adaptive: Bool = true, threads: Int = 2,
                         writeSize: Int? = nil) throws -> (bytes: [UInt8], compressor: ZstdCompressor) {
        let sink = CollectingSink()
        let c = try ZstdCompressor(level: level, adaptive: adaptive, threads: threads, downstream: sink)
        try content.withUnsafeBytes { all in
            let step = writeSize ?? max(1, all.count)
            var at = 0
            repeat {
                let n = min(step, all.count - at)
                try c.write(UnsafeRawBufferPointer(rebasing: all[at..<at + n]))
                at += n
            } while at < all.count
        }
        try c.finish()
        return (sink.bytes, c)
    }

    static func decompress(_ stream: [UInt8], step: Int = 1 << 16, readSize: Int = 1 << 20) throws -> [UInt8] {
        let d = try ZstdDecompressor(upstream: ArrayStream(stream, step: step))
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: readSize)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try d.read(into: $0) }
            if n == 0 { return out }
            out += buffer[..<n]
        }
    }

    @Test(arguments: [0, 1, B - 1, B, B + 1, 2 * B + 7])
    func roundTripsAtBlockBoundaries(_ count: Int) throws {
        let content = Array(Self.text.prefix(count))
        for threads in [1, 2] {
            let (stream, c) = try Self.compress(content, threads: threads)
            #expect(try Self.decompress(stream) == content)
            #expect(c.bytesIn == UInt64(count) && c.bytesOut == UInt64(stream.count))
            if count > 1000 { #expect(stream.count < count / 2) }
        }
    }

    @Test func smallWritesMakeTheSameStreamAsOneLargeWrite() throws {
        let content = Array(Self.text.prefix(Self.B + 5000))
        #expect(try Self.compress(content, writeSize: 777).bytes == Self.compress(content).bytes)
        #expect(try Self.compress(content, threads: 1).bytes == Self.compress(content, threads: 2).bytes)
    }

    /// Compressors hand their contexts on to later ones (ZstdCompressor's
    /// `idle`): a context used at another level, or on other content, must
    /// not change what a later compressor writes.
    @Test func keptContextsCarryNothingFromOneCompressorToTheNext() throws {
        let small = Array(Self.text.prefix(7000)), large = Array(Self.text.prefix(Self.B + 3000))
        let first = try Self.compress(small, level: 19).bytes
        let firstLarge = try Self.compress(large, level: 3).bytes
        for _ in 0..<2 {
            _ = try Self.compress(Self.random, level: 3)
            _ = try Self.compress(large, level: 6, adaptive: false)
            #expect(try Self.compress(small, level: 19).bytes == first)
            #expect(try Self.compress(large, level: 3).bytes == firstLarge)
        }
        #expect(try Self.decompress(first) == small)
    }

    @Test func autoStoresRandomBlocksRawAndCompressesText() throws {
        let (raw, c) = try Self.compress(Self.random)
        // The two full blocks are raw frames; the 999-byte tail may go either
        // way (too short a sample to be sure), never more than a few bytes over.
        #expect(c.rawBlocks >= 2)
        #expect(raw.count <= 2 * RawFrame.length(of: Self.B) + RawFrame.length(of: 999))
        #expect(try Self.decompress(raw) == Self.random)
        // One text block, one random block: only the random one is raw.
        let mixed = Array(Self.text.prefix(Self.B)) + Array(Self.random.prefix(Self.B))
        let (stream, m) = try Self.compress(mixed)
        #expect(m.rawBlocks == 1 && stream.count < Self.B + Self.B / 2)
        #expect(try Self.decompress(stream) == mixed)
        // Not adaptive: random data still goes through the compressor.
        #expect(try Self.compress(Self.random, adaptive: false).compressor.rawBlocks == 0)
    }

    @Test func probeSeesEntropy() {
        func incompressible(_ b: [UInt8]) -> Bool { b.withUnsafeBytes { CompressionProbe.looksIncompressible($0) } }
        #expect(incompressible(Array(Self.random.prefix(Self.B))))
        #expect(incompressible(Array(Self.random.prefix(10_000))))
        #expect(!incompressible(Array(Self.text.prefix(Self.B))))
        #expect(!incompressible([]))
        // Base64 of random bytes: 6 bits a byte, worth a try.
        #expect(!incompressible(Array(Data(Self.random.prefix(3 << 20)).base64EncodedData())))
    }

    /// The probe counts into four tables (speed); its verdict is the one
    /// order-0 entropy of the same windows, counted plainly, gives: sizes
    /// with 1 to 3 bytes past a multiple of four, around the entropy
    /// threshold (random bytes from 2,000 on), and past the windows' total.
    @Test(arguments: [nil, 4096, 6000])
    func probeCountsEveryByteOnce(sample: Int?) {
        let sample = sample ?? CompressionProbe.windowSize * CompressionProbe.windowCount
        func reference(_ b: [UInt8]) -> Bool {
            let (size, count) = (sample / CompressionProbe.windowCount, CompressionProbe.windowCount)
            var windows: [ArraySlice<UInt8>] = [b[...]]
            if b.count > size * count {
                let stride = (b.count - size) / (count - 1)
                windows = (0..<count).map { b[($0 * stride)..<($0 * stride + size)] }
            }
            var counts = [Int](repeating: 0, count: 256)
            for w in windows { for byte in w { counts[Int(byte)] += 1 } }
            let n = Double(windows.reduce(0) { $0 + $1.count })
            let h = counts.reduce(0.0) { h, c in c == 0 ? h : h - Double(c) / n * log2(Double(c) / n) }
            return h > CompressionProbe.clearlyIncompressible
        }
        var verdicts = Set<Bool>()
        for size in [1, 2, 3, 5, 255, 1_999, 2_001, 2_003, 4_097, 30_001, 65_535, 65_537, 70_003, 1 << 20] {
            for source in [Self.random, Self.text] {
                let b = Array(source.prefix(size))
                let probe = b.withUnsafeBytes { CompressionProbe.looksIncompressible($0, sample: sample) }
                #expect(probe == reference(b), "\(size) bytes")
                verdicts.insert(probe)
            }
        }
        #expect(verdicts == [true, false])
        // Around the shortcut: 223 byte values, evenly, are log2(223) ≈
        // 7.8009 bits a byte (above); 222 are 7.794 (below, no logarithm taken).
        for (kinds, above) in [(223, true), (222, false)] {
            let b = (0..<(kinds * 40)).map { UInt8($0 % kinds) }
            #expect(b.withUnsafeBytes { CompressionProbe.looksIncompressible($0, sample: sample) } == above && reference(b) == above, "\(kinds)")
        }
    }

    /// A piece's sample: a sixteenth of it, 4 KiB to 64 KiB; random bytes
    /// still look incompressible from the least of it, text does not.
    @Test func aPiecesSampleIsASixteenthWithinBounds() {
        #expect(CompressionProbe.pieceSample(10_000) == 4096)
        #expect(CompressionProbe.pieceSample(160_000) == 10_000)
        #expect(CompressionProbe.pieceSample(1 << 20) == 65_536)
        #expect(CompressionProbe.pieceSample(8 << 20) == 65_536)
        for size in [4_097, 20_000, 70_000, 1 << 20] {
            let random = Array(Self.random.prefix(size)), text = Array(Self.text.prefix(size))
            let sample = CompressionProbe.pieceSample(size)
            #expect(random.withUnsafeBytes { CompressionProbe.looksIncompressible($0, sample: sample) }, "\(size)")
            #expect(!text.withUnsafeBytes { CompressionProbe.looksIncompressible($0, sample: sample) }, "\(size)")
        }
    }

    @Test func rawFrameVector() throws {
        var out = [UInt8](repeating: 0, count: RawFrame.length(of: 12))
        let n = Array("hello, vault".utf8).withUnsafeBytes { c in out.withUnsafeMutableBytes { RawFrame.write(c, into: $0) } }
        #expect(n == 24 && hex(out) == "28b52ffda00c000000610000" + hex(Array("hello, vault".utf8)))
        var empty = [UInt8](repeating: 0, count: RawFrame.length(of: 0))
        _ = [UInt8]().withUnsafeBytes { c in empty.withUnsafeMutableBytes { RawFrame.write(c, into: $0) } }
        #expect(hex(empty) == "28b52ffda000000000010000")
        #expect(try Self.decompress(empty) == [])
        // A raw frame of several 128 KiB blocks.
        let content = Array(Self.random.prefix(300_000))
        var big = [UInt8](repeating: 0, count: RawFrame.length(of: content.count))
        _ = content.withUnsafeBytes { c in big.withUnsafeMutableBytes { RawFrame.write(c, into: $0) } }
        #expect(try Self.decompress(big) == content)
    }

    @Test func compressedFrameVector() throws {
        let frame = try #require(bytes(hex: "28b52ffd601404a500006868656c6c6f2c207661756c740a010004c13fbf"))
        let text = Array(String(repeating: "hello, vault\n", count: 100).utf8)
        #expect(try Self.decompress(frame) == text)
        // What this libzstd writes at level 3 (the vector was made with libzstd 1.5.4).
        #expect(try Self.compress(text).bytes == frame)
    }

    @Test func zstdCommandReadsWhatVaultWrites() throws {
        let content = Array(Self.text.prefix(Self.B + 100)) + Array(Self.random.prefix(Self.B + 100))
        let stream = try Self.compress(content).bytes
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("zstd-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(stream).write(to: dir.appendingPathComponent("in.zst"))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/zstd")
        p.arguments = ["-d", "-q", "-f", dir.appendingPathComponent("in.zst").path, "-o", dir.appendingPathComponent("out").path]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(try Data(contentsOf: dir.appendingPathComponent("out")) == Data(content))
    }

    @Test func tinyReadsAndOneByteInputStillDecode() throws {
        let content = Array(Self.text.prefix(50_000))
        let stream = try Self.compress(content).bytes
        #expect(try Self.decompress(stream, step: 1, readSize: 7) == content)
        #expect(try Self.decompress(stream, step: 1 << 20, readSize: 1) == content)
    }

    @Test func refusesWhatIsNotWholeFrames() throws {
        let stream = try Self.compress(Array(Self.text.prefix(100_000))).bytes
        #expect(throws: ZstdError.truncated) { try Self.decompress([]) }
        #expect(throws: ZstdError.truncated) { try Self.decompress(Array(stream.dropLast(1))) }
        #expect(throws: ZstdError.truncated) { try Self.decompress(Array(stream.prefix(6))) }
        #expect(throws: ZstdError.notZstd) { try Self.decompress(stream + [0, 0, 0, 0, 1]) }
        #expect(throws: ZstdError.notZstd) { try Self.decompress(Array("not zstd at all".utf8)) }
        // (A flipped byte inside a frame may decode to other bytes: frames
        // carry no checksum, the item cipher is what authenticates them.)
    }

    @Test func refusesAWindowAboveTheLimitBeforeAllocating() throws {
        // No content size; window descriptor 0xa0 = 2^30 bytes; one raw last block.
        let frame: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa0, 0x21, 0x00, 0x00] + Array("tiny".utf8)
        #expect(throws: ZstdError.windowTooLarge) { try Self.decompress(frame) }
        // The same frame asking for 2^23 (descriptor 0x68) is within the limit.
        var fits = frame
        fits[5] = 0x68
        #expect(try Self.decompress(fits) == Array("tiny".utf8))
    }

    @Test func levelsAndThreadsAreChecked() {
        #expect(throws: ZstdError.self) { try ZstdCompressor(level: 0, adaptive: true, threads: 1, downstream: CollectingSink()) }
        #expect(throws: ZstdError.self) { try ZstdCompressor(level: 20, adaptive: true, threads: 1, downstream: CollectingSink()) }
        #expect(throws: ZstdError.self) { try ZstdCompressor(level: 3, adaptive: true, threads: 0, downstream: CollectingSink()) }
    }

    @Test func compressionModesParse() {
        #expect(Compression(parsing: "auto") == .auto)
        #expect(Compression(parsing: "off") == Compression.none)
        #expect(Compression(parsing: "max") == .xz(level: 6))
        #expect(Compression(parsing: "zstd") == .zstd(level: 3))
        #expect(Compression(parsing: "zstd:19") == .zstd(level: 19))
        #expect(Compression(parsing: "xz:0") == .xz(level: 0))
        for bad in ["", "zstd:0", "zstd:20", "xz:10", "xz:", "auto:1", "gzip", "zstd:x"] {
            #expect(Compression(parsing: bad) == nil, "\(bad)")
        }
    }
}

private func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
private func bytes(hex: String) -> [UInt8]? {
    var out: [UInt8] = []
    var i = hex.startIndex
    while i < hex.endIndex {
        let j = hex.index(i, offsetBy: 2)
        guard let b = UInt8(hex[i..<j], radix: 16) else { return nil }
        out.append(b)
        i = j
    }
    return out
}
