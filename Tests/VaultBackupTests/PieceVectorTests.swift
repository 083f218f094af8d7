import ByteLayout
import Foundation
import Testing
import VaultCodecs
import VaultCore
import VaultCrypto
@testable import VaultBackup

/// The piece vectors of docs/FORMAT.md ("Backups: piece ids and
/// references"), read from FORMAT.md itself: the id, the frame decoding to
/// exactly the piece, the 64-byte reference, and a tree holding it.
@Suite("Backup piece vectors")
struct PieceVectorTests {
    static func published() throws -> [String: [UInt8]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/FORMAT.md"), encoding: .utf8)
        let section = try #require(text.range(of: "### Piece ids and references"))
        var out: [String: [UInt8]] = [:]
        for m in text[section.upperBound...].matches(of: /(?m)^    (key|piece id|frame|reference|tree) += ([0-9a-f]+)/) {
            if out[String(m.output.1)] == nil { out[String(m.output.1)] = Hex.decode(String(m.output.2)) }
        }
        return out
    }

    /// A piece id is exactly 32 bytes: shorter or longer is a typed error,
    /// never an id of zeros (issue 38; on 4f9261d `PieceID([1, 2])` was
    /// the id 0102000…0, and 33 bytes dropped the last).
    @Test func aPieceIDIsExactly32Bytes() throws {
        #expect(throws: ByteLayoutError.truncated(needed: 8, remaining: 2)) { try PieceID([1, 2]) }
        #expect(throws: ByteLayoutError.truncated(needed: 8, remaining: 0)) { try PieceID([]) }
        #expect(throws: ByteLayoutError.trailingBytes(count: 1)) { try PieceID([UInt8](repeating: 7, count: 33)) }
        let bytes = (0..<32).map { UInt8($0) }
        #expect(try PieceID(bytes).bytes == bytes)
    }

    @Test func vectors() throws {
        let v = try Self.published()
        let piece = Array(String(repeating: "vault piece vector\n", count: 64).utf8)
        let keyBytes = try #require(v["key"])
        #expect(keyBytes == (try SHA256.hash(Array("vault piece vector key".utf8))))
        var secret = keyBytes
        let key = try PieceKey(secret: SecretBytes(consuming: &secret))
        let id = try key.id(of: piece)
        #expect(id.bytes == v["piece id"])
        // A backup's workers name pieces in batches (through libipsec-mb's
        // lanes where they run): the published id from that path too.
        let batch = try piece.withUnsafeBytes { p in try [UInt8](repeating: 1, count: 100).withUnsafeBytes { other in
            try key.ids(of: [other, p, other], lanes: key.lanes())
        } }
        #expect(batch[1] == id)

        let frame = try #require(v["frame"])
        var out = [UInt8](repeating: 0, count: piece.count)
        try frame.withUnsafeBytes { f in try out.withUnsafeMutableBytes { try ZstdPieceDecoder().decode(f, into: $0) } }
        #expect(out == piece)

        let ref = PieceRef(pack: Array(1...16), offset: 4096, count: UInt32(piece.count), stored: UInt32(frame.count), id: id)
        var w = ByteWriter()
        ref.encode(into: &w)
        #expect(w.bytes == v["reference"])
        var r = ByteReader(try #require(v["reference"]))
        #expect(try PieceRef.decode(&r) == ref)

        var e = TreeEntry(name: Array("notes.txt".utf8), kind: .file, mode: 0o644, user: 1000, group: 1000, modified: 1_700_000_000,
                          modifiedNanoseconds: 123_456_789, changed: 1_700_000_001, changedNanoseconds: 5, size: UInt64(piece.count))
        e.pieces = [ref]
        #expect(Tree.encode([e]) == v["tree"])
        #expect(Tree.decode(try #require(v["tree"])) == [e])
    }
}
