import Foundation

/// Bytes that must not outlive their use: keys, passwords, passphrases.
///
/// Backed by libsodium guarded memory through `GuardedArena`: locked in RAM
/// (up to RLIMIT_MEMLOCK) so it is not swapped, fenced by guard pages, never
/// in a core dump, and zeroed when released. Pointers to the storage never
/// leave the `withUnsafe…` closures. Equality is constant time.
///
/// Allocation failure is `CryptoError.outOfMemory`, thrown, never a trap.
// @unchecked Sendable: the storage is owned by this object alone; callers
// that write through withUnsafeMutableBytes do so before sharing it.
public final class SecretBytes: @unchecked Sendable, Equatable, ContiguousBytes {
    private let allocation: GuardedArena.Allocation
    private var pointer: UnsafeMutableRawPointer { allocation.pointer }
    public let count: Int

    /// Zero-filled secret storage of `count` bytes.
    public init(count: Int) throws(CryptoError) {
        allocation = try GuardedArena.allocate(count)
        self.count = count
    }

    /// Copies `bytes` into guarded memory. The caller stays responsible for
    /// erasing its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) throws(CryptoError) {
        try self.init(count: bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 { pointer.copyMemory(from: base, byteCount: bytes.count) }
    }

    /// Copies and then zeroes `bytes` (for secrets that arrived in an array);
    /// `bytes` is zeroed and emptied even if the allocation fails.
    public convenience init(consuming bytes: inout [UInt8]) throws(CryptoError) {
        defer {
            bytes.withUnsafeMutableBytes { Sodium.zero($0) }
            bytes.removeAll()
        }
        try self.init(count: bytes.count)
        bytes.withUnsafeBytes { buf in
            if let base = buf.baseAddress, buf.count > 0 { pointer.copyMemory(from: base, byteCount: buf.count) }
        }
    }

    /// `count` fresh random bytes from the OS CSPRNG.
    public static func random(count: Int) throws(CryptoError) -> SecretBytes {
        let s = try SecretBytes(count: count)
        s.withUnsafeMutableBytes { Sodium.randomBytes($0) }
        return s
    }

    deinit { GuardedArena.release(allocation) }

    /// How many guarded regions could not be locked in RAM (RLIMIT_MEMLOCK
    /// reached): their secrets may be swapped, though never dumped.
    public static var unlockedRegions: Int { GuardedArena.lockFailures }

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
    public func slice(_ range: Range<Int>) throws(CryptoError) -> SecretBytes {
        guard range.lowerBound >= 0 && range.upperBound <= count else {
            throw .invalidLength(what: .secretSlice, expected: count, got: range.upperBound)
        }
        var result: Result<SecretBytes, CryptoError> = .failure(.outOfMemory)
        withUnsafeBytes { b in
            result = Result { () throws(CryptoError) in try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: b[range])) }
        }
        return try result.get()
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
