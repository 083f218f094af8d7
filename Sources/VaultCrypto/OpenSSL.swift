// The only file that imports OpenSSL's libcrypto: HKDF through EVP_KDF,
// HMAC-SHA256, SHA-256, and the FIPS 202 functions (SHA3-256, SHA3-512,
// SHAKE128, SHAKE256) that ML-KEM and X-Wing are built from; the AEADs are
// libgcrypt's (Gcrypt.swift). Every return code passes through `check`, the
// one place that turns a failure into a typed error.
internal import COpenSSL

/// What a program does first, before any other call into libcrypto.
public enum CryptoLibraries {
    /// OpenSSL 3 registers an atexit handler that frees its global state at
    /// exit(3); a thread still inside libcrypto then (a chunk read ahead
    /// that nobody waits for any more) crashes with SIGSEGV after the
    /// command's work is done (openssl/openssl#6214). With NO_ATEXIT the
    /// kernel frees that memory at exit instead. Only the first
    /// initialisation's options count, so this must come first.
    public static func initializeForProcess() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}

enum OpenSSL {
    static func check(_ rc: Int32, _ function: String) throws {
        if rc != 1 {
            ERR_clear_error()
            throw CryptoError.library(library: "libcrypto", function: function, code: Int(rc))
        }
    }

    /// The fetched HKDF implementation, shared (EVP_KDF objects are immutable
    /// after fetch and safe to use from several threads).
    private final class KDFHandle: @unchecked Sendable {
        let kdf: OpaquePointer
        init() { kdf = EVP_KDF_fetch(nil, "HKDF", nil) }
    }
    private static let hkdfHandle = KDFHandle()

    enum HKDFMode { case extract, expand }

