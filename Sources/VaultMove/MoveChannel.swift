import VaultCore
import Foundation
import VaultCrypto
import System

// The handshake and the sealed message stream of a move (docs/FORMAT.md,
// "Device move: handshake"), over one TCP connection. Version 2 (hybrid,
// what `vault move receive` makes):
//
//   receiver -> sender:  receiver key = 0x21 || X-Wing public key (1216)  (MoveKeyExchange)
//   sender -> receiver:  sender key   = 0x22 || X-Wing ciphertext (1120)
//   sender -> receiver:  frame 0 = sender's key confirmation
//   receiver -> sender:  frame 0 = receiver's key confirmation
//
// Version 1 (classic, older receivers):
//
//   sender -> receiver:  sender's ephemeral X25519 public key (32, in the clear)
//   sender -> receiver:  frame 0 = sender's key confirmation
//   receiver -> sender:  frame 0 = receiver's key confirmation
//
// Version 3 (short code, `vault move receive --words`; MoveShortKeyExchange):
//
//   sender -> receiver:  sender share   = 0x31 || sid (16) || Ya (32)
//   receiver -> sender:  receiver share = 0x32 || Yb (32) || X-Wing public key (1216)
//   sender -> receiver:  sender key     = 0x33 || X-Wing ciphertext (1120)
//   sender -> receiver:  frame 0 = sender's key confirmation
//   receiver -> sender:  frame 0 = receiver's key confirmation
//
// Each side checks the peer's confirmation before it sends anything else.
// After that, every frame's plaintext is one `MoveMessage`. Each side reads
// the handshake under a receive timeout (30 s), so a peer that sends a
// message cut short and stays silent costs at most that.

public final class MoveChannel {
    public let connection: TCPConnection
    public let session: MoveSession
    private let sealer: FrameSealer
    private let opener: FrameOpener
    private var body = [UInt8](repeating: 0, count: MoveFrame.maxSealedLength)
    private var outgoing = [UInt8](repeating: 0, count: MoveMessage.maxData + 1)

    /// Seconds each side waits for the peer's part of the handshake.
    public static let handshakeTimeout = 30

    private init(connection: TCPConnection, session: MoveSession) throws {
        self.connection = connection
        self.session = session
        sealer = try session.makeSealer()
        opener = try session.makeOpener()
    }

    /// The sender's side: the code says which handshake the receiver runs
    /// and holds its key (or, version 2, the hash of its key) and the
    /// token. A receiver whose key message does not match the code is
    /// `MoveError.receiverKeyMismatch`; one that does not answer with its
    /// confirmation (it closed, or its frame fails) means the code did not
    /// match: `MoveError.codeMismatch`.
    public static func connect(_ connection: TCPConnection, code: MoveCode,
                               timeout: Int = handshakeTimeout) throws -> MoveChannel {
        connection.setReceiveTimeout(timeout)
        let channel: MoveChannel
        switch code.receiverKey {
        case .x25519(let receiverKey):
            let own = try X25519PrivateKey()
            let session = try MoveSession(role: .sender, ownKey: own, peerPublicKey: receiverKey, token: code.token)
            channel = try MoveChannel(connection: connection, session: session)
            try channel.sendClear(own.publicKey.bytes)
        case .xwingHash(let hash):
            var message = [UInt8](repeating: 0, count: MoveKeyExchange.receiverKeyLength)
            let got = try message.withUnsafeMutableBytes { try connection.receive(into: $0) }
            guard got == message.count else { throw MoveError.receiverKeyMismatch }
            let receiverKey = try MoveKeyExchange.parseReceiverKey(message, expectedHash: hash)
            let (session, ciphertext) = try MoveSession.hybridSender(receiverKey: receiverKey, token: code.token)
            channel = try MoveChannel(connection: connection, session: session)
            try channel.sendClear(MoveKeyExchange.senderKey(ciphertext))
        }
        return try finishConnect(channel)
    }

