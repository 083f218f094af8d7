import Foundation
import Synchronization
import System
import Testing
import VaultCrypto
@testable import VaultCore
@testable import VaultMove
#if canImport(Glibc)
import Glibc
#endif

/// `vault move` end to end on 127.0.0.1: the built binary on both sides, or
/// the binary on one side and this test playing a hostile peer on the other
/// (real sockets, real frames sealed with the session's keys).
@Suite("Move command", .serialized)
struct MoveCommandTests {
    /// A vault with two files, a folder and two waiting drop-ins.
    static func populated() throws -> VaultFixture {
        let v = try VaultFixture()
        let a = try v.write("a.txt", Array("alpha\n".utf8))
        let big = try v.write("big.bin", (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try FileManager.default.createDirectory(atPath: v.path + "/folder/sub", withIntermediateDirectories: true)
        try v.write("folder/sub/x", Array("x\n".utf8))
        for path in [a, big, v.path + "/folder"] { #expect(try v.add(["add", path]).status == 0) }
        #expect(try v.run(["list"]).status == 0)  // absorbs the three
        #expect(try v.add(["add", "-", "--name", "drop 1"], stdin: Array("one".utf8)).status == 0)
        #expect(try v.add(["add", "-", "--name", "drop 2"], stdin: Array("two".utf8)).status == 0)
        return v
    }

    static func waitForFile(_ path: String, timeout: Double = 20) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), !text.isEmpty { return text }
            usleep(10_000)
        }
        throw Failure("no \(path) after \(timeout) s")
    }

    /// `move receive` into `target`, listening on 127.0.0.1; returns it once
    /// its code file is there, with the code.
    static func receiver(_ v: VaultFixture, into target: String, _ extra: [String] = []) throws -> (Background, MoveCode, String) {
        let codeFile = v.path + "/code-\(UInt32.random(in: 0...UInt32.max))"
        let p = try Background(["--password-file", v.passwordFile, "move", "receive", "--into", target,
                                "--listen", "127.0.0.1:0", "--code-file", codeFile] + extra,
                               environment: v.environment(), cwd: v.path)
        let text = try waitForFile(codeFile)
        return (p, try MoveCode(text: text), codeFile)
    }

    static func send(_ v: VaultFixture, codeFile: String, _ extra: [String] = []) throws -> CLIHarness.Result {
        try v.run(["move", "send", "--code-file", codeFile] + extra, timeout: 60)
    }

    static func sas(_ stderr: String) -> String? {
        stderr.split(separator: "\n").first { $0.contains("security code: ") }
            .map { String($0.split(separator: " ")[3]) }
    }

    /// Nothing at `target`, and no staging directory beside it.
    static func expectNothingAt(_ target: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(!FileManager.default.fileExists(atPath: target), "target exists", sourceLocation: sourceLocation)
        let parent = (target as NSString).deletingLastPathComponent
        let staging = try FileManager.default.contentsOfDirectory(atPath: parent).filter { $0.contains(".moving-") }
        #expect(staging.isEmpty, "staging left: \(staging)", sourceLocation: sourceLocation)
    }

    /// The source vault still opens and every byte checks.
    static func expectIntact(_ v: VaultFixture, items: Int = 5, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try v.run(["check", "--read-data"])
        #expect(r.status == 0, "check: \(r.stderr)", sourceLocation: sourceLocation)
        #expect(try v.listed().count == items, sourceLocation: sourceLocation)
    }

    // MARK: the binary on both sides

    @Test func fullMoveThenSecondSenderRefused() throws {
        let v = try Self.populated()
        let before = try v.listed().sorted { $0.name < $1.name }
        let target = v.path + "/new/vault"  // the parent does not exist yet: created
        try FileManager.default.createDirectory(atPath: v.path + "/new", withIntermediateDirectories: true)
        let (receiver, _, codeFile) = try Self.receiver(v, into: target)
        defer { receiver.killGroup() }
        let s = try Self.send(v, codeFile: codeFile)
        #expect(s.status == 0, "send: \(s.stderr)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        #expect(Self.sas(s.stderr) != nil && Self.sas(s.stderr) == Self.sas(receiver.stderr))
        #expect(s.stderr.contains("erased the vault"))
        #expect(receiver.stderr.contains("the sender erased its copy"))
        #expect(!FileManager.default.fileExists(atPath: v.dir), "the old vault is gone")

        let moved = try VaultFixture(password: v.password, create: false)
        let r = try CLIHarness.run(["--vault", target, "--password-file", moved.passwordFile, "list", "--json"],
                                   environment: moved.environment(), cwd: moved.path)
        #expect(r.status == 0, "list: \(r.stderr)")
        #expect(try ListedItem.parse(r.stdout).sorted { $0.name < $1.name } == before)
        let big = try CLIHarness.run(["--vault", target, "--password-file", moved.passwordFile, "get", "big.bin"],
                                     environment: moved.environment(), cwd: moved.path)
        #expect(big.stdout == (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

        // The receiver stopped listening after the move: a second sender is refused.
        let second = try VaultFixture()
        let again = try Self.send(second, codeFile: codeFile)
        #expect(again.status == 1)
        #expect(again.stderr.contains("cannot connect"), "\(again.stderr)")
        #expect(try second.listed().isEmpty)
    }

