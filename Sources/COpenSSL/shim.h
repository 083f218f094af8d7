// OpenSSL function-like macros and OSSL_PARAM arrays do not import into
// Swift; these small inline helpers wrap them so the Swift side stays typed.
#ifndef VAULT_COPENSSL_SHIM_H
#define VAULT_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/hmac.h>
#include <openssl/err.h>
#include <openssl/crypto.h>

/// HKDF-SHA256 through EVP_KDF. mode is one of EVP_KDF_HKDF_MODE_*.
/// salt/info may be NULL with length 0. Returns 1 on success.
static inline int vault_hkdf_sha256(EVP_KDF *kdf, int mode,
                                    const unsigned char *key, size_t key_len,
                                    const unsigned char *salt, size_t salt_len,
                                    const unsigned char *info, size_t info_len,
                                    unsigned char *out, size_t out_len) {
    EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(kdf);
    if (kctx == NULL) return 0;
    static const unsigned char empty[1] = {0};
    OSSL_PARAM params[6];
    int i = 0;
    params[i++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    params[i++] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
    params[i++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
                      (void *)(key_len ? key : empty), key_len);
    if (mode != EVP_KDF_HKDF_MODE_EXPAND_ONLY)
        params[i++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
                          (void *)(salt_len ? salt : empty), salt_len);
    if (mode != EVP_KDF_HKDF_MODE_EXTRACT_ONLY)
        params[i++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
                          (void *)(info_len ? info : empty), info_len);
    params[i] = OSSL_PARAM_construct_end();
    int rc = EVP_KDF_derive(kctx, out, out_len, params);
    EVP_KDF_CTX_free(kctx);
    return rc;
}
#endif
