import Foundation
import System
import TestSupport
import Testing
@testable import VaultCrypto
@testable import VaultCore
@testable import VaultMove

/// The short move code (version 3): the word list, the text form, the
/// CPace + X-Wing key schedule against the vector published in FORMAT.md
/// ("Test vector: short-code handshake"; VAULT_PRINT_VECTORS=1 prints what
/// this code computes), and the handshake messages' exact shapes.
@Suite("Move, short code")
struct MoveShortCodeTests {
    typealias V = MoveVectorBytes
    static let code = "41237-guitar-orbit-velvet"
    static let sid = V.seq(0x80, 16)
    static let section = "### Test vector: short-code handshake"
    /// The vector's inputs FORMAT.md prints (the CPace scalars, the draft's
    /// appendix B.3 ya and yb); every other block is an output.
    static let inputs: Set<String> = ["ya", "yb"]
    static var ya: String { get throws { try #require(try FormatVectors.published(section: section)["ya"]) } }
    static var yb: String { get throws { try #require(try FormatVectors.published(section: section)["yb"]) } }

    static func unhex(_ h: String) -> [UInt8] {
        let d = Array(h.utf8)
        return stride(from: 0, to: d.count, by: 2).map { UInt8(String(decoding: d[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }

    static func party(_ scalar: String) throws -> CPace {
        var p = Array(code.utf8), s = unhex(scalar)
        return try CPace(password: SecretBytes(consuming: &p), channel: MoveShortKeyExchange.channel, sid: sid,
                         scalar: SecretBytes(consuming: &s))
    }

    /// lv_cat of FORMAT.md's "Short code (version 3)": each field after
    /// its LEB128 length.
    static func lvCat(_ fields: [UInt8]...) -> [UInt8] { fields.flatMap { CPace.prependLength($0) } }

    static func sha512(_ b: [UInt8]) -> [UInt8] {
        let h = Sodium.SHA512()
        b.withUnsafeBytes { h.update($0) }
        var out = [UInt8](repeating: 0, count: Sodium.SHA512.length)
        out.withUnsafeMutableBytes { h.finish(into: $0) }
        return out
    }

    static func compute() throws -> [String: String] {
        let a = try party(ya), b = try party(yb)
        let iskA = try a.intermediateSessionKey(peerShare: b.share, ownData: [], peerData: [], initiator: true)
        let iskB = try b.intermediateSessionKey(peerShare: a.share, ownData: [], peerData: [], initiator: false)
        #expect(iskA == iskB)
        // CPace's inner values, built here as FORMAT.md spells them out, each
        // checked against what VaultCrypto.CPace computes.
        let dsi = Array("CPaceRistretto255".utf8), prs = Array(code.utf8)
        let zpad = max(0, 128 - 1 - CPace.prependLength(prs).count - CPace.prependLength(dsi).count)
        let generatorString = lvCat(dsi, prs, [UInt8](repeating: 0, count: zpad), MoveShortKeyExchange.channel, sid)
        var password = prs
        let g = try CPace.generator(password: SecretBytes(consuming: &password), channel: MoveShortKeyExchange.channel, sid: sid)
        var mapped = [UInt8](repeating: 0, count: 32)
        try sha512(generatorString).withUnsafeBytes { d in try mapped.withUnsafeMutableBytes { try Sodium.ristrettoFromHash(d, into: $0) } }
        #expect(mapped == g.withUnsafeBytes { Array($0) }, "g = ristretto255_from_hash(SHA-512(generator string))")
        let k = try a.secretPoint(peerShare: b.share)
        #expect(k == (try b.secretPoint(peerShare: a.share)))
        let kBytes = k.withUnsafeBytes { Array($0) }
        let iskInput = lvCat(Array("CPaceRistretto255_ISK".utf8), sid, kBytes) + lvCat(a.share, []) + lvCat(b.share, [])
        #expect(sha512(iskInput) == iskA.withUnsafeBytes { Array($0) }, "ISK = SHA-512(ISK input)")
        // The X-Wing parts are the hybrid vector's (same seed and eseed).
        let sk = try MoveHybridTests.receiverKey()
        let shares = sid + a.share + b.share
        let (s, ct) = try MoveSession.shortCodeSender(isk: iskA, shares: shares, receiverKey: sk.publicKey) {
            try XWing.encapsulate(to: $0, eseed: V.secret(MoveHybridTests.eseed))
        }
        let r = try MoveSession(shortCodeKey: sk, isk: iskB, shares: shares, ciphertext: ct)
        #expect(r.sendKey == s.receiveKey && r.receiveKey == s.sendKey)
        let secretHex = MoveTests.secretHex
        let receiverShare = MoveShortKeyExchange.receiverShare(share: b.share, key: sk.publicKey)
        return [
            "generator string": hex(generatorString),
            "g": MoveTests.secretHex(g),
            "K": hex(kBytes),
            "ISK input": hex(iskInput),
            "sender share message": hex(MoveShortKeyExchange.senderShare(sid: sid, share: a.share)),
            "receiver share message, first 33 bytes": hex(Array(receiverShare.prefix(33))),
            "ISK": secretHex(iskA),
            "s2r key": secretHex(r.senderToReceiverKey),
            "r2s key": secretHex(r.receiverToSenderKey),
            "confirm key": secretHex(r.confirmKey),
            "sender confirmation": hex(try s.ownConfirmation()),
            "receiver confirmation": hex(try r.ownConfirmation()),
            "SAS": s.sas,
        ]
    }

    @Test func publishedVectorMatches() throws {
        let got = try Self.compute()
        if ProcessInfo.processInfo.environment["VAULT_PRINT_VECTORS"] != nil {
            for (k, v) in got.sorted(by: { $0.key < $1.key }) { print("VECTOR \(k) = \(v)") }
        }
        let published = try FormatVectors.published(section: Self.section).filter { !Self.inputs.contains($0.key) }
        #expect(Set(published.keys) == Set(got.keys), "FORMAT.md names \(published.keys.sorted())")
        for (k, v) in got { #expect(published[k] == v, "vector \(k)") }
    }

    /// 2048 distinct words (11 bits each) of 3 to 8 lower-case letters, no
    /// two of them one typo apart.
    @Test func wordList() {
        let words = MoveWords.all
        #expect(words.count == 2048 && Set(words).count == 2048 && MoveWords.index.count == 2048)
        #expect(words.allSatisfy { (3...8).contains($0.count) && $0.utf8.allSatisfy { (0x61...0x7a).contains($0) } })
        func oneTypoApart(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            if a.count == b.count {
                let diff = a.indices.filter { a[$0] != b[$0] }
                return diff.count == 1 || (diff.count == 2 && diff[1] == diff[0] + 1 && a[diff[0]] == b[diff[1]] && a[diff[1]] == b[diff[0]])
            }
            let (short, long) = a.count < b.count ? (a, b) : (b, a)
            guard long.count == short.count + 1 else { return false }
            var i = 0
            while i < short.count && short[i] == long[i] { i += 1 }
            return short[i...] == long[(i + 1)...]
        }
        let byLength = Dictionary(grouping: words.map { Array($0.utf8) }, by: \.count)
        var close: [String] = []
        for (n, group) in byLength {
            let near = group + (byLength[n + 1] ?? [])
            for (i, a) in group.enumerated() {
                for b in near[(i + 1)...] where oneTypoApart(a, b) { close.append("\(String(decoding: a, as: UTF8.self))/\(String(decoding: b, as: UTF8.self))") }
            }
        }
        #expect(close.isEmpty, "\(close.prefix(10))")
    }

    @Test func textFormReadsBackAndForgives() throws {
        let c = MoveShortCode(address: MoveAddress("192.168.1.20")!, port: 41237)
        #expect(c.words.count == 3 && c.words.allSatisfy { MoveWords.index[$0] != nil })
        #expect(try MoveShortCode(text: c.text).secretPart == c.secretPart)
        let typed = try MoveShortCode(text: "  192.168.1.20   41237 Guitar ORBIT-velvet\n")
        #expect(typed.secretPart == Self.code && typed.address == MoveAddress("192.168.1.20"))
        let v6 = try MoveShortCode(text: "[::1] 7-guitar-orbit-velvet")
        #expect(v6.text == "[::1] 7-guitar-orbit-velvet" && v6.port == 7)
        #expect(MoveShortCode.looksLikeShortCode(c.text) && !MoveShortCode.looksLikeShortCode("AEAQ-CAYH"))
        let cases: [(String, MoveShortCode.ParseError)] = [
            ("", .noAddress), ("guitar 41237-orbit", .noAddress), ("10.0.0.1 guitar-orbit-velvet", .badNumber),
            ("10.0.0.1 0-guitar-orbit-velvet", .badNumber), ("10.0.0.1 65536-guitar-orbit-velvet", .badNumber),
            ("10.0.0.1 41237-guitar-orbit", .wordCount(2)), ("10.0.0.1 41237-a-b-c-d", .wordCount(4)),
            ("10.0.0.1 41237-guitar-orbbit-velvet", .unknownWord(position: 2, word: "orbbit")),
        ]
        for (text, error) in cases {
            #expect(throws: error, "\(text)") { try MoveShortCode(text: text) }
        }
        #expect(MoveShortCode.replacingWord(2, in: "10.0.0.1 41237-guitar-orbbit-velvet", with: "orbit\n")
                == "10.0.0.1 41237-guitar-orbit-velvet")
        // A long code's version byte never names the short-code handshake.
        var raw = try MoveCode(addresses: [MoveAddress("127.0.0.1")!], port: 1, receiverKey: XWing.PrivateKey().publicKey,
                               token: SecureRandom.bytes(16)).bytes
        raw[0] = 3
        raw = Array(raw.dropLast(4)) + MoveCode.checksum(Array(raw.dropLast(4)))
        #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(bytes: raw) }
    }

    /// A wrong password on either side, or a share swapped in transit: other
    /// keys, so the key confirmation fails.
    @Test func aWrongCodeFailsTheConfirmation() throws {
        let sk = try XWing.PrivateKey(), sid = SecureRandom.bytes(16)
        func session(_ sender: String, _ receiver: String) throws -> (MoveSession, MoveSession) {
            var p1 = Array(sender.utf8), p2 = Array(receiver.utf8)
            let a = try CPace(password: SecretBytes(consuming: &p1), channel: MoveShortKeyExchange.channel, sid: sid)
            let b = try CPace(password: SecretBytes(consuming: &p2), channel: MoveShortKeyExchange.channel, sid: sid)
            let shares = sid + a.share + b.share
            let (s, ct) = try MoveSession.shortCodeSender(
                isk: a.intermediateSessionKey(peerShare: b.share, ownData: [], peerData: [], initiator: true),
                shares: shares, receiverKey: sk.publicKey)
            let r = try MoveSession(shortCodeKey: sk, isk: b.intermediateSessionKey(peerShare: a.share, ownData: [], peerData: [], initiator: false),
                                    shares: shares, ciphertext: ct)
            return (s, r)
        }
        let (s, r) = try session(Self.code, Self.code)
        try r.verifyPeerConfirmation(try s.ownConfirmation())
        try s.verifyPeerConfirmation(try r.ownConfirmation())
        #expect(s.handshake == .shortCode && r.sas == s.sas)
        let (ws, wr) = try session("41237-guitar-orbit-zebra", Self.code)
        #expect(throws: VaultError.corruptedOrTampered) { try wr.verifyPeerConfirmation(try ws.ownConfirmation()) }
    }

    @Test func messageShapesAreExact() throws {
        let sk = try XWing.PrivateKey(), a = try Self.party(Self.ya)
        let first = MoveShortKeyExchange.senderShare(sid: Self.sid, share: a.share)
        #expect(first.count == 49 && first[0] == 0x31)
        #expect(try MoveShortKeyExchange.parseSenderShare(first) == (Self.sid, a.share))
        for bad in [Array(first.dropLast()), first + [0], [0x21] + first.dropFirst()] {
            #expect(throws: VaultError.corruptedOrTampered) { try MoveShortKeyExchange.parseSenderShare(Array(bad)) }
        }
        let second = MoveShortKeyExchange.receiverShare(share: a.share, key: sk.publicKey)
        #expect(second.count == 1249 && second[0] == 0x32)
        #expect(try MoveShortKeyExchange.parseReceiverShare(second).key == sk.publicKey)
        var badKey = second
        badKey[33] = 0xff
        badKey[34] |= 0x0f  // an ML-KEM coefficient >= q
        for bad in [Array(second.dropLast()), [0x22] + second.dropFirst(), badKey] {
            #expect(throws: MoveError.receiverKeyMismatch) { try MoveShortKeyExchange.parseReceiverShare(Array(bad)) }
        }
        let third = MoveShortKeyExchange.senderKey([UInt8](repeating: 7, count: 1120))
        #expect(third.count == 1121 && third[0] == 0x33)
        #expect(throws: VaultError.corruptedOrTampered) { try MoveShortKeyExchange.parseSenderKey(Array(third.dropLast())) }
    }
}
