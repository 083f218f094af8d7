import ByteLayout
import VaultCore
import Foundation
import VaultCrypto

// Move session keys (docs/FORMAT.md, "Device move: key schedule"). Two
// key agreements, chosen by the move code's version; everything after the
// four keys and the SAS (confirmations, frames, messages) is the same.
//
// Version 1 (classic). Both sides hold their own ephemeral X25519 key pair,
// the peer's public key, and the token from the move code:
//
//   shared       = X25519(own private key, peer public key)   (all-zero refused)
//   prk          = HKDF-Extract(salt = token (16), ikm = shared (32))
//   info(label)  = label || receiver public key (32) || sender public key (32)
//   s2r key      = HKDF-Expand(prk, info("vault v1 move sender to receiver key"), 32)
//   r2s key      = HKDF-Expand(prk, info("vault v1 move receiver to sender key"), 32)
//   confirm key  = HKDF-Expand(prk, info("vault v1 move confirmation key"), 32)
//   sas bytes    = HKDF-Expand(prk, info("vault v1 move sas"), 8)
//
// Version 2 (hybrid). The receiver holds an ephemeral X-Wing key pair; the
// sender, its public key pk (checked against the code's hash) and the token:
//
//   pk hash      = SHA3-256("vault v2 move receiver key" || pk (1216))   (the code's key field)
//   (ct, ss)     = X-Wing.Encapsulate(pk)   (sender);   ss = X-Wing.Decapsulate(ct, sk)   (receiver)
//   prk          = HKDF-Extract(salt = token (16), ikm = ss (32))
//   info(label)  = label || pk hash (32) || ct (1120)
//   s2r key      = HKDF-Expand(prk, info("vault v2 move sender to receiver key"), 32)
//   r2s key      = HKDF-Expand(prk, info("vault v2 move receiver to sender key"), 32)
//   confirm key  = HKDF-Expand(prk, info("vault v2 move confirmation key"), 32)
//   sas bytes    = HKDF-Expand(prk, info("vault v2 move sas"), 8)
//
// Version 3 (short code, MoveShortCode). CPace (initiator: the sender) over
// the code's password gives ISK (64 bytes); the receiver's ephemeral X-Wing
// key, sent after its CPace share, gives ss; the keys need both:
//
//   ISK          = CPace ISK (VaultCrypto.CPace, MoveShortKeyExchange)
//   pk hash      = SHA3-256("vault v2 move receiver key" || pk (1216))
//   (ct, ss)     = X-Wing.Encapsulate(pk)   (sender);   ss = X-Wing.Decapsulate(ct, sk)   (receiver)
//   prk          = HKDF-Extract(salt = ISK (64), ikm = ss (32))
//   info(label)  = label || sid (16) || Ya (32) || Yb (32) || pk hash (32) || ct (1120)
//   labels       = "vault v3 move sender to receiver key", "vault v3 move receiver to
//                  sender key", "vault v3 move confirmation key", "vault v3 move sas"
//
// Without the code's password no one has ISK, so the confirmations below
// authenticate the channel (and an X-Wing key swapped in transit changes
// the info); without ss a recording is safe even from someone who later
// solves discrete logarithms and so recovers ISK by trying every code.
//
// Every version:
//
//   SAS          = u64be(sas bytes) mod 10^6, as 6 decimal digits (leading zeros kept)
//   confirmation = HMAC-SHA256(confirm key, "vault v1 move key confirmation" || role)
//                  role = 0x01 sender, 0x02 receiver
//
// X-Wing's shared secret already hashes both halves (ML-KEM-768's and
// X25519's), so version 2 is at least as strong as version 1 if ML-KEM-768
// fails, and resists a recording decrypted later by a quantum computer if
// X25519 fails. The info binds the whole transcript (the key the code
// committed to and the ciphertext as sent). The confirmation label is
// unchanged: its key is already version-2 only.
//
// The mod bias of the SAS is below 2^-44 per value (2^64 mod 10^6 of the 2^64
// inputs map one extra time), which is negligible. Each side's first frame
// carries its own confirmation; each checks the peer's. A wrong token or a
// different public key (a man in the middle), or an altered ciphertext, gives
// other keys: the first frame fails to open or the confirmation fails, and
// both read the same: `corruptedOrTampered`.

public enum MoveRole: UInt8, Sendable {
    case sender = 1
    case receiver = 2

