// See include/cipsecmb.h: libipsec-mb's AES-256-GCM, loaded when first needed.
#include "cipsecmb.h"
#include <string.h>

#if defined(__x86_64__) && __has_include(<intel-ipsec-mb.h>)
#include <intel-ipsec-mb.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

static struct {
    IMB_MGR *manager;   // its GCM function pointers; never freed, never written after load
    int usable;
} api;
static pthread_once_t once = PTHREAD_ONCE_INIT;

// Written before `once` completes and never after: every reader passes
// through pthread_once first, which orders it after these writes.
static void load(void) {
    // The soname Debian's libipsec-mb1 installs; kept open for the process's life.
    void *lib = dlopen("libIPSec_MB.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    unsigned (*get_version)(void);
    IMB_MGR *(*alloc_mgr)(uint64_t);
    void (*init_auto)(IMB_MGR *, IMB_ARCH *);
    if (!(*(void **)&get_version = dlsym(lib, "imb_get_version"))) return;
    if (!(*(void **)&alloc_mgr = dlsym(lib, "alloc_mb_mgr"))) return;
    if (!(*(void **)&init_auto = dlsym(lib, "init_mb_mgr_auto"))) return;
    // IMB_MGR and gcm_key_data are laid out as this header says only in the
    // release it came from: any other major.minor is not used.
    if ((get_version() >> 8) != (IMB_VERSION_NUM >> 8)) return;
    IMB_MGR *m = alloc_mgr(0);
    if (!m) return;
    IMB_ARCH arch = IMB_ARCH_NONE;
    init_auto(m, &arch);
    // Only the code measured faster than libgcrypt's: the AVX-512 manager,
    // which uses VAES and VPCLMULQDQ for GCM when the CPU has them.
    const uint64_t need = IMB_FEATURE_VAES | IMB_FEATURE_VPCLMULQDQ | IMB_FEATURE_AVX512_SKX;
    if (arch != IMB_ARCH_AVX512 || (m->features & need) != need) return;
    api.manager = m;
    api.usable = 1;
}

int vault_imb_gcm256_available(void) {
    pthread_once(&once, load);
    return api.usable;
}

void *vault_imb_gcm256_new(const uint8_t key[32]) {
    if (!vault_imb_gcm256_available()) return NULL;
    struct gcm_key_data *k = aligned_alloc(64, sizeof *k);
    if (!k) return NULL;
    IMB_AES256_GCM_PRE(api.manager, key, k);
    return k;
}

void vault_imb_gcm256_free(void *key) {
    if (!key) return;
    explicit_bzero(key, sizeof(struct gcm_key_data));
    free(key);
}

// The library checks its arguments and, on a bad one, does nothing and sets
// an error number in the shared manager, which threads cannot read apart.
// So no call may fail its checks: empty buffers get a real address, and a
// message longer than GCM allows (2^39 - 256 bits) is refused here.
static const uint8_t empty[16];
#define NONEMPTY(p) ((p) ? (p) : empty)
#define GCM_MAX_BYTES ((1ULL << 36) - 32)

int vault_imb_gcm256_seal(const void *key, const uint8_t nonce[12],
                          const uint8_t *aad, uint64_t aad_len,
                          const uint8_t *in, uint8_t *out, uint64_t len,
                          uint8_t tag[16]) {
    if (!key || len > GCM_MAX_BYTES || aad_len > GCM_MAX_BYTES) return 0;
    struct gcm_context_data ctx;
    uint8_t none[1];
    IMB_AES256_GCM_ENC(api.manager, key, &ctx, out ? out : none, NONEMPTY(in), len, nonce,
                       NONEMPTY(aad), aad_len, tag, 16);
    explicit_bzero(&ctx, sizeof ctx);
    return 1;
}

int vault_imb_gcm256_open(const void *key, const uint8_t nonce[12],
                          const uint8_t *aad, uint64_t aad_len,
                          const uint8_t *in, uint8_t *out, uint64_t len,
                          const uint8_t tag[16]) {
    if (!key || len > GCM_MAX_BYTES || aad_len > GCM_MAX_BYTES) {
        if (len > 0 && out) memset(out, 0, len);
        return 0;
    }
    struct gcm_context_data ctx;
    uint8_t computed[16], none[1];
    IMB_AES256_GCM_DEC(api.manager, key, &ctx, out ? out : none, NONEMPTY(in), len, nonce,
                       NONEMPTY(aad), aad_len, computed, 16);
    explicit_bzero(&ctx, sizeof ctx);
    // Constant time: every byte is compared, whatever the first difference.
    volatile uint8_t diff = 0;
    for (int i = 0; i < 16; i++) diff |= (uint8_t)(computed[i] ^ tag[i]);
    explicit_bzero(computed, sizeof computed);
    if (diff != 0) {
        if (len > 0 && out) memset(out, 0, len);
        return 0;
    }
    return 1;
}

#else
// No header at build time (or not amd64): libgcrypt serves every caller.
int vault_imb_gcm256_available(void) { return 0; }
void *vault_imb_gcm256_new(const uint8_t key[32]) { (void)key; return NULL; }
void vault_imb_gcm256_free(void *key) { (void)key; }
int vault_imb_gcm256_seal(const void *key, const uint8_t nonce[12], const uint8_t *aad, uint64_t aad_len,
                          const uint8_t *in, uint8_t *out, uint64_t len, uint8_t tag[16]) {
    (void)key; (void)nonce; (void)aad; (void)aad_len; (void)in; (void)out; (void)len; (void)tag;
    return 0;
}
int vault_imb_gcm256_open(const void *key, const uint8_t nonce[12], const uint8_t *aad, uint64_t aad_len,
                          const uint8_t *in, uint8_t *out, uint64_t len, const uint8_t tag[16]) {
    (void)key; (void)nonce; (void)aad; (void)aad_len; (void)in; (void)out; (void)len; (void)tag;
    return 0;
}
#endif
