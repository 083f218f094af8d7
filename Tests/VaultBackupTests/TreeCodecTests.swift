import ByteLayout
import Testing
import VaultCrypto
import VaultCore
@testable import VaultBackup

/// Trees and snapshots decode to their exact shape, and every hostile
/// variant a dropper could seal under its own keys is refused (nil), never
/// a trap: names that would leave the restore directory, disorder, counts
/// larger than the bytes, sizes that disagree with the pieces, trailing bytes.
@Suite("Backup tree and snapshot codecs")
struct TreeCodecTests {
    static let ref = PieceRef(pack: Array(repeating: 7, count: 16), offset: 42, count: 5, stored: 3, id: try! PieceID(Array(repeating: 9, count: 32)))

    static func file(_ name: String, size: UInt64 = 5, pieces: [PieceRef] = [ref]) -> TreeEntry {
        var e = TreeEntry(name: Array(name.utf8), kind: .file, mode: 0o640, user: 1000, group: 100, modified: 1_700_000_000,
                          modifiedNanoseconds: 123_456_789, changed: 1_700_000_001, changedNanoseconds: 5, size: size)
        e.pieces = pieces
        return e
    }

    @Test func roundTrip() throws {
        var dir = TreeEntry(name: Array("d".utf8), kind: .directory, mode: 0o755, user: 0, group: 0, modified: -5,
                            modifiedNanoseconds: 0, changed: 0, changedNanoseconds: 0, size: 0)
        dir.subtree = Self.ref
        var link = TreeEntry(name: Array("l".utf8), kind: .symlink, mode: 0o777, user: 0, group: 0, modified: 0,
                             modifiedNanoseconds: 0, changed: 0, changedNanoseconds: 0, size: 0)
        link.target = Array("../x".utf8)
        var hard = Self.file("h")
        hard.linkGroup = 3
        let entries = [Self.file("a"), dir, hard, link, Self.file("z", size: 0, pieces: [])]
        #expect(Tree.decode(Tree.encode(entries)) == entries)
    }

    /// docs/FORMAT.md, "Extended attributes": the vector, byte for byte.
    @Test func extendedAttributesVector() throws {
        var e = TreeEntry(name: Array("f".utf8), kind: .file, mode: 0o640, user: 1000, group: 100, modified: 1_700_000_000,
                          modifiedNanoseconds: 0, changed: 1_700_000_000, changedNanoseconds: 0, size: 0)
        let acl: [UInt8] = [2, 0, 0, 0, 1, 0, 6, 0, 255, 255, 255, 255, 4, 0, 4, 0, 255, 255, 255, 255, 0x20, 0, 0, 0, 255, 255, 255, 255]
        e.attributes = [ExtendedAttribute(name: Array("system.posix_acl_access".utf8), value: acl),
                        ExtendedAttribute(name: Array("user.comment".utf8), value: Array("hi".utf8))]
        let vector = "5641554c5454523300000001000166010001a0000003e800000064000000006553f10000000000000000006553f100000000000000000000000000000000000000000000021773797374656d2e706f7369785f61636c5f6163636573730000001c0200000001000600ffffffff04000400ffffffff20000000ffffffff0c757365722e636f6d6d656e74000000026869"
        #expect(Hex.encode(Tree.encode([e])) == vector)
        #expect(Tree.decode(try #require(Hex.decode(vector))) == [e])
        // Without attributes the same entry is a "VAULTTR2" tree, as before.
        var plain = e
        plain.attributes = []
        #expect(Tree.encode([plain]).starts(with: Tree.magic))
    }

