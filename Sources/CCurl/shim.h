// libcurl's easy interface for the thin vault's range reads
// (VaultRemote/Thin/HTTPRange.swift). curl_easy_setopt and
// curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument type.
#include <curl/curl.h>

static inline CURLcode vault_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode vault_curl_set_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode vault_curl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode vault_curl_set_write(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f);
}
static inline CURLcode vault_curl_set_header(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f);
}
static inline CURLcode vault_curl_response_code(CURL *h, long *code) { return curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code); }
static inline long vault_curl_auth_basic(void) { return (long)CURLAUTH_BASIC; }
