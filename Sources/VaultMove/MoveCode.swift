import ByteLayout
import VaultCore
import Foundation
import VaultCodecs
import VaultCrypto
import System

// Move code (docs/FORMAT.md, "Device move"): what `vault move receive` shows
// so the sender can reach it and authenticate it.
//
//   code      = version (1) || n (1: 1...8) || address 1 || ... || address n
//               || port (u16be, not 0) || receiver key (32) || token (16)
//               || checksum (4)
//   version 1 (classic): receiver key = the receiver's ephemeral X25519 public key
//   version 2 (hybrid):  receiver key = SHA3-256("vault v2 move receiver key"
//                                        || the receiver's ephemeral X-Wing public key (1216))
//   address   = 0x04 || IPv4 (4)  |  0x06 || IPv6 (16)
//   checksum  = SHA-256("vault v1 move code checksum" || every byte before it)[0..<4]
//
// Version 2 carries a hash because an X-Wing public key (1216 bytes) would
// make the code untypable; the receiver sends the key itself first on the
// connection and the sender checks it against this hash (MoveHandshake). The
// two versions have the same length, so the code is as typable as before.
// The version is part of what the user typed and of the checksum, so no one
// on the network can turn a version-2 code into version 1.
//
// Text form: the code in base32 (RFC 4648 alphabet, no padding), in groups of
// four characters joined by "-", e.g. `AEAQ-CAYH-...-XK2Q`. The checksum is the
// last 4 bytes, so any typo (or a swapped pair) fails the 32-bit check with
// probability 1 - 2^-32. Reading forgives case, spaces, and 0/1/8 for O/I/B,
// but the characters must be exactly the canonical encoding (no trailing bits).

/// One address at which the receiver listens.
public typealias MoveAddress = IPAddress

/// Which key agreement a move code's receiver runs (docs/FORMAT.md, "Key schedule").
public enum MoveHandshake: UInt8, Sendable {
    /// Version 1: ephemeral X25519 on both sides (older receivers).
    case classic = 1
    /// Version 2: the receiver's ephemeral X-Wing (ML-KEM-768 + X25519) key.
    case hybrid = 2
    /// Version 3: a short code (MoveShortCode): CPace over its words, then
    /// X-Wing inside. Never the version byte of a long code.
    case shortCode = 3
}

/// The code's 32-byte receiver key field.
public enum MoveReceiverKey: Equatable, Sendable {
    /// Version 1: the receiver's X25519 public key itself.
    case x25519(X25519PublicKey)
    /// Version 2: SHA3-256 of the label and the receiver's X-Wing public key.
    case xwingHash([UInt8])

    public var bytes: [UInt8] {
        switch self {
        case .x25519(let k): return k.bytes
        case .xwingHash(let h): return h
        }
    }
}

public struct MoveCode: Equatable, Sendable {
    public static let maxAddresses = 8
    public static let keyFieldLength = 32
    public static let tokenLength = 16
    public static let checksumLength = 4
    static let checksumLabel = Array("vault v1 move code checksum".utf8)
    static let receiverKeyLabel = Array("vault v2 move receiver key".utf8)
    static let groupLength = 4

    public let addresses: [MoveAddress]
    public let port: UInt16
    public let receiverKey: MoveReceiverKey
    public let token: [UInt8]

    public var handshake: MoveHandshake {
        if case .x25519 = receiverKey { return .classic }
        return .hybrid
    }
    public var version: UInt8 { handshake.rawValue }

    /// A version-2 code for a receiver holding the X-Wing key pair of `receiverKey`.
    public init(addresses: [MoveAddress], port: UInt16, receiverKey: XWing.PublicKey, token: [UInt8]) throws {
        try self.init(addresses: addresses, port: port, key: .xwingHash(Self.receiverKeyHash(receiverKey)), token: token)
    }

    /// A version-1 code (the classic handshake of older receivers).
    public init(addresses: [MoveAddress], port: UInt16, publicKey: X25519PublicKey, token: [UInt8]) throws {
        try self.init(addresses: addresses, port: port, key: .x25519(publicKey), token: token)
    }

