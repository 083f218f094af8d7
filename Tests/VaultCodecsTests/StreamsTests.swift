import Testing
import VaultCodecs

/// A sink that keeps what it is given, for codec round trips.
final class CollectingSink: ByteSink {
    var bytes: [UInt8] = []
    func write(_ b: UnsafeRawBufferPointer) throws { bytes += b }
}

/// A stream over bytes in memory, handing out at most `step` bytes a read.
final class ArrayStream: ByteStream {
    let bytes: [UInt8]
    let step: Int
    var offset = 0
    init(_ bytes: [UInt8], step: Int = 1 << 16) { (self.bytes, self.step) = (bytes, step) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, step, bytes.count - offset)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}

@Test func arrayStreamHandsOutEverythingInSteps() throws {
    let s = ArrayStream(Array(0..<100), step: 7)
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 10)
    while true {
        let n = try buf.withUnsafeMutableBytes { try s.read(into: $0) }
        if n == 0 { break }
        out += buf[..<n]
    }
    #expect(out == Array(0..<100))
}