    static func hkdf(_ mode: HKDFMode, key: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
                     info: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        let m: Int32 = mode == .extract ? EVP_KDF_HKDF_MODE_EXTRACT_ONLY : EVP_KDF_HKDF_MODE_EXPAND_ONLY
        func p(_ b: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? { b.baseAddress?.assumingMemoryBound(to: UInt8.self) }
        try check(vault_hkdf_sha256(hkdfHandle.kdf, m, p(key), key.count, p(salt), salt.count,
                                    p(info), info.count,
                                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count),
                  "EVP_KDF_derive(HKDF)")
    }

    /// The fetched HMAC implementation, shared like `hkdfHandle`.
    private final class MACHandle: @unchecked Sendable {
        let mac: OpaquePointer?
        init() { mac = EVP_MAC_fetch(nil, "HMAC", nil) }
    }
    private static let macHandle = MACHandle()

    /// HMAC-SHA256 keyed once (HMACSHA256Key). @unchecked Sendable: the
    /// template is written only here in init; each MAC works on a copy.
    final class KeyedHMAC: @unchecked Sendable {
        private let template: OpaquePointer

        init(key: UnsafeRawBufferPointer) throws {
            guard let mac = macHandle.mac,
                  let t = vault_hmac_sha256_template(mac, key.baseAddress?.assumingMemoryBound(to: UInt8.self), key.count) else {
                ERR_clear_error()
                throw CryptoError.library(library: "libcrypto", function: "EVP_MAC_init(HMAC)", code: 0)
            }
            template = t
        }

        // EVP_MAC_CTX_free cleanses the key and its pads.
        deinit { EVP_MAC_CTX_free(template) }

        func authenticate(_ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
            precondition(out.count == 32)
            try check(vault_hmac_sha256_keyed(template, data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count,
                                              out.baseAddress!.assumingMemoryBound(to: UInt8.self)), "EVP_MAC_final(HMAC)")
        }
    }

    static func hmacSHA256(key: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer,
                           into out: UnsafeMutableRawBufferPointer) throws {
        precondition(out.count == 32)
        var len: UInt32 = 0
        var zero: UInt8 = 0
        let r = withUnsafeMutablePointer(to: &zero) { z in
            HMAC(EVP_sha256(), key.baseAddress ?? UnsafeRawPointer(z), Int32(key.count),
                 data.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(z), data.count,
                 out.baseAddress!.assumingMemoryBound(to: UInt8.self), &len)
        }
        if r == nil || len != 32 { throw CryptoError.library(library: "libcrypto", function: "HMAC", code: 0) }
    }

    /// A streaming SHA-256 context.
    final class DigestContext {
        private let ctx: OpaquePointer
        init() throws {
            guard let c = EVP_MD_CTX_new() else { throw CryptoError.outOfMemory }
            ctx = c
            try check(EVP_DigestInit_ex(ctx, EVP_sha256(), nil), "EVP_DigestInit_ex")
        }
        deinit { EVP_MD_CTX_free(ctx) }
        func update(_ data: UnsafeRawBufferPointer) throws {
            guard let base = data.baseAddress, data.count > 0 else { return }
            try check(EVP_DigestUpdate(ctx, base, data.count), "EVP_DigestUpdate")
        }
        func finish(into out: UnsafeMutableRawBufferPointer) throws {
            precondition(out.count == 32)
            var len: UInt32 = 0
            try check(EVP_DigestFinal_ex(ctx, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &len),
                      "EVP_DigestFinal_ex")
        }
    }

    /// The FIPS 202 functions, each fetched once from the default provider.
    /// `EVP_sha3_256()` and friends would do an implicit fetch (a lock and a
    /// table lookup) on every init; ML-KEM makes about twenty hash calls per
    /// operation, so the fetched handles are kept. EVP_MD objects are
    /// immutable after the fetch and safe to share between threads.
    enum Keccak: Sendable {
        case sha3_256, sha3_512, shake128, shake256

        /// Rate in bytes (FIPS 202 section 6): one permutation per this many
        /// bytes absorbed or squeezed.
        var rate: Int {
            switch self {
            case .sha3_256: return 136
            case .sha3_512: return 72
            case .shake128: return 168
            case .shake256: return 136
            }
        }
        var isXOF: Bool { self == .shake128 || self == .shake256 }
    }

    /// The fetched SHA-3 and SHAKE implementations, shared (EVP_MD objects,
    /// like EVP_KDF ones, are immutable after fetch and safe to use from
    /// several threads; each use makes its own EVP_MD_CTX).
    private final class KeccakHandles: @unchecked Sendable {
        let sha3_256 = EVP_MD_fetch(nil, "SHA3-256", nil)
        let sha3_512 = EVP_MD_fetch(nil, "SHA3-512", nil)
        let shake128 = EVP_MD_fetch(nil, "SHAKE128", nil)
        let shake256 = EVP_MD_fetch(nil, "SHAKE256", nil)
        func md(_ k: Keccak) -> OpaquePointer? {
            switch k {
            case .sha3_256: return sha3_256
            case .sha3_512: return sha3_512
            case .shake128: return shake128
            case .shake256: return shake256
            }
        }
    }
    private static let keccakHandles = KeccakHandles()

    /// One EVP_MD_CTX reused for a sequence of FIPS 202 computations:
    /// `begin`, any number of `absorb`, then `squeeze` (SHAKE, any length, once)
    /// or `finish` (SHA3, the digest length). OpenSSL 3.0 has no
    /// EVP_DigestSqueeze, so an XOF's output is produced in one call; callers
    /// that need more than they asked for start over with a longer length
    /// (the first bytes are the same). EVP_MD_CTX_free clears the sponge
    /// state, which may hold secrets, with OPENSSL_cleanse.
    final class KeccakContext {
        private let ctx: OpaquePointer
        private var current: Keccak?

        init() throws {
            guard let c = EVP_MD_CTX_new() else { throw CryptoError.outOfMemory }
            ctx = c
        }
        deinit { EVP_MD_CTX_free(ctx) }

        func begin(_ function: Keccak) throws {
            guard let md = OpenSSL.keccakHandles.md(function) else {
                throw CryptoError.library(library: "libcrypto", function: "EVP_MD_fetch", code: 0)
            }
            try check(EVP_DigestInit_ex2(ctx, md, nil), "EVP_DigestInit_ex2")
            current = function
        }

        func absorb(_ data: UnsafeRawBufferPointer) throws {
            guard let base = data.baseAddress, data.count > 0 else { return }
            try check(EVP_DigestUpdate(ctx, base, data.count), "EVP_DigestUpdate")
        }

        /// Absorbs one byte (ML-KEM's domain-separation and index bytes).
        func absorb(byte: UInt8) throws {
            var b = byte
            try check(EVP_DigestUpdate(ctx, &b, 1), "EVP_DigestUpdate")
        }

        /// SHAKE output of `out.count` bytes; ends the computation.
        func squeeze(into out: UnsafeMutableRawBufferPointer) throws {
            guard current?.isXOF == true else { throw CryptoError.invalidParameter(.xofSqueeze) }
            guard let base = out.baseAddress, out.count > 0 else { return }
            try check(EVP_DigestFinalXOF(ctx, base.assumingMemoryBound(to: UInt8.self), out.count),
                      "EVP_DigestFinalXOF")
            current = nil
        }

        /// SHA3 digest (32 or 64 bytes); ends the computation.
        func finish(into out: UnsafeMutableRawBufferPointer) throws {
            let expected = current == .sha3_256 ? 32 : current == .sha3_512 ? 64 : -1
            guard out.count == expected, let base = out.baseAddress else {
                throw CryptoError.invalidLength(what: .sha3Digest, expected: expected, got: out.count)
            }
            var len: UInt32 = 0
            try check(EVP_DigestFinal_ex(ctx, base.assumingMemoryBound(to: UInt8.self), &len), "EVP_DigestFinal_ex")
            current = nil
        }
    }
}
