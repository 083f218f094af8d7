import Foundation
import Testing
@testable import VaultCrypto
@testable import VaultCore

/// The version-3 header vector of docs/FORMAT.md ("Test vector: a version-3
/// header"), read from FORMAT.md itself, and the checksum's one job: a
/// damaged version-3 header is `headerDamaged` before any KDF, never a wrong
/// password. The inputs are the hybrid vector's (HybridVectorTests).
@Suite("Version-3 header")
struct HeaderV3VectorTests {
    typealias V = VaultVectorTests
    static let section = "## Test vector: a version-3 header"

    static func kek() throws -> KeyEncryptionKey {
        try KeyEncryptionKey.derive(password: V.secret(Array(V.password.utf8)), salt: V.salt, parameters: V.kdf)
    }

    static func header(version: UInt8, counter: UInt64 = 1) throws -> VaultHeader {
        try VaultHeader.seal(vaultID: V.vaultID, options: [], masterKey: MasterKey(secret: V.secret(V.vmk)),
                             slotName: "password", kdf: V.kdf, salt: V.salt, kek: kek(),
                             created: HybridVectorTests.created, nonce: V.wrapNonce, counter: counter, version: version)
    }

    @Test func publishedVectorMatches() throws {
        let h = try Self.header(version: 3)
        let got = ["vault.header": Hex.encode(h.bytes), "header checksum": Hex.encode(Array(h.bytes.suffix(32)))]
        if ProcessInfo.processInfo.environment["VAULT_PRINT_VECTORS"] != nil {
            for (k, v) in got.sorted(by: { $0.key < $1.key }) { print("VECTOR3 \(k) = \(v)") }
        }
        let published = try HybridVectorTests.published(section: Self.section)
        #expect(Set(published.keys) == Set(got.keys), "FORMAT.md names \(published.keys.sorted())")
        for (k, v) in got { #expect(published[k] == v, "vector \(k)") }
    }

    /// Version 3 is version 2's bytes with 0x03, a new MAC and the checksum:
    /// the slot is the same bytes (its wrap AAD keeps 0x02), and it opens.
    @Test func theVectorOpensAndKeepsTheSlotBytes() throws {
        let v3 = try Self.header(version: 3), v2 = try Self.header(version: 2)
        let parsed = try VaultHeader(parsing: v3.bytes)
        #expect(parsed.version == 3 && parsed.bytes.count == v2.bytes.count + 32 && parsed.bytes[8] == 3)
        #expect(Array(v3.bytes[9..<(v3.bytes.count - 64)]) == Array(v2.bytes[9..<(v2.bytes.count - 32)]))
        #expect(parsed.slots == v2.slots && parsed.mac != v2.mac)
        let checksumInput = Array("vault v3 header checksum".utf8) + Array(v3.bytes.dropLast(32))
        #expect(Array(v3.bytes.suffix(32)) == (try SHA256.hash(checksumInput)))
        #expect(try parsed.unlock(kek: Self.kek()).secret == MasterKey(secret: V.secret(V.vmk)).secret)
        #expect(VaultHeader.maxLength == 2_654 && VaultHeader.currentVersion == 4)
    }

    /// Any one flipped bit after the version byte, any truncation and any
    /// appended byte is damage, found by the parser alone (no KDF, no key).
    @Test func everyAccidentalChangeIsDamage() throws {
        let b = try Self.header(version: 3).bytes
        for i in 9..<b.count {
            var edited = b
            edited[i] ^= UInt8(1) << UInt8(i % 8)
            #expect(throws: VaultError.headerDamaged, "byte \(i)") { try VaultHeader(parsing: edited) }
        }
        for n in [1, 31, 32, 33, 64, 100, b.count - 9] {
            #expect(throws: VaultError.headerDamaged, "cut \(n)") { try VaultHeader(parsing: Array(b.dropLast(n))) }
        }
        #expect(throws: VaultError.headerDamaged) { try VaultHeader(parsing: b + [0]) }
        #expect(throws: VaultError.headerDamaged) { try VaultHeader(parsing: b + b) }
    }

    /// The checksum is not authentication: an edit with the checksum
    /// recomputed parses or not, but never opens (slot tag or MAC); dropping
    /// the checksum and relabelling the header as version 2 fails the MAC.
    @Test func aRecomputedChecksumDoesNotAuthenticate() throws {
        let b = try Self.header(version: 3).bytes
        let kek = try Self.kek()
        func resum(_ body: [UInt8]) throws -> [UInt8] { body + (try VaultHeader.checksum(of: body)) }
        for i in stride(from: 9, to: b.count - 32, by: 11) {
            var body = Array(b.dropLast(32))
            body[i] ^= 0x20
            guard let parsed = try? VaultHeader(parsing: try resum(body)) else { continue }
            #expect(throws: VaultError.self, "byte \(i)") { try parsed.unlock(kek: kek) }
        }
        var downgraded = Array(b.dropLast(32))
        downgraded[8] = 2
        let v2 = try VaultHeader(parsing: downgraded)
        #expect(throws: VaultError.corruptedOrTampered) { try v2.unlock(kek: kek) }
        // A shape error behind a good checksum is tampering, not damage.
        var badCount = Array(b.dropLast(32))
        badCount[VaultHeader.v2FixedLength - 1] = 9
        #expect(throws: VaultError.corruptedOrTampered) { try VaultHeader(parsing: try resum(badCount)) }
    }
}
