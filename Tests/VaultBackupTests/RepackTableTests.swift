import ByteLayout
import Foundation
import Testing
import VaultCore
@testable import VaultBackup

/// The repack table of docs/FORMAT.md ("Backups: repacking"): the vector
/// read from FORMAT.md itself, and every shape a reader must refuse.
@Suite("Backup repack table")
struct RepackTableTests {
    static func published() throws -> (table: [UInt8], places: String) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/FORMAT.md"), encoding: .utf8)
        let section = try #require(text.range(of: "### Repacking"))
        let table = try #require(text[section.upperBound...].firstMatch(of: /(?m)^    table  = ([0-9a-f]+)/))
        let places = try #require(text[section.upperBound...].firstMatch(of: /(?m)^    places = (.+)$/))
        return (try #require(Hex.decode(String(table.output.1))), String(places.output.1))
    }

    /// Parses a whole table (header included) for a content of `length`.
    static func parse(_ bytes: [UInt8], contentLength: UInt64) -> RepackTable? {
        guard bytes.count >= RepackTable.fixedLength else { return nil }
        var r = ByteReader(bytes)
        guard (try? r.expect(RepackTable.magic)) != nil, let pack = try? r.bytes(16), let count = try? r.u32(),
              count >= 1, bytes.count == RepackTable.fixedLength + Int(count) * RepackTable.rangeLength else { return nil }
        return RepackTable.parse(pack: pack, table: Array(bytes[RepackTable.fixedLength...]),
                                 tableEnd: UInt64(bytes.count), contentLength: contentLength)
    }

    @Test func theVector() throws {
        let v = try Self.published()
        let pack = Array(UInt8(1)...16)
        #expect(RepackTable.encode(pack: pack, ranges: [(4096, 37), (10000, 5)]) == v.table)
        let t = try #require(Self.parse(v.table, contentLength: 102))
        #expect(t.pack == pack)
        #expect(t.place(4096, 37) == 60 && v.places.contains("offset 4096 stored 37 at 60"))
        #expect(t.place(10002, 3) == 99 && v.places.contains("offset 10002 stored 3 at 99"))
        #expect(t.place(4096, 38) == nil && v.places.contains("offset 4096 stored 38: none"))
        #expect(t.place(4095, 1) == nil && t.place(4133, 1) == nil && t.place(10005, 1) == nil && t.place(0, 0) == nil)
        #expect(t.place(10004, 1) == 101 && t.place(4133, 0) == 97)
    }

    @Test func shapesAReaderRefuses() {
        let pack = Array(UInt8(1)...16)
        func content(_ ranges: [(UInt64, UInt64)]) -> (bytes: [UInt8], length: UInt64) {
            let table = RepackTable.encode(pack: pack, ranges: ranges.map { (old: $0.0, length: $0.1) })
            let data = ranges.reduce(UInt64(0)) { $0 &+ $1.1 }
            return (table, UInt64(table.count) &+ data)
        }
        let good = content([(0, 10), (11, 5)])
        #expect(Self.parse(good.bytes, contentLength: good.length) != nil)
        #expect(Self.parse(good.bytes, contentLength: good.length + 1) == nil, "bytes after the ranges")
        #expect(Self.parse(good.bytes, contentLength: good.length - 1) == nil, "ranges longer than the content")
        for bad in [[(0, 10), (10, 5)], [(0, 10), (5, 5)], [(11, 5), (0, 10)], [(0, 0)], [(UInt64.max, 2)]] as [[(UInt64, UInt64)]] {
            let c = content(bad)
            #expect(Self.parse(c.bytes, contentLength: c.length) == nil, "\(bad)")
        }
        let huge = content([(0, UInt64.max), (UInt64.max, 1)])
        #expect(Self.parse(huge.bytes, contentLength: huge.length) == nil, "lengths that overflow")
        var noRanges = ByteWriter()
        noRanges.bytes(RepackTable.magic)
        noRanges.bytes(pack)
        noRanges.u32(0)
        #expect(Self.parse(noRanges.bytes, contentLength: 28) == nil)
    }

    @Test func joiningRanges() {
        let j = RepackTable.joined([(20, 5), (0, 10), (10, 3), (5, 2), (30, 0), (22, 10)])
        #expect(j.map { [$0.old, $0.length] } == [[0, 13], [20, 12]])
    }
}
