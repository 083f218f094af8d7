import Testing
@testable import VaultRemote

/// rclone's `lsjson` answer, read as a stream of lines (Rclone.parseListing):
/// the exact shape, bounded lines and entries.
@Suite struct ListingTests {
    static func parse(_ text: String) throws -> [String: UInt64] { try Rclone.parseListing(Array(text.utf8)) }

    @Test func readsWhatRcloneWrites() throws {
        let text = "[\n{\"Path\":\"vault.header\",\"Name\":\"vault.header\",\"Size\":1425,\"ModTime\":\"\",\"IsDir\":false},\n"
            + "{\"Path\":\"items/ab\",\"Name\":\"ab\",\"Size\":3,\"IsDir\":false}\n]\n"
        #expect(try Self.parse(text) == ["vault.header": 1425, "items/ab": 3])
        #expect(try Self.parse("[\n]\n") == [:])
    }

    @Test func refusesOtherShapes() {
        for text in ["", "[]", "[\n", "{\"Path\":\"a\",\"Size\":1}\n", "[\n{\"Path\":\"a\",\"Size\":1}\n]\n]\n",
                     "[\n{\"Path\":\"a\",\"Size\":-1}\n]\n", "[\n{\"Path\":\"a\"}\n]\n", "[\nnot json\n]\n",
                     "[\n" + String(repeating: "x", count: Rclone.maxListingLine + 10) + "\n]\n"] {
            #expect(throws: RemoteError.self, "\(text.prefix(40))") { try Self.parse(text) }
        }
    }

    @Test func boundsTheNumberOfEntries() throws {
        // Counted as lines, so the same name listed again and again counts too.
        func listing(_ n: Int, same: Bool) -> [UInt8] {
            Array(("[\n" + (0..<n).map { "{\"Path\":\"f\(same ? 0 : $0)\",\"Size\":1}" }.joined(separator: ",\n") + "\n]\n").utf8)
        }
        #expect(try Rclone.parseListing(listing(100, same: false), maxEntries: 100).count == 100)
        #expect(throws: RemoteError.self) { try Rclone.parseListing(listing(101, same: false), maxEntries: 100) }
        #expect(throws: RemoteError.self) { try Rclone.parseListing(listing(101, same: true), maxEntries: 100) }
        #expect(Rclone.maxListing > 1_000_000)
    }
}
