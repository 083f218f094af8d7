// libFuzzer target: the manifest file parser, and the decrypted-manifest
// entry parser behind it (reached directly, since random bytes never pass
// the AEAD). Built by `make fuzz`.
@testable import VaultCore
import VaultCrypto

private let key = try! SecretBytes(count: 32)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    _ = try? Manifest.open(Array(bytes), key: key, vaultID: [UInt8](repeating: 0, count: 16))
    _ = try? Manifest.parse(plaintext: bytes)
    return 0
}
