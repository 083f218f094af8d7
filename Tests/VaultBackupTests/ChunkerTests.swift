import Testing
import VaultCore
import VaultCrypto
import TestSupport
@testable import VaultBackup

/// The chunker vector of docs/FORMAT.md ("Backups: chunking"), the same
/// numbers scripts/reference/vault_chunker.py prints from the spec alone.
@Suite("Backup chunker")
struct ChunkerTests {
    /// SHA-256("vault chunker vector" || u32be(i)), i = 0, 1, ..., concatenated.
    static func input(_ length: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(length + 32)
        var i: UInt32 = 0
        while out.count < length {
            out += try SHA256.hash(Array("vault chunker vector".utf8) + withUnsafeBytes(of: i.bigEndian, Array.init))
            i += 1
        }
        return Array(out.prefix(length))
    }

    static func pieces(_ data: [UInt8]) -> [Int] {
        data.withUnsafeBytes { b in
            var out: [Int] = [], start = 0
            while start < b.count {
                let n = Chunker.cut(UnsafeRawBufferPointer(rebasing: b[start..<min(b.count, start + Chunker.maxSize)]))
                out.append(n)
                start += n
            }
            return out
        }
    }

    @Test func gearTable() throws {
        #expect(Chunker.gear.count == 256)
        #expect(Chunker.gear[0] == 0x1339bb293da4eabd)
        #expect(Chunker.gear[255] == 0x016772c6847a7e50)
        // Every entry as FORMAT.md defines it: the first 8 bytes, big-endian,
        // of SHA-256("vault gear v1" || i). The table is written out, so no
        // failure at run time can turn it into zeros.
        for i in 0...255 {
            let digest = try SHA256.hash(Array("vault gear v1".utf8) + [UInt8(i)])
            #expect(Chunker.gear[i] == digest.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }, "gear[\(i)]")
        }
        #expect(!Chunker.gear.contains(0))
    }

    @Test func vector() throws {
        let data = try Self.input(8 << 20)
        #expect(Hex.encode(try SHA256.hash(data)) == "a9cfb457e3128b1ca560dcc1ba04c0f6ea66805a30b581a7b90fbf0ede1243f0")
        #expect(Self.pieces(data) == [1180051, 1374432, 762753, 1286867, 1112585, 1058808, 1444336, 168776])
    }

    /// Cuts depend on content, not position: bytes put in front move only
    /// the first cut, and the pieces after it are the same.
    @Test func insertionMovesOnlyNearbyCuts() throws {
        let data = try Self.input(8 << 20)
        let before = Self.pieces(data), after = Self.pieces(Array("an insertion".utf8) + data)
        #expect(Array(before.suffix(before.count - 1)) == Array(after.suffix(after.count - 1)))
    }

