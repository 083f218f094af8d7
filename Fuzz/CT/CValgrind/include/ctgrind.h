// The ctgrind technique (Adam Langley, 2010): mark secret bytes as
// uninitialised for valgrind's memcheck; any branch or memory index that
// depends on them is then reported as "Conditional jump or move depends on
// uninitialised value(s)" or "Use of uninitialised value of size N".
// Only `make ct` uses this (CT/CTMLKEM). Without valgrind's headers the
// functions do nothing and vault_ct_available() says 0, so an ordinary build
// never needs valgrind, and the harness refuses to run rather than pass
// vacuously.
#ifndef VAULT_CTGRIND_H
#define VAULT_CTGRIND_H
#include <stddef.h>
#if defined(__has_include)
#  if __has_include(<valgrind/memcheck.h>)
#    include <valgrind/memcheck.h>
#    define VAULT_CT_HAVE_VALGRIND 1
#  endif
#endif

/// 1 if the client requests were compiled in.
static inline int vault_ct_available(void) {
#ifdef VAULT_CT_HAVE_VALGRIND
    return 1;
#else
    return 0;
#endif
}

/// 1 when running under valgrind.
static inline int vault_ct_running_on_valgrind(void) {
#ifdef VAULT_CT_HAVE_VALGRIND
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

/// Marks n bytes at p as secret (undefined for memcheck).
static inline void vault_ct_secret(const void *p, size_t n) {
#ifdef VAULT_CT_HAVE_VALGRIND
    (void)VALGRIND_MAKE_MEM_UNDEFINED(p, n);
#else
    (void)p; (void)n;
#endif
}

/// Declassifies n bytes at p (a public output such as a ciphertext).
static inline void vault_ct_public(const void *p, size_t n) {
#ifdef VAULT_CT_HAVE_VALGRIND
    (void)VALGRIND_MAKE_MEM_DEFINED(p, n);
#else
    (void)p; (void)n;
#endif
}

/// The number of memcheck errors reported so far.
static inline unsigned long vault_ct_error_count(void) {
#ifdef VAULT_CT_HAVE_VALGRIND
    return (unsigned long)VALGRIND_COUNT_ERRORS;
#else
    return 0;
#endif
}
#endif
