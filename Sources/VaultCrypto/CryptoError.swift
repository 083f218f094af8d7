/// Errors of the crypto layer. Every authentication failure is the one case
/// `authenticationFailed`, so callers cannot tell (or show) why a tag failed.
public enum CryptoError: Error, Equatable, Sendable {
    /// A tag did not verify: wrong key, or data corrupted or tampered with.
    case authenticationFailed
    /// A key, nonce or tag had the wrong length for its algorithm.
    case invalidLength(what: String, expected: Int, got: Int)
    /// A key failed its validity check, e.g. an ML-KEM encapsulation key
    /// with a value not below q (FIPS 203 section 7.2) or a decapsulation key
    /// whose stored hash does not match (section 7.3).
    case invalidKey(String)
    /// A parameter was outside the bounds this code accepts.
    case invalidParameter(String)
    /// An X25519 exchange produced the all-zero shared secret (a low-order point).
    case weakSharedSecret
    /// A C library call failed; `function` names it, `code` is its return value.
    case library(library: String, function: String, code: Int)
    /// Guarded memory could not be allocated.
    case outOfMemory
}
