import Foundation
import Synchronization
import System
import TestSupport
import Testing
@testable import VaultCrypto
@testable import VaultCore
@testable import VaultMove

/// The hybrid (version 2) move handshake: the code's key hash, the key
/// messages, the X-Wing key schedule, and the handshake over real sockets
/// (docs/FORMAT.md, "Device move"). The published vector is read from
/// FORMAT.md itself ("Test vector: hybrid handshake"); VAULT_PRINT_VECTORS=1
/// prints what this code computes.
@Suite("Move, hybrid handshake")
struct MoveHybridTests {
    typealias V = MoveVectorBytes
    static let seed = V.seq(0x00, 32), token = V.seq(0x40, 16), eseed = V.seq(0x60, 64)

    static func receiverKey() throws -> XWing.PrivateKey { try XWing.PrivateKey(seed: V.secret(seed)) }

    /// Both sessions of the vector's handshake (the sender's encapsulation
    /// fixed by `eseed`), and the ciphertext.
    static func vectorPair() throws -> (receiver: MoveSession, sender: MoveSession, ciphertext: [UInt8]) {
        let sk = try receiverKey()
        let (s, ct) = try MoveSession.hybridSender(receiverKey: sk.publicKey, token: token) {
            try XWing.encapsulate(to: $0, eseed: V.secret(eseed))
        }
        return (try MoveSession(receiverKey: sk, ciphertext: ct, token: token), s, ct)
    }

    static func compute() throws -> [String: String] {
        let sk = try receiverKey()
        let (r, s, ct) = try vectorPair()
        let code = try MoveCode(addresses: [MoveAddress("127.0.0.1")!, MoveAddress("::1")!], port: 45123,
                                receiverKey: sk.publicKey, token: token)
        let secretHex = MoveTests.secretHex
        return [
            "receiver key message": hex(MoveKeyExchange.receiverKey(sk.publicKey)),
            "receiver key hash": hex(try MoveCode.receiverKeyHash(sk.publicKey)),
            "move code": hex(code.bytes),
            "move code text": code.text,
            "sender key message": hex(MoveKeyExchange.senderKey(ct)),
            "s2r key": secretHex(r.senderToReceiverKey),
            "r2s key": secretHex(r.receiverToSenderKey),
            "confirm key": secretHex(r.confirmKey),
            "sender confirmation": hex(try s.ownConfirmation()),
            "receiver confirmation": hex(try r.ownConfirmation()),
            "SAS": s.sas,
            "sender frame 0, final, hello": hex(try s.makeSealer().seal(Array("hello".utf8), final: true)),
        ]
    }

    /// The blocks of the FORMAT.md section: a line `` `name`: `` followed by
    /// indented lines (hex, or the code text), joined without spaces.
    static func published() throws -> [String: String] {
        try FormatVectors.published(section: "### Test vector: hybrid handshake")
    }

