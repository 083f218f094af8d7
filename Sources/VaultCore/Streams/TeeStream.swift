import VaultCodecs

/// Hands out what `upstream` gives and copies it to `sink` on the way, for
/// a reader that must see the bytes (the archive checker) while they are
/// also written out (`get` of a folder item).
final class TeeStream: ByteStream {
    private let upstream: ByteStream
    private let sink: ByteSink
    private(set) var count: UInt64 = 0

    init(_ upstream: ByteStream, copyingTo sink: ByteSink) { (self.upstream, self.sink) = (upstream, sink) }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try upstream.read(into: buffer)
        if n > 0 { try sink.write(UnsafeRawBufferPointer(rebasing: buffer[..<n])) }
        count += UInt64(n)
        return n
    }
}