    public init(addresses: [MoveAddress], port: UInt16, key: MoveReceiverKey, token: [UInt8]) throws {
        guard (1...Self.maxAddresses).contains(addresses.count) else {
            throw MoveError.misuse(.codeAddressCount)
        }
        for a in addresses {
            switch a {
            case .ipv4(let b) where b.count == 4: continue
            case .ipv6(let b) where b.count == 16: continue
            default: throw MoveError.misuse(.codeAddressLength)
            }
        }
        guard port != 0 else { throw MoveError.misuse(.codePortZero) }
        guard token.count == Self.tokenLength else { throw MoveError.misuse(.tokenLength) }
        guard key.bytes.count == Self.keyFieldLength else { throw MoveError.misuse(.codeKeyLength) }
        self.addresses = addresses
        self.port = port
        self.receiverKey = key
        self.token = token
    }

    /// SHA3-256("vault v2 move receiver key" || pk): what a version-2 code
    /// holds of the receiver's X-Wing public key.
    public static func receiverKeyHash(_ pk: XWing.PublicKey) throws -> [UInt8] {
        try SHA3_256.hash(receiverKeyLabel, pk.bytes)
    }

    // MARK: binary

    public var bytes: [UInt8] {
        var w = ByteWriter([version, UInt8(addresses.count)])
        for a in addresses {
            switch a {
            case .ipv4(let b): w.u8(4); w.bytes(b)
            case .ipv6(let b): w.u8(6); w.bytes(b)
            }
        }
        w.u16(port)
        w.bytes(receiverKey.bytes)
        w.bytes(token)
        return w.bytes + Self.checksum(w.bytes)
    }

    static func checksum(_ body: [UInt8]) -> [UInt8] {
        Array(((try? SHA256.hash(checksumLabel + body)) ?? [UInt8](repeating: 0, count: 32)).prefix(checksumLength))
    }

    /// Parses the exact binary shape of version 1 or 2; anything else is
    /// `corruptedOrTampered`.
    public init(bytes b: [UInt8]) throws {
        let bad = VaultError.corruptedOrTampered
        // Smallest: 2 + 5 + 2 + 32 + 16 + 4; largest: 2 + 8*17 + 2 + 32 + 16 + 4.
        guard b.count >= 61, b.count <= 2 + Self.maxAddresses * 17 + 54 else { throw bad }
        let body = Array(b[..<(b.count - Self.checksumLength)])
        guard constantTimeEqual(Self.checksum(body), Array(b[(b.count - Self.checksumLength)...])) else { throw bad }
        var r = ByteReader(body)
        let handshake: MoveHandshake, port: UInt16, field: [UInt8], token: [UInt8]
        var addresses: [MoveAddress] = []
        do {
            guard let h = MoveHandshake(rawValue: try r.u8()), h != .shortCode else { throw bad }
            handshake = h
            let n = Int(try r.u8())
            guard (1...Self.maxAddresses).contains(n) else { throw bad }
            for _ in 0..<n {
                switch try r.u8() {
                case 4: addresses.append(.ipv4(try r.bytes(4)))
                case 6: addresses.append(.ipv6(try r.bytes(16)))
                default: throw bad
                }
            }
            guard r.remaining == 2 + Self.keyFieldLength + Self.tokenLength else { throw bad }
            port = try r.u16()
            guard port != 0 else { throw bad }
            (field, token) = (try r.bytes(Self.keyFieldLength), try r.bytes(Self.tokenLength))
            try r.finish()
        } catch is ByteLayoutError { throw bad }
        let key: MoveReceiverKey = handshake == .classic ? .x25519(try X25519PublicKey(bytes: field)) : .xwingHash(field)
        try self.init(addresses: addresses, port: port, key: key, token: token)
    }

    // MARK: text

