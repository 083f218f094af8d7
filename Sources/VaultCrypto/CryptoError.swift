/// Errors of the crypto layer. Every authentication failure is the one case
/// `authenticationFailed`, so callers cannot tell (or show) why a tag failed.
public enum CryptoError: Error, Equatable, Sendable {
    /// A tag did not verify: wrong key, or data corrupted or tampered with.
    case authenticationFailed
    /// A key, nonce or tag had the wrong length for its algorithm.
    case invalidLength(what: CryptoInput, expected: Int, got: Int)
    /// A key failed its validity check, e.g. an ML-KEM encapsulation key
    /// with a value not below q (FIPS 203 section 7.2) or a decapsulation key
    /// whose stored hash does not match (section 7.3).
    case invalidKey(KeyCheck)
    /// A parameter was outside the bounds this code accepts.
    case invalidParameter(CryptoParameter)
    /// An X25519 exchange produced the all-zero shared secret (a low-order point).
    case weakSharedSecret
    /// A C library call failed; `function` names it, `code` is its return value.
    case library(library: String, function: String, code: Int)
    /// Guarded memory could not be allocated.
    case outOfMemory
}

/// What had the wrong length (`CryptoError.invalidLength`).
public enum CryptoInput: Equatable, Sendable {
    case aeadKey, nonce, secretSlice, sha3Digest
    case x25519PublicKey, x25519PrivateKey
    case xwingPublicKey, xwingSeed, xwingEncapsulationSeed, xwingCiphertext
    case mlkemEncapsulationKey, mlkemDecapsulationKey, mlkemSeed, mlkemRandomness, mlkemCiphertext
}

/// Which validity check a key failed (`CryptoError.invalidKey`).
public enum KeyCheck: Equatable, Sendable {
    /// An ML-KEM-768 encapsulation key with a coefficient not below q (FIPS 203 section 7.2).
    case mlkemModulus
    /// An ML-KEM-768 decapsulation key whose stored hash does not match (FIPS 203 section 7.3).
    case mlkemHash
}

/// Which bound a parameter broke (`CryptoError.invalidParameter`).
public enum CryptoParameter: Equatable, Sendable {
    /// Argon2id lanes outside 1...`Argon2Parameters.maxLanes`.
    case argon2Lanes(UInt32)
    /// Argon2id passes outside 1...`Argon2Parameters.maxPasses`.
    case argon2Passes(UInt32)
    /// Argon2id memory (KiB) below 8 per lane or above `Argon2Parameters.maxMemoryKiB`.
    case argon2Memory(kib: UInt32, lanes: UInt32)
    /// An Argon2id output length outside 4...1024.
    case argon2OutputLength(Int)
    /// An Argon2id salt shorter than 8 bytes.
    case argon2SaltShort
    /// libsodium's Argon2id takes 1 lane, a 16-byte salt, no secret or associated data.
    case argon2LibsodiumShape
    /// An HKDF output length outside what the hash allows.
    case hkdfOutputLength(Int)
    /// An HPKE derived length outside 1...255 × the hash length (`max`).
    case hpkeOutputLength(Int, max: Int)
    /// HPKE DeriveKeyPair input keying material shorter than `min` bytes.
    case hpkeIKMShort(min: Int)
    /// An HPKE psk without its psk_id, or the other way round.
    case hpkePSKUnpaired
    /// An HPKE psk given in base mode.
    case hpkePSKInBaseMode
    /// HPKE psk mode without a psk and psk_id.
    case hpkePSKMissing
    /// An HPKE psk shorter than `min` bytes.
    case hpkePSKShort(min: Int)
    /// An HPKE export-only context asked to seal or open.
    case hpkeExportOnly
    /// An HPKE context's sequence number is exhausted.
    case hpkeMessageLimit
    /// A squeeze on a fixed-length hash (only SHAKE is an XOF).
    case xofSqueeze
    /// A CPace scalar that is not 32 bytes.
    case cpaceScalarLength
    /// ristretto255 from_hash takes 64 bytes.
    case ristrettoHashLength
    /// ML-KEM's SampleNTT did not finish within its bound.
    case mlkemSampleNTT
    /// An ML-KEM-768 matrix of the wrong size.
    case mlkemMatrixSize
    /// A negative secret size.
    case negativeSecretSize
}
