import Testing
import VaultCrypto
@testable import VaultBackup

/// A piece's id is HMAC-SHA256 under the piece key, whatever the piece:
/// all-zero pieces, whose ids are made once per length and kept, name
/// exactly what a fresh HMAC names, and a piece that is zero but for one
/// byte anywhere is hashed as itself.
@Suite("Piece keys")
struct PieceKeyTests {
    static func key() throws -> (PieceKey, [UInt8]) {
        var raw = (0..<32).map { UInt8($0 * 3) }
        let copy = raw
        return (try PieceKey(secret: SecretBytes(consuming: &raw)), copy)
    }

    static func hmac(_ secret: [UInt8], _ data: [UInt8]) throws -> PieceID {
        try HMACSHA256.authenticate(key: secret, data: data).withUnsafeBytes { PieceID(raw: $0) }
    }

    /// A backup worker names a job's pieces together (`ids`, through
    /// libipsec-mb's lanes where they run): each id is the one `id(of:)`
    /// and a fresh HMAC give it alone, zero pieces and empty ones included.
    @Test func piecesNamedTogetherAreNamedAsAlone() throws {
        let (key, secret) = try Self.key()
        let lanes = key.lanes()
        let lengths = [0, 1, 64, 4096, 65_534, 65_535, 300_000, 17, 5000, 5000]
        var pieces = lengths.map { SecureRandom.bytes($0) }
        pieces += [[UInt8](repeating: 0, count: 4096), [UInt8](repeating: 0, count: 100), [UInt8](repeating: 0, count: 4096)]
        pieces.shuffle()
        let buffers = pieces.map { p in UnsafeMutableRawBufferPointer.allocate(byteCount: p.count, alignment: 1) }
        defer { buffers.forEach { $0.deallocate() } }
        for (b, p) in zip(buffers, pieces) { b.copyBytes(from: p) }
        let ids = try key.ids(of: buffers.map { UnsafeRawBufferPointer($0) }, lanes: lanes)
        #expect(ids.count == pieces.count)
        for (id, p) in zip(ids, pieces) {
            #expect(id == (try Self.hmac(secret, p)), "\(p.count) bytes")
            #expect(id == (try key.id(of: p)), "\(p.count) bytes")
        }
        #expect(try key.ids(of: [], lanes: lanes).isEmpty)
    }

    @Test func zeroPiecesAreNamedAsAnyPiece() throws {
        let (key, secret) = try Self.key()
        for length in [1, 7, 8, 4095, 4096, 4097, 65_536, 262_144, 1 << 20, (1 << 20) + 3, 4 << 20] {
            let zeros = [UInt8](repeating: 0, count: length)
            let expected = try Self.hmac(secret, zeros)
            #expect(try key.id(of: zeros) == expected, "\(length) zeros")
            #expect(try key.id(of: zeros) == expected, "\(length) zeros, the kept id")
            for at in Set([0, length / 2, min(4095, length - 1), min(4096, length - 1), length - 1]) {
                var one = zeros
                one[at] = 1
                #expect(try key.id(of: one) == (try Self.hmac(secret, one)), "\(length) bytes, nonzero at \(at)")
                #expect(try key.id(of: one) != expected)
            }
        }
        // Past the bound of kept lengths, still the HMAC.
        for length in 1...(PieceKey.maxZeroLengths + 8) {
            let zeros = [UInt8](repeating: 0, count: length * 100)
            #expect(try key.id(of: zeros) == (try Self.hmac(secret, zeros)))
        }
        #expect(try key.id(of: []) == (try Self.hmac(secret, [])))
    }
}
