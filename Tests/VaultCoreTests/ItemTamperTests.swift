import Testing
import VaultCrypto
@testable import VaultCore

/// Each way a stored item can be damaged or forged, on its own. Every one
/// must fail with the one `corruptedOrTampered` error and release no content.
@Suite("Item cipher tamper resistance")
struct ItemTamperTests {
    typealias F = ItemFixture
    static let content = F.content(3 * F.M + 5000)

    var sealed: [UInt8] { try! F.seal(Self.content) }

    /// Opening must fail and nothing may reach the sink.
    func expectRejected(_ bytes: [UInt8], key: FileKey = F.key(), sourceLocation: SourceLocation = #_sourceLocation) {
        let out = MemoryBytes()
        #expect(throws: VaultError.corruptedOrTampered, sourceLocation: sourceLocation) {
            let r = try ItemReader(key: key, source: MemoryBytes(bytes))
            try r.readAll(to: out)
        }
        #expect(out.bytes.isEmpty, "released unauthenticated content", sourceLocation: sourceLocation)
    }

    @Test func twoChunksSwapped() {
        var b = sealed
        let r0 = F.chunkRange(0, total: b.count), r1 = F.chunkRange(1, total: b.count)
        let c0 = Array(b[r0]); b.replaceSubrange(r0, with: b[r1]); b.replaceSubrange(r1, with: c0)
        expectRejected(b)
    }

    @Test func chunkFromAnotherItemSameKey() throws {
        var b = sealed
        let other = try F.seal(Self.content, header: F.header(7))
        let r = F.chunkRange(1, total: b.count)
        b.replaceSubrange(r, with: other[r])
        expectRejected(b)
    }

    @Test func chunkFromAnotherItemOtherKey() throws {
        var b = sealed
        let other = try F.seal(Self.content, key: F.key(9))
        let r = F.chunkRange(1, total: b.count)
        b.replaceSubrange(r, with: other[r])
        expectRejected(b)
    }

    @Test func finalChunkRemoved() {
        var b = sealed
        b.removeSubrange(F.chunkRange(3, total: b.count))
        expectRejected(b)
    }

    @Test func finalChunkTruncatedByOneByte() {
        expectRejected(Array(sealed.dropLast()))
    }

    @Test func trailingChunksDropped() {
        var b = sealed
        b.removeSubrange(F.chunkRange(2, total: b.count).lowerBound..<b.count)
        expectRejected(b)
    }

    @Test func chunkAppendedAfterFinal() throws {
        // A correctly sealed chunk 4 (even one marked final) after the real final one.
        var b = sealed
        b += try F.sealChunk(F.content(100), index: 4, final: true)
        expectRejected(b)
        var c = sealed
        c += try F.sealChunk(F.content(100), index: 4, final: false)
        expectRejected(c)
    }

    @Test func chunkDuplicated() {
        var b = sealed
        let r1 = F.chunkRange(1, total: b.count)
        b.insert(contentsOf: b[r1], at: r1.upperBound)
        expectRejected(b)
    }

    @Test func bitFlippedInHeader() {
        for offset in [0, 8, 9, 11, 12, 27, 28, 35] {
            var b = sealed
            b[offset] ^= 0x01
            expectRejected(b)
        }
    }

    @Test func bitFlippedInChunkBody() {
        for chunk in 0..<4 {
            var b = sealed
            b[F.chunkRange(chunk, total: b.count).lowerBound + 100] ^= 0x20
            expectRejected(b)
        }
    }

    @Test func bitFlippedInTag() {
        for chunk in 0..<4 {
            var b = sealed
            b[F.chunkRange(chunk, total: b.count).upperBound - 1] ^= 0x80
            expectRejected(b)
        }
    }

    @Test func finalFlagSetOnMiddleChunk() throws {
        // Re-seal chunk 1 with the right key and index but the final flag set.
        var b = sealed
        let r = F.chunkRange(1, total: b.count)
        b.replaceSubrange(r, with: try F.sealChunk(Array(Self.content[F.M..<2 * F.M]), index: 1, final: true))
        expectRejected(b)
        // And a stream cut after that forged final chunk.
        expectRejected(Array(b[..<r.upperBound]))
    }

    @Test func wrongKey() {
        expectRejected(sealed, key: F.key(1))
    }

    @Test func zeroLengthFile() {
        expectRejected([])
    }

    @Test func fileCutInsideHeader() {
        for n in [1, 8, 20, 35, 36] { expectRejected(Array(sealed[..<n])) }
    }

    @Test func nonCanonicalLengthTrailer() throws {
        // A validly sealed final chunk whose trailer claims a length the
        // padding rule would not produce.
        var s = [UInt8](repeating: 0, count: 16)
        s += withUnsafeBytes(of: UInt64(3).bigEndian, Array.init)
        let forged = F.header().bytes + (try F.sealChunk(s, index: 0, final: true))
        expectRejected(forged)
    }

    /// Padding is authenticated, but only zeros are ever written: a validly
    /// sealed final chunk with any other byte in its padding (at a word's
    /// start, inside one, at the padding's last byte) is refused, and the
    /// same chunk with zeros opens.
    @Test func nonzeroPaddingIsRefused() throws {
        let content = [UInt8](repeating: 0x61, count: 1000)   // Padmé: 1,008 bytes pad to 1,024
        let stream = Int(ItemCipher.streamLength(contentLength: UInt64(content.count)))
        let pad = stream - content.count - ItemCipher.trailerLength
        #expect(pad > 9)
        let trailer = withUnsafeBytes(of: UInt64(content.count).bigEndian, Array.init)
        let zeros = content + [UInt8](repeating: 0, count: pad) + trailer
        let out = MemoryBytes()
        try ItemReader(key: F.key(), source: MemoryBytes(F.header().bytes + (try F.sealChunk(zeros, index: 0, final: true))))
            .readAll(to: out)
        #expect(out.bytes == content)
        for at in [0, 5, 8, pad - 1] {
            var forged = zeros
            forged[content.count + at] = 0x01
            expectRejected(F.header().bytes + (try F.sealChunk(forged, index: 0, final: true)))
        }
    }

    @Test func randomAccessAlsoAuthenticates() throws {
        var b = sealed
        b[F.chunkRange(1, total: b.count).lowerBound + 5] ^= 1
        let r = try ItemReader(key: F.key(), source: MemoryBytes(b))
        #expect(throws: VaultError.corruptedOrTampered) { try r.readChunk(1) }
        #expect(try r.readChunk(2) == Array(Self.content[2 * F.M..<3 * F.M]))
    }
}
