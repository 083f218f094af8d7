import Foundation

extension HPKE {
    /// X-Wing as an HPKE KEM, kem_id 0x647A (named MLKEM768-X25519 in
    /// draft-ietf-hpke-pq-04; the same construction as XWing.swift):
    ///
    ///     Npk 1216, Nsk 32 (the X-Wing seed), Nenc 1120, Nsecret 32
    ///     Encap(pkR)    = XWing.encapsulate(pkR): shared_secret = ss, enc = ct
    ///     Decap(enc, skR) = XWing.decapsulate(enc, skR)
    ///     DeriveKeyPair(ikm): sk = SHAKE256(ikm || "HPKE-v1" || "KEM" || I2OSP(0x647A, 2)
    ///                          || I2OSP(13, 2) || "DeriveKeyPair" || I2OSP(32, 2), 32)
    ///
    /// The shared secret goes to the key schedule as it is (no
    /// ExtractAndExpand: X-Wing's combiner already hashes the transcript).
    /// DeriveKeyPair is draft-ietf-hpke-pq's LabeledDerive with the SHAKE256
    /// one-stage KDF, whatever the suite's kdf_id; it is not the plain
    /// SHAKE256(ikm, 32) of the X-Wing draft's own HPKE section, and the
    /// hpke-pq vectors check it. The key schedule is RFC 9180's, so only
    /// kdf_id 0x0001 (HKDF-SHA256) is supported.
    public enum XWingKEM: HPKEKEM {
        public typealias PublicKey = XWing.PublicKey
        public typealias PrivateKey = XWing.PrivateKey
        public static let id: UInt16 = 0x647A
        public static let encapsulatedKeyLength = XWing.ciphertextLength
        /// Encap draws X-Wing's 64-byte eseed (the vectors' ikmE).
        public static let encapsulationRandomnessLength = XWing.encapsulationSeedLength
        /// suite_id inside the KEM: "KEM" || I2OSP(kem_id, 2).
        static let suiteID = Array("KEM".utf8) + HPKE.i2osp2(id)
        static let deriveKeyPairLabel = Array("DeriveKeyPair".utf8)

        /// DeriveKeyPair(ikm): LabeledDerive(ikm, "DeriveKeyPair", "", 32)
        /// with SHAKE256, then X-Wing's GenerateKeyPairDerand.
        public static func deriveKeyPair(ikm: some ContiguousBytes) throws -> XWing.PrivateKey {
            try HPKE.checkIKM(ikm)
            let seed = try SecretBytes(count: XWing.seedLength)
            let hasher = try OpenSSL.KeccakContext()
            try hasher.begin(.shake256)
            try ikm.withUnsafeBytes { try hasher.absorb($0) }
            let labels = HPKE.versionLabel + suiteID + HPKE.i2osp2(UInt16(deriveKeyPairLabel.count)) + deriveKeyPairLabel
                + HPKE.i2osp2(UInt16(XWing.seedLength))
            try labels.withUnsafeBytes { try hasher.absorb($0) }
            try seed.withUnsafeMutableBytes { try hasher.squeeze(into: $0) }
            return try XWing.PrivateKey(seed: seed)
        }

        public static func encapsulate(to pkR: XWing.PublicKey, randomness: SecretBytes) throws
            -> (sharedSecret: SecretBytes, enc: [UInt8]) {
            let (ct, ss) = try XWing.encapsulate(to: pkR, eseed: randomness)
            return (ss, ct)
        }

        /// Decap(enc, skR). Only an enc that is not 1120 bytes long fails
        /// here (as `authenticationFailed`); any other enc gives a secret, and
        /// a wrong one makes the AEAD refuse the ciphertext.
        public static func decapsulate(_ enc: [UInt8], with skR: XWing.PrivateKey) throws -> SecretBytes {
            guard enc.count == encapsulatedKeyLength else { throw CryptoError.authenticationFailed }
            return try XWing.decapsulate(enc, with: skR)
        }
    }
}

extension XWing.PublicKey: HPKEPublicKey { public typealias KEM = HPKE.XWingKEM }
extension XWing.PrivateKey: HPKEPrivateKey { public typealias KEM = HPKE.XWingKEM }
