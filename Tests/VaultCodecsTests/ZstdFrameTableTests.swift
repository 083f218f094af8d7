import Testing
@testable import VaultCodecs

/// ZstdFrameTable: the frames ZstdCompressor writes (compressed, raw, empty)
/// found from their headers; each entry decodes on its own to the content at
/// its place; and streams it cannot place have no table.
@Suite("zstd frame table")
struct ZstdFrameTableTests {
    static let B = ZstdCompressor.blockSize

    static func scan(_ stream: [UInt8]) throws -> ZstdFrameTable? {
        try ZstdFrameTable.scan(storedLength: UInt64(stream.count)) { offset, buffer in
            let n = min(buffer.count, stream.count - Int(offset))
            stream.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) }
            return n
        }
    }

    /// Everything `stream` decodes to from `start` on.
    static func decode(_ stream: [UInt8], from start: Int) throws -> [UInt8] {
        let d = try ZstdDecompressor(upstream: ArrayStream(Array(stream[start...])))
        var out: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 1 << 16)
        while case let n = try buffer.withUnsafeMutableBytes({ try d.read(into: $0) }), n > 0 { out += buffer[..<n] }
        return out
    }

    @Test(arguments: [true, false])
    func framesAreFoundWhereTheyStart(adaptive: Bool) throws {
        var g = TestBytes(seed: 21)
        // Text, then random (raw frames in adaptive mode), then text: five frames.
        let content = g.text(2 * Self.B + 100) + g.random(2 * Self.B) + g.text(777)
        let stream = try ZstdTests.compress(content, adaptive: adaptive).bytes
        let table = try #require(try Self.scan(stream))
        #expect(table.contentLength == UInt64(content.count))
        #expect(table.entries.map(\.content) == (0..<5).map { UInt64($0 * Self.B) })
        for e in table.entries {
            #expect(try Self.decode(stream, from: Int(e.stored)) == Array(content[Int(e.content)...]))
        }
        #expect(table.entry(before: UInt64(3 * Self.B - 1)).content == UInt64(2 * Self.B))
        #expect(table.entry(before: UInt64(content.count + 5)).content == UInt64(4 * Self.B))
    }

    @Test func emptyContentIsOneFrame() throws {
        let table = try #require(try Self.scan(try ZstdTests.compress([]).bytes))
        #expect(table.entries == [.init(content: 0, stored: 0)] && table.contentLength == 0)
    }

    @Test func skippableFramesHoldNoContent() throws {
        let frame = try ZstdTests.compress(Array("abc".utf8)).bytes
        let skippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18, 2, 0, 0, 0, 9, 9]
        let table = try #require(try Self.scan(skippable + frame + frame))
        #expect(table.contentLength == 6 && table.entries.first == .init(content: 0, stored: 10))
    }

    /// Tiny frames are kept `spacing` apart, so the table stays small.
    @Test func tinyFramesMakeASmallTable() throws {
        let frame = try ZstdTests.compress(Array("abc".utf8)).bytes
        let stream = Array((0..<5000).map { _ in frame }.joined())
        let table = try #require(try Self.scan(stream))
        #expect(table.entries.count == 1 && table.contentLength == 15_000)
    }

    @Test func streamsItCannotPlaceHaveNoTable() throws {
        let stream = try ZstdTests.compress(Array("some content".utf8)).bytes
        #expect(try Self.scan(Array(stream.dropLast())) == nil)          // cut inside the frame
        #expect(try Self.scan(stream + [0x28, 0xB5]) == nil)             // a frame cut in its magic
        #expect(try Self.scan([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0xA0, 0x21, 0, 0] + Array("tiny".utf8)) == nil)   // no content size
        #expect(try Self.scan([1, 2, 3, 4, 5, 6, 7, 8]) == nil)          // not zstd
        #expect(try Self.scan([]) == nil)
    }
}