    @Test func bounds() {
        #expect([UInt8](repeating: 0, count: 100).withUnsafeBytes { Chunker.cut($0) } == 100)
        // Whatever the content, every piece but the last is within bounds.
        let zeros = [UInt8](repeating: 0, count: 9 << 20)
        for n in Self.pieces(zeros).dropLast() { #expect(n >= Chunker.minSize && n <= Chunker.maxSize) }
    }

    static func bytes(_ n: Int, _ rng: inout SplitMix) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: n)
        for i in out.indices { out[i] = UInt8(truncatingIfNeeded: rng.next()) }
        return out
    }

    /// The spec's loop, one byte at a time from minSize: what the four
    /// lanes of `Chunker.firstBoundary` must find.
    static func firstBoundaryByTheSpec(_ data: [UInt8], _ a: Int, _ b: Int, _ mask: UInt64) -> Int? {
        var h: UInt64 = 0
        for i in Chunker.minSize..<b {
            h = (h &<< 1) &+ Chunker.gear[Int(data[i])]
            if i >= a && h & mask == 0 { return i }
        }
        return nil
    }

    /// The lanes find the first boundary in order, wherever lanes hit
    /// together: with masks of 6 to 16 bits, boundaries fall every 64 bytes
    /// to every 64 KiB, so a later lane often hits before an earlier one
    /// and the earlier one's rest must still be scanned. Windows start and
    /// end anywhere, the rounds' remainders and the 64-byte warm-up near
    /// minSize included.
    @Test func lanesFindTheFirstBoundaryInOrder() throws {
        var rng = SplitMix(state: 38)
        let data = Self.bytes(Chunker.minSize + 300_000, &rng)
        try data.withUnsafeBufferPointer { d in
            try Chunker.gear.withUnsafeBufferPointer { g in
                for round in 0..<400 {
                    let bits = 6 + round % 11
                    let mask = ~UInt64(0) << UInt64(64 - bits)
                    let a = Chunker.minSize + (round < 20 ? round : Int(rng.next() % 200_000))
                    let b = min(data.count, a + Int(rng.next() % UInt64(4 * Chunker.lane + 5_000)))
                    let found = Chunker.firstBoundary(d.baseAddress!, g.baseAddress!, a, b, mask)
                    try #require(found == Self.firstBoundaryByTheSpec(data, a, b, mask), "bits \(bits), \(a)..<\(b)")
                }
            }
        }
    }

    /// Rounds of zeros are passed over, and only they: random data (a
    /// boundary every 8 bytes to 64 KiB, masks of 3 to 16 bits) with runs
    /// of zeros of every length around a round (4 lanes) and the 64-byte
    /// window, windows starting and ending anywhere, against the spec.
    @Test func zeroRunsHoldNoBoundaryAndOnlyThemArePassedOver() throws {
        var rng = SplitMix(state: 52)
        var data = Self.bytes(Chunker.minSize + 1_700_000, &rng)
        // The first run covers minSize, where h starts from nothing.
        var at = Chunker.minSize - 100, starts: [Int] = []
        let round = 4 * Chunker.lane
        for run in [3 * round, 63, 64, 65, round - 1, round, round + 62, round + 63, round + 64, 2 * round + 17, 3 * round + 63, 5 * round] {
            for k in at..<(at + run) { data[k] = 0 }
            starts.append(at)
            at += run + 1 + Int(rng.next() % 3_000)
        }
        #expect(at < data.count)
        // Windows whose rounds start exactly where a run does, or just
        // after (the 63 bytes before a round must be zero too), then anywhere.
        var windows: [Int] = (0..<70).map { Chunker.minSize + $0 }
        for s in starts {
            for k in 0...2 { for d in [0, 1, 41, 45, 50, 62, 63, 64] where s + d - k * round >= Chunker.minSize { windows.append(s + d - k * round) } }
        }
        try data.withUnsafeBufferPointer { d in
            try Chunker.gear.withUnsafeBufferPointer { g in
                for r in 0..<(windows.count * 2 + 200) {
                    let bits = 3 + r % 14
                    let mask = ~UInt64(0) << UInt64(64 - bits)
                    let a = r < windows.count * 2 ? windows[r / 2] : Chunker.minSize + Int(rng.next() % UInt64(at - Chunker.minSize))
                    let b = min(data.count, a + (r % 2 == 0 ? 3 * round : Int(rng.next() % UInt64(4 * round))))
                    let found = Chunker.firstBoundary(d.baseAddress!, g.baseAddress!, a, b, mask)
                    try #require(found == Self.firstBoundaryByTheSpec(data, a, b, mask), "bits \(bits), \(a)..<\(b)")
                }
            }
        }
    }

    /// Whole cuts against the spec's loop on content of every kind: random,
    /// a few letters (boundaries in the first lanes), zeros (none: cut at
    /// maxSize), and lengths around minSize, averageSize and maxSize.
    @Test func cutsAreTheSpecs() throws {
        var rng = SplitMix(state: 45)
        let random = Self.bytes(6 << 20, &rng)
        let letters = random.map { 0x61 + $0 % 3 }
        let zeros = [UInt8](repeating: 0, count: 5 << 20)
        func byTheSpec(_ data: ArraySlice<UInt8>) -> Int {
            let d = Array(data), n = d.count
            if n <= Chunker.minSize { return n }
            let end = min(n, Chunker.maxSize)
            if let i = Self.firstBoundaryByTheSpec(d, Chunker.minSize, min(n, Chunker.averageSize), Chunker.hardMask) { return i + 1 }
            if let i = Self.firstBoundaryByTheSpec(d, min(n, Chunker.averageSize), end, Chunker.easyMask) { return i + 1 }
            return end
        }
        let sizes = [0, 1, Chunker.minSize, Chunker.minSize + 1, Chunker.minSize + 64, Chunker.minSize + 65,
                     Chunker.averageSize - 1, Chunker.averageSize, Chunker.averageSize + 1,
                     Chunker.maxSize - 1, Chunker.maxSize, Chunker.maxSize + 1, 5 << 20]
        // Letters (a boundary every few hundred bytes) with runs of zeros
        // of every length around a round (4 lanes of 16 KiB) and the
        // 64-byte window, at every alignment: what the chunker passes over
        // unscanned must hold no cut, and what follows a run must be scanned.
        var holes = letters
        var at = Chunker.minSize - 200
        for run in [63, 64, 65, 4 * Chunker.lane - 1, 4 * Chunker.lane, 4 * Chunker.lane + 63, 4 * Chunker.lane + 64,
                    3 * 4 * Chunker.lane + 17, 1 << 20, 2 << 20] where at + run < holes.count {
            for k in at..<(at + run) { holes[k] = 0 }
            at += run + 1 + Int(rng.next() % 70_000)
        }
        #expect(Chunker.zeroRun & Chunker.hardMask != 0 && Chunker.zeroRun & Chunker.easyMask != 0)
        #expect((Chunker.zeroRun &<< 1) &+ Chunker.gear[0] == Chunker.zeroRun)
        // A piece that starts in zeros and goes on in letters, the run
        // ending anywhere around a round's start, the 64-byte window and
        // the boundaries the letters put right after it.
        for end in [Chunker.minSize, Chunker.minSize + 63, Chunker.minSize + 64, Chunker.minSize + 4 * Chunker.lane,
                    Chunker.minSize + 4 * Chunker.lane + 1, Chunker.minSize + 4 * Chunker.lane + 62,
                    Chunker.minSize + 4 * Chunker.lane + 63, Chunker.minSize + 4 * Chunker.lane + 64,
                    Chunker.minSize + 9 * Chunker.lane + 5, Chunker.averageSize - 7, Chunker.averageSize + 3 * Chunker.lane] {
            let data = [UInt8](repeating: 0, count: end) + letters.prefix(2 << 20)
            try #require(data.withUnsafeBytes { Chunker.cut($0) } == byTheSpec(data[...]), "zeros to \(end), then letters")
        }
        for data in [random, letters, zeros, holes] {
            for n in sizes + (0..<(data == holes ? 60 : 12)).map({ _ in Int(rng.next() % UInt64(5 << 20)) }) {
                let start = Int(rng.next() % UInt64(data.count - min(n, data.count) + 1))
                let slice = data[start..<(start + min(n, data.count - start))]
                let got = slice.withUnsafeBytes { Chunker.cut($0) }
                try #require(got == byTheSpec(slice), "\(slice.count) bytes at \(start)")
            }
        }
    }
}
