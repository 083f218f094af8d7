// libFuzzer target: the drop-in envelope parser (single and batch) and the
// entry decoder its payload goes through. Built by `make fuzz`.
@testable import VaultCore
import VaultCrypto

private let vaultKey = try! X25519PrivateKey()
private let hybridKey = try! XWing.PrivateKey()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    _ = try? DropInEnvelope.openAny(Array(bytes), x25519: vaultKey, xwing: hybridKey, vaultID: [UInt8](repeating: 0, count: 16))
    _ = try? ManifestEntry.decode(exactly: bytes)
    return 0
}
