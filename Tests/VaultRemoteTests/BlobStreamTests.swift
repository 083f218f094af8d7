import Foundation
import Testing
@testable import VaultRemote

/// A whole blob streamed through a real `rclone serve http` of a directory:
/// its blocks in order from one request, a bounded number ahead of the
/// readers; readers that jump, come late, or expect another size get nil
/// (they fetch on their own), never wrong bytes or a wait without end.
@Suite(.serialized) struct BlobStreamTests {
    /// A served directory holding one blob of 9 blocks and a bit.
    final class Served {
        let dir: String, name = String(repeating: "ab", count: 16)
        let bytes: [UInt8]
        let server: RcloneServer

        init() throws {
            dir = NSTemporaryDirectory() + "blob-stream-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: dir + "/items", withIntermediateDirectories: true)
            let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
            bytes = Array(random.readData(ofLength: Int(Blocks.header) + 9 * Int(Blocks.chunk) + 777))
            try Data(bytes).write(to: URL(fileURLWithPath: dir + "/items/" + name))
            server = try RcloneServer(rclone: Rclone(program: "rclone", scratchBase: dir + "/state"), target: dir)
        }

        deinit { try? FileManager.default.removeItem(atPath: dir) }   // a test's scratch; its loss changes nothing

        var size: UInt64 { UInt64(bytes.count) }
        func block(_ i: UInt64) -> ArraySlice<UInt8> {
            let r = Blocks.range(i, size: size)
            return bytes[Int(r.lowerBound)..<Int(r.upperBound)]
        }
    }

    @Test func blocksComeInOrderFromOneRequest() throws {
        let s = try Served()
        let stream = BlobStream(s.server.http, "items/" + s.name, limit: 3)
        for i in UInt64(0)...9 { #expect(stream.take(i, size: s.size) == s.block(i), "block \(i)") }
        #expect(stream.take(10, size: s.size) == nil)
        #expect(s.server.http.requests.load(ordering: .relaxed) == 1)
    }

    /// A reader far ahead makes room by dropping what nobody took; a block
    /// the stream has passed is nil, as is a blob of another size.
    @Test func aJumpDropsTheSkippedBlocksAndNothingWaitsForever() throws {
        let s = try Served()
        let stream = BlobStream(s.server.http, "items/" + s.name, limit: 2)
        #expect(stream.take(7, size: s.size) == s.block(7))
        #expect(stream.take(2, size: s.size) == nil)
        #expect(stream.take(8, size: s.size) == s.block(8))
        let other = BlobStream(s.server.http, "items/" + s.name, limit: 2)
        #expect(other.take(0, size: s.size + 1) == nil)
    }

    /// Cancelled, the stream stops at its next bytes: a wait for a block
    /// still to come ends with nil.
    @Test func aCancelledStreamEnds() throws {
        let s = try Served()
        let stream = BlobStream(s.server.http, "items/" + s.name, limit: 1)
        #expect(stream.take(0, size: s.size) == s.block(0))
        stream.cancel()
        #expect(stream.take(9, size: s.size) == nil)
    }

    /// No such blob: the stream ends with nothing.
    @Test func aMissingBlobEndsTheStream() throws {
        let s = try Served()
        let stream = BlobStream(s.server.http, "items/" + String(repeating: "cd", count: 16), limit: 2)
        #expect(stream.take(0, size: s.size) == nil)
    }
}
