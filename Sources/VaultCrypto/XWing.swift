import Foundation

/// X-Wing, the hybrid KEM of ML-KEM-768 and X25519
/// (draft-connolly-cfrg-xwing-kem-10; the same construction as
/// MLKEM768-X25519 of draft-irtf-cfrg-concrete-hybrid-kems, HPKE KEM 0x647A).
/// It stays secure if either ML-KEM-768 or X25519 does.
///
/// Byte layouts:
///
///     sk (32)   = seed; expandDecapsulationKey(sk): SHAKE256(sk, 96) = d (32) || z (32) || sk_X (32),
///                 (ek_M, dk_M) = ML-KEM-768.KeyGen_internal(d, z), pk_X = X25519(sk_X, 9)
///     pk (1216) = pk_M (ML-KEM-768 ek, 1184) || pk_X (32)
///     ct (1120) = ct_M (ML-KEM-768 ciphertext, 1088) || ct_X (X25519 ephemeral public key, 32)
///     ss (32)   = SHA3-256(ss_M || ss_X || ct_X || pk_X || XWingLabel), XWingLabel = 5c2e2f2f5e5c ("\./" "/^\")
///     eseed (64) = m for ML-KEM Encaps_internal (32) || ek_X, the X25519 ephemeral secret (32)
///
///     let sk = try XWing.PrivateKey(seed: seed)              // seed: 32 bytes, e.g. from HKDF
///     let (ct, ss) = try XWing.encapsulate(to: sk.publicKey)
///     let ss2 = try XWing.decapsulate(ct, with: sk)          // ss == ss2
///
/// The private key object caches the expanded key (the ML-KEM dk and the
/// X25519 key), as section 5.5.1 allows; only the 32-byte seed is ever meant
/// to be stored or sent. ss_X is plain RFC 7748 X25519 with no all-zero
/// check (the draft has none: the combiner also hashes ss_M), so
/// decapsulation of a 1120-byte ciphertext never fails; a ciphertext that
/// does not come from the matching public key gives an unrelated secret
/// (ML-KEM's implicit rejection), which the AEAD above then refuses.
///
/// Errors: a public key whose ML-KEM part fails FIPS 203's section 7.2 check
/// is `CryptoError.invalidKey`; wrong lengths are `invalidLength`.
public enum XWing {
    public static let seedLength = 32
    public static let publicKeyLength = 1216
    public static let ciphertextLength = 1120
    public static let sharedSecretLength = 32
    /// eseed of EncapsulateDerand: ML-KEM's m, then the X25519 ephemeral secret.
    public static let encapsulationSeedLength = 64
    /// XWingLabel, "\./" || "/^\", the last input of the combiner (section 5.3).
    static let label: [UInt8] = [0x5c, 0x2e, 0x2f, 0x2f, 0x5e, 0x5c]

    /// An X-Wing encapsulation (public) key: pk_M || pk_X, 1216 bytes.
    public struct PublicKey: Sendable, Hashable {
        public let bytes: [UInt8]
        let mlkem: MLKEM768.EncapsulationKey
        let x25519: X25519PublicKey

        /// Parses and checks a public key: the length, and FIPS 203's modulus
        /// check on pk_M, which the draft makes Encapsulate's duty (section 4).
        public init(bytes: [UInt8]) throws {
            guard bytes.count == XWing.publicKeyLength else {
                throw CryptoError.invalidLength(what: .xwingPublicKey, expected: XWing.publicKeyLength, got: bytes.count)
            }
            let split = MLKEM768.encapsulationKeyLength
            self.init(bytes: bytes, mlkem: try MLKEM768.EncapsulationKey(bytes: Array(bytes[..<split])),
                      x25519: try X25519PublicKey(bytes: Array(bytes[split...])))
        }

        init(bytes: [UInt8], mlkem: MLKEM768.EncapsulationKey, x25519: X25519PublicKey) {
            self.bytes = bytes
            self.mlkem = mlkem
            self.x25519 = x25519
        }

        public static func == (a: Self, b: Self) -> Bool { a.bytes == b.bytes }
        public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
    }

    /// An X-Wing decapsulation (private) key: the 32-byte seed, and the keys
    /// expanded from it, all in guarded memory.
    public final class PrivateKey: Sendable {
        /// sk, the only form to store (section 5.5.1: never transmit the expanded key).
        public let seed: SecretBytes
        public let publicKey: PublicKey
        let mlkem: MLKEM768.DecapsulationKey
        let x25519: X25519PrivateKey

