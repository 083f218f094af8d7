// libFuzzer target: the move code, binary and text, and the address parser
// it is built from. Whatever parses must round-trip exactly. The input is
// also tried as a code body with its checksum appended, so the fuzzer reaches
// the body parser past the 32-bit checksum; a body that parses as version 1
// (X25519 key) or 2 (hash of an X-Wing key) must parse as the other with the
// same addresses, port, key bytes and token. Public API only. Built by `make fuzz`.
import VaultCore
import VaultMove
import VaultCrypto

private let checksumLabel = Array("vault v1 move code checksum".utf8)

private func roundTrip(_ c: MoveCode) {
    precondition((try? MoveCode(bytes: c.bytes)) == c, "MoveCode bytes round trip")
    precondition((try? MoveCode(text: c.text)) == c, "MoveCode text round trip")
    // Readers ignore case and read spaces like "-".
    precondition((try? MoveCode(text: c.text.lowercased().split(separator: "-").joined(separator: " "))) == c,
                 "MoveCode lower-case text round trip")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMoveCode(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let c = try? MoveCode(bytes: input) {
        precondition(c.bytes == input, "MoveCode parse/serialise mismatch")
        roundTrip(c)
    }
    let text = String(decoding: input, as: UTF8.self)
    if let c = try? MoveCode(text: text) { roundTrip(c) }
    if (57...188).contains(input.count), let sum = try? SHA256.hash(checksumLabel + input) {
        let code = input + sum.prefix(4)
        if let c = try? MoveCode(bytes: code) {
            precondition(c.bytes == code, "MoveCode parse/serialise mismatch (re-checksummed)")
            roundTrip(c)
            // The same body under the other version. Version 1 also needs
            // the key bytes to be an X25519 key, which any 32 bytes are.
            var other = input
            other[0] = c.version == 1 ? 2 : 1
            let o = try? MoveCode(bytes: other + (try! SHA256.hash(checksumLabel + other)).prefix(4))
            precondition(o != nil && o!.version != c.version && o!.addresses == c.addresses && o!.port == c.port
                         && o!.receiverKey.bytes == c.receiverKey.bytes && o!.token == c.token, "MoveCode versions differ in shape")
        }
    }
    if let a = MoveAddress(text) {
        precondition(MoveAddress(a.description) == a, "MoveAddress text round trip")
    }
    return 0
}
