import VaultCrypto
@testable import VaultCore

/// Helpers shared by the item tests: seal bytes in memory, open them back.
enum ItemFixture {
    static let M = ItemCipher.chunkSize
    static let sealedM = ItemCipher.sealedChunkSize
    static let H = ItemHeader.length

    static func key(_ seed: UInt8 = 0) -> FileKey {
        var b = (0..<32).map { UInt8($0) &+ seed }
        return try! FileKey(secret: try SecretBytes(consuming: &b))
    }

    static func header(_ seed: UInt8 = 0, flags: ItemFlags = []) -> ItemHeader {
        try! ItemHeader(flags: flags, itemID: (0..<16).map { 0xa0 &+ UInt8($0) &+ seed },
                        noncePrefix: (0..<8).map { 0xc0 &+ UInt8($0) &+ seed })
    }

    /// Deterministic non-repeating content.
    static func content(_ n: Int, seed: UInt32 = 1) -> [UInt8] {
        var x = seed &* 2654435761 | 1
        return (0..<n).map { _ in x ^= x << 13; x ^= x >> 17; x ^= x << 5; return UInt8(truncatingIfNeeded: x) }
    }

    static func seal(_ content: [UInt8], key: FileKey = key(), header: ItemHeader = header(),
                     threads: Int = 2, batch: Int = 8) throws -> [UInt8] {
        let sink = MemoryBytes()
        let w = try ItemWriter(key: key, header: header, sink: sink, threads: threads, batchChunks: batch)
        try w.write(content)
        try w.finish()
        return sink.bytes
    }

    static func open(_ sealed: [UInt8], key: FileKey = key()) throws -> [UInt8] {
        let r = try ItemReader(key: key, source: MemoryBytes(sealed))
        let out = MemoryBytes()
        try r.readAll(to: out)
        return out.bytes
    }

    /// Byte range of sealed chunk `i` in a sealed file of `total` bytes.
    static func chunkRange(_ i: Int, total: Int) -> Range<Int> {
        let start = H + i * sealedM
        return start..<min(start + sealedM, total)
    }

    /// Seals one chunk by hand, with any index and final flag (for forging).
    static func sealChunk(_ plaintext: [UInt8], index: UInt32, final: Bool,
                          key: FileKey = key(), header: ItemHeader = header()) throws -> [UInt8] {
        let aead = try AEAD(.aes256GCM, key: key.secret)
        return try aead.seal(nonce: ItemCipher.nonce(prefix: header.noncePrefix, index: index),
                             aad: ItemCipher.aad(header: header.bytes, index: index, final: final),
                             plaintext: plaintext)
    }
}

func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }
