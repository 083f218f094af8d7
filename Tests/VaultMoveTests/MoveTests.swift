import Foundation
import Testing
import VaultCrypto
@testable import VaultCore
@testable import VaultMove

/// Device move: the move code, the session key schedule, and the frames
/// (docs/FORMAT.md, "Device move").
@Suite("Move formats")
struct MoveTests {
    static func key(_ first: UInt8) throws -> X25519PrivateKey {
        var b = (0..<32).map { first &+ UInt8($0) }
        return try X25519PrivateKey(secret: try SecretBytes(consuming: &b))
    }
    static func secretHex(_ s: SecretBytes) -> String { s.withUnsafeBytes { hex(Array($0)) } }

    static func sampleCode() throws -> MoveCode {
        try MoveCode(addresses: [MoveAddress("192.168.1.20")!, MoveAddress("fe80::1")!, MoveAddress("10.0.0.5")!],
                     port: 45123, publicKey: try X25519PrivateKey().publicKey, token: SecureRandom.bytes(16))
    }

    static func pair(token: [UInt8] = Array(0x40...0x4f)) throws -> (MoveSession, MoveSession) {
        let r = try key(0x00), s = try key(0x20)
        return (try MoveSession(role: .receiver, ownKey: r, peerPublicKey: s.publicKey, token: token),
                try MoveSession(role: .sender, ownKey: s, peerPublicKey: r.publicKey, token: token))
    }

    // MARK: code

    @Test func codeRoundTrip() throws {
        let code = try Self.sampleCode()
        #expect(try MoveCode(bytes: code.bytes) == code)
        #expect(try MoveCode(text: code.text) == code)
        #expect(try MoveCode(text: code.text.lowercased().replacingOccurrences(of: "-", with: " ")) == code)
        #expect(code.addresses.map(\.description) == ["192.168.1.20", "fe80::1", "10.0.0.5"])
        #expect(code.bytes.count == 2 + 5 + 17 + 5 + 2 + 32 + 16 + 4)
    }

    @Test func codeBounds() throws {
        let pk = try X25519PrivateKey().publicKey, t = SecureRandom.bytes(16)
        let nine = Array(repeating: MoveAddress("127.0.0.1")!, count: 9)
        #expect(throws: MoveError.misuse(.codeAddressCount)) { try MoveCode(addresses: nine, port: 1, publicKey: pk, token: t) }
        #expect(throws: MoveError.misuse(.codeAddressCount)) { try MoveCode(addresses: [], port: 1, publicKey: pk, token: t) }
        #expect(throws: MoveError.misuse(.codePortZero)) { try MoveCode(addresses: [MoveAddress("::1")!], port: 0, publicKey: pk, token: t) }
        #expect(throws: MoveError.misuse(.tokenLength)) { try MoveCode(addresses: [MoveAddress("::1")!], port: 1, publicKey: pk, token: [1]) }
        let eight = try MoveCode(addresses: Array(repeating: MoveAddress("::1")!, count: 8), port: 1, publicKey: pk, token: t)
        #expect(try MoveCode(text: eight.text) == eight)
        // A body claiming 9 addresses, with a valid checksum, is still refused.
        var b = eight.bytes.dropLast(4).map { $0 }
        b[1] = 9
        #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(bytes: b + MoveCode.checksum(b)) }
        // Versions 0 and 3, re-checksummed.
        for version: UInt8 in [0, 3, 0xff] {
            var v = eight.bytes.dropLast(4).map { $0 }
            v[0] = version
            #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(bytes: v + MoveCode.checksum(v)) }
        }
        // Version 1 relabelled as 2 parses, as the other
        // handshake with the same 32 bytes: the checksum is what stops a typo.
        var v2 = eight.bytes.dropLast(4).map { $0 }
        v2[0] = 2
        let relabelled = try MoveCode(bytes: v2 + MoveCode.checksum(v2))
        #expect(relabelled.handshake == .hybrid && relabelled.receiverKey == .xwingHash(pk.bytes))
        #expect(relabelled.text.count == eight.text.count)
        #expect(throws: MoveError.misuse(.codeKeyLength)) { try MoveCode(addresses: [MoveAddress("::1")!], port: 1, key: .xwingHash([1]), token: t) }
        // Bad address family, re-checksummed.
        var f = eight.bytes.dropLast(4).map { $0 }
        f[2] = 5
        #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(bytes: f + MoveCode.checksum(f)) }
        #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(text: "") }
        #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(text: String(repeating: "A", count: 2000)) }
    }

