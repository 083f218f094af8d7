import Testing
@testable import VaultCrypto

/// One entry of the RFC 9180 test vectors (Appendix A.1, DHKEM(X25519, HKDF-SHA256)).
struct HPKEVector: Decodable, Sendable {
    struct Encryption: Decodable, Sendable { let aad, ct, nonce, pt: Hex }
    struct Export: Decodable, Sendable {
        let exporterContext: Hex
        let L: Int
        let exportedValue: Hex
    }
    let mode: UInt8
    let kemId, kdfId, aeadId: UInt16
    let info, ikmR, ikmE, skRm, skEm, pkRm, pkEm, enc: Hex
    let sharedSecret, keyScheduleContext, secret, key, baseNonce, exporterSecret: Hex
    let psk, pskId: Hex?
    let encryptions: [Encryption]
    let exports: [Export]

    static let all: [HPKEVector] = try! Vectors.load("hpke-rfc9180-x25519-sha256")
}

@Suite struct HPKETests {
    @Test func vectorFileCoversEverySuiteAndMode() {
        #expect(HPKEVector.all.count == 8)
        for aead in HPKE.AEADID.allCases {
            for mode in [HPKE.Mode.base, .psk] {
                #expect(HPKEVector.all.contains { $0.aeadId == aead.rawValue && $0.mode == mode.rawValue })
            }
        }
    }

