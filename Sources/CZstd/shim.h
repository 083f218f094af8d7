// ZSTD_STATIC_LINKING_ONLY is not defined: only the stable API is used.
#include <zstd.h>
#include <zstd_errors.h>
