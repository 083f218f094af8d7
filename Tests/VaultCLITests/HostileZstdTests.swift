import Foundation
import Testing
@testable import VaultCore

/// zstd content from a dropper, who holds the file key of what it drops, so
/// the item cipher vouches for nothing: a bomb, a frame asking for a huge
/// window, a frame cut short. Every reader refuses each with exit 14, writes
/// nothing past the entry's size and leaves no file behind.
@Suite("Hostile zstd content")
struct HostileZstdTests {
    let v: VaultFixture
    init() throws { v = try VaultFixture() }

    /// Drops `stream` as a zstd file item of `size` bytes named x.bin, then
    /// runs every reader over it.
    func expectRefusedEverywhere(_ stream: [UInt8], size: UInt64, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var d = HostileDropIn()
        d.name = Array("x.bin".utf8)
        d.flags = .zstd
        d.size = size
        try d.drop(into: v.dir, item: try d.item(stream))
        #expect(try v.listed().map(\.name) == ["x.bin"], sourceLocation: sourceLocation)
        let get = try v.run(["get", "x.bin"])
        #expect(get.status == 14 && UInt64(get.stdout.count) <= size, "get: \(get.status) \(get.stderr)", sourceLocation: sourceLocation)
        let out = v.path + "/out.bin"
        let file = try v.run(["get", "x.bin", "-o", out])
        #expect(file.status == 14 && !FileManager.default.fileExists(atPath: out), "get -o: \(file.stderr)",
                sourceLocation: sourceLocation)
        let check = try v.run(["check", "--read-data"])
        #expect(check.status == 14 && check.stderr.contains("item 'x.bin'"), "check: \(check.stderr)", sourceLocation: sourceLocation)
    }

    @Test func bombIsStoppedAtTheEntrysSize() throws {
        // 256 MiB of zeros compress to a few KiB; the entry claims 10 bytes.
        let stream = try HostileDropIn.zstd([UInt8](repeating: 0, count: 256 << 20))
        #expect(stream.count < 64 << 10)
        try expectRefusedEverywhere(stream, size: 10)
    }

    @Test func hugeWindowIsRefusedBeforeAllocating() throws {
        // Frame header without a content size: window descriptor 0xa0 asks
        // for 2^30 bytes; then one raw last block of "tiny".
        let stream: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa0, 0x21, 0x00, 0x00] + Array("tiny".utf8)
        try expectRefusedEverywhere(stream, size: 4)
    }

    @Test func frameCutShortIsRefused() throws {
        let text = Array(String(repeating: "hello, vault\n", count: 1000).utf8)
        let stream = try HostileDropIn.zstd(text)
        try expectRefusedEverywhere(Array(stream.dropLast(3)), size: UInt64(text.count))
    }

    @Test func noFrameAtAllIsRefused() throws {
        try expectRefusedEverywhere([], size: 0)
    }

    @Test func anUnknownFlagBitSaysUpgradeOrDamage() throws {
        var d = HostileDropIn()
        d.name = Array("new.bin".utf8)
        d.size = 4
        let item = try d.item(Array("tiny".utf8))
        var patched = item
        patched[11] |= 0x08   // flag bit 3: no codec this version knows
        try d.drop(into: v.dir, item: patched)
        let r = try v.run(["list"])
        #expect(r.status == 0)
        // Absorb leaves it waiting (a later version may take it in); nothing is decoded.
        #expect(try v.listed().isEmpty)
        #expect(FileManager.default.fileExists(atPath: v.dir + "/inbox/" + d.blob + ".env"))
    }
}