    @Test func keepLeavesBothVaults() throws {
        let v = try Self.populated()
        let target = v.path + "/copy"
        let (receiver, _, codeFile) = try Self.receiver(v, into: target, ["--no-verify"])
        defer { receiver.killGroup() }
        let s = try Self.send(v, codeFile: codeFile, ["--keep"])
        #expect(s.status == 0, "send: \(s.stderr)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        #expect(receiver.stderr.contains("kept its copy"))
        try Self.expectIntact(v)
        let r = try CLIHarness.run(["--vault", target, "--password-file", v.passwordFile, "list"],
                                   environment: v.environment(), cwd: v.path)
        // A header, one line per item, the totals.
        #expect(r.status == 0 && r.stdoutText.split(separator: "\n").count == 7, "\(r.stderr)")
    }

    /// On a terminal: the code is typed at a prompt (echo on, it is read
    /// off another screen), the security code confirmed, then the password
    /// without echo (the code is proven before the password is asked).
    @Test func codeAndPasswordTypedOnATerminal() throws {
        let v = try Self.populated()
        let target = v.path + "/new"
        let (receiver, code, _) = try Self.receiver(v, into: target)
        defer { receiver.killGroup() }
        let r = try PTYDriver.run(["--vault", v.dir, "move", "send"],
                                  steps: [.expect("move code (from 'vault move receive'): "),
                                          .send(code.text.lowercased() + "\n"),
                                          .expect("Does the other machine show "), .expect("? [y/N] "), .send("y\n"),
                                          .expect("password: "), .send(v.password + "\n"),
                                          .expect("erased the vault")],
                                  environment: v.environment(), timeout: 60)
        #expect(r.failed_step == nil, "\(r.text)")
        #expect(r.echo_at_expect == [true, true, true, false, true])
        #expect(!r.transcript.contains(v.password))
        #expect(r.exit == 0)
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        #expect(Self.sas(r.text) == Self.sas(receiver.stderr))
    }

    /// The sender asks whether the receiver shows its security code; "no"
    /// sends nothing and keeps the vault; the receiver keeps nothing.
    @Test func aSecurityCodeThatDoesNotMatchStopsTheSender() throws {
        let v = try Self.populated()
        let target = v.path + "/new"
        let (receiver, _, codeFile) = try Self.receiver(v, into: target)
        defer { receiver.killGroup() }
        let r = try PTYDriver.run(["--vault", v.dir, "--password-file", v.passwordFile, "move", "send", "--code-file", codeFile],
                                  steps: [.expect("Does the other machine show "), .expect("? [y/N] "), .send("n\n")],
                                  environment: v.environment(), timeout: 60)
        #expect(r.failed_step == nil, "\(r.text)")
        #expect(r.exit == 1)
        #expect(r.screen.contains("vault: the security codes do not match; nothing was sent and the vault stays here"), "\(r.screen)")
        #expect(receiver.wait(timeout: 30) != 0)
        try Self.expectIntact(v)
        try Self.expectNothingAt(target)
    }

    /// A typo in one group of the code is named, before the password.
    @Test func aMistypedCodeNamesTheGroup() throws {
        let v = try Self.populated()
        let (receiver, code, _) = try Self.receiver(v, into: v.path + "/new")
        defer { receiver.killGroup() }
        var groups = code.text.split(separator: "-").map(String.init)
        var seventh = Array(groups[6])
        seventh[1] = seventh[1] == "Q" ? "R" : "Q"
        groups[6] = String(seventh)
        let typed = try v.sandbox.file("typo", groups.joined(separator: "-") + "\n")
        let r = try v.run(["move", "send", "--code-file", typed])
        #expect(r.status == 14)
        #expect(firstLine(r.stderr) == "vault: that is not a valid move code: group 7 looks mistyped", "\(r.stderr)")
        // A dropped character is found too.
        let dropped = try v.sandbox.file("short", code.text.replacingOccurrences(of: groups[2] + "-", with: String(groups[2].dropLast()) + "-") + "\n")
        #expect(firstLine(try v.run(["move", "send", "--code-file", dropped]).stderr) == "vault: that is not a valid move code: group 3 looks mistyped")
    }

