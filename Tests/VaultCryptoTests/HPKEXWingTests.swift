import Testing
@testable import VaultCrypto

/// The HPKE vectors for KEM 0x647A of draft-ietf-hpke-pq-04
/// (Vectors/hpke-xwing.json): base mode, ChaCha20-Poly1305, 10 encryptions
/// and 5 exports each. Only the kdf_id 0x0001 (HKDF-SHA256) case runs: the
/// 0x0011 case needs the SHAKE256 one-stage KDF and key schedule of
/// draft-ietf-hpke-hpke, which is not implemented.
struct HPKEXWingVector: Decodable, Sendable {
    struct Encryption: Decodable, Sendable { let aad, ct, nonce, pt: Hex }
    struct Export: Decodable, Sendable {
        let exporterContext: Hex
        let L: Int
        let exportedValue: Hex
    }
    let mode: UInt8
    let kemId, kdfId, aeadId: UInt16
    let info, ikmE, ikmR, skRm, pkRm, enc, sharedSecret, suiteId, key, baseNonce, exporterSecret: Hex
    let encryptions: [Encryption]
    let exports: [Export]

    static let all: [HPKEXWingVector] = try! Vectors.load("hpke-xwing")
}

@Suite struct HPKEXWingTests {
    @Test func vectorFile() {
        #expect(HPKEXWingVector.all.count == 2)
        #expect(Set(HPKEXWingVector.all.map(\.kdfId)) == [0x0001, 0x0011])
    }

    @Test func hkdfSHA256Vector() throws {
        let v = try #require(HPKEXWingVector.all.first { $0.kdfId == HPKE.kdfID })
        #expect(v.kemId == HPKE.XWingKEM.id && v.mode == 0 && v.aeadId == HPKE.AEADID.chacha20Poly1305.rawValue)
        let aead = HPKE.AEADID.chacha20Poly1305
        #expect(HPKE.suiteID(kem: v.kemId, aead) == v.suiteId.bytes)

        // DeriveKeyPair (draft-ietf-hpke-pq: SHAKE256 LabeledDerive, then X-Wing's expansion).
        let skR = try HPKE.XWingKEM.deriveKeyPair(ikm: v.ikmR.bytes)
        #expect(skR.seed.bytes == v.skRm.bytes)
        #expect(skR.publicKey.bytes == v.pkRm.bytes)

        // Encap with ikmE as the eseed, Decap.
        let (ss, enc) = try HPKE.XWingKEM.encapsulate(to: skR.publicKey, randomness: v.ikmE.secret)
        #expect(enc == v.enc.bytes)
        #expect(ss.bytes == v.sharedSecret.bytes)
        #expect(try HPKE.XWingKEM.decapsulate(v.enc.bytes, with: skR).bytes == v.sharedSecret.bytes)

        // The RFC 9180 key schedule, both sides.
        let (senderEnc, sender) = try HPKE.setupSender(recipient: skR.publicKey, info: v.info.bytes, aead: aead,
                                                       randomness: v.ikmE.secret)
        let recipient = try HPKE.setupRecipient(encapsulatedKey: v.enc.bytes, recipient: skR, info: v.info.bytes, aead: aead)
        #expect(senderEnc == v.enc.bytes)
        for context in [sender.context, recipient.context] {
            #expect(context.key.bytes == v.key.bytes)
            #expect(context.baseNonce.bytes == v.baseNonce.bytes)
            #expect(context.exporterSecret.bytes == v.exporterSecret.bytes)
        }
        #expect(v.encryptions.count == 10 && v.exports.count == 5)
        for (seq, e) in v.encryptions.enumerated() {
            #expect(try sender.seal(e.pt.bytes, aad: e.aad.bytes) == e.ct.bytes, "seal #\(seq)")
            #expect(try recipient.open(e.ct.bytes, aad: e.aad.bytes) == e.pt.bytes, "open #\(seq)")
        }
        for x in v.exports {
            #expect(try sender.export(context: x.exporterContext.bytes, length: x.L).bytes == x.exportedValue.bytes)
            #expect(try recipient.export(context: x.exporterContext.bytes, length: x.L).bytes == x.exportedValue.bytes)
        }
        // Single-shot open of the first message.
        let first = v.encryptions[0]
        #expect(try HPKE.open(first.ct.bytes, encapsulatedKey: v.enc.bytes, recipient: skR, info: v.info.bytes,
                              aad: first.aad.bytes, aead: aead) == first.pt.bytes)
    }

    /// The 0x0011 case's DeriveKeyPair and KEM do not depend on the KDF, so
    /// they are checked even though its key schedule is not implemented.
    @Test func shakeKDFVectorKEMPart() throws {
        let v = try #require(HPKEXWingVector.all.first { $0.kdfId == 0x0011 })
        let skR = try HPKE.XWingKEM.deriveKeyPair(ikm: v.ikmR.bytes)
        #expect(skR.seed.bytes == v.skRm.bytes)
        #expect(skR.publicKey.bytes == v.pkRm.bytes)
        let (ss, enc) = try HPKE.XWingKEM.encapsulate(to: skR.publicKey, randomness: v.ikmE.secret)
        #expect(enc == v.enc.bytes && ss.bytes == v.sharedSecret.bytes)
    }

    @Test(arguments: [HPKE.AEADID.aes128GCM, .aes256GCM, .chacha20Poly1305])
    func roundTripAndFailures(aead: HPKE.AEADID) throws {
        let skR = try XWing.PrivateKey()
        let info = Array("vault pq test".utf8)
        let (enc, ct) = try HPKE.seal([1, 2, 3], to: skR.publicKey, info: info, aad: [9], aead: aead)
        #expect(enc.count == HPKE.XWingKEM.encapsulatedKeyLength)
        #expect(try HPKE.open(ct, encapsulatedKey: enc, recipient: skR, info: info, aad: [9], aead: aead) == [1, 2, 3])
        // Every kind of bad input reads as the one open failure.
        var flipped = enc
        flipped[17] ^= 4
        var flippedX = enc
        flippedX[1100] ^= 4
        for badEnc in [flipped, flippedX, Array(enc.dropLast()), enc + [0], []] {
            #expect(throws: CryptoError.authenticationFailed) {
                try HPKE.open(ct, encapsulatedKey: badEnc, recipient: skR, info: info, aad: [9], aead: aead)
            }
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ct, encapsulatedKey: enc, recipient: try XWing.PrivateKey(), info: info, aad: [9], aead: aead)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ct, encapsulatedKey: enc, recipient: skR, info: [], aad: [9], aead: aead)
        }
    }

    @Test func pskModeWorksWithXWing() throws {
        let skR = try XWing.PrivateKey()
        let psk = try SecretBytes.random(count: 32)
        let (enc, ct) = try HPKE.seal([42], to: skR.publicKey, info: [], aead: .aes256GCM, mode: .psk, psk: psk, pskID: [7])
        #expect(try HPKE.open(ct, encapsulatedKey: enc, recipient: skR, info: [], aead: .aes256GCM,
                              mode: .psk, psk: psk, pskID: [7]) == [42])
    }

    @Test func deriveKeyPairNeedsEnoughIKM() {
        expectInvalidParameter { try HPKE.XWingKEM.deriveKeyPair(ikm: [UInt8](repeating: 1, count: 31)) }
    }
}
