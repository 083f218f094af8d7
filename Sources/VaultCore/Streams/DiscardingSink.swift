import VaultCodecs

/// Counts and discards what it is given (for `check --read-data`).
package final class DiscardingSink: ByteSink {
    package init() {}
    var count: UInt64 = 0
    package func write(_ bytes: UnsafeRawBufferPointer) throws { count += UInt64(bytes.count) }
}
