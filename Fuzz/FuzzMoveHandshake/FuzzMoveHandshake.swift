// libFuzzer target: the hybrid (version 2) move handshake's key messages as
// each side reads them (MoveKeyExchange, then MoveSession), on the fixed
// handshake of the docs/FORMAT.md "Test vector: hybrid handshake" (X-Wing
// seed 00..1f, eseed 60..9f, token 40..4f). Built by `make fuzz`.
//
// Input: mode (1) || payload.
//   mode bit 0   0: the sender reading a receiver key message;
//                1: the receiver reading a sender key message
//   mode bit 1   0: payload is the message itself;
//                1: payload is XORed onto the honest message from its
//                   first byte (so near-valid messages are reached), and
//   mode bit 2      with bit 1: the message is cut to the payload's length
//
// Sender side: parsed against the code's hash, then also against the hash
// of the payload's own key bytes, so the fuzzer reaches X-Wing's key checks
// past the 256-bit hash. Receiver side: a parsed ciphertext is
// decapsulated and the session derived (never a trap, any bytes).
//
// Traps on: a message other than the honest one accepted against the
// code's hash; an accepted key that does not serialise back to its bytes;
// a receiver session from any ciphertext but the honest one that accepts
// the honest sender's confirmation or shares its keys; the honest
// ciphertext giving other keys than the vector's.
import VaultCore
import VaultCrypto
@testable import VaultMove
@testable import VaultCrypto

private func require(_ ok: Bool, _ what: String) { if !ok { fatalError(what) } }

private func secret(_ b: [UInt8]) -> SecretBytes { var c = b; return try! SecretBytes(consuming: &c) }
private func seq(_ from: UInt8, _ n: Int) -> [UInt8] { (0..<n).map { from &+ UInt8($0) } }

private let token = seq(0x40, 16)
private let receiverKey = try! XWing.PrivateKey(seed: secret(seq(0x00, 32)))
private let codeHash = try! MoveCode.receiverKeyHash(receiverKey.publicKey)
private let honest = try! MoveSession.hybridSender(receiverKey: receiverKey.publicKey, token: token) {
    try XWing.encapsulate(to: $0, eseed: secret(seq(0x60, 64)))
}
private let honestReceiverKeyMessage = MoveKeyExchange.receiverKey(receiverKey.publicKey)
private let honestSenderKeyMessage = MoveKeyExchange.senderKey(honest.ciphertext)
private let honestConfirmation = try! honest.session.ownConfirmation()

private func sender(_ message: [UInt8]) {
    if let pk = try? MoveKeyExchange.parseReceiverKey(message, expectedHash: codeHash) {
        require(message == honestReceiverKeyMessage && pk == receiverKey.publicKey, "another receiver key accepted")
    }
    // Past the hash: the same bytes against their own hash.
    guard message.count == MoveKeyExchange.receiverKeyLength,
          let own = try? SHA3_256.hash(MoveCode.receiverKeyLabel, Array(message.dropFirst())) else { return }
    if let pk = try? MoveKeyExchange.parseReceiverKey(message, expectedHash: own) {
        require(message[0] == MoveKeyExchange.receiverKeyTag && pk.bytes == Array(message.dropFirst()),
                "receiver key round trip")
        // A key that passed its checks takes an encapsulation.
        require((try? MoveSession.hybridSender(receiverKey: pk, token: token)) != nil, "encapsulation to an accepted key")
    }
}

private func receiver(_ message: [UInt8]) {
    guard let ct = try? MoveKeyExchange.parseSenderKey(message) else { return }
    require(message.count == MoveKeyExchange.senderKeyLength, "sender key length")
    guard let session = try? MoveSession(receiverKey: receiverKey, ciphertext: ct, token: token) else {
        fatalError("a 1120-byte ciphertext did not decapsulate")
    }
    let accepted = (try? session.verifyPeerConfirmation(honestConfirmation)) != nil
    if ct == honest.ciphertext {
        require(accepted && session.receiveKey == honest.session.sendKey && session.sas == honest.session.sas,
                "the honest ciphertext gave other keys")
    } else {
        require(!accepted && session.receiveKey != honest.session.sendKey, "another ciphertext shares the sender's keys")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMoveHandshake(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let mode = data[0]
    let payload = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let toReceiver = mode & 1 == 1
    var message = payload
    if mode & 2 != 0 {
        message = toReceiver ? honestSenderKeyMessage : honestReceiverKeyMessage
        for (i, b) in payload.prefix(message.count).enumerated() { message[i] ^= b }
        if mode & 4 != 0 { message = Array(message.prefix(payload.count)) }
    }
    if toReceiver { receiver(message) } else { sender(message) }
    return 0
}
