import Foundation
import VaultCore
import VaultCrypto
import System

// Short move code (docs/FORMAT.md, "Device move: short code"): what
// `vault move receive --words` shows, for typing rather than scanning.
//
//   text     = address || " " || port || "-" || word 1 || "-" || word 2 || "-" || word 3
//   e.g.       192.168.1.20 41237-guitar-orbit-velvet
//   address  = the receiver's IPv4 or IPv6 address (public: where to connect)
//   port     = decimal, 1...65535 (public: the connection shows it anyway)
//   words    = 3 words drawn uniformly from MoveWords (2048 words, 11 bits
//              each): 33 bits of secret
//   password = UTF-8 of port || "-" || word 1 || "-" || word 2 || "-" || word 3
//              (lower case, one "-" between parts): CPace's PRS
//
// 33 bits would be nothing against an offline search, but CPace gives none:
// a recording or an active attacker learns at most whether one guess was
// right, per connection, and the receiver gives up after the first
// connection whose key confirmation fails (MoveChannel). An attacker racing
// the real sender therefore wins with probability 2^-33.
//
// Reading forgives case, spaces instead of dashes, and brackets around an
// IPv6 address. A word not on the list is named (by position) before
// anything is sent, so a typo does not spend the code's one attempt.

public struct MoveShortCode: Sendable {
    public static let wordCount = 3
    public static let bitsPerWord = 11

    public let address: MoveAddress
    public let port: UInt16
    public let words: [String]

    /// Why a typed short code does not parse.
    public enum ParseError: Error, Equatable, Sendable {
        /// The text does not start with an IPv4 or IPv6 address.
        case noAddress
        /// No port number (1...65535) after the address.
        case badNumber
        /// Not exactly three words after the number.
        case wordCount(Int)
        /// Word `position` (1-based) is not on the word list.
        case unknownWord(position: Int, word: String)
    }

    /// A fresh code for a receiver at `address` listening on `port`.
    public init(address: MoveAddress, port: UInt16) {
        var words: [String] = []
        for _ in 0..<Self.wordCount {
            let r = SecureRandom.bytes(2)
            // 2048 divides 65536: the low 11 bits of two random bytes are uniform.
            words.append(MoveWords.all[(Int(r[0]) << 8 | Int(r[1])) & (MoveWords.all.count - 1)])
        }
        self.init(address: address, port: port, checkedWords: words)
    }

    private init(address: MoveAddress, port: UInt16, checkedWords: [String]) {
        (self.address, self.port, self.words) = (address, port, checkedWords)
    }

    /// Parses the text form; see `ParseError`.
    public init(text: String) throws(ParseError) {
        let t = text.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" || $0.isNewline }).map(String.init)
        guard let first = t.first, first.utf8.count <= 64 else { throw .noAddress }
        let host = first.hasPrefix("[") && first.hasSuffix("]") ? String(first.dropFirst().dropLast()) : first
        guard let address = MoveAddress(host) else { throw .noAddress }
        let rest = t.dropFirst().joined(separator: "-").split(separator: "-").map(String.init)
        guard let number = rest.first, number.count <= 5, let port = UInt16(number), port != 0 else { throw .badNumber }
        let words = Array(rest.dropFirst())
        guard words.count == Self.wordCount else { throw .wordCount(words.count) }
        for (i, w) in words.enumerated() where MoveWords.index[w] == nil {
            throw .unknownWord(position: i + 1, word: String(w.prefix(32)))
        }
        self.init(address: address, port: port, checkedWords: words)
    }

    /// Whether `text` is meant as a short code rather than a long one: it
    /// holds a '.' or ':' (an address), which base32 never does.
    public static func looksLikeShortCode(_ text: String) -> Bool { text.contains(".") || text.contains(":") }

    /// The part after the address: "41237-guitar-orbit-velvet".
    public var secretPart: String { ([String(port)] + words).joined(separator: "-") }

    public var text: String {
        let host = if case .ipv6 = address { "[\(address)]" } else { address.description }
        return host + " " + secretPart
    }

    /// CPace's password: the port and the words, as typed in canonical form.
    public func password() throws -> SecretBytes {
        var bytes = Array(secretPart.utf8)
        return try SecretBytes(consuming: &bytes)
    }

    /// `text` with word `position` (1-based) replaced by `word`.
    public static func replacingWord(_ position: Int, in text: String, with word: String) -> String {
        let t = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0.isNewline }).map(String.init)
        guard let host = t.first else { return text }
        var rest = t.dropFirst().joined(separator: "-").split(separator: "-").map(String.init)
        guard position >= 1, position < rest.count else { return text }
        rest[position] = word.trimmingCharacters(in: .whitespacesAndNewlines)
        return host + " " + rest.joined(separator: "-")
    }
}
