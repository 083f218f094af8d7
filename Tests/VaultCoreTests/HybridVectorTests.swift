import Foundation
import TestSupport
import Testing
@testable import VaultCrypto
@testable import VaultCore

/// The version-2 (hybrid) vectors published in docs/FORMAT.md ("Test vector:
/// a hybrid vault"), read from FORMAT.md itself, so the document is what is
/// checked. The inputs are those of the version-1 vector plus the slot's name
/// and time and X-Wing's encapsulation seed. VAULT_PRINT_VECTORS=1 prints
/// what this code computes.
@Suite("Hybrid vault vectors")
struct HybridVectorTests {
    typealias V = VaultVectorTests
    static let created: Int64 = 1_767_225_600
    static let eseed = V.seq(0xd0, 64)

    static func published(section: String = "## Test vector: a hybrid vault") throws -> [String: String] {
        try FormatVectors.published(section: section)
    }

    static func compute() throws -> (values: [String: String], header: VaultHeader, envelope: [UInt8], master: MasterKey) {
        var got: [String: String] = [:]
        let kek = try KeyEncryptionKey.derive(password: V.secret(Array(V.password.utf8)), salt: V.salt, parameters: V.kdf)
        let master = try MasterKey(secret: V.secret(V.vmk))
        let xwing = try master.xwingKeyPair(vaultID: V.vaultID)
        got["x-wing seed"] = Hex.encode(V.bytes(try master.derive(MasterKey.xwingSeedLabel, vaultID: V.vaultID)))
        got["SHA-256(x-wing public key)"] = Hex.encode(try SHA256.hash(xwing.publicKey.bytes))
        let header = try VaultHeader.seal(vaultID: V.vaultID, options: [], masterKey: master, slotName: "password",
                                          kdf: V.kdf, salt: V.salt, kek: kek, created: created, nonce: V.wrapNonce,
                                          version: 2)
        got["vault.header"] = Hex.encode(header.bytes)
        got["public key fingerprint"] = header.fingerprint
        var payload = [UInt8]()
        try V.entry().encode(into: &payload)
        let (enc, sender) = try HPKE.setupSender(recipient: xwing.publicKey, info: DropInEnvelope.xwingInfo(vaultID: V.vaultID),
                                                 aead: .aes256GCM, randomness: V.secret(eseed))
        let prefix = DropInEnvelope.magic + [2, 2] + enc
        let envelope = prefix + (try sender.seal(payload, aad: prefix))
        got["inbox/707172737475767778797a7b7c7d7e7f.env"] = Hex.encode(envelope)
        return (got, header, envelope, master)
    }

    @Test func publishedVectorsMatch() throws {
        let (got, _, _, _) = try Self.compute()
        if ProcessInfo.processInfo.environment["VAULT_PRINT_VECTORS"] != nil {
            for (k, v) in got.sorted(by: { $0.key < $1.key }) { print("VECTOR \(k) = \(v)") }
        }
        let published = try Self.published()
        #expect(Set(published.keys) == Set(got.keys), "FORMAT.md names \(published.keys.sorted())")
        for (k, v) in got { #expect(published[k] == v, "vector \(k)") }
    }

    @Test func theVectorFilesOpen() throws {
        let (_, header, envelope, master) = try Self.compute()
        let parsed = try VaultHeader(parsing: header.bytes)
        #expect(parsed.version == 2 && parsed.slots.map(\.name) == ["password"] && parsed.publicKey.isHybrid)
        let kek = try KeyEncryptionKey.derive(password: V.secret(Array(V.password.utf8)), salt: V.salt, parameters: V.kdf)
        #expect(try parsed.unlock(kek: kek).secret == master.secret)
        let keys = try VaultKeys(masterKey: master, vaultID: V.vaultID)
        let e = try DropInEnvelope.open(envelope, with: keys, vaultID: V.vaultID)
        #expect(e.name == "hello.txt" && e.itemID == V.itemID)
    }

    /// Relabelling an X-Wing envelope as an X25519 one (or the reverse) and
    /// any one-byte change fail: the KEM is bound in the aad, info and HPKE suite.
    @Test func relabelledOrEditedEnvelopesFail() throws {
        let (_, _, envelope, master) = try Self.compute()
        let keys = try VaultKeys(masterKey: master, vaultID: V.vaultID)
        var relabelled = envelope
        (relabelled[8], relabelled[9]) = (1, 1)
        #expect(throws: VaultError.corruptedOrTampered) { try DropInEnvelope.open(relabelled, with: keys, vaultID: V.vaultID) }
        let downgraded = Array(envelope[..<8]) + [1, 1] + Array(envelope[(envelope.count - 32 - 103)...])
        #expect(throws: VaultError.corruptedOrTampered) { try DropInEnvelope.open(downgraded, with: keys, vaultID: V.vaultID) }
        for i in [8, 9, 10, 600, 1129, 1130, envelope.count - 1] {
            var edited = envelope
            edited[i] ^= 0x01
            #expect(throws: VaultError.corruptedOrTampered) { try DropInEnvelope.open(edited, with: keys, vaultID: V.vaultID) }
        }
        #expect(throws: VaultError.corruptedOrTampered) {
            try DropInEnvelope.open(envelope, with: keys, vaultID: V.seq(0x21, 16))
        }
    }

    /// Every single-byte edit of the header either fails to parse or fails
    /// the unlock (wrong password for the slot's own bytes, else the MAC).
    @Test func editedHeadersAreRefused() throws {
        let (_, header, _, _) = try Self.compute()
        let kek = try KeyEncryptionKey.derive(password: V.secret(Array(V.password.utf8)), salt: V.salt, parameters: V.kdf)
        let b = header.bytes
        for i in stride(from: 0, to: b.count, by: 7) {
            var edited = b
            edited[i] ^= 0x20
            guard let parsed = try? VaultHeader(parsing: edited) else { continue }
            #expect(throws: VaultError.self, "byte \(i)") { try parsed.unlock(kek: kek) }
        }
        #expect(throws: VaultError.corruptedOrTampered) { try VaultHeader(parsing: b + [0]) }
        #expect(throws: VaultError.corruptedOrTampered) { try VaultHeader(parsing: Array(b.dropLast())) }
    }
}
