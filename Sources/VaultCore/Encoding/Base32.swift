/// RFC 4648 base32 without padding (`A`–`Z`, `2`–`7`): the text people copy
/// by hand or read off another screen, recovery kits and move codes.
package enum Base32 {
    package static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    package static func encode(_ bytes: [UInt8]) -> [UInt8] {
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

    /// nil if a character is outside the alphabet (call `normalise` first).
    package static func decode(_ chars: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for c in chars {
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            buffer = (buffer << 5 | v) & 0xffff; bits += 5
            if bits >= 8 { out.append(UInt8((buffer >> (bits - 8)) & 0xff)); bits -= 8 }
        }
        return out
    }

    /// What hands and scanners do, undone: lower case raised, `0`, `1`, `8`
    /// read as `O`, `I`, `B`, dashes (group separators) dropped. Only ASCII
    /// letters change case: a non-ASCII byte stays non-ASCII (and is then
    /// refused), never folded into the alphabet ("ß" is not "SS").
    package static func normalise(_ s: some Sequence<UInt8>) -> [UInt8] {
        s.compactMap { c -> UInt8? in
            switch c {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - 32
            case UInt8(ascii: "0"): return UInt8(ascii: "O")
            case UInt8(ascii: "1"): return UInt8(ascii: "I")
            case UInt8(ascii: "8"): return UInt8(ascii: "B")
            case UInt8(ascii: "-"): return nil
            default: return c
            }
        }
    }
}
