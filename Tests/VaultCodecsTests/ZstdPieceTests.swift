import Testing
@testable import VaultCodecs

/// Backup pieces as one zstd frame each (docs/FORMAT.md, "Backups: piece
/// references"): what compresses round trips, what does not is left raw,
/// and a frame that does not make exactly the stated length, or carries
/// anything after it, or declares a window beyond the bound, is refused
/// without a trap and without an allocation the size of its claim.
@Suite("zstd pieces")
struct ZstdPieceTests {
    static let text: [UInt8] = { var g = TestBytes(seed: 21); return g.text(1 << 20) }()

    static func frame(_ piece: [UInt8]) throws -> [UInt8]? {
        let e = try ZstdPieceEncoder()
        return try piece.withUnsafeBytes { try e.encode($0).map(Array.init) }
    }

    static func decode(_ frame: [UInt8], length: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let d = try ZstdPieceDecoder()
        try frame.withUnsafeBytes { f in try out.withUnsafeMutableBytes { try d.decode(f, into: $0) } }
        return out
    }

    @Test func textRoundTripsSmaller() throws {
        let f = try #require(try Self.frame(Self.text))
        #expect(f.count < Self.text.count / 2)
        #expect(try Self.decode(f, length: Self.text.count) == Self.text)
    }

    @Test func randomAndEmptyStayRaw() throws {
        var g = TestBytes(seed: 22)
        #expect(try Self.frame(g.random(1 << 20)) == nil)
        #expect(try Self.frame([]) == nil)
    }

    @Test func oneDecoderDecodesManyAndRecoversFromRefusals() throws {
        let f = try #require(try Self.frame(Self.text))
        let d = try ZstdPieceDecoder()
        var out = [UInt8](repeating: 0, count: Self.text.count)
        for bad in [Array(f.prefix(f.count / 2)), f + [0]] {
            #expect(throws: ZstdError.self) {
                try bad.withUnsafeBytes { b in try out.withUnsafeMutableBytes { try d.decode(b, into: $0) } }
            }
            try f.withUnsafeBytes { b in try out.withUnsafeMutableBytes { try d.decode(b, into: $0) } }
            #expect(out == Self.text)
        }
    }

    @Test func aFrameOfAnotherLengthIsRefused() throws {
        let f = try #require(try Self.frame(Self.text))
        for length in [Self.text.count - 1, Self.text.count + 1, 0, 1] {
            #expect(throws: ZstdError.self) { _ = try Self.decode(f, length: length) }
        }
    }

    @Test func trailingBytesOrASecondFrameAreRefused() throws {
        let f = try #require(try Self.frame(Self.text))
        #expect(throws: ZstdError.self) { _ = try Self.decode(f + [0], length: Self.text.count) }
        // Two frames that together make the length: still not one frame.
        let half = Array(Self.text.prefix(Self.text.count / 2))
        let h = try #require(try Self.frame(half))
        #expect(throws: ZstdError.self) { _ = try Self.decode(h + h, length: 2 * half.count) }
        #expect(throws: ZstdError.self) { _ = try Self.decode([], length: 1) }
    }

    /// A single-segment frame declaring 2^40 bytes: its window is its
    /// content size, refused before anything is allocated for it.
    @Test func aHugeDeclaredSizeIsRefusedUpFront() throws {
        var header: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0xe0]
        header += (0..<8).map { UInt8(truncatingIfNeeded: (UInt64(1) << 40) >> (8 * $0)) }
        let frame = header + [0x01, 0x00, 0x00]   // an empty last raw block
        #expect(throws: ZstdError.windowTooLarge) { _ = try Self.decode(frame, length: 4096) }
        #expect(throws: ZstdError.self) { _ = try Self.decode([0x28, 0xb5, 0x2f, 0xfd], length: 4096) }
    }
}
