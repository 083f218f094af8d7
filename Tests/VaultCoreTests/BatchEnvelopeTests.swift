import Foundation
import TestSupport
import Testing
@testable import VaultCrypto
@testable import VaultCore

/// Batch drop-in envelopes (docs/FORMAT.md, "Drop-in envelope"): the
/// published vector, and the shapes a reader refuses. A dropper holds the
/// vault's public key and every file key it drops, so hostile batches are
/// sealed here to the real key: only the reader's checks stand in the way.
@Suite("Batch envelopes")
struct BatchEnvelopeTests {
    typealias V = VaultVectorTests

    /// The vector's second entry: item id d0…df, file key e0…ff, "notes.md".
    static func second() throws -> ManifestEntry {
        try ManifestEntry(itemID: V.seq(0xd0, 16), fileKey: FileKey(secret: V.secret(V.seq(0xe0, 32))), kind: .file,
                          origin: .droppedIn, mode: 0o600, size: 5, fileCount: 1, added: 1_767_225_600,
                          modified: 1_767_225_600, name: "notes.md")
    }

    static func keys() throws -> (VaultKeys, X25519PrivateKey) {
        let master = try MasterKey(secret: V.secret(V.vmk))
        let keys = try VaultKeys(masterKey: master, vaultID: V.vaultID)
        return (keys, keys.privateKey)
    }

    /// The X25519 batch of the vector: the complete vault's entry and
    /// `second()`, ephemeral key a0…bf.
    static func vector() throws -> [UInt8] {
        let (_, key) = try keys()
        var payload = ByteWriterBytes.u16(2)
        try V.entry().encode(into: &payload)
        try second().encode(into: &payload)
        let (enc, sender) = try HPKE.setupSender(recipient: key.publicKey, info: DropInEnvelope.batchInfo + V.vaultID,
                                                 aead: .aes256GCM, mode: .base, psk: nil, pskID: [UInt8](),
                                                 ephemeralKey: X25519PrivateKey(secret: V.secret(V.ephemeral)))
        let prefix = DropInEnvelope.magic + [3, 1] + enc
        return prefix + (try sender.seal(payload, aad: prefix))
    }

