import Foundation

/// A KEM that HPKE (RFC 9180 section 4) runs on. The key schedule in
/// HPKE.swift needs only the KEM's id (for suite_id), its shared secret and
/// the encapsulated key, so any KEM with this shape plugs in:
/// `HPKE.DHKEMX25519` (0x0020, RFC 9180) and `HPKE.XWingKEM` (0x647A).
///
/// The key types name their KEM (`HPKEPublicKey`, `HPKEPrivateKey`), so
/// `HPKE.setupSender(recipient: pk, …)` picks the KEM from the key's type.
public protocol HPKEKEM {
    associatedtype PublicKey: HPKEPublicKey
    associatedtype PrivateKey: HPKEPrivateKey
    /// kem_id (RFC 9180 section 7.1 and the IANA registry).
    static var id: UInt16 { get }
    /// Nenc: the length of the encapsulated key.
    static var encapsulatedKeyLength: Int { get }
    /// Bytes of randomness one Encap draws. The vectors inject them.
    static var encapsulationRandomnessLength: Int { get }
    /// DeriveKeyPair(ikm) (RFC 9180 section 7.1.3, or the KEM's own).
    static func deriveKeyPair(ikm: some ContiguousBytes) throws -> PrivateKey
    /// Encap(pkR) with its randomness given: returns (shared_secret, enc).
    static func encapsulate(to pkR: PublicKey, randomness: SecretBytes) throws -> (sharedSecret: SecretBytes, enc: [UInt8])
    /// Decap(enc, skR). A malformed enc throws `authenticationFailed`, like
    /// every other reason an open fails.
    static func decapsulate(_ enc: [UInt8], with skR: PrivateKey) throws -> SecretBytes
}

extension HPKEKEM {
    /// Encap(pkR) with fresh randomness.
    static func encapsulate(to pkR: PublicKey) throws -> (sharedSecret: SecretBytes, enc: [UInt8]) {
        try encapsulate(to: pkR, randomness: SecretBytes.random(count: encapsulationRandomnessLength))
    }
}

/// A public key HPKE can encapsulate to; `KEM` says with which KEM.
public protocol HPKEPublicKey: Sendable {
    associatedtype KEM: HPKEKEM where KEM.PublicKey == Self
}

/// A private key HPKE can decapsulate with; `KEM` says with which KEM.
public protocol HPKEPrivateKey {
    associatedtype KEM: HPKEKEM where KEM.PrivateKey == Self
}

extension HPKE {
    /// DHKEM(X25519, HKDF-SHA256), RFC 9180 section 4.1: the vault's
    /// pre-quantum KEM. enc is the 32-byte ephemeral public key.
    public enum DHKEMX25519: HPKEKEM {
        public typealias PublicKey = X25519PublicKey
        public typealias PrivateKey = X25519PrivateKey
        /// kem_id (section 7.1, table 2).
        public static let id: UInt16 = 0x0020
        /// Nenc = Npk (table 2).
        public static let encapsulatedKeyLength = 32
        /// Nsk: Encap's ephemeral key is DeriveKeyPair of this many random bytes.
        public static let encapsulationRandomnessLength = 32
        /// Nsecret = Nsk (table 2).
        static let secretLength = 32
        /// suite_id inside the KEM: "KEM" || I2OSP(kem_id, 2) (section 4.1).
        static let suiteID = Array("KEM".utf8) + HPKE.i2osp2(id)
        /// ExtractAndExpand (section 4.1) and DeriveKeyPair (section 7.1.3) labels.
        static let eaePRKLabel = Array("eae_prk".utf8), sharedSecretLabel = Array("shared_secret".utf8)
        static let dkpPRKLabel = Array("dkp_prk".utf8), skLabel = Array("sk".utf8)

        /// DeriveKeyPair(ikm) for X25519 (section 7.1.3): sk = LabeledExpand(
        /// LabeledExtract("", "dkp_prk", ikm), "sk", "", Nsk). X25519 clamps
        /// the scalar when it is used, so the bytes are kept as derived.
        public static func deriveKeyPair(ikm: some ContiguousBytes) throws -> X25519PrivateKey {
            try HPKE.checkIKM(ikm)
            let prk = try HPKE.labeledExtract(suiteID: suiteID, salt: [UInt8](), label: dkpPRKLabel, ikm: ikm)
            let sk = try HPKE.labeledExpand(suiteID: suiteID, prk: prk, label: skLabel, info: [UInt8](),
                                            length: secretLength)
            return try X25519PrivateKey(secret: sk)
        }

        /// Encap(pkR) with skE = DeriveKeyPair(randomness), as RFC 9180's
        /// vectors derive it from ikmE.
        public static func encapsulate(to pkR: X25519PublicKey, randomness: SecretBytes) throws
            -> (sharedSecret: SecretBytes, enc: [UInt8]) {
            try encapsulate(to: pkR, ephemeral: deriveKeyPair(ikm: randomness))
        }

        /// Encap(pkR) with the ephemeral key given. A low-order pkR throws
        /// `weakSharedSecret` (section 7.1.4).
        static func encapsulate(to pkR: X25519PublicKey, ephemeral skE: X25519PrivateKey) throws
            -> (sharedSecret: SecretBytes, enc: [UInt8]) {
            let dh = try skE.sharedSecret(with: pkR)
            let enc = skE.publicKey.bytes
            return (try extractAndExpand(dh: dh, kemContext: enc + pkR.bytes), enc)
        }

        /// Decap(enc, skR). A malformed or low-order enc is an open failure.
        public static func decapsulate(_ enc: [UInt8], with skR: X25519PrivateKey) throws -> SecretBytes {
            guard let pkE = try? X25519PublicKey(bytes: enc),
                  let dh = try? skR.sharedSecret(with: pkE) else { throw CryptoError.authenticationFailed }
            return try extractAndExpand(dh: dh, kemContext: enc + skR.publicKey.bytes)
        }

        /// ExtractAndExpand(dh, kem_context) (section 4.1).
        static func extractAndExpand(dh: SecretBytes, kemContext: [UInt8]) throws -> SecretBytes {
            let prk = try HPKE.labeledExtract(suiteID: suiteID, salt: [UInt8](), label: eaePRKLabel, ikm: dh)
            return try HPKE.labeledExpand(suiteID: suiteID, prk: prk, label: sharedSecretLabel, info: kemContext,
                                          length: secretLength)
        }
    }
}

extension X25519PublicKey: HPKEPublicKey { public typealias KEM = HPKE.DHKEMX25519 }
extension X25519PrivateKey: HPKEPrivateKey { public typealias KEM = HPKE.DHKEMX25519 }
