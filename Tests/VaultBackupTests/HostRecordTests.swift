import ByteLayout
import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultBackup

/// Host records (docs/FORMAT.md, "Host records"): the vector read from
/// FORMAT.md itself (made with Python's `cryptography`, an independent
/// HKDF and AES-GCM), and what a host must refuse: another key's record,
/// a flipped bit, a list out of order, bytes after the end, a record
/// sealed by whoever holds the key but of the wrong shape.
@Suite("Host records")
struct HostRecordTests {
    static func published() throws -> (name: String, record: [UInt8]) {
        let (name, bytes) = try SealedToAHost.published("### Host records", "record")
        return (name, bytes)
    }

    static let vaultID = SealedToAHost.vaultID
    static func key(_ first: UInt8 = 0) throws -> PieceKey { try SealedToAHost.key(first) }
    static let sample = HostRecord(generation: 7, taken: [Array(0xa0...0xaf)], usable: [Array(0xb0...0xbf), [UInt8](repeating: 0xb1, count: 16)],
                                   gone: [Array(0xc0...0xcf)])

    @Test func theVector() throws {
        let (name, record) = try Self.published()
        #expect(try HostRecord.name(key: Self.key(), vaultID: Self.vaultID) == name)
        #expect(try Self.sample.seal(key: Self.key(), vaultID: Self.vaultID, nonce: (0x60..<0x6c).map { UInt8($0) }) == record)
        #expect(try HostRecord.open(record, key: Self.key(), vaultID: Self.vaultID) == Self.sample)
    }

    @Test func whatAHostRefuses() throws {
        let record = try Self.published().record
        // Another host's key, another vault, any flipped bit, a cut.
        #expect(throws: BackupError.hostRecordRefused) { try HostRecord.open(record, key: Self.key(1), vaultID: Self.vaultID) }
        #expect(throws: BackupError.hostRecordRefused) { try HostRecord.open(record, key: Self.key(), vaultID: [UInt8](repeating: 0, count: 16)) }
        for i in stride(from: 0, to: record.count, by: 7) {
            var bad = record
            bad[i] ^= 0x01
            #expect(throws: BackupError.hostRecordRefused) { try HostRecord.open(bad, key: Self.key(), vaultID: Self.vaultID) }
        }
        #expect(throws: BackupError.hostRecordRefused) { try HostRecord.open(Array(record.dropLast()), key: Self.key(), vaultID: Self.vaultID) }
    }

    /// Sealed under the host's own key (as the owner, or whoever holds it,
    /// would), but of a shape the format forbids: past the tag, refused.
    @Test func shapesPastTheTag() throws {
        func sealed(_ plain: [UInt8]) throws -> [UInt8] {
            let nonce = [UInt8](repeating: 9, count: 12)
            let aead = try AEAD(.aes256GCM, key: try HostRecord.derive(Self.key(), Self.vaultID, "vault host record key", 32))
            let name = try HostRecord.name(key: Self.key(), vaultID: Self.vaultID)
            return HostRecord.magic + nonce + (try aead.seal(nonce: nonce, aad: HostRecord.aad(Self.vaultID, name), plaintext: plain))
        }
        func list(_ ids: [[UInt8]]) -> [UInt8] { ByteWriter.bigEndian(UInt32(ids.count)) + ids.flatMap { $0 } }
        let a = [UInt8](repeating: 1, count: 16), b = [UInt8](repeating: 2, count: 16)
        let generation = ByteWriter.bigEndian(UInt64(1))
        let good = generation + list([a, b]) + list([]) + list([])
        #expect(try HostRecord.open(sealed(good), key: Self.key(), vaultID: Self.vaultID).taken == [a, b])
        for bad in [generation + list([b, a]) + list([]) + list([]),       // out of order
                    generation + list([a, a]) + list([]) + list([]),       // twice
                    good + [0],                                            // a byte after
                    generation + ByteWriter.bigEndian(UInt32.max) + a,     // a count past the end
                    Array(good.dropLast(4))] {                             // a list missing
            #expect(throws: BackupError.hostRecordRefused) { try HostRecord.open(sealed(bad), key: Self.key(), vaultID: Self.vaultID) }
        }
    }
}
