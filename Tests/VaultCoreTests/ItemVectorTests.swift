import Foundation
import Testing
import VaultCrypto
@testable import VaultCore

/// The item-format test vectors published in docs/FORMAT.md ("Item content:
/// test vectors"), and a cross-check against the independent Python reader
/// written from the spec alone (scripts/reference/vault_item.py).
@Suite("Item format vectors")
struct ItemVectorTests {
    typealias F = ItemFixture
    static let hello = Array("hello, vault".utf8)
    static let headerHex = "5641554c5449544d01010000a0a1a2a3a4a5a6a7a8a9aaabacadaeafc0c1c2c3c4c5c6c7"

    /// key = 00 01 … 1f, item id = a0 … af, nonce prefix = c0 … c7.
    static let key = F.key(0)
    static let header = try! ItemHeader(flags: [], itemID: Array(0xa0...0xaf), noncePrefix: Array(0xc0...0xc7))

    @Test func vector1EmptyItem() throws {
        let sealed = try F.seal([], key: Self.key, header: Self.header)
        #expect(hex(sealed) == Self.headerHex + "fb559d6f834668252617d38048c76c4ea97c7ae7f4af530a")
    }

    @Test func vector2Hello() throws {
        let sealed = try F.seal(Self.hello, key: Self.key, header: Self.header)
        #expect(hex(sealed) == Self.headerHex
                + "9330f103ec6a48534157698e59e171c5289e59c738de4dbc871dce791aa6f54ddb49d4a5")
    }

    @Test func vector3HelloCompressedFlag() throws {
        let h = try ItemHeader(flags: .xz, itemID: Self.header.itemID, noncePrefix: Self.header.noncePrefix)
        let sealed = try F.seal(Self.hello, key: Self.key, header: h)
        #expect(hex(sealed) == "5641554c5449544d01010001a0a1a2a3a4a5a6a7a8a9aaabacadaeafc0c1c2c3c4c5c6c7"
                + "9330f103ec6a48534157698e59e171c5289e59c7b4bc13d6bc2c01d08decd607658c33cb")
    }

    /// Vectors 5 and 6: zstd items, a raw frame and a compressed one.
    @Test(arguments: [
        ("28b52ffda00c000000610000" + "68656c6c6f2c207661756c74", "hello, vault",
         "d3e0b292234a6825204305fa31841da947b279bdc0681222c6f83b615ad6e3af56dbd2b7955e1f043fe8d453b12902e3"),
        ("28b52ffd601404a500006868656c6c6f2c207661756c740a010004c13fbf", String(repeating: "hello, vault\n", count: 100),
         "d3e0b292e3526c8020226d923c8d1daa04be2faad4710a5cc7f83fa06569e3b7c152e189787bb85afdf5450e5ed8687d8ee266de11a41904"),
    ])
    func vectors5And6Zstd(_ frameHex: String, _ text: String, _ sealedHex: String) throws {
        let frame = try #require(Hex.decode(frameHex))
        let h = try ItemHeader(flags: .zstd, itemID: Self.header.itemID, noncePrefix: Self.header.noncePrefix)
        let sealed = try F.seal(frame, key: Self.key, header: h)
        #expect(hex(sealed) == "5641554c5449544d01010004a0a1a2a3a4a5a6a7a8a9aaabacadaeafc0c1c2c3c4c5c6c7" + sealedHex)
        // Through the reader's own decoding path.
        let decoded = MemoryBytes()
        _ = try pump(ItemReader(key: Self.key, source: MemoryBytes(sealed)).decodedStream(), into: decoded)
        #expect(decoded.bytes == Array(text.utf8))
    }

    @Test func vector4ThreeChunks() throws {
        let content = (0..<(2 * F.M + 1000)).map { UInt8($0 % 251) }
        #expect(hex(try SHA256.hash(content)) == "890b17beea9ed946007405b834357145b1f9b104f723eadcf3f1c55629a23592")
        let sealed = try F.seal(content, key: Self.key, header: Self.header)
        #expect(sealed.count == 2_162_772)
        #expect(hex(try SHA256.hash(sealed)) == "61b9d9bf64f92a8eb6234a74661879c4bc138e8eb0a603f14466dc8f2782f8cc")
        #expect(try F.open(sealed, key: Self.key) == content)
    }

    @Test("the independent Python reader opens what Swift sealed, and the reverse")
    func crossImplementation() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../scripts/reference/vault_item.py").standardized.path
        let content = F.content(3 * F.M + 4321, seed: 77)
        let key = F.key(3), header = F.header(5, flags: .archive)
        let sealed = try F.seal(content, key: key, header: header)
        let keyHex = hex((0..<32).map { UInt8($0) &+ 3 })
        #expect(try runPython(script, ["open", keyHex], input: sealed) == content)
        let pySealed = try runPython(script, ["seal", keyHex, hex(header.itemID), hex(header.noncePrefix), "2"], input: content)
        #expect(pySealed == sealed)
    }

    private func runPython(_ script: String, _ args: [String], input: [UInt8]) throws -> [UInt8] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script] + args
        let inPipe = Pipe(), outPipe = Pipe()
        p.standardInput = inPipe
        p.standardOutput = outPipe
        try p.run()
        let writer = Thread { inPipe.fileHandleForWriting.write(Data(input)); try? inPipe.fileHandleForWriting.close() }
        writer.start()
        let out = outPipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        return Array(out)
    }
}
