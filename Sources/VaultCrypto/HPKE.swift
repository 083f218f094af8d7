import Foundation

/// Hybrid Public Key Encryption, RFC 9180, with HKDF-SHA256 as the KDF,
/// AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305 or export-only as the AEAD,
/// in modes base and psk, over a pluggable KEM (`HPKEKEM`, HPKEKEM.swift):
/// DHKEM(X25519, HKDF-SHA256) (0x0020) or X-Wing (0x647A, HPKEXWing.swift).
/// The KEM is chosen by the type of the recipient's key. The auth modes and
/// every other KDF are deliberately left out.
///
/// Built only from this module's wrappers: X25519 (libsodium), ML-KEM-768,
/// HKDF, SHA3 and the AEADs (OpenSSL). Every intermediate secret (DH
/// output, shared secret, key, base nonce, exporter secret) lives in
/// `SecretBytes`.
///
///     let (enc, sender) = try HPKE.setupSender(recipient: pkR, info: info, aead: .chacha20Poly1305)
///     let ct = try sender.seal(pt, aad: aad)
///     let recipient = try HPKE.setupRecipient(encapsulatedKey: enc, recipient: skR,
///                                             info: info, aead: .chacha20Poly1305)
///     let pt2 = try recipient.open(ct, aad: aad)
///
/// With X-Wing: `recipient:` an `XWing.PublicKey` / `XWing.PrivateKey`, and
/// `encapsulatedKey` is 1120 bytes instead of 32.
///
/// Errors: every failure to open (bad tag, wrong key or aad, malformed or
/// low-order encapsulated key) is `CryptoError.authenticationFailed`. Misuse
/// (psk inputs that do not match the mode, sealing with an export-only
/// context, sequence-number exhaustion) is `CryptoError.invalidParameter`.
public enum HPKE {
    /// HPKE modes (RFC 9180 section 5, table 1). mode_auth (0x02) and
    /// mode_auth_psk (0x03) are not implemented.
    public enum Mode: UInt8, Sendable {
        case base = 0x00
        case psk = 0x01
    }

    /// AEAD identifiers (RFC 9180 section 7.3, table 5).
    public enum AEADID: UInt16, Sendable, CaseIterable {
        case aes128GCM = 0x0001
        case aes256GCM = 0x0002
        case chacha20Poly1305 = 0x0003
        /// No encryption: the context can only export secrets (section 5.3).
        case exportOnly = 0xFFFF

        var algorithm: AEADAlgorithm? {
            switch self {
            case .aes128GCM: return .aes128GCM
            case .aes256GCM: return .aes256GCM
            case .chacha20Poly1305: return .chacha20Poly1305
            case .exportOnly: return nil
            }
        }
        /// Nk (table 5); zero for export-only.
        var keyLength: Int { algorithm?.keyLength ?? 0 }
        /// Nn (table 5); zero for export-only.
        var nonceLength: Int { algorithm == nil ? 0 : AEADAlgorithm.nonceLength }
    }

    /// kem_id of DHKEM(X25519, HKDF-SHA256), the vault's original KEM.
    public static let kemID: UInt16 = DHKEMX25519.id
    /// kdf_id of HKDF-SHA256 (section 7.2, table 3).
    public static let kdfID: UInt16 = 0x0001
    /// Nenc of DHKEM(X25519, HKDF-SHA256); X-Wing's is `XWingKEM.encapsulatedKeyLength`.
    public static let encapsulatedKeyLength = DHKEMX25519.encapsulatedKeyLength
    /// Nh of HKDF-SHA256 (section 7.2, table 3).
    static let hashLength = HKDF.hashLength
    /// "the PSK MUST have at least 32 bytes of entropy" (section 9.5); we
    /// enforce the length. DeriveKeyPair's ikm SHOULD be at least Nsk bytes
    /// (section 7.1.3); we enforce that too.
    public static let minimumPSKLength = 32
    public static let minimumIKMLength = 32

    // MARK: Labels (all ASCII, no terminator)

