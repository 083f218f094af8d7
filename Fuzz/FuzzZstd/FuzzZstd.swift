// libFuzzer target: zstd item content past the tag. A dropper holds the
// file key of what it drops, so the item cipher vouches for nothing: this
// target seals the fuzzer's bytes as the content of a zstd item (flag bit 2)
// under a key it holds and reads them back the way `get` does (ItemReader's
// decodedStream into an ExactLengthSink of the entry's size).
//
// Input: size u16be (the entry's size) || content (the would-be zstd frames).
// Traps on: a decode through the item that succeeds with other than `size`
// bytes; one that disagrees with ZstdDecompressor read directly in odd
// pieces; more than `size` bytes released. Output is capped at 64 MiB, so a
// bomb costs the fuzzer nothing. Built by `make fuzz`.
@testable import VaultCore
import VaultCodecs
import VaultCrypto

private func require(_ ok: Bool, _ message: @autoclosure () -> String) { if !ok { fatalError(message()) } }

private let key = try! FileKey(secret: SecretBytes(count: FileKey.length))
private let outputCap = 64 << 20

/// ZstdDecompressor straight over `content`, in pieces of 4093 and reads of
/// 65,519 bytes; nil if it fails, at most `outputCap` bytes.
private func direct(_ content: [UInt8]) -> [UInt8]? {
    let d = try! ZstdDecompressor(upstream: MemoryStream(content, step: 4093))
    var out: [UInt8] = []
    var piece = [UInt8](repeating: 0, count: 65_519)
    while out.count < outputCap {
        guard let n = try? piece.withUnsafeMutableBytes({ try d.read(into: $0) }) else { return nil }
        if n == 0 { return out }
        out += piece[..<n]
    }
    return out
}

private final class MemoryStream: ByteStream {
    let bytes: [UInt8], step: Int
    var offset = 0
    init(_ bytes: [UInt8], step: Int) { (self.bytes, self.step) = (bytes, step) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, step, bytes.count - offset)
        if n > 0 { bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) } }
        offset += n
        return n
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzZstd(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 2 else { return 0 }
    let expected = UInt64(input[0]) << 8 | UInt64(input[1])
    let content = Array(input[2...])
    let header = try! ItemHeader(flags: .zstd, itemID: [UInt8](repeating: 0xa0, count: 16),
                                 noncePrefix: [UInt8](repeating: 0xc0, count: 8))
    let sealed = MemoryBytes()
    let w = try! ItemWriter(key: key, header: header, sink: sealed, threads: 1)
    try! w.write(content)
    try! w.finish()
    let released = MemoryBytes()
    let exact = ExactLengthSink(released, expected: expected)
    let ok = (try? { () throws -> Void in
        let r = try ItemReader(key: key, source: MemoryBytes(sealed.bytes), threads: 1)
        _ = try pump(r.decodedStream(), into: exact)
        try exact.finish()
    }()) != nil
    require(UInt64(released.bytes.count) <= expected, "released more than the entry's size")
    let plain = direct(content)
    if ok {
        require(UInt64(released.bytes.count) == expected, "a decode succeeded with other than the entry's size")
        require(plain == released.bytes, "the item's decode and the direct one disagree")
    } else if let plain, UInt64(plain.count) == expected {
        fatalError("the direct decode gives exactly the entry's size but the item's failed")
    }
    return 0
}
