import VaultCore
import Foundation
import VaultCrypto

// Move session keys (docs/FORMAT.md, "Device move: key schedule"). Both sides
// hold their own ephemeral X25519 key pair, the peer's public key, and the
// token from the move code:
//
//   shared       = X25519(own private key, peer public key)   (all-zero refused)
//   prk          = HKDF-Extract(salt = token (16), ikm = shared (32))
//   info(label)  = label || receiver public key (32) || sender public key (32)
//   s2r key      = HKDF-Expand(prk, info("vault v1 move sender to receiver key"), 32)
//   r2s key      = HKDF-Expand(prk, info("vault v1 move receiver to sender key"), 32)
//   confirm key  = HKDF-Expand(prk, info("vault v1 move confirmation key"), 32)
//   sas bytes    = HKDF-Expand(prk, info("vault v1 move sas"), 8)
//   SAS          = u64be(sas bytes) mod 10^6, as 6 decimal digits (leading zeros kept)
//   confirmation = HMAC-SHA256(confirm key, "vault v1 move key confirmation" || role)
//                  role = 0x01 sender, 0x02 receiver
//
// The mod bias of the SAS is below 2^-44 per value (2^64 mod 10^6 of the 2^64
// inputs map one extra time), which is negligible. Each side's first frame
// carries its own confirmation; each checks the peer's. A wrong token or a
// different public key (a man in the middle) gives other keys: the first
// frame fails to open or the confirmation fails, and both read the same:
// `corruptedOrTampered`.

public enum MoveRole: UInt8, Sendable {
    case sender = 1
    case receiver = 2

    public var peer: MoveRole { self == .sender ? .receiver : .sender }
}

public final class MoveSession: Sendable {
    static let s2rLabel = Array("vault v1 move sender to receiver key".utf8)
    static let r2sLabel = Array("vault v1 move receiver to sender key".utf8)
    static let confirmKeyLabel = Array("vault v1 move confirmation key".utf8)
    static let sasLabel = Array("vault v1 move sas".utf8)
    static let confirmationLabel = Array("vault v1 move key confirmation".utf8)
    public static let keyLength = 32
    public static let confirmationLength = HMACSHA256.length
    public static let sasDigits = 6

    public let role: MoveRole
    public let receiverPublicKey: X25519PublicKey
    public let senderPublicKey: X25519PublicKey
    let senderToReceiverKey: SecretBytes
    let receiverToSenderKey: SecretBytes
    let confirmKey: SecretBytes
    /// The short authentication string both ends print: 6 decimal digits.
    public let sas: String

    public init(role: MoveRole, ownKey: X25519PrivateKey, peerPublicKey: X25519PublicKey, token: [UInt8]) throws {
        guard token.count == MoveCode.tokenLength else { throw VaultError.invalidArgument("move token must be 16 bytes") }
        // A peer echoing our own key back is a reflection, never an honest peer.
        guard ownKey.publicKey != peerPublicKey else { throw VaultError.corruptedOrTampered }
        self.role = role
        (receiverPublicKey, senderPublicKey) = role == .receiver
            ? (ownKey.publicKey, peerPublicKey) : (peerPublicKey, ownKey.publicKey)
        let shared: SecretBytes
        do { shared = try ownKey.sharedSecret(with: peerPublicKey) } catch { throw VaultError.corruptedOrTampered }
        let prk = try HKDF.extract(salt: token, ikm: shared)
        let keys = receiverPublicKey.bytes + senderPublicKey.bytes
        senderToReceiverKey = try HKDF.expand(prk: prk, info: Self.s2rLabel + keys, length: Self.keyLength)
        receiverToSenderKey = try HKDF.expand(prk: prk, info: Self.r2sLabel + keys, length: Self.keyLength)
        confirmKey = try HKDF.expand(prk: prk, info: Self.confirmKeyLabel + keys, length: Self.keyLength)
        let sasBytes = try HKDF.expand(prk: prk, info: Self.sasLabel + keys, length: 8)
        sas = Self.sasString(sasBytes.withUnsafeBytes { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } })
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
