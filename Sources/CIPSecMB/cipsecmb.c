// See include/cipsecmb.h: libipsec-mb's AES-256-GCM and HMAC-SHA256 lanes, loaded when first needed.
#include "cipsecmb.h"
#include <string.h>

#if defined(__x86_64__) && __has_include(<intel-ipsec-mb.h>)
#include <intel-ipsec-mb.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

static struct {
    IMB_MGR *gcm;    // the AVX-512 manager's GCM functions (NULL: not here)
    IMB_MGR *sha;    // the SSE manager's SHA-NI SHA-256 block function (NULL: not here)
    IMB_MGR *(*alloc_mgr)(uint64_t);
    void (*init_auto)(IMB_MGR *, IMB_ARCH *);
    void (*init_sse)(IMB_MGR *);
    void (*free_mgr)(IMB_MGR *);
} api;
static pthread_once_t once = PTHREAD_ONCE_INIT;

// Only the code measured faster here than libgcrypt's AES-256-GCM: the
// AVX-512 manager, which uses VAES and VPCLMULQDQ for GCM when the CPU has
// them. NULL for any other.
static IMB_MGR *gcm_manager(void) {
    IMB_MGR *m = api.alloc_mgr(0);
    if (!m) return NULL;
    IMB_ARCH arch = IMB_ARCH_NONE;
    api.init_auto(m, &arch);
    const uint64_t need = IMB_FEATURE_VAES | IMB_FEATURE_VPCLMULQDQ | IMB_FEATURE_AVX512_SKX;
    if (arch != IMB_ARCH_AVX512 || (m->features & need) != need) {
        api.free_mgr(m);
        return NULL;
    }
    return m;
}

// Only the code measured faster here than OpenSSL's HMAC-SHA256: the SSE
// manager, whose HMAC-SHA256 runs two SHA-NI lanes side by side when the CPU
// has SHA-NI (3.2 GB/s for batches of 40 messages of about 4 KB, where
// OpenSSL's one at a time runs at 1.5 and the AVX-512 manager's 16 lanes,
// flushed per batch, at 2.0). NULL for any other.
static IMB_MGR *sha_manager(void) {
    IMB_MGR *m = api.alloc_mgr(0);
    if (!m) return NULL;
    api.init_sse(m);
    if (!(m->features & IMB_FEATURE_SHANI)) {
        api.free_mgr(m);
        return NULL;
    }
    return m;
}

