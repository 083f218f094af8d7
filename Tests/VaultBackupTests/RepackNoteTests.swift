import ByteLayout
import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultBackup

/// Repack notes (docs/FORMAT.md, "Repack notes"): the vector read from
/// FORMAT.md itself (made with Python's `cryptography`), and what a backup
/// must refuse: another key's note, a flipped bit, a cut, and notes sealed
/// under the right key but of a shape the format forbids (past the tag).
@Suite("Repack notes")
struct RepackNoteTests {
    static func published() throws -> (name: String, note: [UInt8]) {
        let (name, bytes) = try SealedToAHost.published("### Repack notes", "note")
        return (name, bytes)
    }

    static let vaultID = SealedToAHost.vaultID
    static func key(_ first: UInt8 = 0) throws -> PieceKey { try SealedToAHost.key(first) }
    static let sample = RepackNote(generation: 7, entries: [
        .init(pack: Array(0xc0...0xcf), blob: Array(0xd0...0xdf), ranges: [(0, 1_048_576)]),
        .init(pack: Array(0xa0...0xaf), blob: Array(0xb0...0xbf), ranges: [(4096, 37), (10000, 5)]),
    ])

    @Test func theVector() throws {
        let (name, note) = try Self.published()
        #expect(try RepackNote.name(key: Self.key(), vaultID: Self.vaultID) == name)
        #expect(try Self.sample.seal(key: Self.key(), vaultID: Self.vaultID, nonce: (0x60..<0x6c).map { UInt8($0) }) == note)
        let opened = try RepackNote.open(note, key: Self.key(), vaultID: Self.vaultID)
        #expect(opened == Self.sample)
        // What a backup keeps of the first entry: a piece whole in a range.
        let table = opened.entries[0].table
        #expect(table.place(4096, 37) != nil && table.place(4100, 33) != nil && table.place(10002, 3) != nil)
        #expect(table.place(4096, 38) == nil && table.place(4095, 2) == nil && table.place(5000, 1) == nil)
    }

    @Test func whatABackupRefuses() throws {
        let note = try Self.published().note
        #expect(throws: BackupError.invalidCache) { try RepackNote.open(note, key: Self.key(1), vaultID: Self.vaultID) }
        #expect(throws: BackupError.invalidCache) { try RepackNote.open(note, key: Self.key(), vaultID: [UInt8](repeating: 0, count: 16)) }
        for i in stride(from: 0, to: note.count, by: 5) {
            var bad = note
            bad[i] ^= 0x01
            #expect(throws: BackupError.invalidCache) { try RepackNote.open(bad, key: Self.key(), vaultID: Self.vaultID) }
        }
        #expect(throws: BackupError.invalidCache) { try RepackNote.open(Array(note.dropLast()), key: Self.key(), vaultID: Self.vaultID) }
        // A host record sealed under the same key is not a note (its own label and magic).
        let record = try HostRecord(generation: 1, taken: [], usable: [], gone: []).seal(key: Self.key(), vaultID: Self.vaultID)
        #expect(throws: BackupError.invalidCache) { try RepackNote.open(record, key: Self.key(), vaultID: Self.vaultID) }
    }

    /// Sealed under the host's own key (as the owner, or whoever holds it,
    /// would), but of a shape the format forbids: past the tag, refused.
    @Test func shapesPastTheTag() throws {
        func sealed(_ plain: [UInt8]) throws -> [UInt8] {
            let nonce = [UInt8](repeating: 9, count: 12)
            let name = try RepackNote.name(key: Self.key(), vaultID: Self.vaultID)
            return RepackNote.magic + nonce + (try RepackNote.aead(Self.key(), Self.vaultID).seal(nonce: nonce, aad: RepackNote.aad(Self.vaultID, name), plaintext: plain))
        }
        func u32(_ v: Int) -> [UInt8] { ByteWriter.bigEndian(UInt32(v)) }
        func range(_ old: UInt64, _ length: UInt64) -> [UInt8] { ByteWriter.bigEndian(old) + ByteWriter.bigEndian(length) }
        let a = [UInt8](repeating: 1, count: 16), b = [UInt8](repeating: 2, count: 16), blob = [UInt8](repeating: 3, count: 16)
        let generation = ByteWriter.bigEndian(UInt64(1))
        func entry(_ pack: [UInt8], _ ranges: [[UInt8]]) -> [UInt8] { pack + blob + u32(ranges.count) + ranges.flatMap { $0 } }
        let good = generation + u32(2) + entry(a, [range(0, 10), range(11, 5)]) + entry(b, [range(0, 1)])
        #expect(try RepackNote.open(sealed(good), key: Self.key(), vaultID: Self.vaultID).entries.map(\.pack) == [a, b])
        #expect(try RepackNote.open(sealed(generation + u32(0)), key: Self.key(), vaultID: Self.vaultID).entries.isEmpty)
        for bad in [generation + u32(2) + entry(b, [range(0, 1)]) + entry(a, [range(0, 1)]),   // packs out of order
                    generation + u32(2) + entry(a, [range(0, 1)]) + entry(a, [range(5, 1)]),   // a pack twice
                    generation + u32(1) + entry(a, []),                                        // no range
                    generation + u32(1) + entry(a, [range(0, 0)]),                             // an empty range
                    generation + u32(1) + entry(a, [range(0, 10), range(10, 5)]),              // touching
                    generation + u32(1) + entry(a, [range(20, 10), range(0, 5)]),              // out of order
                    generation + u32(1) + entry(a, [range(0, 10), range(5, 10)]),              // overlapping
                    generation + u32(1) + entry(a, [range(UInt64.max - 1, 2)]),                // past 2^64
                    good + [0],                                                                // a byte after
                    generation + u32(Int(UInt32.max)) + entry(a, [range(0, 1)]),               // a count past the end
                    generation + u32(1) + a + blob + u32(Int(UInt32.max)) + range(0, 1),       // ranges past the end
                    Array(good.dropLast(1))] {                                                 // cut
            #expect(throws: BackupError.invalidCache) { try RepackNote.open(sealed(bad), key: Self.key(), vaultID: Self.vaultID) }
        }
    }
}
