import Foundation
import VaultCodecs
import VaultCrypto
@testable import VaultCore

/// A drop-in as whoever can write the inbox makes it: any entry fields (even
/// ones `vault add` would never write), any item bytes, sealed under the
/// attacker's own file key to the vault's real public key. The AEAD then
/// proves nothing about the fields; only the vault's own checks stand.
struct HostileDropIn {
    var itemID = SecureRandom.bytes(16)
    var fileKey = SecureRandom.bytes(32)
    var kind: UInt8 = 0
    var origin: UInt8 = 1
    var mode: UInt16 = 0o600
    var size: UInt64 = 0
    var fileCount: UInt64 = 1
    var added: Int64 = 1_767_225_600
    var modified: Int64 = 1_767_225_600
    var name = Array("hostile.bin".utf8)
    var flags: ItemFlags = []
    var noncePrefix = SecureRandom.bytes(8)

    var blob: String { Hex.encode(itemID) }
    var key: FileKey { try! FileKey(secret: SecretBytes(copying: fileKey.withUnsafeBytes { $0 })) }
    var header: ItemHeader { try! ItemHeader(flags: flags, itemID: itemID, noncePrefix: noncePrefix) }

    /// The envelope's plaintext: one manifest entry, field by field (FORMAT.md).
    var payload: [UInt8] {
        var b = itemID + fileKey + [kind, origin, UInt8(mode >> 8), UInt8(mode & 0xff)]
        for v in [size, fileCount, UInt64(bitPattern: added), UInt64(bitPattern: modified)] {
            b += withUnsafeBytes(of: v.bigEndian, Array.init)
        }
        return b + [UInt8(name.count >> 8 & 0xff), UInt8(name.count & 0xff)] + name
    }

    /// An honestly sealed item of `content` under this key and header.
    func item(_ content: [UInt8]) throws -> [UInt8] {
        let sink = MemoryBytes()
        let w = try ItemWriter(key: key, header: header, sink: sink, threads: 1, batchChunks: 1)
        try w.write(content)
        try w.finish()
        return sink.bytes
    }

    /// One chunk sealed with any index, final flag and plaintext: to forge
    /// items no writer makes.
    func chunk(_ plaintext: [UInt8], index: UInt32, final: Bool) throws -> [UInt8] {
        try AEAD(.aes256GCM, key: key.secret).seal(nonce: ItemCipher.nonce(prefix: noncePrefix, index: index),
                                                   aad: ItemCipher.aad(header: header.bytes, index: index, final: final),
                                                   plaintext: plaintext)
    }

    /// `content` as one xz stream (what a compressed item holds).
    static func xz(_ content: [UInt8]) throws -> [UInt8] {
        let sink = MemoryBytes()
        let c = try XZCompressor(level: 0, threads: 1, downstream: sink)
        try content.withUnsafeBytes { try c.write($0) }
        try c.finish()
        return sink.bytes
    }

    static func zstd(_ content: [UInt8]) throws -> [UInt8] {
        let sink = MemoryBytes()
        let c = try ZstdCompressor(level: 1, adaptive: false, threads: 1, downstream: sink)
        try content.withUnsafeBytes { try c.write($0) }
        try c.finish()
        return sink.bytes
    }

    /// `content` in the stream `flags` name (xz or zstd).
    static func compressed(_ content: [UInt8], _ flags: ItemFlags) throws -> [UInt8] {
        flags.contains(.zstd) ? try zstd(content) : try xz(content)
    }

    /// Writes `inbox/<id>.item` (unless nil) and `inbox/<id>.env` into the vault at `root`.
    func drop(into root: String, item: [UInt8]?) throws {
        let header = try VaultHeader(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: root + "/vault.header"))))
        let envelope = try DropInEnvelope.seal(payload: payload, to: header.publicKey, vaultID: header.vaultID)
        if let item { try Data(item).write(to: URL(fileURLWithPath: root + "/inbox/" + blob + ".item")) }
        try Data(envelope).write(to: URL(fileURLWithPath: root + "/inbox/" + blob + ".env"))
    }
}
