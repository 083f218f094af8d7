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

/// A keyed HMAC-SHA256 context: the key absorbed once (EVP_MAC_init), the
/// template `vault_hmac_sha256_keyed` copies. NULL on failure.
static inline EVP_MAC_CTX *vault_hmac_sha256_template(EVP_MAC *mac, const unsigned char *key, size_t key_len) {
    static const unsigned char empty[1] = {0};
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
    if (ctx == NULL) return NULL;
    OSSL_PARAM params[2];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
    params[1] = OSSL_PARAM_construct_end();
    if (EVP_MAC_init(ctx, key_len ? key : empty, key_len, params) != 1) {
        EVP_MAC_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/// HMAC-SHA256 of `data` under the template's key, on a copy of the
/// template (EVP_MAC_CTX_dup only reads it, so threads may share one).
/// Returns 1 on success.
static inline int vault_hmac_sha256_keyed(const EVP_MAC_CTX *tmpl, const unsigned char *data, size_t len,
                                          unsigned char *out) {
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_dup(tmpl);
    if (ctx == NULL) return 0;
    size_t n = 0;
    int ok = (len == 0 || EVP_MAC_update(ctx, data, len) == 1) && EVP_MAC_final(ctx, out, &n, 32) == 1 && n == 32;
    EVP_MAC_CTX_free(ctx);
    return ok;
}
#endif
