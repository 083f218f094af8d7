import VaultCodecs

/// Passes exactly `expected` bytes through to `downstream`: a write past
/// them, or `finish` short of them, is damage. So a file item releases no
/// more than its entry's size, and a shorter stream is an error, not a
/// silently short file.
final class ExactLengthSink: ByteSink {
    private let downstream: ByteSink
    private let expected: UInt64
    private(set) var written: UInt64 = 0

    init(_ downstream: ByteSink, expected: UInt64) { (self.downstream, self.expected) = (downstream, expected) }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard UInt64(bytes.count) <= expected - written else { throw VaultError.corruptedOrTampered }
        try downstream.write(bytes)
        written += UInt64(bytes.count)
    }

    func finish() throws { guard written == expected else { throw VaultError.corruptedOrTampered } }
}
