import Foundation

/// HMAC-SHA256 (RFC 2104) through OpenSSL.
public enum HMACSHA256 {
    public static let length = 32

    public static func authenticate(key: some ContiguousBytes, data: some ContiguousBytes) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        try key.withUnsafeBytes { k in try data.withUnsafeBytes { d in try out.withUnsafeMutableBytes { o in
            try OpenSSL.hmacSHA256(key: k, data: d, into: o)
        } } }
        return out
    }

    /// Recomputes the MAC and compares in constant time.
    public static func verify(_ mac: some ContiguousBytes, key: some ContiguousBytes, data: some ContiguousBytes) throws -> Bool {
        constantTimeEqual(try authenticate(key: key, data: data), mac)
    }
}

/// HMAC-SHA256 under one key for many messages: a backup's piece ids, one
/// per piece. `HMACSHA256.authenticate` (OpenSSL's HMAC()) fetches the
/// algorithm and absorbs the key on every call (1.15 µs for 64 bytes here,
/// 5.0 µs for 6,000); this absorbs the key once, and each message works on
/// a copy of that state (0.52 and 3.5 µs), so threads may share one.
/// OpenSSL cleanses the state when this object goes.
public final class HMACSHA256Key: Sendable {
    private let keyed: OpenSSL.KeyedHMAC
    /// The same key for libipsec-mb's lanes (HMACSHA256Lanes), where they run.
    fileprivate let forLanes: IPSecMB.HMACKey?

    public init(_ key: SecretBytes) throws {
        keyed = try key.withUnsafeBytes { try OpenSSL.KeyedHMAC(key: $0) }
        forLanes = key.withUnsafeBytes { IPSecMB.HMACKey(key: $0) }
    }

    /// The MAC of `data`, into `out` (32 bytes).
    public func authenticate(_ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        try keyed.authenticate(data, into: out)
    }

    public func authenticate(_ data: UnsafeRawBufferPointer) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: HMACSHA256.length)
        try out.withUnsafeMutableBytes { try keyed.authenticate(data, into: $0) }
        return out
    }
}

/// HMAC-SHA256 of many messages at once, under an `HMACSHA256Key`: a
/// backup worker's batch of piece ids. Where libipsec-mb's SHA-NI lanes run
/// (IPSecMB.swift), messages of 1 to 65,534 bytes go through them, two side
/// by side (3.2 GB/s here for batches of 40 of about 4 KB; OpenSSL's one at
/// a time 1.5); the rest, and everything elsewhere, through OpenSSL. The
/// same MACs either way. Not thread-safe: one per thread.
public final class HMACSHA256Lanes {
    private let key: HMACSHA256Key
    private let lanes: IPSecMB.Lanes?

    public init(_ key: HMACSHA256Key) {
        self.key = key
        lanes = key.forLanes == nil ? nil : IPSecMB.Lanes()
    }

    /// The MAC of each of `messages`, in order, into `out` (32 bytes each).
    public func authenticate(_ messages: [UnsafeRawBufferPointer], into out: UnsafeMutableRawBufferPointer) throws {
        let n = HMACSHA256.length
        precondition(out.count == n * messages.count)
        let fitsLanes = 1...IPSecMB.Lanes.maxLength
        var rest = Array(messages.indices)
        // Lanes gain by running side by side: one message alone is OpenSSL's.
        if let lanes, let k = key.forLanes {
            let fits = rest.filter { fitsLanes.contains(messages[$0].count) }
            let done = fits.count > 1 && withUnsafeTemporaryAllocation(byteCount: n * fits.count, alignment: 16) { tags in
                guard lanes.authenticate(fits.map { messages[$0] }, key: k, into: tags) else { return false }
                for (j, i) in fits.enumerated() {
                    UnsafeMutableRawBufferPointer(rebasing: out[(n * i)..<(n * i + n)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: tags[(n * j)..<(n * j + n)]))
                }
                return true
            }
            // (Refused, which it should not be: OpenSSL does them all.)
            if done { rest = rest.filter { !fitsLanes.contains(messages[$0].count) } }
        }
        for i in rest { try key.authenticate(messages[i], into: UnsafeMutableRawBufferPointer(rebasing: out[(n * i)..<(n * i + n)])) }
    }
}

/// SHA-256, one-shot or streaming.
public final class SHA256 {
    public static let length = 32
    private let ctx: OpenSSL.DigestContext

    public init() throws { ctx = try OpenSSL.DigestContext() }

    public func update(_ data: UnsafeRawBufferPointer) throws { try ctx.update(data) }
    public func update(_ data: some ContiguousBytes) throws { try data.withUnsafeBytes { try ctx.update($0) } }

    public func finish() throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.length)
        try out.withUnsafeMutableBytes { try ctx.finish(into: $0) }
        return out
    }

    public static func hash(_ data: some ContiguousBytes) throws -> [UInt8] {
        let h = try SHA256()
        try h.update(data)
        return try h.finish()
    }
}
