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

/// A stream that lends views of one buffer of its own, at most `step`
/// bytes each, and fills that buffer with garbage before the next: a reader
/// that used a lent block after asking for the next one reads garbage.
final class ScribblingLendingStream: LendingByteStream {
    let bytes: [UInt8]
    let step: Int
    var offset = 0
    let block: UnsafeMutableRawBufferPointer
    init(_ bytes: [UInt8], step: Int) {
        (self.bytes, self.step) = (bytes, step)
        block = .allocate(byteCount: step, alignment: 1)
    }
    deinit { block.deallocate() }
    func lend(upTo limit: Int) throws -> UnsafeRawBufferPointer {
        block.initializeMemory(as: UInt8.self, repeating: 0xA5)
        let n = min(limit, step, bytes.count - offset)
        guard n > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        bytes.withUnsafeBytes { block.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        return UnsafeRawBufferPointer(rebasing: block[..<n])
    }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let lent = try lend(upTo: buffer.count)
        if lent.count > 0 { buffer.baseAddress!.copyMemory(from: lent.baseAddress!, byteCount: lent.count) }
        return lent.count
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
