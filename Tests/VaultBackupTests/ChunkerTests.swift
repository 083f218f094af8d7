import Testing
import VaultCore
import VaultCrypto
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
}