    @Test func publishedVectorMatches() throws {
        let got = try Self.compute()
        if ProcessInfo.processInfo.environment["VAULT_PRINT_VECTORS"] != nil {
            for (k, v) in got.sorted(by: { $0.key < $1.key }) { print("VECTOR \(k) = \(v)") }
        }
        let published = try Self.published()
        #expect(Set(published.keys) == Set(got.keys), "FORMAT.md names \(published.keys.sorted())")
        for (k, v) in got { #expect(published[k] == v, "vector \(k)") }
        // The published code text reads back to the published code.
        if let text = published["move code text"], let raw = published["move code"] {
            let code = try MoveCode(text: text)
            #expect(hex(code.bytes) == raw && code.handshake == .hybrid)
        }
    }

    @Test func bothSidesAgree() throws {
        let sk = try XWing.PrivateKey(), t = SecureRandom.bytes(16)
        let (s, ct) = try MoveSession.hybridSender(receiverKey: sk.publicKey, token: t)
        let r = try MoveSession(receiverKey: sk, ciphertext: ct, token: t)
        #expect(r.handshake == .hybrid && s.handshake == .hybrid)
        #expect(r.sas == s.sas && r.sas.count == 6)
        #expect(r.sendKey == s.receiveKey && r.receiveKey == s.sendKey && r.sendKey != r.receiveKey)
        try r.verifyPeerConfirmation(try s.ownConfirmation())
        try s.verifyPeerConfirmation(try r.ownConfirmation())
        // Each encapsulation is fresh: another session, other keys.
        let (s2, ct2) = try MoveSession.hybridSender(receiverKey: sk.publicKey, token: t)
        #expect(ct2 != ct && s2.sendKey != s.sendKey)
        // The version-1 schedule of the same parts never meets version 2:
        // its labels differ (checked through the vector: other keys).
        let (vr, _, _) = try Self.vectorPair()
        let (cr, _) = try MoveTests.pair(token: Self.token)
        #expect(vr.sendKey != cr.sendKey && vr.confirmKey != cr.confirmKey)
    }

    /// Any bit of the ciphertext altered (ML-KEM part, X25519 part, and the
    /// top bit of ct_X, which X25519 itself ignores) or a wrong token:
    /// other keys, so the confirmations fail both ways.
    @Test func alteredCiphertextOrTokenFailsConfirmation() throws {
        let sk = try XWing.PrivateKey(), t = SecureRandom.bytes(16)
        let (s, ct) = try MoveSession.hybridSender(receiverKey: sk.publicKey, token: t)
        var variants: [(String, [UInt8], [UInt8])] = []
        for bit in [0, 8 * 500 + 3, 8 * 1087 + 7, 8 * 1088, 8 * 1119 + 7] {
            var c = ct
            c[bit / 8] ^= UInt8(1 << (bit % 8))
            variants.append(("bit \(bit)", c, t))
        }
        var t2 = t
        t2[15] ^= 0x80
        variants.append(("token", ct, t2))
        for (name, c, token) in variants {
            let r = try MoveSession(receiverKey: sk, ciphertext: c, token: token)
            #expect(r.receiveKey != s.sendKey, "\(name)")
            #expect(throws: VaultError.corruptedOrTampered, "\(name)") { try r.verifyPeerConfirmation(try s.ownConfirmation()) }
            #expect(throws: VaultError.corruptedOrTampered, "\(name)") { try s.verifyPeerConfirmation(try r.ownConfirmation()) }
        }
        // Another length never reaches decapsulation.
        for n in [0, 1119, 1121] {
            #expect(throws: VaultError.corruptedOrTampered) { try MoveSession(receiverKey: sk, ciphertext: [UInt8](repeating: 1, count: n), token: t) }
        }
        // All-zero and all-ones ciphertexts decapsulate (implicit
        // rejection): keys, but not the sender's.
        for fill: UInt8 in [0, 0xff] {
            let r = try MoveSession(receiverKey: sk, ciphertext: [UInt8](repeating: fill, count: 1120), token: t)
            #expect(throws: VaultError.corruptedOrTampered) { try r.verifyPeerConfirmation(try s.ownConfirmation()) }
        }
    }

    @Test func receiverKeyMessageChecked() throws {
        let sk = try XWing.PrivateKey(), other = try XWing.PrivateKey()
        let hash = try MoveCode.receiverKeyHash(sk.publicKey)
        let good = MoveKeyExchange.receiverKey(sk.publicKey)
        #expect(good.count == 1217 && good[0] == 0x21)
        #expect(try MoveKeyExchange.parseReceiverKey(good, expectedHash: hash) == sk.publicKey)
        // An ML-KEM part that fails FIPS 203's modulus check, even when the
        // code's hash is of exactly those bytes.
        var bad = good
        bad[1] = 0xff
        bad[2] |= 0x0f  // first coefficient 4095 >= q
        let badHash = try SHA3_256.hash(MoveCode.receiverKeyLabel, Array(bad[1...]))
        #expect(throws: CryptoError.self) { try XWing.PublicKey(bytes: Array(bad[1...])) }
        var flipped = good
        flipped[1216] ^= 1
        let cases: [String: ([UInt8], [UInt8])] = [
            "another key": (MoveKeyExchange.receiverKey(other.publicKey), hash),
            "a flipped bit": (flipped, hash),
            "cut short": (Array(good.dropLast()), hash),
            "a byte more": (good + [0], hash),
            "empty": ([], hash),
            "wrong tag": ([0x22] + good.dropFirst(), hash),
            "sent the wrong way": (MoveKeyExchange.senderKey([UInt8](repeating: 0, count: 1120)), hash),
            "key fails its check": (bad, badHash),
            "short expected hash": (good, Array(hash.prefix(31))),
        ]
        for (name, (message, expected)) in cases {
            #expect(throws: MoveError.receiverKeyMismatch, "\(name)") {
                try MoveKeyExchange.parseReceiverKey(message, expectedHash: expected)
            }
        }
        let ct = [UInt8](repeating: 7, count: 1120)
        #expect(try MoveKeyExchange.parseSenderKey(MoveKeyExchange.senderKey(ct)) == ct)
        for bad in [[0x21] + ct, Array(MoveKeyExchange.senderKey(ct).dropLast()), MoveKeyExchange.senderKey(ct) + [0], []] {
            #expect(throws: VaultError.corruptedOrTampered) { try MoveKeyExchange.parseSenderKey(bad) }
        }
    }

    @Test func codeVersion2RoundTrip() throws {
        let sk = try XWing.PrivateKey(), t = SecureRandom.bytes(16)
        let addresses = [MoveAddress("192.168.1.20")!, MoveAddress("fe80::1")!]
        let v2 = try MoveCode(addresses: addresses, port: 7450, receiverKey: sk.publicKey, token: t)
        let v1 = try MoveCode(addresses: addresses, port: 7450, publicKey: try X25519PrivateKey().publicKey, token: t)
        #expect(v2.version == 2 && v2.handshake == .hybrid && v1.version == 1)
        #expect(v2.receiverKey == .xwingHash(try MoveCode.receiverKeyHash(sk.publicKey)))
        #expect(try MoveCode(bytes: v2.bytes) == v2 && MoveCode(text: v2.text) == v2)
        #expect(v2.bytes.count == v1.bytes.count && v2.text.count == v1.text.count, "as typable as version 1")
        #expect(v2.bytes[0] == 2)
    }

