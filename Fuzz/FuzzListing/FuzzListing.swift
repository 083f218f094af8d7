// libFuzzer target: rclone's `lsjson` answer as vault reads it from a
// remote (Rclone.parseListing, streamed line by line), with a small entry
// bound so the bound itself is reached. Built by `make fuzz`.
@testable import VaultRemote

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzListing(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let files = try? Rclone.parseListing(input, maxEntries: 64) {
        precondition(files.count <= 64, "more entries than the bound")
    }
    return 0
}