    @Test(arguments: HPKE.AEADID.allCases, [HPKE.Mode.base, .psk])
    func rfc9180Vector(aead: HPKE.AEADID, mode: HPKE.Mode) throws {
        let v = try #require(HPKEVector.all.first { $0.aeadId == aead.rawValue && $0.mode == mode.rawValue })
        #expect(v.kemId == HPKE.kemID && v.kdfId == HPKE.kdfID)
        let psk = try v.psk.map { b -> SecretBytes in var copy = b.bytes; return try SecretBytes(consuming: &copy) }
        let pskID = v.pskId?.bytes ?? []

        // DeriveKeyPair (section 7.1.3).
        let skR = try HPKE.deriveKeyPair(ikm: v.ikmR.bytes)
        let skE = try HPKE.deriveKeyPair(ikm: v.ikmE.bytes)
        #expect(skR.secret.bytes == v.skRm.bytes)
        #expect(skR.publicKey.bytes == v.pkRm.bytes)
        #expect(skE.secret.bytes == v.skEm.bytes)
        #expect(skE.publicKey.bytes == v.pkEm.bytes)

        // Encap / Decap (section 4.1).
        let (sharedSecret, enc) = try HPKE.DHKEMX25519.encapsulate(to: skR.publicKey, randomness: v.ikmE.secret)
        #expect(enc == v.enc.bytes)
        #expect(sharedSecret.bytes == v.sharedSecret.bytes)
        #expect(try HPKE.DHKEMX25519.decapsulate(v.enc.bytes, with: skR).bytes == v.sharedSecret.bytes)

        // Key schedule (section 5.1), both sides.
        let (senderEnc, sender) = try HPKE.setupSender(recipient: skR.publicKey, info: v.info.bytes, aead: aead,
                                                       mode: mode, psk: psk, pskID: pskID, ephemeralKey: skE)
        let recipient = try HPKE.setupRecipient(encapsulatedKey: v.enc.bytes, recipient: skR, info: v.info.bytes,
                                                aead: aead, mode: mode, psk: psk, pskID: pskID)
        #expect(senderEnc == v.enc.bytes)
        // The same through the generic path, with ikmE as the KEM's randomness.
        let (genericEnc, generic) = try HPKE.setupSender(recipient: skR.publicKey, info: v.info.bytes, aead: aead,
                                                         mode: mode, psk: psk, pskID: pskID, randomness: v.ikmE.secret)
        #expect(genericEnc == v.enc.bytes)
        for context in [sender.context, recipient.context, generic.context] {
            #expect(context.key.bytes == v.key.bytes)
            #expect(context.baseNonce.bytes == v.baseNonce.bytes)
            #expect(context.exporterSecret.bytes == v.exporterSecret.bytes)
        }

        // Every encryption, in sequence order (section 5.2).
        if aead == .exportOnly { #expect(v.encryptions.isEmpty) } else { #expect(v.encryptions.count == 257) }
        for (seq, e) in v.encryptions.enumerated() {
            #expect(sender.sequenceNumber == UInt64(seq))
            #expect(try sender.seal(e.pt.bytes, aad: e.aad.bytes) == e.ct.bytes, "seal #\(seq)")
            #expect(try recipient.open(e.ct.bytes, aad: e.aad.bytes) == e.pt.bytes, "open #\(seq)")
        }

        // Every export (section 5.3), both sides.
        #expect(v.exports.count == 3)
        for x in v.exports {
            #expect(try sender.export(context: x.exporterContext.bytes, length: x.L).bytes == x.exportedValue.bytes)
            #expect(try recipient.export(context: x.exporterContext.bytes, length: x.L).bytes == x.exportedValue.bytes)
        }

        // Single-shot open of the first message (section 6.1).
        if let first = v.encryptions.first {
            #expect(try HPKE.open(first.ct.bytes, encapsulatedKey: v.enc.bytes, recipient: skR, info: v.info.bytes,
                                  aad: first.aad.bytes, aead: aead, mode: mode, psk: psk, pskID: pskID) == first.pt.bytes)
        }
    }

    // MARK: Round trips and failures

    let info = Array("vault test".utf8)

    @Test(arguments: [HPKE.AEADID.aes128GCM, .aes256GCM, .chacha20Poly1305])
    func singleShotRoundTrip(aead: HPKE.AEADID) throws {
        let skR = try X25519PrivateKey()
        let pt = SecureRandom.bytes(1000)
        let (enc, ct) = try HPKE.seal(pt, to: skR.publicKey, info: info, aad: [1, 2, 3], aead: aead)
        #expect(enc.count == HPKE.encapsulatedKeyLength)
        #expect(ct.count == pt.count + 16)
        #expect(try HPKE.open(ct, encapsulatedKey: enc, recipient: skR, info: info, aad: [1, 2, 3], aead: aead) == pt)
        let secret = try HPKE.setupRecipient(encapsulatedKey: enc, recipient: skR, info: info, aead: aead)
            .openSecret(ct, aad: [1, 2, 3])
        #expect(secret.bytes == pt)
    }

    @Test func pskModeRoundTrip() throws {
        let skR = try X25519PrivateKey()
        let psk = try SecretBytes.random(count: 32)
        let (enc, ct) = try HPKE.seal([42], to: skR.publicKey, info: info, aead: .aes256GCM,
                                      mode: .psk, psk: psk, pskID: [7])
        #expect(try HPKE.open(ct, encapsulatedKey: enc, recipient: skR, info: info, aead: .aes256GCM,
                              mode: .psk, psk: psk, pskID: [7]) == [42])
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ct, encapsulatedKey: enc, recipient: skR, info: info, aead: .aes256GCM,
                          mode: .psk, psk: try SecretBytes.random(count: 32), pskID: [7])
        }
    }

    @Test func tamperingFailsAuthenticationAndDoesNotAdvance() throws {
        let skR = try X25519PrivateKey()
        let (enc, sender) = try HPKE.setupSender(recipient: skR.publicKey, info: info, aead: .chacha20Poly1305)
        let ct = try sender.seal(Array("hello".utf8), aad: [1])
        let recipient = try HPKE.setupRecipient(encapsulatedKey: enc, recipient: skR, info: info, aead: .chacha20Poly1305)

        #expect(throws: CryptoError.authenticationFailed) { try recipient.open(ct, aad: [2]) }
        for bit in [0, 7, ct.count * 8 - 1] {
            var flipped = ct
            flipped[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(throws: CryptoError.authenticationFailed) { try recipient.open(flipped, aad: [1]) }
        }
        #expect(throws: CryptoError.authenticationFailed) { try recipient.open(Array(ct.prefix(15)), aad: [1]) }
        #expect(recipient.sequenceNumber == 0)
        #expect(try recipient.open(ct, aad: [1]) == Array("hello".utf8))
        #expect(recipient.sequenceNumber == 1)
        // Replaying the same message under the next nonce fails.
        #expect(throws: CryptoError.authenticationFailed) { try recipient.open(ct, aad: [1]) }
    }

    @Test func wrongRecipientInfoOrEncFailsAuthentication() throws {
        let skR = try X25519PrivateKey()
        let (enc, ct) = try HPKE.seal([1, 2, 3], to: skR.publicKey, info: info, aead: .aes128GCM)
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ct, encapsulatedKey: enc, recipient: try X25519PrivateKey(), info: info, aead: .aes128GCM)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ct, encapsulatedKey: enc, recipient: skR, info: [0], aead: .aes128GCM)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try HPKE.open(ct, encapsulatedKey: enc, recipient: skR, info: info, aead: .chacha20Poly1305)
        }
        // Malformed and low-order encapsulated keys read as open failures too.
        for badEnc in [Array(enc.dropLast()), [UInt8](repeating: 0, count: 32), enc + [0]] {
            #expect(throws: CryptoError.authenticationFailed) {
                try HPKE.open(ct, encapsulatedKey: badEnc, recipient: skR, info: info, aead: .aes128GCM)
            }
        }
    }

    @Test func lowOrderRecipientKeyIsRejectedBySender() throws {
        let zero = try X25519PublicKey(bytes: [UInt8](repeating: 0, count: 32))
        #expect(throws: CryptoError.weakSharedSecret) {
            try HPKE.setupSender(recipient: zero, info: info, aead: .aes128GCM)
        }
    }

    @Test func pskInputsMustMatchMode() throws {
        let skR = try X25519PrivateKey()
        let psk = try SecretBytes.random(count: 32)
        let enc = try X25519PrivateKey().publicKey.bytes
        // psk mode without a psk: rejected on both sides.
        expectInvalidParameter { try HPKE.setupSender(recipient: skR.publicKey, info: info, aead: .aes128GCM, mode: .psk) }
        expectInvalidParameter {
            try HPKE.setupRecipient(encapsulatedKey: enc, recipient: skR, info: info, aead: .aes128GCM, mode: .psk)
        }
        expectInvalidParameter {
            try HPKE.setupSender(recipient: skR.publicKey, info: info, aead: .aes128GCM, mode: .psk,
                                 psk: try SecretBytes(count: 0), pskID: [1])
        }
        // A psk without an id, an id without a psk, a psk in base mode, a short psk.
        expectInvalidParameter {
            try HPKE.setupSender(recipient: skR.publicKey, info: info, aead: .aes128GCM, mode: .psk, psk: psk)
        }
        expectInvalidParameter {
            try HPKE.setupSender(recipient: skR.publicKey, info: info, aead: .aes128GCM, mode: .psk, pskID: [1])
        }
        expectInvalidParameter {
            try HPKE.setupSender(recipient: skR.publicKey, info: info, aead: .aes128GCM, psk: psk, pskID: [1])
        }
        expectInvalidParameter {
            try HPKE.setupSender(recipient: skR.publicKey, info: info, aead: .aes128GCM, mode: .psk,
                                 psk: try SecretBytes.random(count: 31), pskID: [1])
        }
    }

    @Test func exportOnlyRefusesSealAndOpen() throws {
        let skR = try X25519PrivateKey()
        let (enc, sender) = try HPKE.setupSender(recipient: skR.publicKey, info: info, aead: .exportOnly)
        expectInvalidParameter { try sender.seal([1, 2, 3]) }
        expectInvalidParameter { try HPKE.seal([1], to: skR.publicKey, info: info, aead: .exportOnly) }
        let recipient = try HPKE.setupRecipient(encapsulatedKey: enc, recipient: skR, info: info, aead: .exportOnly)
        expectInvalidParameter { try recipient.open([UInt8](repeating: 0, count: 32)) }
        #expect(try sender.export(context: [9], length: 64) == recipient.export(context: [9], length: 64))
    }

    @Test func exportLengthIsBounded() throws {
        let (_, sender) = try HPKE.setupSender(recipient: try X25519PrivateKey().publicKey, info: info, aead: .aes128GCM)
        #expect(try sender.export(context: [], length: 255 * 32).count == 255 * 32)
        expectInvalidParameter { try sender.export(context: [], length: 255 * 32 + 1) }
        expectInvalidParameter { try sender.export(context: [], length: 0) }
    }

    @Test func sequenceNumberOverflowIsRejected() throws {
        let skR = try X25519PrivateKey()
        let (enc, sender) = try HPKE.setupSender(recipient: skR.publicKey, info: info, aead: .aes128GCM)
        let recipient = try HPKE.setupRecipient(encapsulatedKey: enc, recipient: skR, info: info, aead: .aes128GCM)
        sender.context.sequenceNumber = .max - 1
        recipient.context.sequenceNumber = .max - 1
        let ct = try sender.seal([5])
        #expect(try recipient.open(ct) == [5])
        expectInvalidParameter { try sender.seal([6]) }
        expectInvalidParameter { try recipient.open(ct) }
        #expect(sender.sequenceNumber == .max)
    }

    @Test func deriveKeyPairNeedsEnoughIKM() {
        expectInvalidParameter { try HPKE.deriveKeyPair(ikm: [UInt8](repeating: 1, count: 31)) }
    }

    @Test func labelsAndSuiteIDs() {
        #expect(HPKE.DHKEMX25519.suiteID == Array("KEM".utf8) + [0x00, 0x20])
        #expect(HPKE.XWingKEM.suiteID == Array("KEM".utf8) + [0x64, 0x7a])
        #expect(HPKE.suiteID(kem: HPKE.XWingKEM.id, .chacha20Poly1305) == [UInt8](hex: "48504b45647a00010003"))
        #expect(HPKE.suiteID(.chacha20Poly1305) == Array("HPKE".utf8) + [0x00, 0x20, 0x00, 0x01, 0x00, 0x03])
        #expect(HPKE.suiteID(.exportOnly).suffix(2) == [0xff, 0xff])
    }
}

/// Expects `body` to throw `CryptoError.invalidParameter` (any message).
func expectInvalidParameter<R>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) {
    do {
        _ = try body()
        Issue.record("expected invalidParameter, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CryptoError {
        guard case .invalidParameter = error else {
            Issue.record("expected invalidParameter, got \(error)", sourceLocation: sourceLocation)
            return
        }
    } catch {
        Issue.record("expected invalidParameter, got \(error)", sourceLocation: sourceLocation)
    }
}
