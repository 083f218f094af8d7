// AES-256-GCM from Intel's Multi-Buffer Crypto for IPsec library
// (libipsec-mb, Debian's libipsec-mb1), loaded with dlopen the first time a
// 256-bit GCM key is made (VaultCrypto/IPSecMB.swift).
//
// Why: on CPUs with VAES, VPCLMULQDQ and AVX-512 its AES-256-GCM runs at
// 10.6 GB/s on one core where libgcrypt 1.10's runs at 5.0-5.4 GB/s (1 MiB
// messages, this project's machines), and every byte an item, a pack or a
// mount reads or writes passes through it (issue 45). Everywhere else, and
// wherever the library, its header at build time or that CPU is missing,
// vault uses libgcrypt's AES-256-GCM, which gives the same bytes.
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
/// this CPU; 0 otherwise. Loads once per process.
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
#endif
