// libFuzzer target: ML-KEM-768 decapsulation and key parsing on hostile
// bytes (drop-ins and moves will carry attacker-chosen ciphertexts and keys).
// The first byte picks the case; nothing may crash, and:
//   0: any bytes as a ciphertext for a fixed key: 1088 bytes give a secret
//      (implicit rejection, never an error), any other length invalidLength;
//   1: any bytes as an encapsulation key: if accepted, encapsulating works;
//   2: any bytes as a decapsulation key: if accepted, decapsulating works;
//   3: the bytes as seeds d, z, m: decapsulating the encapsulation gives the
//      shared secret, and the ciphertext with one bit flipped does not.
// Built by `make fuzz`.
@testable import VaultCrypto

private let fixedKey = try! MLKEM768.generateKeyPair(d: try SecretBytes(count: 32), z: try SecretBytes(count: 32))
private let fixedCiphertext = try! MLKEM768.encapsulate(to: fixedKey.encapsulationKey).ciphertext

private func secret(_ bytes: ArraySlice<UInt8>, _ count: Int) -> SecretBytes {
    var b = Array(bytes.prefix(count))
    b += [UInt8](repeating: 0, count: count - b.count)
    return try! SecretBytes(consuming: &b)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMLKEM(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let rest = bytes.dropFirst()
    switch selector % 4 {
    case 0:
        do {
            let k = try MLKEM768.decapsulate(Array(rest), with: fixedKey)
            if rest.count != MLKEM768.ciphertextLength || k.count != 32 { fatalError("decapsulated a \(rest.count)-byte ciphertext") }
        } catch CryptoError.invalidLength {
            if rest.count == MLKEM768.ciphertextLength { fatalError("refused a 1088-byte ciphertext") }
        } catch { fatalError("unexpected error \(error)") }
    case 1:
        if let ek = try? MLKEM768.EncapsulationKey(bytes: Array(rest)) {
            guard let (c, k) = try? MLKEM768.encapsulate(to: ek), c.count == 1088, k.count == 32 else {
                fatalError("encapsulation to an accepted key failed")
            }
        }
    case 2:
        if let dk = try? MLKEM768.DecapsulationKey(secret: secret(rest, rest.count)) {
            guard (try? MLKEM768.decapsulate(fixedCiphertext, with: dk))?.count == 32 else {
                fatalError("decapsulation with an accepted key failed")
            }
        }
    default:
        do {
            let dk = try MLKEM768.generateKeyPair(d: secret(rest, 32), z: secret(rest.dropFirst(32), 32))
            let (c, k) = try MLKEM768.encapsulate(to: dk.encapsulationKey, randomness: secret(rest.dropFirst(64), 32))
            if try MLKEM768.decapsulate(c, with: dk) != k { fatalError("round trip lost the shared secret") }
            var flipped = c
            let bit = rest.count > 96 ? Int(rest[rest.startIndex + 96]) * 37 % (1088 * 8) : 0
            flipped[bit / 8] ^= UInt8(1 << (bit % 8))
            if try MLKEM768.decapsulate(flipped, with: dk) == k { fatalError("a modified ciphertext kept the secret") }
        } catch { fatalError("unexpected error \(error)") }
    }
    return 0
}
