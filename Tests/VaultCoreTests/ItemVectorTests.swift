import Foundation
import Testing
import TestSupport
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

    /// "Test vectors: readers' edge cases" (FORMAT.md, read from it): each
    /// item sealed again here, then read through a vault the way `get`
    /// reads it (ItemRules, the decoder, a folder's archive checks).
    @Test func readersEdgeCases() throws {
        let published = try FormatVectors.published(section: "### Test vectors: readers' edge cases")
        #expect(Set(published.keys) == ["flag bit 3", "skippable frames, content", "skippable frames, sealed",
                                         "a skippable frame alone, sealed", "folder, frame", "folder, archive SHA-256",
                                         "folder, sealed"], "FORMAT.md names \(published.keys.sorted())")
        func bytes(_ name: String) throws -> [UInt8] { try #require(Hex.decode(published[name] ?? "")) }
        func le(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        func header(_ flags: ItemFlags) throws -> ItemHeader {
            try ItemHeader(flags: flags, itemID: Self.header.itemID, noncePrefix: Self.header.noncePrefix)
        }

        // Skippable frames (RFC 8878 3.1.2) around vector 5's raw frame, and one alone.
        let raw = try #require(Hex.decode("28b52ffda00c000000610000")) + Self.hello
        let skipped = le(0x184D_2A50) + le(4) + Array("skip".utf8) + raw + le(0x184D_2A5F) + le(0)
        #expect(try bytes("skippable frames, content") == skipped)
        #expect(hex(try F.seal(skipped, key: Self.key, header: header(.zstd))) == published["skippable frames, sealed"])
        let alone = le(0x184D_2A5E) + le(0)
        #expect(hex(try F.seal(alone, key: Self.key, header: header(.zstd))) == published["a skippable frame alone, sealed"])
        #expect(hex(try F.seal(try bytes("folder, frame"), key: Self.key, header: header([.archive, .zstd])))
                == published["folder, sealed"])

        // Flag bit 3: ItemHeader makes no such header, so it is sealed by
        // hand here: vector 2's stream (Padmé(20) = 20: the content and its
        // length) under the header with 0x0008.
        var header8 = Self.header.bytes
        header8[11] = 0x08
        let stream = Self.hello + withUnsafeBytes(of: UInt64(Self.hello.count).bigEndian) { Array($0) }
        let sealed8 = header8 + (try AEAD(.aes256GCM, key: Self.key.secret).seal(
            nonce: ItemCipher.nonce(prefix: Self.header.noncePrefix, index: 0),
            aad: ItemCipher.aad(header: header8, index: 0, final: true), plaintext: stream))
        #expect(hex(sealed8) == published["flag bit 3"])
        #expect(throws: VaultError.newerItemFormat(item: "", flags: 8)) { try ItemReader(key: Self.key, source: MemoryBytes(sealed8)) }
        var both = sealed8
        both[11] = 0x0d   // bits 0, 2 and 3: the unknown bit is what is reported, not the two codecs
        #expect(throws: VaultError.newerItemFormat(item: "", flags: 0x0d)) { try ItemReader(key: Self.key, source: MemoryBytes(both)) }

        // Through a vault: each as the one item of its manifest, read as `get` reads it.
        let tv = TempVault()
        let v = try tv.create()
        func stored(_ sealed: [UInt8], kind: ItemKind, size: UInt64) throws -> ManifestEntry {
            try Data(sealed).write(to: URL(fileURLWithPath: tv.root + "/items/" + Hex.encode(Self.header.itemID)))
            let e = try ManifestEntry(itemID: Self.header.itemID, fileKey: Self.key, kind: kind, origin: .unlocked, mode: 0o644,
                                      size: size, fileCount: 1, added: 1_767_225_600, modified: 1_767_225_600, name: "x")
            v.manifest = try Manifest(entries: [e])
            return e
        }
        #expect(try tv.read(v, stored(try bytes("skippable frames, sealed"), kind: .file, size: 12)) == Self.hello)
        #expect(try tv.read(v, stored(try bytes("a skippable frame alone, sealed"), kind: .file, size: 0)) == [])
        let archive = try tv.read(v, stored(try bytes("folder, sealed"), kind: .folder, size: 5))
        let digest = hex(try SHA256.hash(archive))
        #expect(archive.count == 10_240 && digest == published["folder, archive SHA-256"])
        let target = tv.dir + "/restored"
        let summary = try v.restoreFolder(try stored(try bytes("folder, sealed"), kind: .folder, size: 5), to: target)
        #expect(summary.files == 1 && summary.bytes == 5)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target + "/a.txt")) == Data("hello".utf8))
        #expect(throws: VaultError.newerItemFormat(item: "x", flags: 8)) { try tv.read(v, stored(sealed8, kind: .file, size: 12)) }
        // Absorb takes no drop-in whose content has the bit: it stays in the inbox.
        v.manifest = try Manifest()
        var entry = try ManifestEntry(itemID: Self.header.itemID, fileKey: Self.key, kind: .file, origin: .droppedIn, mode: 0o644,
                                      size: 12, fileCount: 1, added: 1_767_225_600, modified: 1_767_225_600, name: "new.bin")
        entry.version = 1
        let blob = Hex.encode(Self.header.itemID)
        try FileManager.default.removeItem(atPath: tv.root + "/items/" + blob)
        try Data(sealed8).write(to: URL(fileURLWithPath: tv.root + "/inbox/" + blob + ".item"))
        try Data(try DropInEnvelope.seal(entry, to: v.vault.header.publicKey, vaultID: v.vault.header.vaultID))
            .write(to: URL(fileURLWithPath: tv.root + "/inbox/" + blob + ".env"))
        let report = try v.absorbInbox()
        #expect(report.absorbed.isEmpty && report.rejected == [blob + ".env"])
        #expect(tv.files("inbox") == [blob + ".env", blob + ".item"])
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