    @Test func codeTypoRejected() throws {
        let code = try Self.sampleCode()
        let chars = Array(code.text.utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
        for i in chars.indices where chars[i] != UInt8(ascii: "-") {
            var t = chars
            t[i] = alphabet[(alphabet.firstIndex(of: t[i])! + 1 + i % 31) % 32]
            #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(text: String(decoding: t, as: UTF8.self)) }
        }
        // Swapped neighbours, a dropped and an extra character.
        var swapped = chars.filter { $0 != UInt8(ascii: "-") }
        if let j = swapped.indices.dropLast().first(where: { swapped[$0] != swapped[$0 + 1] }) {
            swapped.swapAt(j, j + 1)
            #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(text: String(decoding: swapped, as: UTF8.self)) }
        }
        #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(text: String(code.text.dropLast())) }
        #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(text: code.text + "A") }
        #expect(throws: VaultError.corruptedOrTampered) { try MoveCode(text: code.text.replacingOccurrences(of: "-", with: "\u{0}")) }
    }

    /// The group typed again replaces the typed group (a dropped or added
    /// character stays inside its group), or, typed with no dashes, the
    /// code's characters cut in fours.
    @Test func aGroupTypedAgainReplacesIt() throws {
        let code = try Self.sampleCode()
        var groups = code.text.split(separator: "-").map(String.init)
        let third = groups[2]
        groups[2] = String(third.dropLast())
        let dropped = groups.joined(separator: "-")
        #expect(MoveCode.likelyTypo(in: dropped) == 3)
        #expect(try MoveCode(text: MoveCode.replacingGroup(3, in: dropped, with: third.lowercased() + "\n")) == code)
        groups[2] = third + "Q"
        #expect(try MoveCode(text: MoveCode.replacingGroup(3, in: groups.joined(separator: " "), with: third)) == code)
        var chars = Array(code.text.replacingOccurrences(of: "-", with: ""))
        chars[9] = chars[9] == "A" ? "B" : "A"
        #expect(try MoveCode(text: MoveCode.replacingGroup(3, in: String(chars), with: third)) == code)
        #expect(MoveCode.replacingGroup(99, in: "AB", with: "CD") == "AB")
    }

    /// Published in docs/FORMAT.md ("Device move: test vectors").
    @Test func codeVector() throws {
        let code = try MoveCode(addresses: [MoveAddress("127.0.0.1")!, MoveAddress("::1")!], port: 45123,
                                publicKey: try Self.key(0x00).publicKey, token: Array(0x40...0x4f))
        #expect(hex(code.bytes) == "0102047f0000010600000000000000000000000000000001b0438f40c5adb68f25624ae5b214ea767a6ec94d"
                + "829d3d7b5e1ad1ba6f3e2138285f404142434445464748494a4b4c4d4e4f9fe3b62d")
        #expect(code.text == "AEBA-I7YA-AAAQ-MAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AANQ-IOHU-BRNN-W2HS-KYSK-4WZB-J2TW-"
                + "PJXM-STMC-TU6X-WXQ2-2G5G-6PRB-HAUF-6QCB-IJBU-IRKG-I5EE-SSSL-JRGU-4T47-4O3C-2")
    }

    // MARK: key schedule

    @Test func bothSidesAgree() throws {
        let r = try X25519PrivateKey(), s = try X25519PrivateKey(), t = SecureRandom.bytes(16)
        let rs = try MoveSession(role: .receiver, ownKey: r, peerPublicKey: s.publicKey, token: t)
        let ss = try MoveSession(role: .sender, ownKey: s, peerPublicKey: r.publicKey, token: t)
        #expect(rs.sas == ss.sas)
        #expect(rs.sas.count == 6 && rs.sas.allSatisfy(\.isNumber))
        #expect(rs.sendKey == ss.receiveKey && rs.receiveKey == ss.sendKey)
        #expect(rs.sendKey != rs.receiveKey)
        try rs.verifyPeerConfirmation(try ss.ownConfirmation())
        try ss.verifyPeerConfirmation(try rs.ownConfirmation())
        // A side's own confirmation reflected back is refused.
        #expect(throws: VaultError.corruptedOrTampered) { try rs.verifyPeerConfirmation(try rs.ownConfirmation()) }
    }

    @Test func wrongTokenOrKeyFails() throws {
        let r = try X25519PrivateKey(), s = try X25519PrivateKey(), m = try X25519PrivateKey(), t = SecureRandom.bytes(16)
        let rs = try MoveSession(role: .receiver, ownKey: r, peerPublicKey: s.publicKey, token: t)
        var t2 = t; t2[0] ^= 1
        let wrongToken = try MoveSession(role: .sender, ownKey: s, peerPublicKey: r.publicKey, token: t2)
        // Man in the middle: the sender was given the attacker's key in the code.
        let mitm = try MoveSession(role: .sender, ownKey: s, peerPublicKey: m.publicKey, token: t)
        // The attacker completing the receiver side with the token it learnt.
        let attacker = try MoveSession(role: .receiver, ownKey: m, peerPublicKey: s.publicKey, token: t)
        for other in [wrongToken, mitm] {
            #expect(other.sendKey != rs.receiveKey)
            #expect(throws: VaultError.corruptedOrTampered) { try rs.verifyPeerConfirmation(try other.ownConfirmation()) }
            #expect(throws: VaultError.corruptedOrTampered) { try other.verifyPeerConfirmation(try rs.ownConfirmation()) }
            let frame = try other.makeSealer().seal(try other.ownConfirmation())
            var buf = frame
            #expect(throws: VaultError.corruptedOrTampered) { _ = try rs.makeOpener().next(from: &buf) }
        }
        #expect(attacker.sas != rs.sas || attacker.sendKey != rs.sendKey)
        #expect(throws: VaultError.self) { try MoveSession(role: .sender, ownKey: s, peerPublicKey: s.publicKey, token: t) }
        #expect(throws: VaultError.corruptedOrTampered) {
            try MoveSession(role: .sender, ownKey: s, peerPublicKey: try X25519PublicKey(bytes: [UInt8](repeating: 0, count: 32)), token: t)
        }
    }

    @Test func sasFormatting() {
        #expect(MoveSession.sasString(0) == "000000")
        #expect(MoveSession.sasString(1_000_042) == "000042")
        #expect(MoveSession.sasString(UInt64.max) == "551615")
    }

    /// Published in docs/FORMAT.md ("Device move: test vector").
    @Test func keyScheduleVector() throws {
        let (r, s) = try Self.pair()
        let v = Self.vector
        #expect(hex(try Self.key(0x00).publicKey.bytes) == v["receiver public"])
        #expect(hex(try Self.key(0x20).publicKey.bytes) == v["sender public"])
        #expect(r.handshake == .classic && s.handshake == .classic)
        #expect(Self.secretHex(r.senderToReceiverKey) == v["s2r"])
        #expect(Self.secretHex(r.receiverToSenderKey) == v["r2s"])
        #expect(Self.secretHex(r.confirmKey) == v["confirm"])
        #expect(hex(try s.ownConfirmation()) == v["sender confirmation"])
        #expect(hex(try r.ownConfirmation()) == v["receiver confirmation"])
        #expect(r.sas == v["sas"] && s.sas == v["sas"])
        #expect(hex(try s.makeSealer().seal(Array("hello".utf8), final: true)) == v["frame 0 final hello"])
    }

    static let vector: [String: String] = [
        "receiver public": "8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f",
        "sender public": "358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254",
        "s2r": "dbf02472dcb771033a487495d8143a05a16709ac5202436cae1830796e570dad",
        "r2s": "115c5b28e258aa79dcfde5fff57c6daefe4322c5dbd6fe43627954c98101bef3",
        "confirm": "a9104f37fec016c111424966fe04201e0a6f8c7ed437c260574a5ef2a5ab1be8",
        "sender confirmation": "94a6881dac3f3d9e3e9029ecac656071602d8cf942da303b9b950ed13a4f7641",
        "receiver confirmation": "78e81aa54318175ecdb654d2dc5e6dbdf90bc46f9422d4dfeec7b1147cf5f7a3",
        "sas": "467506",
        "frame 0 final hello": "000000157b2c05cfa76dbea97f3ea468cfc9fa6be195f489b8",
    ]

    // MARK: frames

    @Test func framesRoundTrip() throws {
        let (r, s) = try Self.pair()
        let sealer = try s.makeSealer(), opener = try r.makeOpener()
        let messages: [[UInt8]] = [try s.ownConfirmation(), [], Array(repeating: 7, count: MoveFrame.maxPlaintextLength), Array("end".utf8)]
        var stream: [UInt8] = []
        for (i, m) in messages.enumerated() { stream += try sealer.seal(m, final: i == messages.count - 1) }
        #expect(throws: MoveError.misuse(.frameAfterFinal)) { _ = try sealer.seal([1]) }
        #expect(throws: MoveError.misuse(.frameLength(MoveFrame.maxPlaintextLength + 1))) { _ = try s.makeSealer().seal(Array(repeating: 0, count: MoveFrame.maxPlaintextLength + 1)) }
        // Fed in uneven pieces, as a socket would.
        var buf: [UInt8] = [], got: [([UInt8], Bool)] = [], pos = 0
        while pos < stream.count {
            let n = min(stream.count - pos, 1 + pos % 100_003)
            buf += stream[pos..<(pos + n)]; pos += n
            while let f = try opener.next(from: &buf) { got.append(f) }
        }
        #expect(got.map(\.0) == messages)
        #expect(got.map(\.1) == [false, false, false, true])
        try opener.finish(leftover: buf)
        try r.verifyPeerConfirmation(got[0].0)
        // The other direction uses the other key.
        var back = try r.makeSealer().seal([1, 2, 3], final: true)
        #expect(try s.makeOpener().next(from: &back)?.plaintext == [1, 2, 3])
        var wrongWay = try s.makeSealer().seal([1, 2, 3])
        #expect(throws: VaultError.corruptedOrTampered) { _ = try s.makeOpener().next(from: &wrongWay) }
    }

    static func frames(_ s: MoveSession, _ n: Int) throws -> [[UInt8]] {
        let sealer = try s.makeSealer()
        return try (0..<n).map { try sealer.seal([UInt8($0), 0xaa], final: $0 == n - 1) }
    }

    static func openAll(_ r: MoveSession, _ frames: [[UInt8]]) throws {
        let opener = try r.makeOpener()
        var buf = frames.flatMap { $0 }
        while try opener.next(from: &buf) != nil {}
        try opener.finish(leftover: buf)
    }

    @Test func tamperedStreamsRefused() throws {
        let (r, s) = try Self.pair()
        let f = try Self.frames(s, 4)
        try Self.openAll(r, f)
        let cases: [String: [[UInt8]]] = [
            "replayed": [f[0], f[0], f[1], f[2], f[3]],
            "reordered": [f[1], f[0], f[2], f[3]],
            "dropped": [f[0], f[2], f[3]],
            "no final": [f[0], f[1], f[2]],
            "cut mid-frame": [f[0], f[1], f[2], Array(f[3].dropLast(3))],
            "cut in prefix": [f[0], f[1], f[2], Array(f[3].prefix(2))],
            "after final": [f[0], f[1], f[2], f[3], f[0]],
            "after final, junk": [f[0], f[1], f[2], f[3], [0, 0, 0, 16] + [UInt8](repeating: 0, count: 16)],
            "flipped bit": [f[0], f[1], f[2].enumerated().map { $0.offset == 6 ? $0.element ^ 1 : $0.element }, f[3]],
            "length changed": [f[0], f[1], [0, 0, 0, 17] + f[2].dropFirst(4) + [0], f[3]],
            "empty": [],
        ]
        for (name, frames) in cases {
            #expect(throws: VaultError.corruptedOrTampered, "\(name)") { try Self.openAll(r, frames) }
        }
        // A non-final frame re-marked final cannot be forged: last frame of a
        // stream cut after frame 1 is not final.
        #expect(throws: VaultError.corruptedOrTampered) { try Self.openAll(r, [f[0], f[1]]) }
    }

    @Test func oversizedRefusedFromPrefix() throws {
        let (r, _) = try Self.pair()
        let opener = try r.makeOpener()
        // The prefix alone is enough: no body needed, nothing allocated.
        var huge: [UInt8] = [0xff, 0xff, 0xff, 0xff]
        #expect(throws: VaultError.corruptedOrTampered) { _ = try opener.next(from: &huge) }
        let l = UInt32(MoveFrame.maxSealedLength + 1)
        #expect(throws: VaultError.corruptedOrTampered) {
            _ = try r.makeOpener().sealedLength(prefix: withUnsafeBytes(of: l.bigEndian, Array.init))
        }
        #expect(try r.makeOpener().sealedLength(prefix: withUnsafeBytes(of: UInt32(MoveFrame.maxSealedLength).bigEndian, Array.init))
                == MoveFrame.maxSealedLength)
        var short: [UInt8] = [0, 0, 0, 15] + [UInt8](repeating: 0, count: 15)
        #expect(throws: VaultError.corruptedOrTampered) { _ = try r.makeOpener().next(from: &short) }
        // Once failed, the opener refuses everything after.
        var good = try Self.frames(try Self.pair().1, 1)[0]
        #expect(throws: VaultError.corruptedOrTampered) { _ = try opener.next(from: &good) }
    }

    // MARK: transfer messages (docs/FORMAT.md, "Device move: transfer")

    @Test func messageVectors() throws {
        #expect(hex(MoveMessage.offer(files: 3, bytes: 6).bytes) == "01000000030000000000000006")
        #expect(hex(MoveMessage.file(path: "manifest", size: 3).bytes) == "020000000000000003086d616e6966657374")
        let files: [(path: String, size: UInt64, sha256: [UInt8])] = try [
            ("items/000102030405060708090a0b0c0d0e0f", 3, SHA256.hash(Array("abc".utf8))),
            ("manifest", 0, SHA256.hash([UInt8]())),
            ("vault.header", 3, SHA256.hash(Array("hdr".utf8))),
        ]
        #expect(hex(try MoveLayout.receipt(files)) == "d69f0cf493ee434aa4a20d12516e514586dd44fc316ff7316c819d50f6056861")
    }

    @Test func messagesRoundTrip() throws {
        let all: [MoveMessage] = [
            .offer(files: 1, bytes: 0), .offer(files: MoveMessage.maxFiles, bytes: MoveMessage.maxTotalBytes),
            .file(path: "vault.header", size: 182), .file(path: "inbox/0123456789abcdef0123456789abcdef.env", size: 0),
            .file(path: "inbox/0123456789abcdef0123456789abcdef.item", size: 1), .file(path: "rekey.pending", size: 9),
            .data([1]), .data(ArraySlice<UInt8>(repeating: 7, count: MoveMessage.maxData)),
            .fileEnd(sha256: Array(0..<32)), .end, .done(.erased), .done(.kept),
            .receipt(Array(32..<64)), .refused(.noSpace), .refused(.wrongPassword),
        ]
        for m in all { #expect(try MoveMessage(parsing: m.bytes) == m) }
    }

    @Test func messagesRefused() throws {
        let bad: [String: [UInt8]] = [
            "empty": [],
            "unknown type": [0x07],
            "offer of no files": [0x01, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8),
            "offer of too many files": [0x01, 0, 0x10, 0, 1] + [UInt8](repeating: 0, count: 8),
            "offer too short": [0x01, 0, 0, 0, 1],
            "empty data": [0x03],
            "data too long": [0x03] + [UInt8](repeating: 0, count: MoveMessage.maxData + 1),
            "short hash": [0x04] + [UInt8](repeating: 0, count: 31),
            "end with a byte": [0x05, 0],
            "unknown outcome": [0x06, 3],
            "unknown refusal": [0x12, 0],
            "path length lies": [0x02, 0, 0, 0, 0, 0, 0, 0, 1, 9] + Array("manifest".utf8),
        ]
        for (name, b) in bad {
            #expect(throws: VaultError.corruptedOrTampered, "\(name)") { try MoveMessage(parsing: b) }
        }
        for path in ["../manifest", "/etc/passwd", "items/../vault.header", "items/0123456789ABCDEF0123456789ABCDEF",
                     "items/0123456789abcdef0123456789abcde", "inbox/0123456789abcdef0123456789abcdef.tmp",
                     "inbox/0123456789abcdef0123456789abcdef", "lock", "attempts", "scratch/x", "items/.tmp-00",
                     "vault.header\u{0}", "manifest ", ""] {
            #expect(MoveLayout.check(Array(path.utf8)) == nil, "\(path)")
        }
    }
}