// Written before `once` completes and never after: every reader passes
// through pthread_once first, which orders it after these writes.
static void load(void) {
    // The soname Debian's libipsec-mb1 installs; kept open for the process's life.
    void *lib = dlopen("libIPSec_MB.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    unsigned (*get_version)(void);
    if (!(*(void **)&get_version = dlsym(lib, "imb_get_version"))) return;
    if (!(*(void **)&api.alloc_mgr = dlsym(lib, "alloc_mb_mgr"))) return;
    if (!(*(void **)&api.init_auto = dlsym(lib, "init_mb_mgr_auto"))) return;
    if (!(*(void **)&api.init_sse = dlsym(lib, "init_mb_mgr_sse"))) return;
    if (!(*(void **)&api.free_mgr = dlsym(lib, "free_mb_mgr"))) return;
    // IMB_MGR, gcm_key_data and IMB_JOB are laid out as this header says
    // only in the release it came from: any other major.minor is not used.
    if ((get_version() >> 8) != (IMB_VERSION_NUM >> 8)) return;
    api.gcm = gcm_manager();
    api.sha = sha_manager();
}

int vault_imb_gcm256_available(void) {
    pthread_once(&once, load);
    return api.gcm != NULL;
}

int vault_imb_hmac256_available(void) {
    pthread_once(&once, load);
    return api.sha != NULL;
}

void *vault_imb_gcm256_new(const uint8_t key[32]) {
    if (!vault_imb_gcm256_available()) return NULL;
    struct gcm_key_data *k = aligned_alloc(64, sizeof *k);
    if (!k) return NULL;
    IMB_AES256_GCM_PRE(api.gcm, key, k);
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
    IMB_AES256_GCM_ENC(api.gcm, key, &ctx, out ? out : none, NONEMPTY(in), len, nonce,
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
    IMB_AES256_GCM_DEC(api.gcm, key, &ctx, out ? out : none, NONEMPTY(in), len, nonce,
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

struct hmac_key {
    uint8_t inner[32] __attribute__((aligned(16)));   // SHA-256 state after key ^ ipad
    uint8_t outer[32] __attribute__((aligned(16)));   // and after key ^ opad
};

void *vault_imb_hmac256_new(const uint8_t *key, size_t key_len) {
    if (!vault_imb_hmac256_available() || key_len > 64) return NULL;
    struct hmac_key *k = aligned_alloc(64, sizeof *k);   // 64 bytes, a multiple of the alignment
    if (!k) return NULL;
    uint8_t block[64];
    memset(block, 0x36, sizeof block);
    for (size_t i = 0; i < key_len; i++) block[i] ^= key[i];
    IMB_SHA256_ONE_BLOCK(api.sha, block, k->inner);
    memset(block, 0x5c, sizeof block);
    for (size_t i = 0; i < key_len; i++) block[i] ^= key[i];
    IMB_SHA256_ONE_BLOCK(api.sha, block, k->outer);
    explicit_bzero(block, sizeof block);
    return k;
}

void vault_imb_hmac256_free(void *key) {
    if (!key) return;
    explicit_bzero(key, sizeof(struct hmac_key));
    free(key);
}

void *vault_imb_lanes_new(void) {
    return vault_imb_hmac256_available() ? sha_manager() : NULL;
}

void vault_imb_lanes_free(void *lanes) {
    // A queue is empty between calls (each call flushes it), so it holds
    // no message or tag; the keys' states are the caller's.
    if (lanes) api.free_mgr(lanes);
}

int vault_imb_hmac256_many(void *lanes, const void *key, size_t count,
                           const uint8_t *const *messages, const uint64_t *lengths,
                           uint8_t *tags) {
    if (!lanes || !key) return 0;
    for (size_t i = 0; i < count; i++)
        if (lengths[i] == 0 || lengths[i] > VAULT_IMB_HMAC_MAX_LEN || !messages[i]) return 0;
    IMB_MGR *m = lanes;
    const struct hmac_key *k = key;
    size_t finished = 0;
    int ok = 1;
    // Each submit may hand back finished jobs (any order: each writes its
    // own tag); the flushes finish the rest.
    for (size_t i = 0; i < count; i++) {
        IMB_JOB *job = IMB_GET_NEXT_JOB(m);
        memset(job, 0, sizeof *job);
        job->cipher_mode = IMB_CIPHER_NULL;
        job->cipher_direction = IMB_DIR_ENCRYPT;
        job->chain_order = IMB_ORDER_HASH_CIPHER;
        job->hash_alg = IMB_AUTH_HMAC_SHA_256;
        job->src = messages[i];
        job->hash_start_src_offset_in_bytes = 0;
        job->msg_len_to_hash_in_bytes = lengths[i];
        job->auth_tag_output = tags + 32 * i;
        job->auth_tag_output_len_in_bytes = 32;
        job->u.HMAC._hashed_auth_key_xor_ipad = k->inner;
        job->u.HMAC._hashed_auth_key_xor_opad = k->outer;
        for (job = IMB_SUBMIT_JOB(m); job; job = IMB_GET_COMPLETED_JOB(m)) {
            if (job->status != IMB_STATUS_COMPLETED) ok = 0;
            finished++;
        }
    }
    for (IMB_JOB *job; (job = IMB_FLUSH_JOB(m)); ) {
        if (job->status != IMB_STATUS_COMPLETED) ok = 0;
        finished++;
    }
    return ok && finished == count;
}

#else
// No header at build time (or not amd64): libgcrypt serves every caller.
int vault_imb_gcm256_available(void) { return 0; }
int vault_imb_hmac256_available(void) { return 0; }
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
void *vault_imb_hmac256_new(const uint8_t *key, size_t key_len) { (void)key; (void)key_len; return NULL; }
void vault_imb_hmac256_free(void *key) { (void)key; }
void *vault_imb_lanes_new(void) { return NULL; }
void vault_imb_lanes_free(void *lanes) { (void)lanes; }
int vault_imb_hmac256_many(void *lanes, const void *key, size_t count, const uint8_t *const *messages,
                           const uint64_t *lengths, uint8_t *tags) {
    (void)lanes; (void)key; (void)count; (void)messages; (void)lengths; (void)tags;
    return 0;
}
#endif
