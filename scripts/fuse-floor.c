// The FUSE floor for `make bench` (bench-mount.sh), not part of vault: a
// read-only file system that does no work at all, to measure what the
// kernel's FUSE path itself costs on this machine. It serves what the mount
// bench serves, as `vault mount` serves it (FuseMount.swift: libfuse's
// low-level API, read-only, hour-long timeouts, 1 MiB requests, readdirplus
// listings, keep_cache, the multi-threaded loop), but every byte comes from
// one 1 MiB pattern in memory, handed to the kernel where it lies: no
// vault, no decryption, no index, no copy. (On the high-level API, which
// copies each read into a buffer of libfuse's, the first `cat` of 1 GiB
// measured 0.324 s against this one's 0.280 s.)
//
//   fuse-floor MOUNTPOINT FILE_BYTES FOLDER_FILES FOLDER_FILE_BYTES
//     /item.bin                      FILE_BYTES bytes
//     /photos/p1.jpg ... pN.jpg      FOLDER_FILES files of FOLDER_FILE_BYTES
//
// Inodes: 1 the root, 2 item.bin, 3 photos, 3 + i photo i.
// It serves until unmounted (fusermount3 -u MOUNTPOINT).
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATTERN (1 << 20)
static unsigned char pattern[PATTERN];
static long long file_bytes, folder_files, folder_file_bytes;
static const double timeout = 3600;

static int is_dir(fuse_ino_t ino) { return ino == 1 || ino == 3; }

// The attributes of `ino`; 0 if there is no such node.
static int attributes(fuse_ino_t ino, struct stat *st) {
    memset(st, 0, sizeof *st);
    st->st_ino = ino;
    if (is_dir(ino)) {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
        return 1;
    }
    long long size;
    if (ino == 2) size = file_bytes;
    else if (ino > 3 && (long long)(ino - 3) <= folder_files) size = folder_file_bytes;
    else return 0;
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = size;
    st->st_blocks = (size + 511) / 512;
    st->st_blksize = 1 << 20;
    return 1;
}

static void floor_init(void *data, struct fuse_conn_info *conn) {
    (void)data;
    conn->max_write = 1 << 20;
    conn->max_readahead = 1 << 20;
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    e.attr_timeout = e.entry_timeout = timeout;
    long long i;
    char tail;
    if (parent == 1 && !strcmp(name, "item.bin")) e.ino = 2;
    else if (parent == 1 && !strcmp(name, "photos")) e.ino = 3;
    else if (parent == 3 && sscanf(name, "p%lld.jp%c", &i, &tail) == 2 && tail == 'g' && i >= 1 && i <= folder_files)
        e.ino = 3 + i;
    if (e.ino) attributes(e.ino, &e.attr);
    fuse_reply_entry(req, &e);   // ino 0: a negative entry, cached as vault's are
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    (void)fi;
    struct stat st;
    if (!attributes(ino, &st)) { fuse_reply_err(req, ENOENT); return; }
    fuse_reply_attr(req, &st, timeout);
}

static void list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, int plus) {
    if (!is_dir(ino)) { fuse_reply_err(req, ENOTDIR); return; }
    long long count = 2 + (ino == 1 ? 2 : folder_files);
    char *buf = malloc(size ? size : 1), name[32];
    size_t used = 0;
    for (long long i = offset; i < count; i++) {
        fuse_ino_t child = 0;
        if (i == 0) strcpy(name, ".");
        else if (i == 1) strcpy(name, "..");
        else if (ino == 1) { strcpy(name, i == 2 ? "item.bin" : "photos"); child = i == 2 ? 2 : 3; }
        else { snprintf(name, sizeof name, "p%lld.jpg", i - 1); child = 3 + (i - 1); }
        struct fuse_entry_param e;
        memset(&e, 0, sizeof e);
        if (child) attributes(child, &e.attr); else { e.attr.st_mode = S_IFDIR; e.attr.st_ino = i == 0 ? ino : 0; }
        e.ino = child;
        e.attr_timeout = e.entry_timeout = timeout;
        size_t n = plus ? fuse_add_direntry_plus(req, buf + used, size - used, name, &e, i + 1)
                        : fuse_add_direntry(req, buf + used, size - used, name, &e.attr, i + 1);
        if (n > size - used) break;
        used += n;
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
}

static void floor_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    list(req, ino, size, offset, 0);
}

static void floor_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    list(req, ino, size, offset, 1);
}

static void floor_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
    struct stat st;
    if (!attributes(ino, &st)) { fuse_reply_err(req, ENOENT); return; }
    if (is_dir(ino)) { fuse_reply_err(req, EISDIR); return; }
    fi->keep_cache = 1;
    fuse_reply_open(req, fi);
}

// The bytes as they lie in the pattern: one span, or two where the read
// wraps around its end (vault's reads likewise span one chunk or two).
static void floor_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    struct stat st;
    if (!attributes(ino, &st)) { fuse_reply_err(req, ENOENT); return; }
    if (offset >= st.st_size) { fuse_reply_buf(req, NULL, 0); return; }
    if ((long long)size > st.st_size - offset) size = st.st_size - offset;
    struct iovec parts[2];
    int count = 0;
    for (size_t done = 0; done < size && count < 2; count++) {
        size_t at = (offset + done) % PATTERN, n = PATTERN - at;
        if (n > size - done) n = size - done;
        parts[count].iov_base = pattern + at;
        parts[count].iov_len = n;
        done += n;
    }
    fuse_reply_iov(req, parts, count);   // at most 1 MiB a request: two spans reach
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: fuse-floor MOUNTPOINT FILE_BYTES FOLDER_FILES FOLDER_FILE_BYTES\n");
        return 2;
    }
    file_bytes = atoll(argv[2]);
    folder_files = atoll(argv[3]);
    folder_file_bytes = atoll(argv[4]);
    unsigned x = 1;
    for (size_t i = 0; i < PATTERN; i++) { x = x * 1103515245u + 12345u; pattern[i] = x >> 24; }
    struct fuse_lowlevel_ops ops = {
        .init = floor_init, .lookup = floor_lookup, .getattr = floor_getattr, .readdir = floor_readdir,
        .readdirplus = floor_readdirplus, .open = floor_open, .read = floor_read,
    };
    char *words[] = { "fuse-floor", "-o", "ro,default_permissions,noatime,auto_unmount,fsname=fuse-floor", NULL };
    struct fuse_args args = FUSE_ARGS_INIT(3, words);
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, NULL);
    if (!se) return 1;
    if (fuse_session_mount(se, argv[1])) { fuse_session_destroy(se); return 1; }
    int rc = fuse_session_loop_mt_31(se, 0);
    fuse_session_unmount(se);
    fuse_session_destroy(se);
    return rc ? 1 : 0;
}
