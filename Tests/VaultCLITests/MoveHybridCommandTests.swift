import Foundation
import Synchronization
import System
import Testing
import VaultCrypto
@testable import VaultCore
@testable import VaultMove

/// `vault move` with the hybrid (version 2) handshake against peers this
/// test plays over real sockets on 127.0.0.1: an older (version 1)
/// receiver built from VaultMove's own classes, a receiver whose key does
/// not match its code, one whose key message is cut short, and a man in
/// the middle who flips one bit of the sender's X-Wing ciphertext.
@Suite("Move command, hybrid handshake", .serialized)
struct MoveHybridCommandTests {
    static let localhost = MoveAddress("127.0.0.1")!

    /// Runs the real `move send --code-file` for `code` on a thread while
    /// `act` handles the connection it makes to `listener`; returns the
    /// sender's result once both are done.
    static func send(_ v: VaultFixture, code: MoveCode, listener: TCPListener, _ extra: [String] = [],
                     _ act: (TCPConnection) throws -> Void) throws -> CLIHarness.Result {
        let codeFile = try v.sandbox.file("code-\(UInt32.random(in: 0...UInt32.max))", code.text + "\n")
        let result = Mutex<CLIHarness.Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        let env = v.environment(), dir = v.dir, pw = v.passwordFile, cwd = v.path
        Thread.detachNewThread {
            let r = try? CLIHarness.run(["--vault", dir, "--password-file", pw, "move", "send", "--code-file", codeFile] + extra,
                                        environment: env, cwd: cwd, timeout: 60)
            result.withLock { $0 = r }
            done.signal()
        }
        do {
            // The connection ends with this scope, before we wait.
            let connection = try listener.accept()
            try act(connection)
        }
        done.wait()
        guard let r = result.withLock({ $0 }) else { throw Failure("sender did not run") }
        return r
    }

