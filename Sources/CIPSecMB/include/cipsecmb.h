// AES-256-GCM and many HMAC-SHA256s at once, from Intel's Multi-Buffer
// Crypto for IPsec library (libipsec-mb, Debian's libipsec-mb1), loaded with
// dlopen the first time either is asked for (VaultCrypto/IPSecMB.swift).
//
// Why: on CPUs with VAES, VPCLMULQDQ and AVX-512 its AES-256-GCM runs at
// 10.6 GB/s on one core where libgcrypt 1.10's runs at 5.0-5.4 GB/s (1 MiB
// messages, this project's machines), and every byte an item, a pack or a
// mount reads or writes passes through it (issue 45). Everywhere else, and
// wherever the library, its header at build time or that CPU is missing,
// vault uses libgcrypt's AES-256-GCM, which gives the same bytes.
//
// HMAC-SHA256 of many short messages (a backup's piece ids, a tenth of a
// small-file tree's work): on CPUs with SHA-NI its code hashes two messages
// side by side, 3.2 GB/s here for batches of 40 messages of about 4 KB where
// OpenSSL's one at a time runs at 1.5. Elsewhere OpenSSL's; the same MACs.
//
// Why loaded, not linked: libipsec-mb is packaged for amd64 only. A build
// without its header (any other architecture) compiles this file to the
// "not available" answers below; a machine without the library at run time
// gets the same answer.
#ifndef VAULT_CIPSECMB_H
#define VAULT_CIPSECMB_H
#include <stddef.h>
#include <stdint.h>

/// 1 if the library is loaded, is the version this file was built against
/// (its structures' layout), and its manager chose the VAES AVX-512 code for
/// this CPU; 0 otherwise. Loads once per process, as do all below.
int vault_imb_gcm256_available(void);

/// A 256-bit key's expanded schedule and GHASH powers, in memory of its own
/// (64-byte aligned, as the library requires); NULL if unavailable or out of
/// memory. Free with vault_imb_gcm256_free, which wipes it.
void *vault_imb_gcm256_new(const uint8_t key[32]);
void vault_imb_gcm256_free(void *key);

/// AES-256-GCM with a 96-bit nonce and a 128-bit tag (NIST SP 800-38D).
/// `out` may be `in`. Returns 1, or 0 (nothing written) for a missing key
/// or a message longer than GCM allows.
int vault_imb_gcm256_seal(const void *key, const uint8_t nonce[12],
                           const uint8_t *aad, uint64_t aad_len,
                           const uint8_t *in, uint8_t *out, uint64_t len,
                           uint8_t tag[16]);

/// Decrypts and compares the tag in constant time. Returns 1 if it matches;
/// otherwise (or for what seal refuses) 0, with `out` zeroed, so unauthenticated plaintext never escapes.
int vault_imb_gcm256_open(const void *key, const uint8_t nonce[12],
                          const uint8_t *aad, uint64_t aad_len,
                          const uint8_t *in, uint8_t *out, uint64_t len,
                          const uint8_t tag[16]);

/// 1 if the library is loaded, is the version this file was built against,
/// and its SSE manager has SHA-NI code for this CPU; 0 otherwise.
int vault_imb_hmac256_available(void);

/// HMAC-SHA256 under one key (at most 64 bytes): the SHA-256 states after
/// its inner and outer padded blocks, in memory of their own; NULL if
/// unavailable, the key is longer, or out of memory. Free with
/// vault_imb_hmac256_free, which wipes it. Usable from any thread.
void *vault_imb_hmac256_new(const uint8_t *key, size_t key_len);
void vault_imb_hmac256_free(void *key);

/// A queue of the library's lanes: one per thread (it is the library's
/// job manager, which keeps the messages in flight). NULL if unavailable.
void *vault_imb_lanes_new(void);
void vault_imb_lanes_free(void *lanes);

/// The longest message the lanes take: the library refuses empty ones and,
/// from 65,535 bytes on, longer ones (its lanes count lengths in 16 bits).
#define VAULT_IMB_HMAC_MAX_LEN 65534

/// The HMAC-SHA256 of `count` messages (each 1 to VAULT_IMB_HMAC_MAX_LEN
/// bytes) into `tags`, 32 bytes each, in order. Returns 1, or 0 if any
/// message was refused (then the caller computes them another way).
int vault_imb_hmac256_many(void *lanes, const void *key, size_t count,
                           const uint8_t *const *messages, const uint64_t *lengths,
                           uint8_t *tags);
#endif
