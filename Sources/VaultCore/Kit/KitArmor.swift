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
    static let alphabet = Base32.alphabet
    static let lineLength = 20
    static let checksumLabel = Array("vault v1 kit line".utf8)

    public static func armor(_ payload: [UInt8]) -> String {
        let text = Base32.encode(payload)
        var lines = [begin]
        for (i, start) in stride(from: 0, to: text.count, by: lineLength).enumerated() {
            let chunk = Array(text[start..<min(start + lineLength, text.count)])
            let groups = stride(from: 0, to: chunk.count, by: 4).map { String(decoding: chunk[$0..<min($0 + 4, chunk.count)], as: UTF8.self) }
            let n = i + 1
            lines.append((n < 10 ? "0\(n)" : "\(n)") + " " + groups.joined(separator: " ") + " "
                         + String(decoding: checksum(line: UInt8(n), chunk), as: UTF8.self))
        }
        return (lines + [end]).joined(separator: "\n")
    }

    /// The armored lines of a kit payload (`RecoveryKit.length` bytes: 186 characters).
    static let lineCount = ((RecoveryKit.length * 8 + 4) / 5 + lineLength - 1) / lineLength

    /// Finds the armored block in `text` and decodes it. Spacing is free: a
    /// line is its characters with every space, tab and '-' removed, the
    /// first two being its number and the last two its checksum. A line
    /// whose number or checksum does not fit is `kitDamaged(line:)`; anything
    /// else amiss is `kitDamaged(line: nil)`. Work is bounded by the text's
    /// size, whatever it holds.
    public static func decode(_ text: String) throws -> [UInt8] {
        let all = text.split(whereSeparator: \.isNewline).map { line in
            Array(line.utf8.filter { ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "-")].contains($0) })
        }
        let beginLine = squeezed(begin), endLine = squeezed(end)
        guard let b = all.firstIndex(of: beginLine), let e = all[b...].firstIndex(of: endLine) else {
            throw VaultError.kitDamaged(line: nil)
        }
        let lines = all[(b + 1)..<e].filter { !$0.isEmpty }
        var chars: [UInt8] = []
        for (i, raw) in lines.enumerated() {
            let n = i + 1
            guard n <= lineCount, raw.count >= 5, raw[0] == digit(n / 10), raw[1] == digit(n % 10) else {
                throw VaultError.kitDamaged(line: min(n, lineCount + 1))
            }
            let body = Base32.normalise(raw[2..<(raw.count - 2)]), sum = Base32.normalise(raw[(raw.count - 2)...])
            guard body.count <= lineLength, body.allSatisfy(alphabet.contains), sum == checksum(line: UInt8(n), body) else {
                throw VaultError.kitDamaged(line: n)
            }
            chars += body
        }
        guard lines.count == lineCount, let payload = Base32.decode(chars) else { throw VaultError.kitDamaged(line: nil) }
        return payload
    }

    private static func digit(_ d: Int) -> UInt8 { UInt8(ascii: "0") + UInt8(d) }

    /// A marker line as `decode` compares it: without spaces or dashes.
    private static func squeezed(_ line: String) -> [UInt8] {
        Array(line.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "-") })
    }

    static func checksum(line n: UInt8, _ chars: [UInt8]) -> [UInt8] {
        let h = (try? SHA256.hash(checksumLabel + [n] + chars)) ?? [0, 0]
        let bits = Int(h[0]) << 2 | Int(h[1]) >> 6
        return [alphabet[bits >> 5], alphabet[bits & 31]]
    }

    /// A random passphrase of 26 base32 characters (130 bits) in groups of
    /// four: easy to copy by hand, and what `kit export --generate` prints.
    public static func generatedPassphrase() -> [UInt8] {
        var random = SecureRandom.bytes(17)
        var chars = Base32.encode(random)
        SecureZero.zero(&random)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for (i, c) in chars.prefix(26).enumerated() { if i > 0 && i % 4 == 0 { out.append(UInt8(ascii: "-")) }; out.append(c) }
        SecureZero.zero(&chars)
        return out
    }
}