    /// A code from an older receiver still moves the vault: the version-1
    /// handshake and VaultMove's own receiver, in this process, the real
    /// binary sending. The sender says, in one line, which handshake it used.
    @Test func aVersion1CodeStillMovesTheVault() throws {
        let v = try MoveCommandTests.populated()
        let before = try v.listed().sorted { $0.name < $1.name }
        let target = v.path + "/moved"
        let listener = try TCPListener(address: Self.localhost, port: 0)
        let own = try X25519PrivateKey(), token = SecureRandom.bytes(MoveCode.tokenLength)
        let code = try MoveCode(addresses: [Self.localhost], port: listener.port, publicKey: own.publicKey, token: token)
        #expect(code.version == 1)
        var outcome: MoveOutcome?
        let s = try Self.send(v, code: code, listener: listener) { connection in
            let channel = try MoveChannel.accept(connection, ownKey: own, token: token)
            #expect(channel.session.handshake == .classic)
            let receiver = try MoveReceiver(target: target)
            try receiver.receive(over: channel)
            try receiver.commit()
            try receiver.confirm(over: channel)
            outcome = receiver.summary.outcome
        }
        #expect(s.status == 0, "send: \(s.stderr)")
        let lines = s.stderr.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.contains("classic") } == [
            "vault: warning: the receiver runs an older vault: this move uses the classic X25519-only handshake, not the hybrid (post-quantum) one",
        ], "\(s.stderr)")
        #expect(s.stderr.contains("erased the vault"), "\(s.stderr)")
        #expect(outcome == .erased)
        let moved = try CLIHarness.run(["--vault", target, "--password-file", v.passwordFile, "list", "--json"],
                                       environment: v.environment(), cwd: v.path)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(try ListedItem.parse(moved.stdout).sorted { $0.name < $1.name } == before)
        let check = try CLIHarness.run(["--vault", target, "--password-file", v.passwordFile, "check", "--read-data"],
                                       environment: v.environment(), cwd: v.path)
        #expect(check.status == 0, "\(check.stderr)")
    }

    /// A receiver that sends an X-Wing key other than the one whose hash is
    /// in the code (a valid key, a key with one bit flipped, a key message
    /// cut short then closed, another tag): refused before anything is
    /// sent, and the vault stays and checks.
    @Test(arguments: ["another key", "a flipped bit", "cut short", "another tag"])
    func aReceiverKeyThatDoesNotMatchTheCodeIsRefused(_ how: String) throws {
        let v = try MoveCommandTests.populated()
        let listener = try TCPListener(address: Self.localhost, port: 0)
        let own = try XWing.PrivateKey(), token = SecureRandom.bytes(MoveCode.tokenLength)
        let code = try MoveCode(addresses: [Self.localhost], port: listener.port, receiverKey: own.publicKey, token: token)
        var message = MoveKeyExchange.receiverKey(own.publicKey)
        switch how {
        case "another key": message = MoveKeyExchange.receiverKey(try XWing.PrivateKey().publicKey)
        case "a flipped bit": message[700] ^= 0x10
        case "cut short": message = Array(message.prefix(1216))
        default: message[0] = 0x22
        }
        let start = Date()
        var sentToUs = 0
        let s = try Self.send(v, code: code, listener: listener) { connection in
            try message.withUnsafeBytes { try connection.send($0) }
            if how == "cut short" { connection.shutdownSending() }
            // The sender closes without a byte for us.
            connection.setReceiveTimeout(20)
            var buffer = [UInt8](repeating: 0, count: 64)
            sentToUs = try buffer.withUnsafeMutableBytes { try connection.receive(into: $0) }
        }
        #expect(Date().timeIntervalSince(start) < 15, "no hang")
        #expect(sentToUs == 0)
        #expect(s.status == 14, "\(s.stderr)")
        #expect(s.stderr.contains("vault: the receiver's key is corrupted or tampered with: it does not match the move code"), "\(s.stderr)")
        #expect(!s.stderr.contains("security code"), "\(s.stderr)")
        #expect(!s.stderr.contains("classic"), "\(s.stderr)")
        try MoveCommandTests.expectIntact(v)
    }

    /// Forwards one connection from a sender to `upstream`, byte by byte,
    /// flipping bit 0 of the byte at `flip` in the sender's direction.
    static func flippingProxy(_ listener: TCPListener, to upstream: MoveCode, flip: Int) {
        Thread.detachNewThread {
            guard let client = try? listener.accept(),
                  let server = try? TCPConnection.connect(to: upstream.addresses, port: upstream.port) else { return }
            let finished = DispatchSemaphore(value: 0)
            @Sendable func pump(_ from: TCPConnection, _ to: TCPConnection, flipAt: Int?) {
                var byte: [UInt8] = [0], offset = 0
                while (try? byte.withUnsafeMutableBytes { try from.receive(into: $0) }) == 1 {
                    if offset == flipAt { byte[0] ^= 1 }
                    offset += 1
                    guard (try? byte.withUnsafeBytes { try to.send($0) }) != nil else { break }
                }
                to.shutdownSending()
            }
            Thread.detachNewThread { pump(server, client, flipAt: nil); finished.signal() }
            pump(client, server, flipAt: flip)
            finished.wait()
        }
    }

    /// A man in the middle flips one bit of the sender's X-Wing ciphertext:
    /// the receiver derives other keys, the sender's confirmation fails, and
    /// the receiver closes without confirming. The sender reports the
    /// mismatch and keeps its vault; the receiver counts a failed attempt and
    /// still takes the genuine sender afterwards. Then a sender key message
    /// cut short is a second failed attempt, refused at once.
    @Test func aCiphertextAlteredOnTheWayFailsTheConfirmation() throws {
        let v = try MoveCommandTests.populated()
        let target = v.path + "/moved"
        let (receiver, code, codeFile) = try MoveCommandTests.receiver(v, into: target)
        defer { receiver.killGroup() }
        #expect(code.handshake == .hybrid)

        // Bit 0 of ciphertext byte 400 (the ML-KEM part); the stream
        // starts with the 0x22 tag.
        let proxy = try TCPListener(address: Self.localhost, port: 0)
        Self.flippingProxy(proxy, to: code, flip: 1 + 400)
        let viaProxy = try MoveCode(addresses: [Self.localhost], port: proxy.port, key: code.receiverKey, token: code.token)
        let proxyFile = try v.sandbox.file("proxy-code", viaProxy.text + "\n")
        let s = try MoveCommandTests.send(v, codeFile: proxyFile)
        #expect(s.status == 17, "\(s.stderr)")
        #expect(s.stderr.contains("vault: the receiver does not hold the keys of this move code"), "\(s.stderr)")
        #expect(!s.stderr.contains("security code"), "\(s.stderr)")
        try MoveCommandTests.expectIntact(v)
        try MoveCommandTests.expectNothingAt(target)

        // A sender key message cut short, then closed.
        let c = try TCPConnection.connect(to: code.addresses, port: code.port)
        var keyMessage = [UInt8](repeating: 0, count: MoveKeyExchange.receiverKeyLength)
        #expect(try keyMessage.withUnsafeMutableBytes { try c.receive(into: $0) } == keyMessage.count)
        guard case .xwingHash(let hash) = code.receiverKey else { throw Failure("not a version-2 code") }
        let (_, ciphertext) = try MoveSession.hybridSender(receiverKey: try MoveKeyExchange.parseReceiverKey(keyMessage, expectedHash: hash),
                                                           token: code.token)
        try MoveKeyExchange.senderKey(ciphertext).prefix(600).withUnsafeBytes { try c.send($0) }
        c.shutdownSending()
        c.setReceiveTimeout(10)
        var answer = [UInt8](repeating: 0, count: 16)
        #expect(try answer.withUnsafeMutableBytes { try c.receive(into: $0) } == 0, "closed without an answer")

        #expect(receiver.poll() == nil, "the receiver still waits: \(receiver.stderr)")
        let good = try MoveCommandTests.send(v, codeFile: codeFile)
        #expect(good.status == 0, "send: \(good.stderr)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        let refusals = receiver.stderr.split(separator: "\n").filter { $0.contains("refused a connection") }
        #expect(refusals.count == 2 && refusals[0].hasSuffix("it does not hold this move code (1 of 3)")
                && refusals[1].hasSuffix("(2 of 3)"), "\(receiver.stderr)")
        #expect(MoveCommandTests.sas(good.stderr) == MoveCommandTests.sas(receiver.stderr))
        #expect(!good.stderr.contains("classic"))
    }
}