    /// What a dropper could seal: disorder, a NUL, an empty name, a value
    /// over 64 KiB, a count past the bytes, a "VAULTTR3" with none at all.
    @Test func hostileAttributesAreRefused() {
        func tree(_ attributes: [ExtendedAttribute]) -> [UInt8] {
            var e = Self.file("a")
            e.attributes = attributes
            return Tree.encode([e])
        }
        let a = ExtendedAttribute(name: Array("user.a".utf8), value: [1]), b = ExtendedAttribute(name: Array("user.b".utf8), value: [])
        #expect(Tree.decode(tree([a, b])) != nil)
        #expect(Tree.decode(tree([b, a])) == nil)
        #expect(Tree.decode(tree([a, a])) == nil)
        #expect(Tree.decode(tree([ExtendedAttribute(name: Array("user.\u{0}x".utf8), value: [])])) == nil)
        #expect(Tree.decode(tree([ExtendedAttribute(name: [], value: [])])) == nil)
        #expect(Tree.decode(tree([ExtendedAttribute(name: Array("user.big".utf8), value: [UInt8](repeating: 1, count: 65_537))])) == nil)
        var noneAtAll = Tree.encode([Self.file("a")])
        noneAtAll.replaceSubrange(0..<8, with: Tree.attributesMagic)
        #expect(Tree.decode(noneAtAll + [0, 0]) == nil)
        var counted = tree([a])
        counted.replaceSubrange((counted.count - 14)..<(counted.count - 12), with: [0xff, 0xff])
        #expect(Tree.decode(counted) == nil)
    }

    @Test(arguments: ["/", "..", ".", "a/b", "", "a\u{0}b"])
    func unsafeNamesAreRefused(_ name: String) {
        #expect(Tree.decode(Tree.encode([Self.file(name)])) == nil)
    }

    @Test func disorderAndDuplicatesAreRefused() {
        #expect(Tree.decode(Tree.encode([Self.file("b"), Self.file("a")])) == nil)
        #expect(Tree.decode(Tree.encode([Self.file("a"), Self.file("a")])) == nil)
    }

    @Test func sizeMustBeThePieces() {
        #expect(Tree.decode(Tree.encode([Self.file("a", size: 6)])) == nil)
        let overflow = PieceRef(pack: Self.ref.pack, offset: 0, count: .max, stored: .max, id: Self.ref.id)
        #expect(Tree.decode(Tree.encode([Self.file("a", size: 0, pieces: Array(repeating: overflow, count: 3))])) == nil)
    }

    @Test func countsLargerThanTheBytesAreRefused() {
        var w = ByteWriter(Tree.magic)
        w.u32(.max)
        #expect(Tree.decode(w.bytes) == nil)
        var bytes = Tree.encode([Self.file("a")])
        // The piece count (after name, fixed fields, link group): 2^32 - 1.
        let at = 8 + 4 + 2 + 1 + 1 + 1 + 2 + 4 + 4 + 8 + 4 + 8 + 4 + 8 + 4
        bytes.replaceSubrange(at..<(at + 4), with: [0xff, 0xff, 0xff, 0xff])
        #expect(Tree.decode(bytes) == nil)
    }