    /// On a terminal a typo that one group explains is fixed by typing that
    /// group again, not the whole code; after the last byte the sender says
    /// it waits for the receiver's check (not a progress line frozen at
    /// "0 s left").
    @Test func aMistypedGroupIsAskedAgainOnATerminal() throws {
        let v = try Self.populated()
        let target = v.path + "/new"
        let (receiver, code, _) = try Self.receiver(v, into: target)
        defer { receiver.killGroup() }
        var groups = code.text.split(separator: "-").map(String.init)
        let seventh = groups[6]
        var wrong = Array(seventh)
        wrong[1] = wrong[1] == "Q" ? "R" : "Q"
        groups[6] = String(wrong)
        let r = try PTYDriver.run(["--vault", v.dir, "move", "send"],
                                  steps: [.expect("move code (from 'vault move receive'): "),
                                          .send(groups.joined(separator: "-") + "\n"),
                                          .expect("group 7 looks mistyped: type that group again"),
                                          .expect("group 7: "), .send(seventh.lowercased() + "\n"),
                                          .expect("? [y/N] "), .send("y\n"),
                                          .expect("password: "), .send(v.password + "\n"),
                                          .expect("sent everything; waiting for the receiver to check the vault"),
                                          .expect("erased the vault")],
                                  environment: v.environment(), timeout: 60)
        #expect(r.failed_step == nil, "\(r.text)")
        #expect(r.exit == 0, "\(r.text)")
        #expect(!r.screen.contains("s left"), "\(r.screen)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
    }

