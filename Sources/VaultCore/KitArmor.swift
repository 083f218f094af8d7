import Foundation
import VaultCrypto

// Kit armor (docs/FORMAT.md, "Recovery kit"): the 116-byte payload in base32
// (RFC 4648 alphabet, no padding: 186 characters), 20 characters a line, each
// line numbered and ending in a 2-character checksum, so a mistyped line is
// found by its number:
//
//   -----BEGIN VAULT RECOVERY KIT-----
//   01 ABCD EFGH IJKL MNOP QRST 7K
//   ...
//   10 ABCD EF 2Q
//   -----END VAULT RECOVERY KIT-----
//
// checksum = the first 10 bits of SHA-256("vault v1 kit line" || u8 n || the
// line's characters), as 2 base32 characters. Reading is forgiving of what
// hands and scanners do: case, extra spaces, and 0/1/8 for O/I/B.

public enum KitArmor {
    public static let begin = "-----BEGIN VAULT RECOVERY KIT-----"
    public static let end = "-----END VAULT RECOVERY KIT-----"
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    static let lineLength = 20
    static let checksumLabel = Array("vault v1 kit line".utf8)

    public static func armor(_ payload: [UInt8]) -> String {
        let text = base32(payload)
        var lines = [begin]
        for (i, start) in stride(from: 0, to: text.count, by: lineLength).enumerated() {
            let chunk = Array(text[start..<min(start + lineLength, text.count)])
            let groups = stride(from: 0, to: chunk.count, by: 4).map { String(decoding: chunk[$0..<min($0 + 4, chunk.count)], as: UTF8.self) }
            let n = i + 1
            lines.append((n < 10 ? "0\(n)" : "\(n)") + " " + groups.joined(separator: " ") + " " + checksum(line: n, chunk))
        }
        return (lines + [end]).joined(separator: "\n")
    }

    /// Finds the armored block in `text` and decodes it. A line whose
    /// checksum fails is `kitDamaged(line:)`.
    public static func decode(_ text: String) throws -> [UInt8] {
        let all = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let b = all.firstIndex(of: begin), let e = all[b...].firstIndex(of: end), e > b else {
            throw VaultError.kitDamaged(line: nil)
        }
        var chars: [UInt8] = []
        var expected = 1
        for line in all[(b + 1)..<e] where !line.isEmpty {
            var tokens = line.split(separator: " ").map(String.init)
            guard tokens.count >= 3, Int(tokens[0]) == expected else { throw VaultError.kitDamaged(line: expected) }
            tokens.removeFirst()
            let sum = normalise(tokens.removeLast())
            let body = normalise(tokens.joined())
            guard body.count <= lineLength, body.allSatisfy(alphabet.contains), sum == Array(checksum(line: expected, body).utf8) else {
                throw VaultError.kitDamaged(line: expected)
            }
            chars += body
            expected += 1
        }
        guard let payload = unbase32(chars) else { throw VaultError.kitDamaged(line: nil) }
        return payload
    }

    /// ASCII letters only are upper-cased: a non-ASCII character stays
    /// non-ASCII (and is refused), never folded into the alphabet ("ß" is
    /// not "SS").
    static func normalise(_ s: String) -> [UInt8] {
        s.utf8.compactMap { c -> UInt8? in
            switch c {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - 32
            case UInt8(ascii: "0"): return UInt8(ascii: "O")
            case UInt8(ascii: "1"): return UInt8(ascii: "I")
            case UInt8(ascii: "8"): return UInt8(ascii: "B")
            case UInt8(ascii: " "), UInt8(ascii: "-"): return nil
            default: return c
            }
        }
    }

    static func checksum(line n: Int, _ chars: [UInt8]) -> String {
        let h = (try? SHA256.hash(checksumLabel + [UInt8(n)] + chars)) ?? [0, 0]
        let bits = Int(h[0]) << 2 | Int(h[1]) >> 6
        return String(decoding: [alphabet[bits >> 5], alphabet[bits & 31]], as: UTF8.self)
    }

    static func base32(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)   // no reallocation: a passphrase leaves no stray copy
        var buffer = 0, bits = 0
        for b in bytes {
            buffer = buffer << 8 | Int(b); bits += 8
            while bits >= 5 { out.append(alphabet[(buffer >> (bits - 5)) & 31]); bits -= 5 }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return out
    }

    static func unbase32(_ chars: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for c in chars {
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            buffer = (buffer << 5 | v) & 0xffff; bits += 5
            if bits >= 8 { out.append(UInt8((buffer >> (bits - 8)) & 0xff)); bits -= 8 }
        }
        return out
    }

    /// A random passphrase of 26 base32 characters (130 bits) in groups of
    /// four: easy to copy by hand, and what `kit export --generate` prints.
    public static func generatedPassphrase() -> [UInt8] {
        var random = SecureRandom.bytes(17)
        var chars = base32(random)
        SecureZero.zero(&random)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for (i, c) in chars.prefix(26).enumerated() { if i > 0 && i % 4 == 0 { out.append(UInt8(ascii: "-")) }; out.append(c) }
        SecureZero.zero(&chars)
        return out
    }
}
