// AES-256-GCM from libipsec-mb where it is the faster code (CIPSecMB's
// header says when and why); the same bytes as libgcrypt's, which serves
// every other case (Gcrypt.swift).
internal import CIPSecMB

enum IPSecMB {
    /// Whether this process can use it: loaded and checked once.
    static let available = vault_imb_gcm256_available() == 1

    /// One expanded 256-bit key. Thread-safe to use (each message keeps its
    /// state on the caller's stack), though an `AEAD` uses it from one thread.
    final class GCM256Context: AEADCipher {
        private let key: UnsafeMutableRawPointer

        /// nil when the library is not available here.
        init?(key: UnsafeRawBufferPointer) {
            precondition(key.count == 32)
            guard IPSecMB.available,
                  let k = vault_imb_gcm256_new(key.baseAddress!.assumingMemoryBound(to: UInt8.self)) else { return nil }
            self.key = k
        }

        // Wipes the key schedule and hash powers.
        deinit { vault_imb_gcm256_free(key) }

        func seal(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
                  input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer,
                  tag: UnsafeMutableRawBufferPointer) throws {
            precondition(nonce.count == 12 && output.count == input.count && tag.count == 16)
            guard vault_imb_gcm256_seal(key, bytes(nonce), bytes(aad), UInt64(aad.count),
                                        bytes(input), output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                        UInt64(input.count), tag.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 1
            else { throw CryptoError.library(library: "libipsec-mb", function: "IMB_AES256_GCM_ENC", code: 0) }
        }

        func open(nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
                  input: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
                  output: UnsafeMutableRawBufferPointer) throws {
            precondition(nonce.count == 12 && output.count == input.count && tag.count == 16)
            guard vault_imb_gcm256_open(key, bytes(nonce), bytes(aad), UInt64(aad.count),
                                        bytes(input), output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                        UInt64(input.count), bytes(tag)) == 1
            else { throw CryptoError.authenticationFailed }
        }

        private func bytes(_ b: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
            b.baseAddress?.assumingMemoryBound(to: UInt8.self)
        }
    }
}
