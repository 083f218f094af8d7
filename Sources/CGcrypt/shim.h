// libgcrypt's setup calls are variadic and its reset is a macro; neither
// imports into Swift, so these small inline helpers wrap them.
#ifndef VAULT_CGCRYPT_SHIM_H
#define VAULT_CGCRYPT_SHIM_H
#include <gcrypt.h>

/// Initializes libgcrypt once per process (the caller makes it once):
/// checks the library is at least the version built against, turns off its
/// secure-memory pool (vault keeps keys in its own guarded memory and asks
/// for no secure handles), and finishes initialization, without which
/// libgcrypt warns on stderr. If something else in the process finished it
/// first, that setup stands. Returns 1 on success.
static inline int vault_gcrypt_initialize(void) {
    if (!gcry_check_version(GCRYPT_VERSION)) return 0;
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) return 1;
    if (gcry_control(GCRYCTL_DISABLE_SECMEM, 0)) return 0;
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0)) return 0;
    return 1;
}

/// Clears a cipher handle's per-message state (IV, AAD, tag), keeping its key.
static inline gcry_error_t vault_gcry_cipher_reset(gcry_cipher_hd_t h) {
    return gcry_cipher_reset(h);
}
#endif
