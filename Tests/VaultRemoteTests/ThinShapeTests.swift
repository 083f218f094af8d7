import Testing
@testable import VaultRemote

/// The thin vault's small formats and rules, without a server: the `thin`
/// file's exact shape, the cache's names, the blocks a blob is read in,
/// and how a range answer's Content-Range is read.
@Suite struct ThinShapeTests {
    @Test func theThinFileHasOneShape() throws {
        let good = ThinVault(remote: "offsite", cacheBytes: 2 << 30)
        #expect(ThinVault.parse(good.bytes) == good)
        #expect(String(decoding: good.bytes, as: UTF8.self) == "vault thin v1\noffsite\n2147483648\n")
        for bad in ["vault thin v1\noffsite\n2147483648",          // no final newline
                    "vault thin v2\noffsite\n2147483648\n",        // another version
                    "vault thin v1\n-rm\n2147483648\n",            // not a remote name
                    "vault thin v1\noffsite\n02147483648\n",       // a leading zero
                    "vault thin v1\noffsite\n1000\n",              // below 64 MiB
                    "vault thin v1\noffsite\n2147483648\nextra\n", // a fourth line
                    "vault thin v1\noffsite\n+2147483648\n"] {
            #expect(ThinVault.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func cacheNamesAreExact() {
        let id = String(repeating: "ab", count: 16)
        #expect(BlockCache.parse("\(id).3000052.2")! == (id, 3000052, 2))
        #expect(BlockCache.parse("\(id).3000052.h")! == (id, 3000052, nil))
        #expect(BlockCache.name(id, size: 7, index: nil) == "\(id).7.h")
        for bad in ["\(id).3000052", "\(id).03000052.2", "\(id).3000052.02", "\(id).3000052.x", "AB\(id.dropFirst(2)).1.1",
                    ".tmp-\(id)", "\(id).1.1.1"] {
            #expect(BlockCache.parse(bad) == nil, "\(bad)")
        }
    }

    /// Blocks are the sealed chunks, the 36-byte header in front of the
    /// first: one request a chunk, wherever ItemReader reads.
    @Test func blocksAreTheSealedChunks() {
        let chunk = UInt64(1 << 20) + 16, size = 36 + 2 * chunk + 500
        #expect(Blocks.range(0, size: size) == 0..<(36 + chunk))
        #expect(Blocks.range(1, size: size) == (36 + chunk)..<(36 + 2 * chunk))
        #expect(Blocks.range(2, size: size) == (36 + 2 * chunk)..<size)
        #expect(Blocks.index(of: 0) == 0 && Blocks.index(of: 35) == 0 && Blocks.index(of: 36 + chunk - 1) == 0)
        #expect(Blocks.index(of: 36 + chunk) == 1 && Blocks.index(of: size - 1) == 2)
        #expect(Blocks.range(0, size: 100) == 0..<100)
    }

    @Test func contentRangeIsReadExactly() {
        func range(_ header: String) -> (UInt64, UInt64, UInt64)? {
            var a = HTTPRange.Answer()
            a.headers = Array("HTTP/1.1 206 Partial Content\r\n\(header)\r\nContent-Length: 3\r\n\r\n".utf8)
            return a.contentRange.map { ($0.first, $0.last, $0.total) }
        }
        #expect(range("Content-Range: bytes 4-6/10")! == (4, 6, 10))
        #expect(range("content-range: bytes 0-0/1")! == (0, 0, 1))
        for bad in ["Content-Range: bytes 6-4/10", "Content-Range: bytes 4-6/*", "Content-Range: bytes */10",
                    "Content-Range: bytes 4-/10", "Content-Range: items 4-6/10", "Content-Range: bytes -4-6/10"] {
            #expect(range(bad) == nil, "\(bad)")
        }
    }
}
