import VaultCore
import VaultCrypto

// The hybrid (version 2) handshake's key messages (docs/FORMAT.md, "Device
// move: handshake"), sent in the clear before any frame:
//
//   receiver key = 0x21 || receiver's X-Wing public key (1216)   receiver -> sender, 1217 bytes
//   sender key   = 0x22 || X-Wing ciphertext to it (1120)         sender -> receiver, 1121 bytes
//
// The tags (high nibble: the handshake version, low: the message) make a
// message sent the wrong way, or one of another version, fail at once.
// Both shapes are fixed, so a reader reads exactly that many bytes (under a
// receive timeout) and never allocates from what it reads. The public key is
// trusted only once SHA3-256("vault v2 move receiver key" || pk) equals the
// hash in the code the user typed, compared in constant time; then its
// ML-KEM part must pass FIPS 203's section 7.2 check.

public enum MoveKeyExchange {
    public static let receiverKeyTag: UInt8 = 0x21
    public static let senderKeyTag: UInt8 = 0x22
    public static let receiverKeyLength = 1 + XWing.publicKeyLength
    public static let senderKeyLength = 1 + XWing.ciphertextLength

    public static func receiverKey(_ pk: XWing.PublicKey) -> [UInt8] { [receiverKeyTag] + pk.bytes }

    public static func senderKey(_ ciphertext: [UInt8]) -> [UInt8] { [senderKeyTag] + ciphertext }

    /// The receiver's public key, if `message` is exactly a receiver key
    /// message whose key hashes to `expectedHash` and passes the key checks;
    /// anything else is `MoveError.receiverKeyMismatch`.
    public static func parseReceiverKey(_ message: [UInt8], expectedHash: [UInt8]) throws -> XWing.PublicKey {
        guard message.count == receiverKeyLength, message[0] == receiverKeyTag,
              expectedHash.count == MoveCode.keyFieldLength else { throw MoveError.receiverKeyMismatch }
        let bytes = Array(message[1...])
        guard constantTimeEqual(try SHA3_256.hash(MoveCode.receiverKeyLabel, bytes), expectedHash),
              let pk = try? XWing.PublicKey(bytes: bytes) else {
            throw MoveError.receiverKeyMismatch
        }
        return pk
    }

    /// The ciphertext of an exact sender key message; anything else is
    /// `corruptedOrTampered`. Every 1120-byte ciphertext is accepted here:
    /// X-Wing decapsulates any of them, and a forged one gives keys whose
    /// confirmation fails.
    public static func parseSenderKey(_ message: [UInt8]) throws -> [UInt8] {
        guard message.count == senderKeyLength, message[0] == senderKeyTag else { throw VaultError.corruptedOrTampered }
        return Array(message[1...])
    }
}
