// libFuzzer target: XZDecompressor on hostile input (a drop-in's compressed
// content is chosen by whoever drops it in). Each input is decoded by the
// single-threaded and the threaded decoder, read in odd-sized pieces: both
// must succeed with the same bytes, or both fail; at most 64 MiB of output
// and 64 MiB of decoder memory are allowed. Built by `make fuzz`.
import VaultCodecs

private final class Input: ByteStream {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, bytes.count - offset, 4093)
        if n > 0 { buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}

private let outputCap = 64 << 20

/// The decoded bytes (at most `outputCap`), or nil if decoding failed.
private func decode(_ bytes: UnsafeRawBufferPointer, threads: Int) -> [UInt8]? {
    guard let xz = try? XZDecompressor(upstream: Input(bytes), memoryLimit: 64 << 20, threads: threads) else { return nil }
    var out: [UInt8] = []
    var piece = [UInt8](repeating: 0, count: 65_519)
    while out.count < outputCap {
        guard let n = try? piece.withUnsafeMutableBytes({ try xz.read(into: $0) }) else { return nil }
        if n == 0 { return out }
        out += piece[..<n]
    }
    return Array(out.prefix(outputCap))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXZ(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let one = decode(bytes, threads: 1), two = decode(bytes, threads: 2)
    precondition((one == nil) == (two == nil), "the decoders disagree on success: 1 thread \(one == nil ? "failed" : "ok")")
    precondition(one == two, "the decoders disagree on the bytes")
    return 0
}