    @Test func publishedVectorMatchesAndOpens() throws {
        let envelope = try Self.vector()
        if ProcessInfo.processInfo.environment["VAULT_PRINT_VECTORS"] != nil { print("VECTOR batch = \(Hex.encode(envelope))") }
        let published = try FormatVectors.published(section: "### Test vector: a batch envelope")
        #expect(published["inbox/000102030405060708090a0b0c0d0e0f.env"] == Hex.encode(envelope))
        let (keys, _) = try Self.keys()
        let opened = try DropInEnvelope.openAny(envelope, with: keys, vaultID: V.vaultID)
        #expect(opened.batch)
        #expect(opened.entries.map(\.name) == ["hello.txt", "notes.md"])
        #expect(opened.entries.map(\.itemID) == [V.itemID, V.seq(0xd0, 16)])
        // A single-envelope reader refuses it.
        #expect(throws: VaultError.corruptedOrTampered) {
            try DropInEnvelope.open(envelope, x25519: keys.privateKey, xwing: keys.xwing, vaultID: V.vaultID)
        }
    }

    /// Relabelled (batch as single, single as batch, X25519 as X-Wing), or
    /// for another vault: the aad, the info or both differ.
    @Test func aRelabelledBatchDoesNotOpen() throws {
        let envelope = try Self.vector()
        let (keys, _) = try Self.keys()
        for (version, suite) in [(1, 1), (2, 2), (4, 2), (4, 1), (3, 2)] as [(UInt8, UInt8)] {
            var edited = envelope
            (edited[8], edited[9]) = (version, suite)
            #expect(throws: VaultError.corruptedOrTampered) { try DropInEnvelope.openAny(edited, with: keys, vaultID: V.vaultID) }
        }
        #expect(throws: VaultError.corruptedOrTampered) { try DropInEnvelope.openAny(envelope, with: keys, vaultID: V.seq(0x21, 16)) }
        // A single envelope sealed with the batch label, or the reverse.
        let entryBytes: [UInt8] = try { var p = [UInt8](); try V.entry().encode(into: &p); return p }()
        var single = try DropInEnvelope.seal(payload: entryBytes, to: .x25519(keys.privateKey.publicKey), vaultID: V.vaultID)
        single[8] = 3
        #expect(throws: VaultError.corruptedOrTampered) { try DropInEnvelope.openAny(single, with: keys, vaultID: V.vaultID) }
    }

    /// Payloads a dropper could seal: each is refused whole.
    @Test func hostileBatchPayloadsAreRefused() throws {
        let (keys, _) = try Self.keys()
        func entry(_ id: UInt8, kind: ItemKind = .file, origin: ItemOrigin = .droppedIn) throws -> [UInt8] {
            let e = try ManifestEntry(itemID: V.seq(id, 16), fileKey: FileKey(secret: V.secret(V.seq(0x80, 32))), kind: kind,
                                      origin: origin, mode: 0o600, size: 1, fileCount: 1, added: 1_767_225_600,
                                      modified: 1_767_225_600, name: "f\(id)")
            var out = [UInt8]()
            e.encode(into: &out)
            return out
        }
        let one = try entry(1), two = try entry(2)
        let many = try (0..<129).flatMap { try entry(UInt8($0)) }
        let hostile: [(String, [UInt8])] = [
            ("empty", []),
            ("count only", ByteWriterBytes.u16(1)),
            ("count 0", ByteWriterBytes.u16(0) + one),
            ("count above entries", ByteWriterBytes.u16(3) + one + two),
            ("count below entries", ByteWriterBytes.u16(1) + one + two),
            ("trailing byte", ByteWriterBytes.u16(2) + one + two + [0]),
            ("an entry cut short", ByteWriterBytes.u16(2) + one + two.dropLast()),
            ("one item id twice", ByteWriterBytes.u16(2) + one + one),
            ("origin unlocked", ByteWriterBytes.u16(2) + one + (try entry(2, origin: .unlocked))),
            ("a backup pack", ByteWriterBytes.u16(2) + one + (try entry(2, kind: .pack))),
            ("a snapshot", ByteWriterBytes.u16(1) + (try entry(2, kind: .snapshot))),
            ("129 entries", ByteWriterBytes.u16(129) + many),
        ]
        for (what, payload) in hostile {
            for key in [VaultPublicKey.x25519(keys.privateKey.publicKey), .xwing(keys.xwing.publicKey)] {
                let sealed = try DropInEnvelope.seal(payload: payload, to: key, vaultID: V.vaultID, batch: true)
                #expect(throws: VaultError.corruptedOrTampered, "\(what)") {
                    try DropInEnvelope.openAny(sealed, with: keys, vaultID: V.vaultID)
                }
            }
        }
        // And the largest batch the writer makes opens.
        let full = try (0..<128).map { i in
            try ManifestEntry(itemID: V.seq(UInt8(i), 16), fileKey: FileKey(secret: V.secret(V.seq(0x80, 32))), kind: .folder,
                              origin: .droppedIn, mode: 0o700, size: 1, fileCount: 1, added: 1, modified: 1,
                              name: String(repeating: "n", count: ManifestEntry.maxNameLength))
        }
        let sealed = try DropInEnvelope.seal(batch: full, to: .xwing(keys.xwing.publicKey), vaultID: V.vaultID)
        #expect(sealed.count <= DropInEnvelope.maxBatchLength)
        #expect(try DropInEnvelope.openAny(sealed, with: keys, vaultID: V.vaultID).entries.count == 128)
    }
}

/// Big-endian integers as bytes, for payloads built by hand.
enum ByteWriterBytes {
    static func u16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xff)] }
}
