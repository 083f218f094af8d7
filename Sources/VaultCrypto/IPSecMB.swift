// AES-256-GCM and HMAC-SHA256 lanes from libipsec-mb where each is the
// faster code (CIPSecMB's header says when and why); the same bytes as
// libgcrypt's AES-256-GCM (Gcrypt.swift) and OpenSSL's HMAC, which serve
// every other case.
internal import CIPSecMB

enum IPSecMB {
    /// Whether this process can use its AES-256-GCM: loaded and checked once.
    static let gcmAvailable = vault_imb_gcm256_available() == 1
    /// Whether this process can use its HMAC-SHA256 lanes.
    static let hmacAvailable = vault_imb_hmac256_available() == 1

    /// One expanded 256-bit key. Thread-safe to use (each message keeps its
    /// state on the caller's stack), though an `AEAD` uses it from one thread.
    final class GCM256Context: AEADCipher {
        private let key: UnsafeMutableRawPointer

        /// nil when the library is not available here.
        init?(key: UnsafeRawBufferPointer) {
            precondition(key.count == 32)
            guard IPSecMB.gcmAvailable,
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

extension IPSecMB {
    /// HMAC-SHA256 under one key, as the lanes take it. Shared by threads.
    final class HMACKey: @unchecked Sendable {
        // @unchecked Sendable: written only in init, then only read.
        fileprivate let state: UnsafeMutableRawPointer

        /// nil when the library is not available here.
        init?(key: UnsafeRawBufferPointer) {
            guard IPSecMB.hmacAvailable,
                  let s = vault_imb_hmac256_new(key.baseAddress?.assumingMemoryBound(to: UInt8.self), key.count) else { return nil }
            state = s
        }

        // Wipes the padded key's states.
        deinit { vault_imb_hmac256_free(state) }
    }

    /// One thread's queue of lanes (the library's job manager).
    final class Lanes {
        private let queue: UnsafeMutableRawPointer
        static let maxLength = Int(VAULT_IMB_HMAC_MAX_LEN)

        init?() {
            guard IPSecMB.hmacAvailable, let q = vault_imb_lanes_new() else { return nil }
            queue = q
        }

        deinit { vault_imb_lanes_free(queue) }

        /// The MACs of `messages` (each 1...maxLength bytes) into `tags`
        /// (32 bytes each); false if the library refused any.
        func authenticate(_ messages: [UnsafeRawBufferPointer], key: HMACKey, into tags: UnsafeMutableRawBufferPointer) -> Bool {
            precondition(tags.count == 32 * messages.count)
            let starts = messages.map { $0.baseAddress?.assumingMemoryBound(to: UInt8.self) }
            let lengths = messages.map { UInt64($0.count) }
            return vault_imb_hmac256_many(queue, key.state, messages.count, starts, lengths,
                                          tags.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 1
        }
    }
}
