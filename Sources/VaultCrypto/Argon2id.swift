import Foundation

/// Argon2id cost parameters, checked against hard bounds on construction so
/// a value of this type can never ask for unbounded memory or time. Callers
/// that read parameters from disk apply their own, tighter policy on top.
public struct Argon2Parameters: Equatable, Hashable, Sendable {
    /// Memory in KiB. At least 8 KiB per lane (Argon2's minimum), at most 4 GiB.
    public let memoryKiB: UInt32
    /// Passes over memory (Argon2's t), 1...64.
    public let passes: UInt32
    /// Lanes (Argon2's p), 1...16; libargon2 runs one thread per lane.
    public let lanes: UInt32

    public static let maxMemoryKiB: UInt32 = 4 * 1024 * 1024
    public static let maxPasses: UInt32 = 64
    public static let maxLanes: UInt32 = 16

    public init(memoryKiB: UInt32, passes: UInt32, lanes: UInt32) throws {
        guard (1...Self.maxLanes).contains(lanes) else {
            throw CryptoError.invalidParameter(.argon2Lanes(lanes))
        }
        guard (1...Self.maxPasses).contains(passes) else {
            throw CryptoError.invalidParameter(.argon2Passes(passes))
        }
        guard memoryKiB >= 8 * lanes, memoryKiB <= Self.maxMemoryKiB else {
            throw CryptoError.invalidParameter(.argon2Memory(kib: memoryKiB, lanes: lanes))
        }
        self.memoryKiB = memoryKiB
        self.passes = passes
        self.lanes = lanes
    }
}

/// Which library computes Argon2id. Both give identical output where both apply.
public enum Argon2Backend: Sendable {
    /// libsodium `crypto_pwhash`: one lane, 16-byte salt, no secret or associated data.
    case libsodium
    /// libargon2 `argon2_ctx`: any lanes, salt, secret and associated data.
    case libargon2
}

/// Argon2id v1.3 (RFC 9106).
public enum Argon2id {
    /// Derives `length` bytes. By default uses libsodium where it applies (about
    /// twice as fast here) and libargon2 otherwise; `backend` forces one.
    public static func deriveKey(password: some ContiguousBytes, salt: some ContiguousBytes,
                                 parameters p: Argon2Parameters, length: Int = 32,
                                 secret: some ContiguousBytes = [UInt8](),
                                 associatedData: some ContiguousBytes = [UInt8](),
                                 backend: Argon2Backend? = nil) throws -> SecretBytes {
        guard (4...1024).contains(length) else { throw CryptoError.invalidParameter(.argon2OutputLength(length)) }
        let out = try SecretBytes(count: length)
        try password.withUnsafeBytes { pw in try salt.withUnsafeBytes { s in
        try secret.withUnsafeBytes { k in try associatedData.withUnsafeBytes { ad in
            guard s.count >= 8 else { throw CryptoError.invalidParameter(.argon2SaltShort) }
            let sodiumFits = p.lanes == 1 && s.count == 16 && k.count == 0 && ad.count == 0 && length >= 16
            switch backend ?? (sodiumFits ? .libsodium : .libargon2) {
            case .libsodium:
                guard sodiumFits else {
                    throw CryptoError.invalidParameter(.argon2LibsodiumShape)
                }
                try out.withUnsafeMutableBytes {
                    try Sodium.argon2id(password: pw, salt: s, passes: p.passes, memoryKiB: p.memoryKiB, into: $0)
                }
            case .libargon2:
                try out.withUnsafeMutableBytes {
                    try LibArgon2.hash(.id, password: pw, salt: s, secret: k, associatedData: ad,
                                       passes: p.passes, memoryKiB: p.memoryKiB, lanes: p.lanes, into: $0)
                }
            }
        } } } }
        return out
    }
}

/// Argon2d and Argon2i, exposed only so the RFC 9106 vectors for all three
/// variants can be checked against the same library the vault links.
public enum Argon2Reference {
    public enum Variant: Sendable { case d, i, id }

    public static func hash(_ variant: Variant, password: [UInt8], salt: [UInt8], secret: [UInt8],
                            associatedData: [UInt8], parameters p: Argon2Parameters, length: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let v: LibArgon2.Variant = variant == .d ? .d : (variant == .i ? .i : .id)
        try password.withUnsafeBytes { pw in try salt.withUnsafeBytes { s in
        try secret.withUnsafeBytes { k in try associatedData.withUnsafeBytes { ad in
        try out.withUnsafeMutableBytes { o in
            try LibArgon2.hash(v, password: pw, salt: s, secret: k, associatedData: ad,
                               passes: p.passes, memoryKiB: p.memoryKiB, lanes: p.lanes, into: o)
        } } } } }
        return out
    }
}
