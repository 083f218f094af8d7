import Foundation
import Testing
@testable import VaultCrypto
@testable import VaultCore

/// The version-4 header vector of docs/FORMAT.md ("Test vector: a version-4
/// header"), read from FORMAT.md itself, and what the counter is for: it is
/// authenticated (an edit or a downgrade to version 3 fails the MAC), and
/// every header written replaces one with the counter one higher.
@Suite("Version-4 header")
struct HeaderV4VectorTests {
    typealias V3 = HeaderV3VectorTests
    static let section = "## Test vector: a version-4 header"
    static let counter: UInt64 = 0x0102_0304_0506_0708

    @Test func publishedVectorMatches() throws {
        let h = try V3.header(version: 4, counter: Self.counter)
        let n = h.bytes.count
        let got = ["vault.header": Hex.encode(h.bytes), "header counter": Hex.encode(Array(h.bytes[(n - 72)..<(n - 64)]))]
        if ProcessInfo.processInfo.environment["VAULT_PRINT_VECTORS"] != nil {
            for (k, v) in got.sorted(by: { $0.key < $1.key }) { print("VECTOR4 \(k) = \(v)") }
        }
        let published = try HybridVectorTests.published(section: Self.section)
        #expect(Set(published.keys) == Set(got.keys), "FORMAT.md names \(published.keys.sorted())")
        for (k, v) in got { #expect(published[k] == v, "vector \(k)") }
    }

    /// Version 4 is version 3's bytes with 0x04 and the counter between the
    /// slots and the MAC; it opens, and the parser reads the counter.
    @Test func theVectorOpensWithItsCounter() throws {
        let v4 = try V3.header(version: 4, counter: Self.counter), v3 = try V3.header(version: 3)
        let parsed = try VaultHeader(parsing: v4.bytes)
        #expect(parsed.version == 4 && parsed.counter == Self.counter && parsed.bytes.count == v3.bytes.count + 8)
        #expect(Array(v4.bytes[9..<(v4.bytes.count - 72)]) == Array(v3.bytes[9..<(v3.bytes.count - 64)]))
        #expect(parsed.slots == v3.slots && v3.counter == 0)
        #expect(try parsed.unlock(kek: V3.kek()).secret == MasterKey(secret: VaultVectorTests.secret(VaultVectorTests.vmk)).secret)
    }

    /// The counter is under the MAC: a counter edited (checksum recomputed),
    /// or the header relabelled version 3 without its counter, parses but
    /// does not open.
    @Test func theCounterCannotBeForgedOrDropped() throws {
        let b = try V3.header(version: 4, counter: 5).bytes
        let kek = try V3.kek()
        func resum(_ body: [UInt8]) throws -> [UInt8] { body + (try VaultHeader.checksum(of: body)) }
        var raised = Array(b.dropLast(32))
        raised[raised.count - 33] = 6
        let forged = try VaultHeader(parsing: try resum(raised))
        #expect(forged.counter == 6)
        #expect(throws: VaultError.corruptedOrTampered) { try forged.unlock(kek: kek) }
        var v3 = Array(b.dropLast(32))
        v3.removeSubrange((v3.count - 40)..<(v3.count - 32))
        v3[8] = 3
        let downgraded = try VaultHeader(parsing: try resum(v3))
        #expect(downgraded.version == 3 && downgraded.counter == 0)
        #expect(throws: VaultError.corruptedOrTampered) { try downgraded.unlock(kek: kek) }
        for n in [1, 8, 40] {
            #expect(throws: VaultError.headerDamaged) { try VaultHeader(parsing: Array(b.dropLast(n))) }
        }
    }

    /// Every header written replaces one with the counter one higher; a
    /// version-3 header counts as 0.
    @Test func replacingSlotsCountsUp() throws {
        let key = try MasterKey(secret: VaultVectorTests.secret(VaultVectorTests.vmk))
        let v3 = try V3.header(version: 3)
        let next = try v3.replacingSlots(v3.slots, masterKey: key)
        #expect(next.version == 4 && next.counter == 1)
        let after = try next.replacingSlots(next.slots, masterKey: key)
        #expect(after.counter == 2 && after.slots == v3.slots)
    }
}
