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
        for data in [random, letters, zeros] {
            for n in sizes + (0..<12).map({ _ in Int(rng.next() % UInt64(5 << 20)) }) {
                let start = Int(rng.next() % UInt64(data.count - min(n, data.count) + 1))
                let slice = data[start..<(start + min(n, data.count - start))]
                let got = slice.withUnsafeBytes { Chunker.cut($0) }
                try #require(got == byTheSpec(slice), "\(slice.count) bytes at \(start)")
            }
        }
    }
}
