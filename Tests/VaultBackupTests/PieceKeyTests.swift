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
