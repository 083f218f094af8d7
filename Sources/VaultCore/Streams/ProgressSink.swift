import VaultCodecs

/// Passes bytes through to `downstream` and reports the running total, for
/// progress displays. `report` may be called from a worker thread.
public final class ProgressSink: ByteSink {
    private let downstream: ByteSink
    private let report: (UInt64) -> Void
    private var total: UInt64 = 0

    public init(_ downstream: ByteSink, report: @escaping (UInt64) -> Void) {
        (self.downstream, self.report) = (downstream, report)
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try downstream.write(bytes)
        total += UInt64(bytes.count)
        report(total)
    }
}
