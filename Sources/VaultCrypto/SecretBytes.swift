import Foundation

/// Bytes that must not outlive their use: keys, passwords, passphrases.
///
/// Backed by libsodium guarded memory (`sodium_malloc`): locked in RAM so it is
/// not swapped, fenced by guard pages, and zeroed on deinit. Small blocks are
/// recycled for the same size by `GuardedMemoryPool` (zeroed first) instead
/// of going back to `sodium_free`, which costs tens of microseconds.
/// Pointers to the storage never leave the `withUnsafe…` closures. Equality is
/// constant time.
public final class SecretBytes: @unchecked Sendable, Equatable, ContiguousBytes {
    private let pointer: UnsafeMutableRawPointer
    public let count: Int

    /// Zero-filled secret storage of `count` bytes.
    public init(count: Int) {
        precondition(count >= 0)
        guard let p = GuardedMemoryPool.take(count) else { fatalError("guarded memory allocation failed") }
        pointer = p
        self.count = count
    }

    /// Copies `bytes` into guarded memory. The caller stays responsible for
    /// erasing its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if bytes.count > 0 { pointer.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
    }

    /// Copies and then zeroes `bytes` (for secrets that arrived in an array).
    public convenience init(consuming bytes: inout [UInt8]) {
        self.init(count: bytes.count)
        bytes.withUnsafeMutableBytes { buf in
            if buf.count > 0 { pointer.copyMemory(from: buf.baseAddress!, byteCount: buf.count) }
            Sodium.zero(buf)
        }
        bytes.removeAll()
    }

    /// `count` fresh random bytes from the OS CSPRNG.
    public static func random(count: Int) -> SecretBytes {
        let s = SecretBytes(count: count)
        s.withUnsafeMutableBytes { Sodium.randomBytes($0) }
        return s
    }

    deinit { GuardedMemoryPool.give(pointer, count: count) }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison (lengths are not secret).
    public static func == (a: SecretBytes, b: SecretBytes) -> Bool {
        a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in Sodium.equal(pa, pb) } }
    }

    /// A copy of bytes `range` in fresh guarded memory.
    public func slice(_ range: Range<Int>) -> SecretBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return withUnsafeBytes { SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}

/// Random bytes and constant-time comparison for values that are not secret
/// (salts, nonces, ids) or whose secrecy is handled by the caller.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { Sodium.randomBytes($0) }
        return out
    }

    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) { Sodium.randomBytes(buffer) }
}

/// Constant-time equality, for tags and MACs.
public func constantTimeEqual(_ a: some ContiguousBytes, _ b: some ContiguousBytes) -> Bool {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in Sodium.equal(pa, pb) } }
}

/// Zeroing that the compiler may not optimise away (sodium_memzero), for
/// buffers that briefly held secrets outside SecretBytes.
public enum SecureZero {
    public static func zero(_ buffer: UnsafeMutableRawBufferPointer) { Sodium.zero(buffer) }
    public static func zero(_ bytes: inout [UInt8]) { bytes.withUnsafeMutableBytes { Sodium.zero($0) } }
}
