// libFuzzer target: the vault header parser (never runs Argon2: the bounds
// are checked by the parser, which is the point). Built by `make fuzz`.
// A version-3 or -4 input is parsed as it is (the checksum almost always fails:
// `headerDamaged`) and once more with its checksum recomputed, so that the
// fuzzer reaches the slot parser behind a valid checksum too.
@testable import VaultCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    check(input)
    if input.count > 9 + VaultHeader.checksumLength, input[8] == 3 || input[8] == 4 {
        let body = Array(input.dropLast(VaultHeader.checksumLength))
        if let sum = try? VaultHeader.checksum(of: body) { check(body + sum) }
    }
    return 0
}

func check(_ input: [UInt8]) {
    if let h = try? VaultHeader(parsing: input) {
        precondition(h.bytes == input, "parse/serialise mismatch")
        precondition(h.version < 3 || (try? VaultHeader.checksum(of: Array(input.dropLast(32)))) == Array(input.suffix(32)),
                     "a version-3 or -4 header parsed with a wrong checksum")
        precondition(h.version == 4 || h.counter == 0, "a counter outside version 4")
    }
}