    @Test func truncatedOrTrailingIsRefused() {
        let bytes = Tree.encode([Self.file("a")])
        for n in [0, 8, 12, bytes.count - 1] { #expect(Tree.decode(Array(bytes.prefix(n))) == nil) }
        #expect(Tree.decode(bytes + [0]) == nil)
    }

    /// A reference stores at most the piece's length, and some bytes for
    /// any piece that has bytes.
    @Test func storedLengthsAboveTheLengthOrNoneAreRefused() {
        for (count, stored) in [(5, 6), (5, 0), (0, 1)] as [(UInt32, UInt32)] {
            var e = Self.file("a", size: UInt64(count),
                              pieces: [PieceRef(pack: Self.ref.pack, offset: 0, count: count, stored: stored, id: Self.ref.id)])
            if count == 0 { e.pieces = [e.pieces[0]] }
            #expect(Tree.decode(Tree.encode([e])) == nil, "count \(count) stored \(stored)")
        }
        let empty = PieceRef(pack: Self.ref.pack, offset: 0, count: 0, stored: 0, id: Self.ref.id)
        #expect(Tree.decode(Tree.encode([Self.file("a", size: 0, pieces: [empty])])) != nil)
    }

    /// Format 1 (before pieces were compressed): "VAULTTR1" trees and
    /// "VAULTSN1" snapshots with 60-byte references still read, as raw
    /// pieces; what is written is format 2.
    @Test func formatOneRecordsStillRead() throws {
        let raw = PieceRef(pack: Self.ref.pack, offset: 42, count: 5, stored: 5, id: Self.ref.id)
        var dir = TreeEntry(name: Array("d".utf8), kind: .directory, mode: 0o755, user: 0, group: 0, modified: 0,
                            modifiedNanoseconds: 0, changed: 0, changedNanoseconds: 0, size: 0)
        dir.subtree = raw
        let entries = [Self.file("a", pieces: [raw]), dir]
        func legacy(_ bytes: [UInt8], magic: [UInt8]) -> [UInt8] {
            // Format 2 with each reference's stored field (after pack, offset, length) cut out.
            var out = magic + bytes.dropFirst(8)
            var at = out.count
            while let found = out[..<at].lastIndexOfReference(raw) { out.removeSubrange((found + 28)..<(found + 32)); at = found }
            return out
        }
        let v1 = legacy(Tree.encode(entries), magic: Tree.legacyMagic)
        #expect(v1.count == Tree.encode(entries).count - 8)
        #expect(Tree.decode(v1) == entries)
        #expect(Tree.encode(entries).starts(with: Array("VAULTTR2".utf8)))
        let s = Snapshot(packs: [raw.pack], key: try PieceKey.random(), host: "h", paths: [Array("/x".utf8)], tags: [],
                         start: (1, 2), end: (3, 4), counts: BackupCounts(), root: raw)
        let sn1 = legacy(try s.encode(), magic: Array("VAULTSN1".utf8))
        let back = try #require(Snapshot.decode(sn1))
        #expect(back.root == raw && back.packs == [raw.pack])
        #expect(try s.encode().starts(with: Array("VAULTSN2".utf8)))
    }

    @Test func snapshotRoundTripAndHostileCounts() throws {
        var counts = BackupCounts()
        counts.files = 3
        let s = Snapshot(packs: [Self.ref.pack], key: try PieceKey.random(), host: "h", paths: [Array("/srv/x".utf8)],
                         tags: ["nightly"], start: (1, 2), end: (3, 4), counts: counts, root: Self.ref)
        let bytes = try s.encode()
        #expect(bytes.count == s.encodedLength)
        let back = try #require(Snapshot.decode(bytes))
        #expect(back.host == "h" && back.paths == s.paths && back.tags == ["nightly"] && back.counts == counts && back.root == Self.ref)
        #expect(Snapshot.decode(bytes + [0]) == nil)
        #expect(Snapshot.decode(Array(bytes.dropLast())) == nil)
        var huge = bytes
        huge.replaceSubrange(8..<12, with: [0xff, 0xff, 0xff, 0xff])   // pack count 2^32 - 1
        #expect(Snapshot.decode(huge) == nil)
    }

    /// What the fuzz target (Fuzz/FuzzBackupTree) checks, on a few thousand
    /// mutations here: no input traps, and what parses encodes back to
    /// exactly its bytes (one shape only).
    @Test func mutatedRecordsNeverTrapAndParseToOneShape() throws {
        var link = Self.file("l")
        (link.kind, link.pieces, link.size, link.target) = (.symlink, [], 0, Array("t".utf8))
        let tree = Tree.encode([Self.file("a"), Self.file("b", size: 10, pieces: [Self.ref, Self.ref]), link])
        let snapshot = try Snapshot(packs: [Self.ref.pack], key: try PieceKey.random(), host: "h", paths: [Array("/p".utf8)],
                                    tags: ["t"], start: (1, 2), end: (3, 4), counts: BackupCounts(), root: Self.ref).encode()
        var rng = SystemRandomNumberGenerator()
        for i in 0..<3000 {
            var bytes = i % 2 == 0 ? tree : snapshot
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                case 1: bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &rng)...)
                default: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...bytes.count, using: &rng))
                }
                if bytes.isEmpty { break }
            }
            if let entries = Tree.decode(bytes) { #expect(Tree.encode(entries) == bytes) }
            if let s = Snapshot.decode(bytes) { #expect(try s.encode() == bytes) }
        }
    }
}

private extension ArraySlice where Element == UInt8 {
    /// Where the last encoding of `ref` starts.
    func lastIndexOfReference(_ ref: PieceRef) -> Int? {
        var w = ByteWriter()
        ref.encode(into: &w)
        let needle = w.bytes
        guard count >= needle.count else { return nil }
        return stride(from: endIndex - needle.count, through: startIndex, by: -1).first { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
