import VaultCodecs

/// Bytes in memory, for tests, the fuzzer and small files.
public final class MemoryBytes: ByteSink, ByteSource {
    public private(set) var bytes: [UInt8]
    public init(_ bytes: [UInt8] = []) { self.bytes = bytes }
    public var size: UInt64 { UInt64(bytes.count) }

    public func write(_ b: UnsafeRawBufferPointer) throws { bytes.append(contentsOf: b) }

    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < size else { return 0 }
        let n = min(buffer.count, bytes.count - Int(offset))
        bytes.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + Int(offset), byteCount: n)
        }
        return n
    }
}
