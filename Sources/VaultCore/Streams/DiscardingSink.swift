import VaultCodecs

/// Counts and discards what it is given (for `check --read-data`).
final class DiscardingSink: ByteSink {
    var count: UInt64 = 0
    func write(_ bytes: UnsafeRawBufferPointer) throws { count += UInt64(bytes.count) }
}
