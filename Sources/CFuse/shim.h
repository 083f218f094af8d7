// libfuse 3 (Debian libfuse3-dev), low-level API, for VaultMount only.
#ifndef VAULT_CFUSE_SHIM_H
#define VAULT_CFUSE_SHIM_H
#define FUSE_USE_VERSION 31
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <errno.h>
#include <string.h>

// Fills a stat for a read-only node (st_mode from `mode`, which carries S_IFDIR or S_IFREG).
static inline void vault_fuse_stat(struct stat *st, unsigned long long ino, unsigned mode, unsigned long nlink,
                                   long long size, long long mtime, long long ctime, unsigned uid, unsigned gid) {
    memset(st, 0, sizeof *st);
    st->st_ino = ino;
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

// fuse_session_new with the size of the operations table it is given (in
// libfuse 3.17 on, the name is a macro Swift cannot call).
static inline struct fuse_session *vault_fuse_session_new(struct fuse_args *args, const struct fuse_lowlevel_ops *op,
                                                          void *userdata) {
    return fuse_session_new(args, op, sizeof(*op), userdata);
}

// The multi-threaded loop (fuse_session_loop_mt is a macro over versioned
// symbols): no cloned device descriptors, at most 10 idle threads kept;
// libfuse 3.12+ also starts at most 10 worker threads in all.
static inline int vault_fuse_session_loop_mt(struct fuse_session *se) { return fuse_session_loop_mt_31(se, 0); }

// An entry reply: `ino` 0 is a negative entry (cached for `timeout` too).
static inline int vault_fuse_reply_entry(fuse_req_t req, unsigned long long ino, const struct stat *st, double timeout) {
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    e.ino = ino;
    if (st) e.attr = *st;
    e.attr_timeout = timeout;
    e.entry_timeout = timeout;
    return fuse_reply_entry(req, &e);
}

// One readdirplus entry into `buf` (see fuse_add_direntry_plus): `ino` 0
// for "." and "..", which the kernel does not look up.
static inline size_t vault_fuse_add_direntry_plus(fuse_req_t req, char *buf, size_t size, const char *name,
                                                  unsigned long long ino, const struct stat *st, double timeout,
                                                  off_t next) {
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    e.ino = ino;
    e.attr = *st;
    e.attr_timeout = timeout;
    e.entry_timeout = timeout;
    return fuse_add_direntry_plus(req, buf, size, name, &e, next);
}
#endif