    /// The sender's side of a short code (version 3): CPace over the code's
    /// password, then X-Wing to the key the receiver sent with its share. A
    /// receiver whose share or key is malformed is
    /// `MoveError.receiverKeyMismatch`; one that does not answer with its
    /// confirmation (a wrong code: it gives up) is `MoveError.codeMismatch`.
    public static func connect(_ connection: TCPConnection, shortCode: MoveShortCode,
                               timeout: Int = handshakeTimeout) throws -> MoveChannel {
        connection.setReceiveTimeout(timeout)
        let sid = SecureRandom.bytes(MoveShortKeyExchange.sidLength)
        let cpace = try CPace(password: shortCode.password(), channel: MoveShortKeyExchange.channel, sid: sid)
        try sendClear(MoveShortKeyExchange.senderShare(sid: sid, share: cpace.share), on: connection, more: false)
        var message = [UInt8](repeating: 0, count: MoveShortKeyExchange.receiverShareLength)
        let got = try message.withUnsafeMutableBytes { try connection.receive(into: $0) }
        guard got == message.count else { throw MoveError.codeMismatch }
        let (peerShare, receiverKey) = try MoveShortKeyExchange.parseReceiverShare(message)
        let isk: SecretBytes
        do { isk = try cpace.intermediateSessionKey(peerShare: peerShare, ownData: [], peerData: [], initiator: true) } catch {
            throw MoveError.receiverKeyMismatch  // not a ristretto255 element, or the identity
        }
        let (session, ciphertext) = try MoveSession.shortCodeSender(isk: isk, shares: sid + cpace.share + peerShare,
                                                                    receiverKey: receiverKey)
        let channel = try MoveChannel(connection: connection, session: session)
        try sendClear(MoveShortKeyExchange.senderKey(ciphertext), on: connection)
        return try finishConnect(channel)
    }

    /// Every version, sender: our confirmation, then the receiver's.
    private static func finishConnect(_ channel: MoveChannel) throws -> MoveChannel {
        try channel.sendRaw(channel.session.ownConfirmation())
        do {
            let (mac, final) = try channel.receiveRaw()
            guard !final else { throw VaultError.corruptedOrTampered }
            try channel.session.verifyPeerConfirmation(mac)
        } catch VaultError.corruptedOrTampered, MoveError.connectionLost {
            throw MoveError.codeMismatch
        }
        channel.connection.setReceiveTimeout(0)
        return channel
    }

    /// The receiver's side of version 1: reads the sender's key and
    /// confirmation within `timeout` seconds, then answers with ours. A
    /// wrong token or another key throws `corruptedOrTampered` before we
    /// have sent anything.
    public static func accept(_ connection: TCPConnection, ownKey: X25519PrivateKey, token: [UInt8],
                              timeout: Int = handshakeTimeout) throws -> MoveChannel {
        connection.setReceiveTimeout(timeout)
        var peer = [UInt8](repeating: 0, count: 32)
        guard try peer.withUnsafeMutableBytes({ try connection.receive(into: $0) }) == 32 else {
            throw VaultError.corruptedOrTampered
        }
        let session = try MoveSession(role: .receiver, ownKey: ownKey, peerPublicKey: X25519PublicKey(bytes: peer), token: token)
        return try finishAccept(connection, session: session)
    }

    /// The receiver's side of version 2: sends our X-Wing public key, then
    /// reads the sender's ciphertext and confirmation within `timeout`
    /// seconds, then answers with ours. A message cut short, a wrong token,
    /// or a ciphertext that is not the one the sender made (a flipped bit)
    /// throws `corruptedOrTampered` before we have sent our confirmation.
    public static func accept(_ connection: TCPConnection, ownKey: XWing.PrivateKey, token: [UInt8],
                              timeout: Int = handshakeTimeout) throws -> MoveChannel {
        connection.setReceiveTimeout(timeout)
        do {
            try MoveKeyExchange.receiverKey(ownKey.publicKey).withUnsafeBytes { try connection.send($0) }
        } catch let error as SystemError where [.connectionReset, .brokenPipe, .timedOut].contains(error.errno) {
            throw VaultError.corruptedOrTampered  // gone before the handshake: a failed attempt
        }
        var message = [UInt8](repeating: 0, count: MoveKeyExchange.senderKeyLength)
        guard try message.withUnsafeMutableBytes({ try connection.receive(into: $0) }) == message.count else {
            throw VaultError.corruptedOrTampered
        }
        let ciphertext = try MoveKeyExchange.parseSenderKey(message)
        let session = try MoveSession(receiverKey: ownKey, ciphertext: ciphertext, token: token)
        return try finishAccept(connection, session: session)
    }