    public var peer: MoveRole { self == .sender ? .receiver : .sender }
}

public final class MoveSession: Sendable {
    /// The HKDF-Expand labels of one version.
    struct Labels {
        let s2r, r2s, confirmKey, sas: [UInt8]
        init(_ version: String) {
            s2r = Array("vault \(version) move sender to receiver key".utf8)
            r2s = Array("vault \(version) move receiver to sender key".utf8)
            confirmKey = Array("vault \(version) move confirmation key".utf8)
            sas = Array("vault \(version) move sas".utf8)
        }
        static let classic = Labels("v1"), hybrid = Labels("v2"), shortCode = Labels("v3")
    }
    static let confirmationLabel = Array("vault v1 move key confirmation".utf8)
    public static let keyLength = 32
    public static let confirmationLength = HMACSHA256.length
    public static let sasDigits = 6

    public let role: MoveRole
    public let handshake: MoveHandshake
    let senderToReceiverKey: SecretBytes
    let receiverToSenderKey: SecretBytes
    let confirmKey: SecretBytes
    /// The short authentication string both ends print: 6 decimal digits.
    public let sas: String

    /// The common schedule: `salt` is the code's token (versions 1 and 2)
    /// or the CPace ISK (version 3); `transcript` follows each label in the info.
    private init(role: MoveRole, handshake: MoveHandshake, shared: SecretBytes, salt: some ContiguousBytes, transcript: [UInt8]) throws {
        self.role = role
        self.handshake = handshake
        let labels = switch handshake {
        case .classic: Labels.classic
        case .hybrid: Labels.hybrid
        case .shortCode: Labels.shortCode
        }
        let prk = try HKDF.extract(salt: salt, ikm: shared)
        senderToReceiverKey = try HKDF.expand(prk: prk, info: labels.s2r + transcript, length: Self.keyLength)
        receiverToSenderKey = try HKDF.expand(prk: prk, info: labels.r2s + transcript, length: Self.keyLength)
        confirmKey = try HKDF.expand(prk: prk, info: labels.confirmKey + transcript, length: Self.keyLength)
        let sasBytes = try HKDF.expand(prk: prk, info: labels.sas + transcript, length: 8)
        sas = Self.sasString(try sasBytes.withUnsafeBytes { b in
            var r = RawByteReader(b)
            return try r.u64()
        })
    }

    /// Version 1 (classic), either side.
    public convenience init(role: MoveRole, ownKey: X25519PrivateKey, peerPublicKey: X25519PublicKey, token: [UInt8]) throws {
        guard token.count == MoveCode.tokenLength else { throw MoveError.misuse(.tokenLength) }
        // A peer echoing our own key back is a reflection, never an honest peer.
        guard ownKey.publicKey != peerPublicKey else { throw VaultError.corruptedOrTampered }
        let (receiver, sender) = role == .receiver ? (ownKey.publicKey, peerPublicKey) : (peerPublicKey, ownKey.publicKey)
        let shared: SecretBytes
        do { shared = try ownKey.sharedSecret(with: peerPublicKey) } catch { throw VaultError.corruptedOrTampered }
        try self.init(role: role, handshake: .classic, shared: shared, salt: token, transcript: receiver.bytes + sender.bytes)
    }

    /// Version 2 (hybrid), the sender's side: encapsulates to the receiver's
    /// X-Wing key (already checked against the code's hash) and returns the
    /// session with the ciphertext to send.
    public static func hybridSender(receiverKey: XWing.PublicKey, token: [UInt8]) throws
        -> (session: MoveSession, ciphertext: [UInt8]) {
        try hybridSender(receiverKey: receiverKey, token: token, encapsulation: { try XWing.encapsulate(to: $0) })
    }

    /// The same with the encapsulation given, so the vectors can fix its randomness.
    static func hybridSender(receiverKey: XWing.PublicKey, token: [UInt8],
                             encapsulation: (XWing.PublicKey) throws -> (ciphertext: [UInt8], sharedSecret: SecretBytes)) throws
        -> (session: MoveSession, ciphertext: [UInt8]) {
        guard token.count == MoveCode.tokenLength else { throw MoveError.misuse(.tokenLength) }
        let (ct, ss) = try encapsulation(receiverKey)
        let transcript = try MoveCode.receiverKeyHash(receiverKey) + ct
        return (try MoveSession(role: .sender, handshake: .hybrid, shared: ss, salt: token, transcript: transcript), ct)
    }