    /// The version prefix of every labeled KDF input (section 4).
    static let versionLabel = Array("HPKE-v1".utf8)
    /// suite_id for the key schedule and export:
    /// "HPKE" || I2OSP(kem_id, 2) || I2OSP(kdf_id, 2) || I2OSP(aead_id, 2) (section 5.1).
    static func suiteID(kem: UInt16 = kemID, _ aead: AEADID) -> [UInt8] {
        Array("HPKE".utf8) + i2osp2(kem) + i2osp2(kdfID) + i2osp2(aead.rawValue)
    }
    /// KeySchedule (section 5.1).
    static let pskIDHashLabel = Array("psk_id_hash".utf8), infoHashLabel = Array("info_hash".utf8),
               secretLabel = Array("secret".utf8), keyLabel = Array("key".utf8),
               baseNonceLabel = Array("base_nonce".utf8), exporterLabel = Array("exp".utf8)
    /// Secret export (section 5.3).
    static let exportLabel = Array("sec".utf8)

    static func i2osp2(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xff)] }

    // MARK: Labeled KDF (section 4)

    /// LabeledExtract(salt, label, ikm) = Extract(salt, "HPKE-v1" || suite_id || label || ikm).
    /// The labeled ikm is assembled in guarded memory because ikm is secret.
    static func labeledExtract(suiteID: [UInt8], salt: some ContiguousBytes, label: [UInt8],
                               ikm: some ContiguousBytes) throws -> SecretBytes {
        let labeledIKM = try concatenate([versionLabel, suiteID, label, ikm])
        return try HKDF.extract(salt: salt, ikm: labeledIKM)
    }

    /// LabeledExpand(prk, label, info, L) =
    /// Expand(prk, I2OSP(L, 2) || "HPKE-v1" || suite_id || label || info, L).
    static func labeledExpand(suiteID: [UInt8], prk: SecretBytes, label: [UInt8],
                              info: some ContiguousBytes, length: Int) throws -> SecretBytes {
        guard length > 0, length <= 255 * hashLength else {
            throw CryptoError.invalidParameter(.hpkeOutputLength(length, max: 255 * hashLength))
        }
        let labeledInfo = i2osp2(UInt16(length)) + versionLabel + suiteID + label
            + info.withUnsafeBytes { Array($0) }
        return try HKDF.expand(prk: prk, info: labeledInfo, length: length)
    }

    private static func concatenate(_ parts: [any ContiguousBytes]) throws -> SecretBytes {
        let total = parts.reduce(0) { n, p in n + p.withUnsafeBytes { $0.count } }
        let out = try SecretBytes(count: total)
        out.withUnsafeMutableBytes { o in
            var offset = 0
            for part in parts {
                part.withUnsafeBytes { b in
                    if b.count > 0 { (o.baseAddress! + offset).copyMemory(from: b.baseAddress!, byteCount: b.count) }
                    offset += b.count
                }
            }
        }
        return out
    }

    /// DeriveKeyPair's ikm SHOULD be at least Nsk bytes (section 7.1.3);
    /// both KEMs here have Nsk = 32, and we enforce it.
    static func checkIKM(_ ikm: some ContiguousBytes) throws {
        let n = ikm.withUnsafeBytes { $0.count }
        guard n >= minimumIKMLength else {
            throw CryptoError.invalidParameter(.hpkeIKMShort(min: minimumIKMLength))
        }
    }

    /// DeriveKeyPair(ikm) of DHKEM(X25519, HKDF-SHA256) (section 7.1.3).
    public static func deriveKeyPair(ikm: some ContiguousBytes) throws -> X25519PrivateKey {
        try DHKEMX25519.deriveKeyPair(ikm: ikm)
    }

    // MARK: Key schedule (section 5.1)

    /// VerifyPSKInputs (section 5.1), plus the length floor of section 9.5.
    static func verifyPSKInputs(mode: Mode, psk: SecretBytes?, pskID: [UInt8]) throws {
        let gotPSK = (psk?.count ?? 0) > 0, gotPSKID = !pskID.isEmpty
        guard gotPSK == gotPSKID else { throw CryptoError.invalidParameter(.hpkePSKUnpaired) }
        switch mode {
        case .base where gotPSK: throw CryptoError.invalidParameter(.hpkePSKInBaseMode)
        case .psk where !gotPSK: throw CryptoError.invalidParameter(.hpkePSKMissing)
        default: break
        }
        if let psk, gotPSK, psk.count < minimumPSKLength {
            throw CryptoError.invalidParameter(.hpkePSKShort(min: minimumPSKLength))
        }
    }

    /// KeySchedule(mode, shared_secret, info, psk, psk_id). The setup
    /// functions run VerifyPSKInputs before the KEM, so misuse is reported as
    /// such rather than hidden behind a decapsulation failure.
    static func keySchedule(kem: UInt16, mode: Mode, sharedSecret: SecretBytes, info: [UInt8], psk: SecretBytes?,
                            pskID: [UInt8], aead: AEADID) throws -> Context {
        let suite = suiteID(kem: kem, aead)
        let pskIDHash = try labeledExtract(suiteID: suite, salt: [UInt8](), label: pskIDHashLabel, ikm: pskID)
        let infoHash = try labeledExtract(suiteID: suite, salt: [UInt8](), label: infoHashLabel, ikm: info)
        // key_schedule_context = mode || psk_id_hash || info_hash (public values).
        let context = [mode.rawValue] + pskIDHash.withUnsafeBytes { Array($0) } + infoHash.withUnsafeBytes { Array($0) }
        let secret = try labeledExtract(suiteID: suite, salt: sharedSecret, label: secretLabel,
                                        ikm: psk ?? SecretBytes(count: 0))
        func expand(_ label: [UInt8], _ length: Int) throws -> SecretBytes {
            // Export-only has Nk = Nn = 0: nothing to expand.
            if length == 0 { return try SecretBytes(count: 0) }
            return try labeledExpand(suiteID: suite, prk: secret, label: label, info: context, length: length)
        }
        return try Context(aead: aead, suiteID: suite,
                           key: expand(keyLabel, aead.keyLength),
                           baseNonce: expand(baseNonceLabel, aead.nonceLength),
                           exporterSecret: expand(exporterLabel, hashLength))
    }

    /// The state both sides share after the key schedule. Not thread-safe.
    final class Context {
        let suiteID: [UInt8]
        let key: SecretBytes
        let baseNonce: SecretBytes
        let exporterSecret: SecretBytes
        let aead: AEAD?
        /// The next message's sequence number. A UInt64 is shorter than Nn
        /// bytes, which section 5.2 allows as long as overflow is an error.
        var sequenceNumber: UInt64 = 0

        init(aead: AEADID, suiteID: [UInt8], key: SecretBytes, baseNonce: SecretBytes,
             exporterSecret: SecretBytes) throws {
            self.suiteID = suiteID
            self.key = key
            self.baseNonce = baseNonce
            self.exporterSecret = exporterSecret
            self.aead = try aead.algorithm.map { try AEAD($0, key: key) }
        }

        /// Runs `body` with ComputeNonce(seq) = base_nonce XOR I2OSP(seq, Nn),
        /// then increments seq, only if `body` succeeded (section 5.2).
        func withNextNonce<R>(_ body: (AEAD, [UInt8]) throws -> R) throws -> R {
            guard let aead else { throw CryptoError.invalidParameter(.hpkeExportOnly) }
            guard sequenceNumber < UInt64.max else { throw CryptoError.invalidParameter(.hpkeMessageLimit) }
            var nonce = baseNonce.withUnsafeBytes { Array($0) }
            withUnsafeBytes(of: sequenceNumber.bigEndian) { seq in
                for i in 0..<seq.count { nonce[nonce.count - seq.count + i] ^= seq[i] }
            }
            let result = try body(aead, nonce)
            sequenceNumber += 1
            return result
        }

        /// Export(exporter_context, L) = LabeledExpand(exporter_secret, "sec",
        /// exporter_context, L), L at most 255 * Nh (section 5.3).
        func export(context: some ContiguousBytes, length: Int) throws -> SecretBytes {
            try HPKE.labeledExpand(suiteID: suiteID, prk: exporterSecret, label: exportLabel,
                                   info: context, length: length)
        }
    }

    // MARK: Public API (sections 5.1.1, 5.1.2, 5.2, 5.3)

    /// The sender's context: seals messages in order and exports secrets.
    public final class SenderContext {
        let context: Context
        init(_ context: Context) { self.context = context }

        /// How many messages this context has sealed.
        public var sequenceNumber: UInt64 { context.sequenceNumber }

        /// Seal(aad, pt): returns `ciphertext || tag` under the next nonce.
        public func seal(_ plaintext: some ContiguousBytes, aad: some ContiguousBytes = [UInt8]()) throws -> [UInt8] {
            try context.withNextNonce { aead, nonce in try aead.seal(nonce: nonce, aad: aad, plaintext: plaintext) }
        }

        /// Export(exporter_context, L), in guarded memory.
        public func export(context exporterContext: some ContiguousBytes, length: Int) throws -> SecretBytes {
            try context.export(context: exporterContext, length: length)
        }
    }

    /// The recipient's context: opens messages in the order they were sealed
    /// and exports secrets. A failed open does not advance the sequence number.
    public final class RecipientContext {
        let context: Context
        init(_ context: Context) { self.context = context }

        /// How many messages this context has opened.
        public var sequenceNumber: UInt64 { context.sequenceNumber }

        /// Open(aad, ct). Throws `authenticationFailed` if the tag does not verify.
        public func open(_ ciphertext: some ContiguousBytes, aad: some ContiguousBytes = [UInt8]()) throws -> [UInt8] {
            try context.withNextNonce { aead, nonce in try aead.open(nonce: nonce, aad: aad, sealed: ciphertext) }
        }

        /// Open into guarded memory, for plaintexts that are keys.
        public func openSecret(_ ciphertext: some ContiguousBytes,
                               aad: some ContiguousBytes = [UInt8]()) throws -> SecretBytes {
            try context.withNextNonce { aead, nonce in try aead.openSecret(nonce: nonce, aad: aad, sealed: ciphertext) }
        }

        /// Export(exporter_context, L), in guarded memory.
        public func export(context exporterContext: some ContiguousBytes, length: Int) throws -> SecretBytes {
            try context.export(context: exporterContext, length: length)
        }
    }

    /// SetupBaseS / SetupPSKS: encapsulates to `recipient` with fresh
    /// randomness. Send `encapsulatedKey` (Nenc bytes: 32 for X25519, 1120
    /// for X-Wing) with the ciphertexts.
    public static func setupSender<PK: HPKEPublicKey>(recipient: PK, info: some ContiguousBytes, aead: AEADID,
                                                      mode: Mode = .base, psk: SecretBytes? = nil,
                                                      pskID: some ContiguousBytes = [UInt8]()) throws
        -> (encapsulatedKey: [UInt8], context: SenderContext) {
        try setupSender(recipient: recipient, info: info, aead: aead, mode: mode, psk: psk, pskID: pskID) {
            try PK.KEM.encapsulate(to: recipient)
        }
    }

    /// As above with the KEM's randomness injected (ikmE in RFC 9180's
    /// vectors, X-Wing's eseed in draft-ietf-hpke-pq's). Internal: reusing
    /// it breaks HPKE; only the vectors need this.
    static func setupSender<PK: HPKEPublicKey>(recipient: PK, info: some ContiguousBytes, aead: AEADID,
                                               mode: Mode = .base, psk: SecretBytes? = nil,
                                               pskID: some ContiguousBytes = [UInt8](),
                                               randomness: SecretBytes) throws
        -> (encapsulatedKey: [UInt8], context: SenderContext) {
        try setupSender(recipient: recipient, info: info, aead: aead, mode: mode, psk: psk, pskID: pskID) {
            try PK.KEM.encapsulate(to: recipient, randomness: randomness)
        }
    }

    /// As above with DHKEM(X25519)'s ephemeral key itself injected (the
    /// vault's own vectors fix it).
    static func setupSender(recipient: X25519PublicKey, info: some ContiguousBytes, aead: AEADID,
                            mode: Mode = .base, psk: SecretBytes? = nil, pskID: some ContiguousBytes = [UInt8](),
                            ephemeralKey: X25519PrivateKey) throws
        -> (encapsulatedKey: [UInt8], context: SenderContext) {
        try setupSender(recipient: recipient, info: info, aead: aead, mode: mode, psk: psk, pskID: pskID) {
            try DHKEMX25519.encapsulate(to: recipient, ephemeral: ephemeralKey)
        }
    }

    /// The one sender path: VerifyPSKInputs, then the KEM, then the key schedule.
    private static func setupSender<PK: HPKEPublicKey>(recipient: PK, info: some ContiguousBytes, aead: AEADID,
                                                       mode: Mode, psk: SecretBytes?, pskID: some ContiguousBytes,
                                                       encap: () throws -> (sharedSecret: SecretBytes, enc: [UInt8]))
        throws -> (encapsulatedKey: [UInt8], context: SenderContext) {
        let id = pskID.withUnsafeBytes { Array($0) }
        try verifyPSKInputs(mode: mode, psk: psk, pskID: id)
        let (sharedSecret, enc) = try encap()
        let context = try keySchedule(kem: PK.KEM.id, mode: mode, sharedSecret: sharedSecret,
                                      info: info.withUnsafeBytes { Array($0) }, psk: psk, pskID: id, aead: aead)
        return (enc, SenderContext(context))
    }

    /// SetupBaseR / SetupPSKR: decapsulates `encapsulatedKey` with `recipient`.
    public static func setupRecipient<SK: HPKEPrivateKey>(encapsulatedKey: some ContiguousBytes, recipient: SK,
                                                          info: some ContiguousBytes, aead: AEADID, mode: Mode = .base,
                                                          psk: SecretBytes? = nil,
                                                          pskID: some ContiguousBytes = [UInt8]()) throws -> RecipientContext {
        let id = pskID.withUnsafeBytes { Array($0) }
        try verifyPSKInputs(mode: mode, psk: psk, pskID: id)
        let sharedSecret = try SK.KEM.decapsulate(encapsulatedKey.withUnsafeBytes { Array($0) }, with: recipient)
        let context = try keySchedule(kem: SK.KEM.id, mode: mode, sharedSecret: sharedSecret,
                                      info: info.withUnsafeBytes { Array($0) }, psk: psk, pskID: id, aead: aead)
        return RecipientContext(context)
    }

    // MARK: Single-shot (section 6.1)

    /// Seal(pkR, info, aad, pt) in one call: returns (enc, ct).
    public static func seal(_ plaintext: some ContiguousBytes, to recipient: some HPKEPublicKey,
                            info: some ContiguousBytes, aad: some ContiguousBytes = [UInt8](), aead: AEADID,
                            mode: Mode = .base, psk: SecretBytes? = nil,
                            pskID: some ContiguousBytes = [UInt8]()) throws
        -> (encapsulatedKey: [UInt8], ciphertext: [UInt8]) {
        let (enc, sender) = try setupSender(recipient: recipient, info: info, aead: aead, mode: mode,
                                            psk: psk, pskID: pskID)
        return (enc, try sender.seal(plaintext, aad: aad))
    }

    /// Open(enc, skR, info, aad, ct) in one call.
    public static func open(_ ciphertext: some ContiguousBytes, encapsulatedKey: some ContiguousBytes,
                            recipient: some HPKEPrivateKey, info: some ContiguousBytes,
                            aad: some ContiguousBytes = [UInt8](), aead: AEADID, mode: Mode = .base,
                            psk: SecretBytes? = nil, pskID: some ContiguousBytes = [UInt8]()) throws -> [UInt8] {
        try setupRecipient(encapsulatedKey: encapsulatedKey, recipient: recipient, info: info, aead: aead,
                           mode: mode, psk: psk, pskID: pskID).open(ciphertext, aad: aad)
    }
}