        /// GenerateKeyPairDerand(sk) / expandDecapsulationKey(sk) (section 5.2).
        public init(seed: SecretBytes) throws {
            guard seed.count == XWing.seedLength else {
                throw CryptoError.invalidLength(what: .xwingSeed, expected: XWing.seedLength, got: seed.count)
            }
            let expanded = try SecretBytes(count: 96)
            let hasher = try OpenSSL.KeccakContext()
            try hasher.begin(.shake256)
            try seed.withUnsafeBytes { try hasher.absorb($0) }
            try expanded.withUnsafeMutableBytes { try hasher.squeeze(into: $0) }
            mlkem = try MLKEM768.generateKeyPair(d: expanded.slice(0..<32), z: expanded.slice(32..<64))
            x25519 = try X25519PrivateKey(secret: expanded.slice(64..<96))
            self.seed = seed
            publicKey = PublicKey(bytes: mlkem.encapsulationKey.bytes + x25519.publicKey.bytes,
                                  mlkem: mlkem.encapsulationKey, x25519: x25519.publicKey)
        }

        /// GenerateKeyPair(): a fresh random seed.
        public convenience init() throws {
            try self.init(seed: SecretBytes.random(count: XWing.seedLength))
        }
    }

    /// Encapsulate(pk) (section 5.4): a fresh shared secret and its 1120-byte ciphertext.
    public static func encapsulate(to pk: PublicKey) throws -> (ciphertext: [UInt8], sharedSecret: SecretBytes) {
        try encapsulate(to: pk, eseed: SecretBytes.random(count: encapsulationSeedLength))
    }

    /// EncapsulateDerand(pk, eseed) (section 5.4.1). Internal: reusing eseed
    /// reveals the shared secret; only vectors and HPKE's injected
    /// randomness need it.
    static func encapsulate(to pk: PublicKey, eseed: SecretBytes) throws
        -> (ciphertext: [UInt8], sharedSecret: SecretBytes) {
        guard eseed.count == encapsulationSeedLength else {
            throw CryptoError.invalidLength(what: .xwingEncapsulationSeed, expected: encapsulationSeedLength, got: eseed.count)
        }
        let ephemeral = try X25519PrivateKey(secret: eseed.slice(32..<64))
        let ctX = ephemeral.publicKey.bytes
        let ssX = try ephemeral.unvalidatedSharedSecret(with: pk.x25519)
        let (ctM, ssM) = try MLKEM768.encapsulate(to: pk.mlkem, randomness: eseed.slice(0..<32))
        let ss = try combine(ssM: ssM, ssX: ssX, ctX: ctX, pkX: pk.x25519.bytes)
        return (ctM + ctX, ss)
    }

    /// Decapsulate(ct, sk) (section 5.5). Throws only for a ciphertext that
    /// is not 1120 bytes long.
    public static func decapsulate(_ ciphertext: some ContiguousBytes, with sk: PrivateKey) throws -> SecretBytes {
        try ciphertext.withUnsafeBytes { ct in
            guard ct.count == ciphertextLength else {
                throw CryptoError.invalidLength(what: .xwingCiphertext, expected: ciphertextLength, got: ct.count)
            }
            let split = MLKEM768.ciphertextLength
            let ssM = try MLKEM768.decapsulate(UnsafeRawBufferPointer(rebasing: ct[..<split]), with: sk.mlkem)
            let ctX = Array(ct[split...])
            let ssX = try sk.x25519.unvalidatedSharedSecret(with: try X25519PublicKey(bytes: ctX))
            return try combine(ssM: ssM, ssX: ssX, ctX: ctX, pkX: sk.publicKey.x25519.bytes)
        }
    }

    /// Combiner (section 5.3): SHA3-256(ss_M || ss_X || ct_X || pk_X || XWingLabel).
    static func combine(ssM: SecretBytes, ssX: SecretBytes, ctX: [UInt8], pkX: [UInt8]) throws -> SecretBytes {
        let ss = try SecretBytes(count: sharedSecretLength)
        let hasher = try OpenSSL.KeccakContext()
        try hasher.begin(.sha3_256)
        try ssM.withUnsafeBytes { try hasher.absorb($0) }
        try ssX.withUnsafeBytes { try hasher.absorb($0) }
        try ctX.withUnsafeBytes { try hasher.absorb($0) }
        try pkX.withUnsafeBytes { try hasher.absorb($0) }
        try label.withUnsafeBytes { try hasher.absorb($0) }
        try ss.withUnsafeMutableBytes { try hasher.finish(into: $0) }
        return ss
    }
}
