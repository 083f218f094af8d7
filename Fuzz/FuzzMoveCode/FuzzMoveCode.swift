// libFuzzer target: the move code, binary and text, and the address parser
// it is built from. Whatever parses must round-trip exactly. The input is
// also tried as a code body with its checksum appended, so the fuzzer reaches
// the body parser past the 32-bit checksum. Public API only. Built by `make fuzz`.
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
        }
    }
    if let a = MoveAddress(text) {
        precondition(MoveAddress(a.description) == a, "MoveAddress text round trip")
    }
    return 0
}
