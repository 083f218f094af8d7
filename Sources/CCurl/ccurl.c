// See include/ccurl.h: libcurl, loaded when first needed.
#include "ccurl.h"
#include <dlfcn.h>
#include <pthread.h>

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    int loaded;
} api;
static pthread_once_t once = PTHREAD_ONCE_INIT;

// Written before `once` completes and never after: every reader passes
// through pthread_once first, which orders it after these writes.
static void load(void) {
    // The soname libcurl4 installs (what -lcurl linked against); kept open for the process's life.
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
#define FIND(field, symbol) if (!(*(void **)&api.field = dlsym(lib, symbol))) return
    FIND(global_init, "curl_global_init");
    FIND(easy_init, "curl_easy_init");
    FIND(easy_cleanup, "curl_easy_cleanup");
    FIND(easy_perform, "curl_easy_perform");
    FIND(easy_strerror, "curl_easy_strerror");
    FIND(easy_setopt, "curl_easy_setopt");
    FIND(easy_getinfo, "curl_easy_getinfo");
    FIND(slist_append, "curl_slist_append");
    FIND(slist_free_all, "curl_slist_free_all");
#undef FIND
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return;
    api.loaded = 1;
}

int vault_curl_load(void) {
    pthread_once(&once, load);
    return api.loaded;
}

CURL *vault_curl_easy_init(void) { return vault_curl_load() ? api.easy_init() : NULL; }
void vault_curl_easy_cleanup(CURL *h) { if (h && vault_curl_load()) api.easy_cleanup(h); }
CURLcode vault_curl_easy_perform(CURL *h) { return vault_curl_load() ? api.easy_perform(h) : CURLE_FAILED_INIT; }
const char *vault_curl_easy_strerror(CURLcode code) {
    return vault_curl_load() ? api.easy_strerror(code) : "libcurl (libcurl.so.4) could not be loaded";
}
struct curl_slist *vault_curl_slist_append(struct curl_slist *list, const char *s) {
    return vault_curl_load() ? api.slist_append(list, s) : list;
}
void vault_curl_slist_free_all(struct curl_slist *list) { if (list && vault_curl_load()) api.slist_free_all(list); }

CURLcode vault_curl_set_long(CURL *h, CURLoption o, long v) { return vault_curl_load() ? api.easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode vault_curl_set_string(CURL *h, CURLoption o, const char *v) { return vault_curl_load() ? api.easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode vault_curl_set_pointer(CURL *h, CURLoption o, void *v) { return vault_curl_load() ? api.easy_setopt(h, o, v) : CURLE_FAILED_INIT; }
CURLcode vault_curl_set_write(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return vault_curl_load() ? api.easy_setopt(h, CURLOPT_WRITEFUNCTION, f) : CURLE_FAILED_INIT;
}
CURLcode vault_curl_set_header(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return vault_curl_load() ? api.easy_setopt(h, CURLOPT_HEADERFUNCTION, f) : CURLE_FAILED_INIT;
}
CURLcode vault_curl_response_code(CURL *h, long *code) {
    return vault_curl_load() ? api.easy_getinfo(h, CURLINFO_RESPONSE_CODE, code) : CURLE_FAILED_INIT;
}
long vault_curl_auth_basic(void) { return (long)CURLAUTH_BASIC; }
