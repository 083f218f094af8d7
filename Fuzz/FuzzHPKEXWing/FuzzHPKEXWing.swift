// libFuzzer target: the HPKE open path with X-Wing (KEM 0x647A) on hostile
// enc and ciphertext bytes, as a drop-in envelope would carry them. The
// first byte picks the case; nothing may crash, and:
//   even: enc = the next 1120 bytes (or fewer, if that is all), ct = the
//         rest; opening must fail with authenticationFailed and nothing else
//         (a forgery would be a finding too);
//   odd:  the next 64 bytes are the encapsulation randomness, the rest the
//         plaintext: sealing and opening must give it back.
// Built by `make fuzz`.
@testable import VaultCrypto

private let recipient = try! XWing.PrivateKey(seed: try SecretBytes(count: 32))
private let info = Array("vault fuzz".utf8)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHPKEXWing(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let rest = bytes.dropFirst()
    if selector % 2 == 0 {
        let enc = Array(rest.prefix(XWing.ciphertextLength)), ct = Array(rest.dropFirst(XWing.ciphertextLength))
        do {
            _ = try HPKE.open(ct, encapsulatedKey: enc, recipient: recipient, info: info, aead: .chacha20Poly1305)
            fatalError("opened a ciphertext nobody sealed")
        } catch CryptoError.authenticationFailed {
        } catch { fatalError("unexpected error \(error)") }
    } else {
        var eseed = Array(rest.prefix(64))
        eseed += [UInt8](repeating: 0, count: 64 - eseed.count)
        let plaintext = Array(rest.dropFirst(64))
        do {
            let (enc, sender) = try HPKE.setupSender(recipient: recipient.publicKey, info: info, aead: .chacha20Poly1305,
                                                     randomness: try SecretBytes(consuming: &eseed))
            let ct = try sender.seal(plaintext)
            if try HPKE.open(ct, encapsulatedKey: enc, recipient: recipient, info: info, aead: .chacha20Poly1305) != plaintext {
                fatalError("round trip changed the plaintext")
            }
        } catch { fatalError("unexpected error \(error)") }
    }
    return 0
}