    /// The receiver's side of a short code (version 3). Anything wrong up to
    /// the sender's ciphertext is `corruptedOrTampered` (no guess of the code
    /// was tested: the peer holds no confirmation from us, and gave none).
    /// From the ciphertext on, any failure is `MoveError.wrongShortCode`:
    /// the peer's key confirmation tested one guess, and the caller stops.
    public static func accept(_ connection: TCPConnection, shortCode: MoveShortCode, ownKey: XWing.PrivateKey,
                              timeout: Int = handshakeTimeout) throws -> MoveChannel {
        connection.setReceiveTimeout(timeout)
        var first = [UInt8](repeating: 0, count: MoveShortKeyExchange.senderShareLength)
        guard try first.withUnsafeMutableBytes({ try connection.receive(into: $0) }) == first.count else {
            throw VaultError.corruptedOrTampered
        }
        let (sid, peerShare) = try MoveShortKeyExchange.parseSenderShare(first)
        let cpace = try CPace(password: shortCode.password(), channel: MoveShortKeyExchange.channel, sid: sid)
        let isk: SecretBytes
        do { isk = try cpace.intermediateSessionKey(peerShare: peerShare, ownData: [], peerData: [], initiator: false) } catch {
            throw VaultError.corruptedOrTampered
        }
        do {
            try sendClear(MoveShortKeyExchange.receiverShare(share: cpace.share, key: ownKey.publicKey), on: connection, more: false)
        } catch MoveError.connectionLost {
            throw VaultError.corruptedOrTampered
        }
        var message = [UInt8](repeating: 0, count: MoveShortKeyExchange.senderKeyLength)
        guard try message.withUnsafeMutableBytes({ try connection.receive(into: $0) }) == message.count else {
            throw VaultError.corruptedOrTampered
        }
        let ciphertext = try MoveShortKeyExchange.parseSenderKey(message)
        do {
            let session = try MoveSession(shortCodeKey: ownKey, isk: isk, shares: sid + peerShare + cpace.share, ciphertext: ciphertext)
            return try finishAccept(connection, session: session)
        } catch VaultError.corruptedOrTampered, MoveError.connectionLost {
            throw MoveError.wrongShortCode
        }
    }

    /// Every version, receiver: the sender's confirmation, then ours.
    private static func finishAccept(_ connection: TCPConnection, session: MoveSession) throws -> MoveChannel {
        let channel = try MoveChannel(connection: connection, session: session)
        do {
            let (mac, final) = try channel.receiveRaw()
            guard !final else { throw VaultError.corruptedOrTampered }
            try session.verifyPeerConfirmation(mac)
        } catch MoveError.connectionLost {
            throw VaultError.corruptedOrTampered
        }
        try channel.sendRaw(session.ownConfirmation())
        connection.setReceiveTimeout(0)
        return channel
    }

    /// Handshake bytes before the first frame (which follows at once).
    private func sendClear(_ bytes: [UInt8]) throws { try Self.sendClear(bytes, on: connection) }

    /// `more`: a frame follows at once (so both go in one segment); a
    /// message we then wait on must not be held back.
    private static func sendClear(_ bytes: [UInt8], on connection: TCPConnection, more: Bool = true) throws {
        do {
            try bytes.withUnsafeBytes { try connection.send($0, more: more) }
        } catch let error as SystemError where [.connectionReset, .brokenPipe, .timedOut].contains(error.errno) {
            throw MoveError.connectionLost
        }
    }

    public var sas: String { session.sas }

    public func send(_ message: MoveMessage, final: Bool = false) throws {
        try sendRaw(message.bytes, final: final)
    }

    /// Sends a data message of `count` bytes (1 … 4 MiB) that `fill` writes
    /// straight into the outgoing plaintext buffer (a file's next piece),
    /// and returns what `fill` returns.
    public func sendData<R>(count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> R) throws -> R {
        precondition(count >= 1 && count <= MoveMessage.maxData)
        outgoing[0] = 0x03
        let r = try outgoing.withUnsafeMutableBytes { try fill(UnsafeMutableRawBufferPointer(rebasing: $0[1...count])) }
        try outgoing.withUnsafeBytes { try sendRaw(UnsafeRawBufferPointer(rebasing: $0[...count])) }
        return r
    }

    /// A peer that went away (reset, broken pipe) reads as
    /// `MoveError.connectionLost`, the same as when we are the one reading.
    private func sendRaw(_ plaintext: some ContiguousBytes, final: Bool = false) throws {
        let frame = try sealer.sealParts(plaintext, final: final)
        do {
            try frame.prefix.withUnsafeBytes { try connection.send($0, more: true) }
            try frame.body.withUnsafeBytes { try connection.send($0) }
        } catch let error as SystemError where [.connectionReset, .brokenPipe, .timedOut].contains(error.errno) {
            throw MoveError.connectionLost
        }
    }

    /// The next message and whether it was the peer's final frame. A
    /// connection that ends first is `MoveError.connectionLost`; a frame that fails
    /// is `corruptedOrTampered`.
    public func receive() throws -> (MoveMessage, final: Bool) {
        let (plaintext, final) = try receiveRaw()
        return (try MoveMessage(parsing: plaintext), final)
    }

    private func receiveRaw() throws -> ([UInt8], Bool) {
        var prefix = [UInt8](repeating: 0, count: MoveFrame.prefixLength)
        let got = try prefix.withUnsafeMutableBytes { try connection.receive(into: $0) }
        guard got == prefix.count else { throw MoveError.connectionLost }
        let length = try opener.sealedLength(prefix: prefix)
        let n = try body.withUnsafeMutableBytes { try connection.receive(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<length])) }
        guard n == length else { throw MoveError.connectionLost }
        return try body.withUnsafeBytes { try opener.open(sealed: UnsafeRawBufferPointer(rebasing: $0[..<length])) }
    }
}
