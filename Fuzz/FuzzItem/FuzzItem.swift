// libFuzzer target: the item header parser and the item reader on hostile
// bytes. Built and run by `make fuzz`; see docs/TESTING.md.
import VaultCore
import VaultCrypto

private let key = try! FileKey(secret: SecretBytes(count: FileKey.length))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzItem(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? ItemHeader(parsing: bytes.prefix(ItemHeader.length))
    if let reader = try? ItemReader(key: key, source: MemoryBytes(bytes), threads: 1) {
        try? reader.readAll(to: MemoryBytes())
        _ = try? reader.readChunk(0)
    }
    return 0
}
