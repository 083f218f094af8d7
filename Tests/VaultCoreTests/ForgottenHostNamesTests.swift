import Testing
@testable import VaultCore

/// The manifest's forgotten hosts (docs/FORMAT.md, "Manifest", version 7):
/// exact shape, the earlier time kept, and a bound past which the oldest go.
@Suite("Forgotten host names")
struct ForgottenHostNamesTests {
    static func name(_ b: UInt8) -> [UInt8] { [UInt8](repeating: b, count: 16) }
    static func be<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.bigEndian, Array.init) }

    /// An empty manifest's version 7 plaintext: no records, an empty
    /// history, no tombstones, no marks, then `forgotten`.
    static func plaintext(_ forgotten: [UInt8]) -> [UInt8] {
        be(UInt32(0)) + be(UInt16(0)) + be(UInt32(0)) + be(UInt32(0)) + forgotten
    }
    static func list(_ rows: [([UInt8], Int64)], count: UInt32? = nil) -> [UInt8] {
        be(count ?? UInt32(rows.count)) + rows.flatMap { $0.0 + be($0.1) }
    }
    static func parses(_ p: [UInt8], _ version: UInt8 = 7) -> ForgottenHostNames? {
        // Refused shapes are what is tested: nil says refused.
        try? p.withUnsafeBytes { try Manifest.parse(plaintext: $0, formatVersion: version) }.forgottenHosts
    }

    @Test func exactShape() {
        let ok = Self.parses(Self.plaintext(Self.list([(Self.name(1), 5), (Self.name(2), -1)])))
        #expect(ok?.names == [Self.name(1), Self.name(2)] && ok?.forgottenAt(Self.name(2)) == -1)
        #expect(Self.parses(Self.plaintext(Self.list([])))?.count == 0)
        #expect(Self.parses(Self.plaintext(Self.list([(Self.name(2), 5), (Self.name(1), 5)]))) == nil, "out of order")
        #expect(Self.parses(Self.plaintext(Self.list([(Self.name(1), 5), (Self.name(1), 6)]))) == nil, "twice")
        #expect(Self.parses(Self.plaintext(Self.list([(Self.name(1), 5)], count: 2))) == nil, "short")
        #expect(Self.parses(Self.plaintext(Self.list([], count: UInt32(ForgottenHostNames.maxCount + 1)))) == nil, "over the bound")
        #expect(Self.parses(Self.plaintext(Self.list([(Self.name(1), 5)]) + [0])) == nil, "a byte after it")
        #expect(Self.parses(Self.plaintext([])) == nil, "version 7 without the list")
        // Version 6 has no list: one there is a byte too many.
        #expect(Self.parses(Self.plaintext([]), 6)?.count == 0)
        #expect(Self.parses(Self.plaintext(Self.list([])), 6) == nil)
    }

    @Test func theEarlierTimeStaysAndTheOldestGoFirst() {
        var f = ForgottenHostNames()
        f.insert(Self.name(1), at: 30)
        f.insert(Self.name(1), at: 40)
        f.insert(Self.name(1), at: 20)
        #expect(f.forgottenAt(Self.name(1)) == 20 && f.count == 1)
        f.insert([1, 2, 3], at: 1)   // not a name: ignored
        #expect(f.count == 1)
        for i in 0..<ForgottenHostNames.maxCount {
            f.insert(Self.be(UInt64(1)) + Self.be(UInt64(i)), at: 100 + Int64(i))
        }
        #expect(f.count == ForgottenHostNames.maxCount)
        #expect(f.forgottenAt(Self.name(1)) == nil, "the oldest went")
        #expect(f.forgottenAt(Self.be(UInt64(1)) + Self.be(UInt64(0))) == 100)
    }
}