    /// Base32 in groups of four, joined by "-".
    public var text: String {
        let chars = Base32.encode(bytes)
        return stride(from: 0, to: chars.count, by: Self.groupLength)
            .map { String(decoding: chars[$0..<min($0 + Self.groupLength, chars.count)], as: UTF8.self) }
            .joined(separator: "-")
    }

    /// Parses the text form; a typo, a wrong length or a bad checksum is
    /// `corruptedOrTampered`.
    public init(text: String) throws {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard t.utf8.count <= 512 else { throw VaultError.corruptedOrTampered }
        let chars = Base32.normalise(t.utf8.filter { $0 != UInt8(ascii: " ") })
        guard !chars.isEmpty, chars.allSatisfy(Base32.alphabet.contains),
              let raw = Base32.decode(chars), Base32.encode(raw) == chars else {
            throw VaultError.corruptedOrTampered
        }
        try self.init(bytes: raw)
    }

    /// Where a code that does not parse was most likely mistyped: the
    /// (1-based) group of four in which changing, dropping or adding one
    /// character makes a valid code. nil if no single edit does, or edits in
    /// more than one group do. Bounded: ~100 characters × 33 trials.
    public static func likelyTypo(in text: String) -> Int? {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard t.utf8.count <= 512 else { return nil }
        // Positions are counted in the code's characters, dashes and spaces
        // left out, so group g holds characters 4(g-1) ..< 4g.
        let chars = Base32.normalise(t.utf8.filter { $0 != UInt8(ascii: " ") })
        func valid(_ c: [UInt8]) -> Bool {
            guard c.allSatisfy(Base32.alphabet.contains), let raw = Base32.decode(c), Base32.encode(raw) == c else { return false }
            return (try? MoveCode(bytes: raw)) != nil
        }
        // Each valid code an edit gives, with the leftmost group an edit that
        // gives it touches: dropping one of two equal neighbours is the same
        // fix wherever the missing one goes back.
        var fixes: [[UInt8]: Int] = [:]
        func found(_ code: [UInt8], at position: Int) {
            let group = position / groupLength + 1
            fixes[code] = min(fixes[code] ?? group, group)
        }
        var trial = chars
        for i in chars.indices {
            for c in Base32.alphabet where c != chars[i] {
                trial[i] = c
                if valid(trial) { found(trial, at: i) }
            }
            trial[i] = chars[i]
        }
        if fixes.isEmpty {
            for i in chars.indices {
                var shorter = chars
                shorter.remove(at: i)
                if valid(shorter) { found(shorter, at: i) }
            }
            for i in 0...chars.count {
                for c in Base32.alphabet {
                    var longer = chars
                    longer.insert(c, at: i)
                    if valid(longer) { found(longer, at: min(i, max(chars.count - 1, 0))) }
                }
            }
        }
        let groups = Set(fixes.values)
        return groups.count == 1 ? groups.first : nil
    }

    /// `text` with its group `group` (1-based, groups of four) replaced by
    /// `replacement`. The groups are the ones the user typed between dashes
    /// or spaces when that gives a valid code (a dropped or added character
    /// stays inside its group); else the code's characters are cut in fours.
    public static func replacingGroup(_ group: Int, in text: String, with replacement: String) -> String {
        let fresh = replacement.filter { !" -".contains($0) && !$0.isNewline }
        var typed = text.split(whereSeparator: { " -".contains($0) || $0.isNewline }).map(String.init)
        if group >= 1, group <= typed.count {
            typed[group - 1] = fresh
            let joined = typed.joined(separator: "-")
            if (try? MoveCode(text: joined)) != nil { return joined }
        }
        var chars = Array(text.filter { !" -".contains($0) && !$0.isNewline })
        let start = (group - 1) * groupLength
        guard group >= 1, start <= chars.count else { return text }
        chars.replaceSubrange(start..<min(start + groupLength, chars.count), with: Array(fresh))
        return String(chars)
    }

    /// The text form as a QR code for a terminal (VaultCodecs.QRCode): the
    /// text is upper-case base32 and '-', which QR encodes compactly.
    public func qrText() throws -> String { try QRCode(encoding: text).renderText() }
}
