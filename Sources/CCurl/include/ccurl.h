// libcurl's easy interface for the thin vault's range reads
// (VaultRemote/Thin/HTTPRange.swift) and `vault run`'s pings
// (VaultRemote/HTTPPing.swift), loaded the first time either needs it.
//
// Why not linked: libcurl brings 26 shared libraries with it (TLS, Kerberos,
// LDAP, SSH, IDN, ...), and loading and relocating them was 4.7 ms of every
// vault process's start, a quarter of it (issue 45), for two callers most
// commands never reach. The library is looked up by its soname, as the
// dynamic linker would have at start.
//
// Each function loads libcurl (once per process, then curl_global_init) and
// fails as libcurl itself would if it cannot be loaded: no handle, an
// error code, CURLE_FAILED_INIT. curl_easy_setopt and curl_easy_getinfo are
// variadic, which Swift cannot call: one typed function per argument type.
#ifndef VAULT_CCURL_H
#define VAULT_CCURL_H
#include <curl/curl.h>

/// 1 once libcurl is loaded and initialized, 0 if it cannot be.
int vault_curl_load(void);

CURL *vault_curl_easy_init(void);
void vault_curl_easy_cleanup(CURL *h);
CURLcode vault_curl_easy_perform(CURL *h);
/// libcurl's words for `code`, or why libcurl could not be loaded.
const char *vault_curl_easy_strerror(CURLcode code);
struct curl_slist *vault_curl_slist_append(struct curl_slist *list, const char *s);
void vault_curl_slist_free_all(struct curl_slist *list);

CURLcode vault_curl_set_long(CURL *h, CURLoption o, long v);
CURLcode vault_curl_set_string(CURL *h, CURLoption o, const char *v);
CURLcode vault_curl_set_pointer(CURL *h, CURLoption o, void *v);
CURLcode vault_curl_set_write(CURL *h, size_t (*f)(char *, size_t, size_t, void *));
CURLcode vault_curl_set_header(CURL *h, size_t (*f)(char *, size_t, size_t, void *));
CURLcode vault_curl_response_code(CURL *h, long *code);
long vault_curl_auth_basic(void);
#endif
