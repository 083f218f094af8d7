/// Errors of the crypto layer. Every authentication failure is the one case
/// `authenticationFailed`, so callers cannot tell (or show) why a tag failed.
public enum CryptoError: Error, Equatable, Sendable {
    /// A tag did not verify: wrong key, or data corrupted or tampered with.
    case authenticationFailed
    /// A key, nonce or tag had the wrong length for its algorithm.
    case invalidLength(what: String, expected: Int, got: Int)
    /// A parameter was outside the bounds this code accepts.
    case invalidParameter(String)
    /// An X25519 exchange produced the all-zero shared secret (a low-order point).
    case weakSharedSecret
    /// A C library call failed; `function` names it, `code` is its return value.
    case library(library: String, function: String, code: Int)
    /// Guarded memory could not be allocated.
    case outOfMemory
}
