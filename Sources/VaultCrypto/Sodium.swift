// The only file that imports libsodium: random bytes, guarded memory,
// constant-time comparison, X25519, Argon2id through crypto_pwhash, and the
// ristretto255 group and SHA-512 that CPace is built from.
internal import CSodium

enum Sodium {
    /// sodium_init must run once before any other call; it is idempotent and thread-safe.
    static let ready: Void = {
        guard sodium_init() >= 0 else { fatalError("libsodium failed to initialise") }
    }()

    static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) {
        _ = ready
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }

    /// Guarded allocation: mlock'ed, surrounded by guard pages, zeroed on free.
    static func allocate(_ count: Int) -> UnsafeMutableRawPointer? {
        _ = ready
        return sodium_malloc(max(count, 1))
    }

    static func free(_ pointer: UnsafeMutableRawPointer) { sodium_free(pointer) }

    /// mlock plus MADV_DONTDUMP (sodium_mlock); false when RLIMIT_MEMLOCK is reached.
    static func lock(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return true }
        return sodium_mlock(base, buffer.count) == 0
    }

    static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }

    /// Constant-time equality of two equal-length buffers.
    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        return sodium_memcmp(pa, pb, a.count) == 0
    }

    static let x25519KeyBytes = Int(crypto_scalarmult_BYTES)

    /// X25519(scalar, point). libsodium returns -1 when the result is all zero
    /// (a low-order point), which RFC 7748 section 6.1 says to reject.
    static func x25519(scalar: UnsafeRawBufferPointer, point: UnsafeRawBufferPointer,
                       into out: UnsafeMutableRawBufferPointer) throws {
        _ = ready
        precondition(scalar.count == 32 && point.count == 32 && out.count == 32)
        let rc = crypto_scalarmult(out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                   scalar.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                   point.baseAddress!.assumingMemoryBound(to: UInt8.self))
        if rc != 0 { throw CryptoError.weakSharedSecret }
    }

    /// X25519(scalar, point) exactly as RFC 7748 section 5 defines it, the
    /// all-zero output of a low-order point included, and with no branch on
    /// the result. libsodium returns -1 in two cases, both of which must give
    /// zeros here: a point on its small-order list (public; `out` is then not
    /// written, so it is zeroed first) and an all-zero result (`out` holds
    /// the zeros). The return code is therefore ignored on purpose.
    static func x25519Unchecked(scalar: UnsafeRawBufferPointer, point: UnsafeRawBufferPointer,
                                into out: UnsafeMutableRawBufferPointer) {
        _ = ready
        zero(out)
        // The callers' types fix all three lengths at 32; anything else leaves zeros.
        guard scalar.count == 32, point.count == 32, out.count == 32, let o = out.baseAddress,
              let s = scalar.baseAddress, let p = point.baseAddress else { return }
        _ = crypto_scalarmult(o.assumingMemoryBound(to: UInt8.self), s.assumingMemoryBound(to: UInt8.self),
                              p.assumingMemoryBound(to: UInt8.self))
    }

    static func x25519Base(scalar: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        _ = ready
        precondition(scalar.count == 32 && out.count == 32)
        let rc = crypto_scalarmult_base(out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                        scalar.baseAddress!.assumingMemoryBound(to: UInt8.self))
        if rc != 0 { throw CryptoError.library(library: "libsodium", function: "crypto_scalarmult_base", code: Int(rc)) }
    }

    /// Argon2id v1.3 with one lane (the only lane count crypto_pwhash supports).
    static func argon2id(password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
                         passes: UInt32, memoryKiB: UInt32, into out: UnsafeMutableRawBufferPointer) throws {
        _ = ready
        precondition(salt.count == Int(crypto_pwhash_SALTBYTES))
        let pw = password.baseAddress?.assumingMemoryBound(to: CChar.self)
        var empty: CChar = 0
        let rc = withUnsafePointer(to: &empty) { emptyPtr in
            crypto_pwhash(out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(out.count),
                          pw ?? emptyPtr, UInt64(password.count),
                          salt.baseAddress!.assumingMemoryBound(to: UInt8.self),
                          UInt64(passes), Int(memoryKiB) * 1024, crypto_pwhash_ALG_ARGON2ID13)
        }
        if rc != 0 { throw CryptoError.library(library: "libsodium", function: "crypto_pwhash", code: Int(rc)) }
    }

    // MARK: ristretto255 (CPace)

    static let ristrettoBytes = Int(crypto_core_ristretto255_BYTES)
    static let ristrettoHashBytes = Int(crypto_core_ristretto255_HASHBYTES)

    /// The element a 64-byte uniform hash maps to (RFC 9496 section 4.3.4).
    static func ristrettoFromHash(_ hash: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        _ = ready
        guard hash.count == ristrettoHashBytes, out.count == ristrettoBytes, let h = hash.baseAddress, let o = out.baseAddress else {
            throw CryptoError.invalidParameter(.ristrettoHashLength)
        }
        let rc = crypto_core_ristretto255_from_hash(o.assumingMemoryBound(to: UInt8.self), h.assumingMemoryBound(to: UInt8.self))
        if rc != 0 { throw CryptoError.library(library: "libsodium", function: "crypto_core_ristretto255_from_hash", code: Int(rc)) }
    }

    /// A uniformly random non-zero scalar mod the group order.
    static func ristrettoRandomScalar(into out: UnsafeMutableRawBufferPointer) {
        _ = ready
        precondition(out.count == ristrettoBytes)
        crypto_core_ristretto255_scalar_random(out.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    /// scalar · point. libsodium returns -1 for an encoding that is not a
    /// canonical ristretto255 element and for the identity as the result:
    /// both are `weakSharedSecret` (CPace's scalar_mult_vfy abort).
    static func ristrettoScalarMult(scalar: UnsafeRawBufferPointer, point: UnsafeRawBufferPointer,
                                    into out: UnsafeMutableRawBufferPointer) throws {
        _ = ready
        guard scalar.count == ristrettoBytes, point.count == ristrettoBytes, out.count == ristrettoBytes,
              let s = scalar.baseAddress, let p = point.baseAddress, let o = out.baseAddress else {
            throw CryptoError.weakSharedSecret
        }
        let rc = crypto_scalarmult_ristretto255(o.assumingMemoryBound(to: UInt8.self), s.assumingMemoryBound(to: UInt8.self),
                                                p.assumingMemoryBound(to: UInt8.self))
        if rc != 0 { throw CryptoError.weakSharedSecret }
    }

    /// Incremental SHA-512 (CPace's H); the state is zeroed when finished
    /// or dropped, since what it hashed may be secret.
    final class SHA512 {
        static let length = Int(crypto_hash_sha512_BYTES)
        private var state = crypto_hash_sha512_state()

        init() {
            _ = ready
            crypto_hash_sha512_init(&state)
        }

        deinit { withUnsafeMutableBytes(of: &state) { Sodium.zero($0) } }

        func update(_ data: UnsafeRawBufferPointer) {
            guard let base = data.baseAddress, data.count > 0 else { return }
            crypto_hash_sha512_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(data.count))
        }

        func finish(into out: UnsafeMutableRawBufferPointer) {
            precondition(out.count == Self.length)
            crypto_hash_sha512_final(&state, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
            withUnsafeMutableBytes(of: &state) { Sodium.zero($0) }
        }
    }
}