    @Test func missingParentsAreCreatedAndATrailingSlashIsFine() throws {
        let v = try Self.populated()
        let target = v.path + "/home/.local/share/vault/"
        let (receiver, _, codeFile) = try Self.receiver(v, into: target, ["--no-verify"])
        defer { receiver.killGroup() }
        let s = try Self.send(v, codeFile: codeFile)
        #expect(s.status == 0, "send: \(s.stderr)")
        #expect(receiver.wait(timeout: 30) == 0, "receive: \(receiver.stderr)")
        let r = try CLIHarness.run(["--vault", target, "--password-file", v.passwordFile, "check", "--read-data"],
                                   environment: v.environment(), cwd: v.path)
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// On a terminal the receiver draws the code as a QR code under its
    /// text; the code file is private.
    @Test func receiverShowsAQRCodeOnATerminal() throws {
        let v = try VaultFixture()
        let r = try PTYDriver.run(["--vault", v.path + "/new", "--password-file", v.passwordFile, "move", "receive",
                                   "--listen", "127.0.0.1:0", "--code-file", v.path + "/code"],
                                  steps: [.expect("move code: "), .expect("█"), .expect("waiting on port")],
                                  environment: v.environment(), timeout: 4)
        #expect(r.failed_step == nil, "\(r.text)")
        let lines = r.text.split(separator: "\n")
        let qr = lines.filter { $0.contains("█") || $0.contains("▀") || $0.contains("▄") }
        #expect(qr.count >= 10, "\(r.text)")
        let code = try String(contentsOfFile: v.path + "/code", encoding: .utf8)
        #expect(r.text.contains("move code: " + code.trimmingCharacters(in: .whitespacesAndNewlines)))
        let mode = try FileManager.default.attributesOfItem(atPath: v.path + "/code")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(!FileManager.default.fileExists(atPath: v.path + "/new"))
    }

    /// A damaged vault is never sent: the sender's check fails before it connects.
    @Test func damagedVaultIsNotSent() throws {
        let v = try Self.populated()
        let items = try FileManager.default.contentsOfDirectory(atPath: v.dir + "/items")
        let blob = try #require(items.max { (try? FileManager.default.attributesOfItem(atPath: v.dir + "/items/" + $0)[.size] as? Int) ?? 0
                                            < (try? FileManager.default.attributesOfItem(atPath: v.dir + "/items/" + $1)[.size] as? Int) ?? 0 })
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: v.dir + "/items/" + blob))
        try handle.seek(toOffset: 100_000)
        let byte = try #require(try handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: 100_000)
        try handle.write(contentsOf: [byte ^ 0x01])
        try handle.close()
        let target = v.path + "/new"
        let (receiver, _, codeFile) = try Self.receiver(v, into: target)
        defer { receiver.killGroup() }
        let s = try Self.send(v, codeFile: codeFile)
        #expect(s.status == 14, "\(s.stderr)")
        #expect(s.stderr.contains("the vault failed its check; nothing was sent"))
        // The code is proven first (issue 43, item 9), so the receiver saw
        // the handshake, then the sender go: it stops, with nothing kept.
        #expect(s.stderr.contains("connected to"))
        #expect(receiver.wait(timeout: 30) != 0, "\(receiver.stderr)")
        try Self.expectNothingAt(target)
        #expect(FileManager.default.fileExists(atPath: v.dir + "/vault.header"))
    }

    @Test func occupiedTargetRefusedBeforeListening() throws {
        let v = try VaultFixture()
        let other = try VaultFixture()
        let r = try other.run(["move", "receive", "--into", v.dir, "--listen", "127.0.0.1:0"])
        #expect(r.status == 15)
        #expect(r.stderr.contains("already exists"))
        #expect(!r.stdoutText.contains("move code"))
    }

    @Test func wrongTokenAndOtherKeyRefusedThenGiveUp() throws {
        let v = try Self.populated()
        let target = v.path + "/new"
        let (receiver, code, _) = try Self.receiver(v, into: target)
        defer { receiver.killGroup() }
        // A code with another token, then one with the hash of another
        // public key (a man in the middle handing out his own key): both
        // refused, the second by the sender before it sends anything.
        let wrongToken = try MoveCode(addresses: code.addresses, port: code.port, key: code.receiverKey,
                                      token: SecureRandom.bytes(16))
        let otherKey = try MoveCode(addresses: code.addresses, port: code.port,
                                    receiverKey: try XWing.PrivateKey().publicKey, token: code.token)
        let refusals = ["does not hold the keys of this move code",
                        "the receiver's key is corrupted or tampered with: it does not match the move code",
                        "does not hold the keys of this move code"]
        for (i, bad) in [wrongToken, otherKey, wrongToken].enumerated() {
            let file = try v.sandbox.file("bad\(i)", bad.text)
            let s = try Self.send(v, codeFile: file)
            // A code not held: 17; a key that does not match its own code's hash: tampering, 14.
            #expect(s.status == (i == 1 ? 14 : 17), "\(s.stderr)")
            #expect(s.stderr.contains(refusals[i]), "\(s.stderr)")
            #expect(!s.stderr.contains("security code"), "\(s.stderr)")
        }
        #expect(receiver.wait(timeout: 10) == 17, "receiver: \(receiver.stderr)")
        #expect(receiver.stderr.contains("3 connections did not hold the move code"))
        try Self.expectNothingAt(target)
        try Self.expectIntact(v)
    }

    @Test func mistypedCodeAndNoCode() throws {
        let v = try VaultFixture()
        let bad = try v.sandbox.file("typo", "AEAQ-I7YA-AAA3-JJPJ")
        let r = try Self.send(v, codeFile: bad)
        #expect(r.status == 14)
        #expect(r.stderr.contains("not a valid move code"))
        let none = try v.run(["move", "send"])  // no terminal, no --code-file
        #expect(none.status == 2)
        #expect(none.stderr.contains("no move code"))
    }

    // MARK: a hostile or failing sender (this test), the binary receiving

    /// Connects to the receiver and completes the handshake as a sender;
    /// returns the socket and the sealer for our frames.
    static func rawSender(_ code: MoveCode) throws -> (TCPConnection, FrameSealer) {
        let connection = try TCPConnection.connect(to: code.addresses, port: code.port)
        guard case .xwingHash(let hash) = code.receiverKey else { throw Failure("not a version-2 code") }
        var keyMessage = [UInt8](repeating: 0, count: MoveKeyExchange.receiverKeyLength)
        #expect(try keyMessage.withUnsafeMutableBytes { try connection.receive(into: $0) } == keyMessage.count)
        let receiverKey = try MoveKeyExchange.parseReceiverKey(keyMessage, expectedHash: hash)
        let (session, ciphertext) = try MoveSession.hybridSender(receiverKey: receiverKey, token: code.token)
        let sealer = try session.makeSealer()
        try MoveKeyExchange.senderKey(ciphertext).withUnsafeBytes { try connection.send($0) }
        try sealer.seal(session.ownConfirmation()).withUnsafeBytes { try connection.send($0) }
        var answer = [UInt8](repeating: 0, count: 4 + 48)
        #expect(try answer.withUnsafeMutableBytes { try connection.receive(into: $0) } == answer.count)
        return (connection, sealer)
    }

    static func sendRaw(_ connection: TCPConnection, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try connection.send($0) }
    }

    /// A valid beginning: an offer of one 10-byte manifest... then `tamper`
    /// decides what follows. The receiver must exit non-zero with nothing
    /// left behind.
    func hostileSender(_ tamper: (TCPConnection, FrameSealer) throws -> Void) throws -> (Int32?, String) {
        let v = try VaultFixture()
        let target = v.path + "/new"
        let (receiver, code, _) = try Self.receiver(v, into: target, ["--no-verify"])
        defer { receiver.killGroup() }
        let (connection, sealer) = try Self.rawSender(code)
        try Self.sendRaw(connection, sealer.seal(MoveMessage.offer(files: 2, bytes: 20).bytes))
        try Self.sendRaw(connection, sealer.seal(MoveMessage.file(path: "manifest", size: 10).bytes))
        try tamper(connection, sealer)
        let status = receiver.wait(timeout: 20)
        try Self.expectNothingAt(target)
        return (status, receiver.stderr)
    }

    @Test func replayedFrameRefused() throws {
        let (status, stderr) = try hostileSender { c, sealer in
            let frame = try sealer.seal(MoveMessage.data(ArraySlice(repeating: 1, count: 5)).bytes)
            try Self.sendRaw(c, frame)
            try Self.sendRaw(c, frame)  // the same frame again
        }
        #expect(status == 14, "\(stderr)")
    }

    @Test func reorderedFramesRefused() throws {
        let (status, stderr) = try hostileSender { c, sealer in
            let first = try sealer.seal(MoveMessage.data(ArraySlice(repeating: 1, count: 5)).bytes)
            let second = try sealer.seal(MoveMessage.data(ArraySlice(repeating: 2, count: 5)).bytes)
            try Self.sendRaw(c, second + first)
        }
        #expect(status == 14, "\(stderr)")
    }

    @Test func oversizedFrameRefusedFromItsPrefix() throws {
        let (status, stderr) = try hostileSender { c, _ in
            let length = UInt32(MoveFrame.maxSealedLength + 1)
            try Self.sendRaw(c, withUnsafeBytes(of: length.bigEndian, Array.init) + [UInt8](repeating: 0, count: 64))
        }
        #expect(status == 14, "\(stderr)")
    }

    @Test func truncatedFrameThenCloseRefused() throws {
        let (status, stderr) = try hostileSender { c, sealer in
            let frame = try sealer.seal(MoveMessage.data(ArraySlice(repeating: 1, count: 10)).bytes)
            try Self.sendRaw(c, Array(frame.prefix(frame.count - 3)))
            c.shutdownSending()  // the sender's socket closed mid-frame
        }
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("connection ended"))
    }

    @Test func senderGoneBetweenFramesLeavesNothing() throws {
        let (status, stderr) = try hostileSender { c, sealer in
            try Self.sendRaw(c, sealer.seal(MoveMessage.data(ArraySlice(repeating: 1, count: 4)).bytes))
            c.shutdownSending()  // as when the sender is killed: the kernel closes its socket
        }
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("connection ended"))
    }

    @Test func moreDataThanAnnouncedRefused() throws {
        let (status, stderr) = try hostileSender { c, sealer in
            try Self.sendRaw(c, sealer.seal(MoveMessage.data(ArraySlice(repeating: 1, count: 11)).bytes))
        }
        #expect(status == 14, "\(stderr)")
    }

    @Test func pathOutsideTheVaultLayoutRefused() throws {
        let (status, stderr) = try hostileSender { c, sealer in
            try Self.sendRaw(c, sealer.seal(MoveMessage.data(ArraySlice(repeating: 1, count: 10)).bytes))
            try Self.sendRaw(c, sealer.seal(MoveMessage.fileEnd(sha256: try SHA256.hash(Array(repeating: UInt8(1), count: 10))).bytes))
            var file = MoveMessage.file(path: "manifest", size: 10).bytes
            file.replaceSubrange(10..., with: Array("../evil".utf8))
            file[9] = 7
            try Self.sendRaw(c, sealer.seal(file))
        }
        #expect(status == 14, "\(stderr)")
    }

    @Test func receiverKilledLeavesStagingThatTheNextReceiveErases() throws {
        let v = try VaultFixture()
        let target = v.path + "/new"
        let (receiver, code, _) = try Self.receiver(v, into: target, ["--no-verify"])
        let (connection, sealer) = try Self.rawSender(code)
        try Self.sendRaw(connection, sealer.seal(MoveMessage.offer(files: 2, bytes: 20).bytes))
        try Self.sendRaw(connection, sealer.seal(MoveMessage.file(path: "manifest", size: 10).bytes))
        try Self.sendRaw(connection, sealer.seal(MoveMessage.data(ArraySlice(repeating: 1, count: 4)).bytes))
        let deadline = Date().addingTimeInterval(10)
        func staging() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: v.path)) ?? []).filter { $0.contains(".moving-") }
        }
        while staging().isEmpty, Date() < deadline { usleep(10_000) }
        #expect(!staging().isEmpty)
        receiver.killGroup()  // SIGKILL: no cleanup runs
        #expect(!FileManager.default.fileExists(atPath: target))
        let (next, _, _) = try Self.receiver(v, into: target)
        defer { next.killGroup() }
        #expect(staging().isEmpty, "the next receive erased the abandoned staging")
    }

    // MARK: the binary sending, this test receiving

    /// Listens as a receiver would, with our own key and token, and hands
    /// the real sender's channel to `act` after the handshake.
    func hostileReceiver(keep: Bool = false, _ act: (MoveChannel) throws -> Void) throws -> (VaultFixture, CLIHarness.Result) {
        let v = try Self.populated()
        let listener = try TCPListener(address: MoveAddress("127.0.0.1")!, port: 0)
        let own = try XWing.PrivateKey(), token = SecureRandom.bytes(16)
        let code = try MoveCode(addresses: [MoveAddress("127.0.0.1")!], port: listener.port, receiverKey: own.publicKey, token: token)
        let codeFile = try v.sandbox.file("code", code.text)
        let result = Mutex<CLIHarness.Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        let env = v.environment(), dir = v.dir, pw = v.passwordFile, cwd = v.path
        Thread.detachNewThread {
            let r = try? CLIHarness.run(["--vault", dir, "--password-file", pw, "move", "send", "--code-file", codeFile],
                                        environment: env, cwd: cwd, timeout: 60)
            result.withLock { $0 = r }
            done.signal()
        }
        do {
            // The channel (and its socket) ends with this scope, before we wait.
            let channel = try MoveChannel.accept(listener.accept(), ownKey: own, token: token)
            try act(channel)
        }
        done.wait()
        guard let r = result.withLock({ $0 }) else { throw Failure("sender did not run") }
        return (v, r)
    }

    @Test func wrongReceiptKeepsTheVault() throws {
        let (v, r) = try hostileReceiver { channel in
            while case (let m, false) = try channel.receive(), m != .end {}
            try channel.send(.receipt(Array(repeating: 0, count: 32)), final: true)
        }
        #expect(r.status == 14, "\(r.stderr)")
        try Self.expectIntact(v)
    }

    @Test func refusalKeepsTheVault() throws {
        let (v, r) = try hostileReceiver { channel in
            while case (let m, false) = try channel.receive(), m != .end {}
            try channel.send(.refused(.checkFailed), final: true)
        }
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("the receiver refused the vault: the received vault failed its check"))
        try Self.expectIntact(v)
    }

    @Test func receiverCutMidTransferKeepsTheVault() throws {
        let (v, r) = try hostileReceiver { channel in
            _ = try channel.receive()  // the offer
            _ = try channel.receive()  // the first file
            // The connection is dropped here (the channel goes away).
        }
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("connection ended") || r.stderr.contains("cannot send"), "\(r.stderr)")
        try Self.expectIntact(v)
    }

    /// A FIFO (or any non-regular file) as the code file is refused at once,
    /// before anything is read from it or sent.
    @Test func aCodeFileThatIsNotARegularFileIsRefusedAtOnce() throws {
        let v = try VaultFixture()
        let fifo = v.path + "/code.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let r = try v.run(["move", "send", "--code-file", fifo, "--yes"], timeout: 20)
        #expect(!r.timedOut && r.status == 1, "\(r)")
        #expect(r.stderr.contains("move code file '\(fifo)' is a FIFO (named pipe), not a regular file"), "\(r.stderr)")
        try Self.expectIntact(v, items: 0)
    }
}
