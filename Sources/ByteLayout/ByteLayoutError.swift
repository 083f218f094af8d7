// Why a byte layout did not parse. Each format maps these onto its own
// error (`VaultError.corruptedOrTampered`, a move's protocol error, ...), so
// the user sees the format's message and exit code, never these.

/// A field that the bytes do not hold, or bytes left over.
public enum ByteLayoutError: Error, Equatable, Sendable {
    /// A field needs `needed` bytes and only `remaining` are left.
    case truncated(needed: Int, remaining: Int)
    /// A length (read from the input, or asked for) is negative, does not
    /// fit an `Int`, or is above the format's bound.
    case badLength(UInt64)
    /// `finish()` found `count` bytes after the last field.
    case trailingBytes(count: Int)
    /// `expect` found other bytes than the constant (a magic, a version).
    case mismatch(offset: Int)
}
