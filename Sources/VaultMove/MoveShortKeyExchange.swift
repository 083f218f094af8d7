import VaultCore
import VaultCrypto

// The short-code (version 3) handshake's messages (docs/FORMAT.md, "Device
// move: short code"), sent in the clear before any frame:
//
//   sender share    = 0x31 || sid (16) || Ya (32)                        sender -> receiver, 49 bytes
//   receiver share  = 0x32 || Yb (32) || receiver's X-Wing public key (1216)   receiver -> sender, 1249 bytes
//   sender key      = 0x33 || X-Wing ciphertext to it (1120)             sender -> receiver, 1121 bytes
//
// Ya and Yb are CPace shares (VaultCrypto.CPace) over the code's password,
// channel identifier "vault v3 move short code", this sid, and empty
// associated data; the sender is CPace's initiator. sid is 16 random bytes
// from the sender. Every shape is fixed, so a reader reads exactly that many
// bytes under the handshake timeout and never allocates from what it reads.
// Nothing here is trusted by itself: the key confirmation that follows
// checks the CPace key, the X-Wing key and every byte above at once.

public enum MoveShortKeyExchange {
    public static let senderShareTag: UInt8 = 0x31
    public static let receiverShareTag: UInt8 = 0x32
    public static let senderKeyTag: UInt8 = 0x33
    public static let sidLength = 16
    public static let senderShareLength = 1 + sidLength + CPace.shareLength
    public static let receiverShareLength = 1 + CPace.shareLength + XWing.publicKeyLength
    public static let senderKeyLength = 1 + XWing.ciphertextLength
    /// CPace's channel identifier (CI) for a move.
    public static let channel = Array("vault v3 move short code".utf8)

    public static func senderShare(sid: [UInt8], share: [UInt8]) -> [UInt8] { [senderShareTag] + sid + share }

    public static func receiverShare(share: [UInt8], key: XWing.PublicKey) -> [UInt8] { [receiverShareTag] + share + key.bytes }

    public static func senderKey(_ ciphertext: [UInt8]) -> [UInt8] { [senderKeyTag] + ciphertext }

    /// (sid, Ya) of an exact sender share; anything else is `corruptedOrTampered`.
    public static func parseSenderShare(_ m: [UInt8]) throws -> (sid: [UInt8], share: [UInt8]) {
        guard m.count == senderShareLength, m[0] == senderShareTag else { throw VaultError.corruptedOrTampered }
        return (Array(m[1...sidLength]), Array(m[(1 + sidLength)...]))
    }

    /// (Yb, public key) of an exact receiver share whose key passes the
    /// X-Wing key checks; anything else is `MoveError.receiverKeyMismatch`.
    public static func parseReceiverShare(_ m: [UInt8]) throws -> (share: [UInt8], key: XWing.PublicKey) {
        guard m.count == receiverShareLength, m[0] == receiverShareTag,
              let key = try? XWing.PublicKey(bytes: Array(m[(1 + CPace.shareLength)...])) else {
            throw MoveError.receiverKeyMismatch
        }
        return (Array(m[1...CPace.shareLength]), key)
    }

    /// The ciphertext of an exact sender key message; anything else is `corruptedOrTampered`.
    public static func parseSenderKey(_ m: [UInt8]) throws -> [UInt8] {
        guard m.count == senderKeyLength, m[0] == senderKeyTag else { throw VaultError.corruptedOrTampered }
        return Array(m[1...])
    }
}