    /// Version 2 (hybrid), the receiver's side: decapsulates the sender's
    /// 1120-byte ciphertext. Any 1120 bytes decapsulate (a forged or altered
    /// ciphertext gives unrelated keys, so the confirmation fails); another
    /// length is `corruptedOrTampered`.
    public convenience init(receiverKey: XWing.PrivateKey, ciphertext: [UInt8], token: [UInt8]) throws {
        guard token.count == MoveCode.tokenLength else { throw MoveError.misuse(.tokenLength) }
        guard ciphertext.count == XWing.ciphertextLength else { throw VaultError.corruptedOrTampered }
        let ss = try XWing.decapsulate(ciphertext, with: receiverKey)
        let transcript = try MoveCode.receiverKeyHash(receiverKey.publicKey) + ciphertext
        try self.init(role: .receiver, handshake: .hybrid, shared: ss, salt: token, transcript: transcript)
    }

    /// Version 3 (short code), the sender's side: `isk` from CPace, `shares`
    /// = sid || Ya || Yb as sent. Encapsulates to the receiver's X-Wing key
    /// and returns the session with the ciphertext to send.
    public static func shortCodeSender(isk: SecretBytes, shares: [UInt8], receiverKey: XWing.PublicKey) throws
        -> (session: MoveSession, ciphertext: [UInt8]) {
        try shortCodeSender(isk: isk, shares: shares, receiverKey: receiverKey, encapsulation: { try XWing.encapsulate(to: $0) })
    }

    /// The same with the encapsulation given, so the vectors can fix its randomness.
    static func shortCodeSender(isk: SecretBytes, shares: [UInt8], receiverKey: XWing.PublicKey,
                                encapsulation: (XWing.PublicKey) throws -> (ciphertext: [UInt8], sharedSecret: SecretBytes)) throws
        -> (session: MoveSession, ciphertext: [UInt8]) {
        let (ct, ss) = try encapsulation(receiverKey)
        let transcript = try shares + MoveCode.receiverKeyHash(receiverKey) + ct
        return (try MoveSession(role: .sender, handshake: .shortCode, shared: ss, salt: isk, transcript: transcript), ct)
    }

    /// Version 3 (short code), the receiver's side: decapsulates the
    /// sender's 1120-byte ciphertext (any 1120 bytes do; a forged one gives
    /// keys whose confirmation fails).
    public convenience init(shortCodeKey receiverKey: XWing.PrivateKey, isk: SecretBytes, shares: [UInt8], ciphertext: [UInt8]) throws {
        guard ciphertext.count == XWing.ciphertextLength else { throw VaultError.corruptedOrTampered }
        let ss = try XWing.decapsulate(ciphertext, with: receiverKey)
        let transcript = try shares + MoveCode.receiverKeyHash(receiverKey.publicKey) + ciphertext
        try self.init(role: .receiver, handshake: .shortCode, shared: ss, salt: isk, transcript: transcript)
    }

    static func sasString(_ v: UInt64) -> String {
        let n = String(v % 1_000_000)
        return String(repeating: "0", count: sasDigits - n.count) + n
    }

    /// The key this side seals with.
    var sendKey: SecretBytes { role == .sender ? senderToReceiverKey : receiverToSenderKey }
    /// The key this side opens with.
    var receiveKey: SecretBytes { role == .sender ? receiverToSenderKey : senderToReceiverKey }

    /// The confirmation a side in `role` sends as its first frame's content.
    func confirmation(for role: MoveRole) throws -> [UInt8] {
        try HMACSHA256.authenticate(key: confirmKey, data: Self.confirmationLabel + [role.rawValue])
    }

    /// What this side sends first.
    public func ownConfirmation() throws -> [UInt8] { try confirmation(for: role) }

    /// Checks the peer's first frame content in constant time.
    public func verifyPeerConfirmation(_ mac: [UInt8]) throws {
        guard mac.count == Self.confirmationLength,
              try HMACSHA256.verify(mac, key: confirmKey, data: Self.confirmationLabel + [role.peer.rawValue]) else {
            throw VaultError.corruptedOrTampered
        }
    }

    /// Seals frames toward the peer.
    public func makeSealer() throws -> FrameSealer { try FrameSealer(key: sendKey) }
    /// Opens frames from the peer.
    public func makeOpener() throws -> FrameOpener { try FrameOpener(key: receiveKey) }
}
