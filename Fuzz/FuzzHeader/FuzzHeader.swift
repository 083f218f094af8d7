// libFuzzer target: the vault header parser (never runs Argon2: the bounds
// are checked by the parser, which is the point). Built by `make fuzz`.
import VaultCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    if let h = try? VaultHeader(parsing: Array(UnsafeBufferPointer(start: data, count: size))) {
        precondition(h.bytes == Array(UnsafeBufferPointer(start: data, count: size)), "parse/serialise mismatch")
    }
    return 0
}