    // MARK: over real sockets (127.0.0.1)

    /// Runs `receiver` on a thread with the accepted connection while this
    /// thread connects and runs `sender`; returns both outcomes.
    static func overSocket<R: Sendable, S>(receiver: @escaping @Sendable (TCPConnection) throws -> R,
                                           sender: (TCPConnection) throws -> S) throws -> (Result<R, any Error>, Result<S, any Error>) {
        let listener = try TCPListener(address: MoveAddress("127.0.0.1")!, port: 0)
        let got = Mutex<Result<R, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            got.withLock { $0 = Result { try receiver(try listener.accept()) } }
            done.signal()
        }
        let connection = try TCPConnection.connect(to: [MoveAddress("127.0.0.1")!], port: listener.port)
        let s = Result { try sender(connection) }
        connection.shutdownSending()
        done.wait()
        return (got.withLock { $0! }, s)
    }

    @Test func handshakeOverASocketBothVersions() throws {
        let t = SecureRandom.bytes(16)
        // Version 2: our receiver and sender.
        let sk = try XWing.PrivateKey()
        let code2 = try MoveCode(addresses: [MoveAddress("127.0.0.1")!], port: 1, receiverKey: sk.publicKey, token: t)
        let (r2, s2) = try Self.overSocket(receiver: { c in try MoveChannel.accept(c, ownKey: sk, token: t).sas },
                                           sender: { c in try MoveChannel.connect(c, code: code2).sas })
        #expect(try r2.get() == s2.get())
        // Version 1 still works both ways.
        let xk = try X25519PrivateKey()
        let code1 = try MoveCode(addresses: [MoveAddress("127.0.0.1")!], port: 1, publicKey: xk.publicKey, token: t)
        let (r1, s1) = try Self.overSocket(receiver: { c in try MoveChannel.accept(c, ownKey: xk, token: t).sas },
                                           sender: { c in try MoveChannel.connect(c, code: code1).sas })
        #expect(try r1.get() == s1.get())
        // A version-2 code handed to a version-1 receiver (or the reverse)
        // fails cleanly, without a hang: each waits for what the other never sends.
        let (r3, s3) = try Self.overSocket(receiver: { c in try MoveChannel.accept(c, ownKey: xk, token: t, timeout: 2).sas },
                                           sender: { c in try MoveChannel.connect(c, code: code2, timeout: 2).sas })
        #expect(throws: VaultError.corruptedOrTampered) { try r3.get() }
        #expect(throws: MoveError.receiverKeyMismatch) { try s3.get() }
    }

    /// A first message cut short: refused at once when the peer closes,
    /// and within the timeout when it stays silent.
    @Test func truncatedFirstMessagesRefusedWithoutAHang() throws {
        let sk = try XWing.PrivateKey(), t = SecureRandom.bytes(16)
        let code = try MoveCode(addresses: [MoveAddress("127.0.0.1")!], port: 1, receiverKey: sk.publicKey, token: t)
        let keyMessage = MoveKeyExchange.receiverKey(sk.publicKey)
        for silent in [false, true] {
            // A receiver sending 1000 of its 1217 bytes, then closing or going silent.
            var senderSeconds = 0.0
            let (_, s) = try Self.overSocket(receiver: { c in
                try keyMessage.prefix(1000).withUnsafeBytes { try c.send($0) }
                if silent { usleep(3_000_000) }
            }, sender: { c in
                let start = Date()
                defer { senderSeconds = Date().timeIntervalSince(start) }
                return try MoveChannel.connect(c, code: code, timeout: 1)
            })
            #expect(throws: MoveError.receiverKeyMismatch) { try s.get() }
            #expect(senderSeconds < (silent ? 2 : 0.5), "silent: \(silent), \(senderSeconds) s")
            // A sender sending 1000 of its 1121 bytes, after a valid receiver key.
            let (r, _) = try Self.overSocket(receiver: { c in
                let start = Date()
                let r = Result { try MoveChannel.accept(c, ownKey: sk, token: t, timeout: 1).sas }
                return (r, Date().timeIntervalSince(start))
            }, sender: { c in
                var got = [UInt8](repeating: 0, count: 1217)
                _ = try got.withUnsafeMutableBytes { try c.receive(into: $0) }
                let (_, ct) = try MoveSession.hybridSender(receiverKey: sk.publicKey, token: t)
                try MoveKeyExchange.senderKey(ct).prefix(1000).withUnsafeBytes { try c.send($0) }
                if silent { usleep(3_000_000) } else { c.shutdownSending() }
            })
            let (accepted, receiverSeconds) = try r.get()
            #expect(throws: VaultError.corruptedOrTampered) { try accepted.get() }
            #expect(receiverSeconds < (silent ? 2 : 0.5), "silent: \(silent), \(receiverSeconds) s")
        }
    }
}
