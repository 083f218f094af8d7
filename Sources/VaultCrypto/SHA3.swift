import Foundation

/// SHA3-256 (FIPS 202) of public data, one-shot, through OpenSSL's EVP
/// (the same Keccak handles ML-KEM and X-Wing use). For hashes that commit
/// to a public value, such as a move code's hash of the receiver's X-Wing
/// public key; the parts are hashed as one concatenated message.
public enum SHA3_256 {
    public static let length = 32

    public static func hash(_ parts: [UInt8]...) throws -> [UInt8] {
        let hasher = try OpenSSL.KeccakContext()
        try hasher.begin(.sha3_256)
        for part in parts { try part.withUnsafeBytes { try hasher.absorb($0) } }
        var out = [UInt8](repeating: 0, count: length)
        try out.withUnsafeMutableBytes { try hasher.finish(into: $0) }
        return out
    }
}
