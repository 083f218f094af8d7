// The only file that imports libgcrypt: the AEAD ciphers (AES-GCM and
// ChaCha20-Poly1305, RFC 8439), the same constructions OpenSSL's EVP gave,
// byte for byte. Why libgcrypt for these: on this project's machines its
// AES-256-GCM runs at 5.5 GB/s where OpenSSL 3.0's runs at 4.5 (1 MiB
// messages, one core; OpenSSL 3.0 has no VAES code for GCM, libgcrypt 1.10
// has), and every byte an item, a pack or a mount reads or writes passes
// through it. OpenSSL keeps everything else (HKDF, HMAC, SHA-2, SHA-3).
// On CPUs with VAES and AVX-512, libipsec-mb's AES-256-GCM is faster still
// and is used instead (IPSecMB.swift); the other AEADs stay here.
internal import CGcrypt

enum Gcrypt {
    /// libgcrypt set up once per process, before its first handle
    /// (`vault_gcrypt_initialize`); Swift runs this exactly once.
    private static let initialized = vault_gcrypt_initialize() == 1

    static func check(_ error: gcry_error_t, _ function: String) throws {
        if error != 0 { throw CryptoError.library(library: "libgcrypt", function: function, code: Int(error)) }
    }

    /// One keyed cipher handle; each message sets its own nonce. Not
    /// thread-safe (an `AEAD` is used by one thread at a time).
    final class AEADContext: AEADCipher {
        private let handle: gcry_cipher_hd_t

        init(_ algorithm: AEADAlgorithm, key: UnsafeRawBufferPointer) throws {
            guard Gcrypt.initialized else {
                throw CryptoError.library(library: "libgcrypt", function: "gcry_check_version", code: 0)
            }
            let (cipher, mode): (gcry_cipher_algos, gcry_cipher_modes) = switch algorithm {
            case .aes128GCM: (GCRY_CIPHER_AES, GCRY_CIPHER_MODE_GCM)   // GCRY_CIPHER_AES128 is a macro for it
            case .aes256GCM: (GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_GCM)
            case .chacha20Poly1305: (GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_POLY1305)
            }
            var h: gcry_cipher_hd_t?
            try check(gcry_cipher_open(&h, Int32(cipher.rawValue), Int32(mode.rawValue), 0), "gcry_cipher_open")
            guard let h else { throw CryptoError.outOfMemory }
            handle = h
            do {
                try check(gcry_cipher_setkey(handle, key.baseAddress, key.count), "gcry_cipher_setkey")
            } catch {
                gcry_cipher_close(handle)
                throw error
            }
        }

        // gcry_cipher_close wipes the handle, key schedule included.
        deinit { gcry_cipher_close(handle) }

        /// A fresh message: no state of the last one (a failed one too) carries over.
        private func start(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer) throws {
            try check(vault_gcry_cipher_reset(handle), "gcry_cipher_reset")
            try check(gcry_cipher_setiv(handle, nonce.baseAddress, nonce.count), "gcry_cipher_setiv")
            if aad.count > 0 { try check(gcry_cipher_authenticate(handle, aad.baseAddress, aad.count), "gcry_cipher_authenticate") }
        }

        /// Encrypts `input` into `output` (same length) and writes the 16-byte tag.
        func seal(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
                  input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer,
                  tag: UnsafeMutableRawBufferPointer) throws {
            precondition(nonce.count == 12 && output.count == input.count && tag.count == 16)
            try start(nonce: nonce, aad: aad)
            if input.count > 0 {
                try check(gcry_cipher_encrypt(handle, output.baseAddress, output.count, input.baseAddress, input.count),
                          "gcry_cipher_encrypt")
            }
            try check(gcry_cipher_gettag(handle, tag.baseAddress, tag.count), "gcry_cipher_gettag")
        }

        /// Decrypts `input` into `output` (they may be the same memory) and
        /// verifies `tag` (in constant time). On failure the output is
        /// zeroed, so unauthenticated plaintext never escapes.
        func open(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
                  input: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
                  output: UnsafeMutableRawBufferPointer) throws {
            precondition(nonce.count == 12 && output.count == input.count && tag.count == 16)
            try start(nonce: nonce, aad: aad)
            if input.count > 0 {
                try check(gcry_cipher_decrypt(handle, output.baseAddress, output.count, input.baseAddress, input.count),
                          "gcry_cipher_decrypt")
            }
            if gcry_cipher_checktag(handle, tag.baseAddress, tag.count) != 0 {
                if output.count > 0 { output.initializeMemory(as: UInt8.self, repeating: 0) }
                throw CryptoError.authenticationFailed
            }
        }
    }
}
