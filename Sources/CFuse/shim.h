// libfuse 3 (Debian libfuse3-dev), high-level API, for VaultMount only.
#ifndef VAULT_CFUSE_SHIM_H
#define VAULT_CFUSE_SHIM_H
#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <sys/stat.h>
#include <errno.h>

// fuse_new is a macro over a versioned symbol: Swift cannot call it.
static inline struct fuse *vault_fuse_new(struct fuse_args *args, const struct fuse_operations *op, void *data) {
    return fuse_new(args, op, sizeof(*op), data);
}

// Fills a stat for a read-only node (st_mode from `mode`, which carries S_IFDIR or S_IFREG).
static inline void vault_fuse_stat(struct stat *st, unsigned mode, unsigned long nlink, long long size,
                                   long long mtime, long long ctime, unsigned uid, unsigned gid) {
    st->st_mode = mode;
    st->st_nlink = nlink;
    st->st_size = size;
    st->st_blocks = (size + 511) / 512;
    st->st_blksize = 1 << 20;
    st->st_mtim.tv_sec = mtime;
    st->st_atim.tv_sec = mtime;
    st->st_ctim.tv_sec = ctime;
    st->st_uid = uid;
    st->st_gid = gid;
}

// The multi-threaded loop (fuse_loop_mt is a macro over versioned symbols):
// no cloned device descriptors, at most 10 idle threads kept; libfuse 3.12+
// also starts at most 10 worker threads in all.
static inline int vault_fuse_loop_mt(struct fuse *f) { return fuse_loop_mt_31(f, 0); }

static inline void *vault_fuse_private_data(void) { return fuse_get_context()->private_data; }
#endif
