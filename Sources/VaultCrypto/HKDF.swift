import Foundation

/// HKDF-SHA256 (RFC 5869) through OpenSSL's EVP_KDF. Outputs are secrets and
/// come back in guarded memory.
public enum HKDF {
    public static let hashLength = 32

    /// HKDF-Extract(salt, ikm) -> PRK (32 bytes).
    public static func extract(salt: some ContiguousBytes, ikm: some ContiguousBytes) throws -> SecretBytes {
        let prk = try SecretBytes(count: hashLength)
        try ikm.withUnsafeBytes { k in try salt.withUnsafeBytes { s in try prk.withUnsafeMutableBytes { o in
            try OpenSSL.hkdf(.extract, key: k, salt: s, info: UnsafeRawBufferPointer(start: nil, count: 0), into: o)
        } } }
        return prk
    }

    /// HKDF-Expand(prk, info, length); length at most 255 * 32.
    public static func expand(prk: some ContiguousBytes, info: some ContiguousBytes, length: Int) throws -> SecretBytes {
        guard length > 0, length <= 255 * hashLength else {
            throw CryptoError.invalidParameter(.hkdfOutputLength(length))
        }
        let out = try SecretBytes(count: length)
        try prk.withUnsafeBytes { k in try info.withUnsafeBytes { i in try out.withUnsafeMutableBytes { o in
            try OpenSSL.hkdf(.expand, key: k, salt: UnsafeRawBufferPointer(start: nil, count: 0), info: i, into: o)
        } } }
        return out
    }

    /// Extract then expand.
    public static func deriveKey(ikm: some ContiguousBytes, salt: some ContiguousBytes,
                                 info: some ContiguousBytes, length: Int) throws -> SecretBytes {
        try expand(prk: extract(salt: salt, ikm: ikm), info: info, length: length)
    }
}
