// The FUSE floor for `make bench` (bench-mount.sh), not part of vault: a
// read-only file system that does no work at all, to measure what the
// kernel's FUSE path itself costs on this machine. It serves what the mount
// bench serves, with `vault mount`'s options (FuseMount.swift: read-only,
// kernel caching, hour-long timeouts, 1 MiB requests, readdirplus listings,
// keep_cache, the multi-threaded loop), but every byte comes from one 1 MiB
// pattern in memory: no vault, no decryption, no index.
//
//   fuse-floor MOUNTPOINT FILE_BYTES FOLDER_FILES FOLDER_FILE_BYTES
//     /item.bin                      FILE_BYTES bytes
//     /photos/p1.jpg ... pN.jpg      FOLDER_FILES files of FOLDER_FILE_BYTES
//
// It serves until unmounted (fusermount3 -u MOUNTPOINT).
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATTERN (1 << 20)
static unsigned char pattern[PATTERN];
static long long file_bytes, folder_files, folder_file_bytes;

// The size of the regular file at `path`, or -1 if there is none.
static long long file_size(const char *path) {
    long long i;
    char tail;
    if (!strcmp(path, "/item.bin")) return file_bytes;
    if (sscanf(path, "/photos/p%lld.jp%c", &i, &tail) == 2 && tail == 'g' && i >= 1 && i <= folder_files)
        return folder_file_bytes;
    return -1;
}

static void *floor_init(struct fuse_conn_info *conn, struct fuse_config *config) {
    conn->max_write = 1 << 20;
    conn->max_readahead = 1 << 20;
    config->entry_timeout = config->attr_timeout = config->negative_timeout = 3600;
    config->kernel_cache = 1;
    return NULL;
}

static int floor_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    memset(st, 0, sizeof *st);
    if (!strcmp(path, "/") || !strcmp(path, "/photos")) {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
        return 0;
    }
    long long size = file_size(path);
    if (size < 0) return -ENOENT;
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = size;
    st->st_blocks = (size + 511) / 512;
    st->st_blksize = 1 << 20;
    return 0;
}

// One entry, with its attributes when the kernel asked for readdirplus.
static int entry(void *buf, fuse_fill_dir_t fill, const char *dir, const char *name, off_t next, int plus) {
    struct stat st;
    char path[96];
    if (!plus || name[0] == '.') return fill(buf, name, NULL, next, 0);
    snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", name);
    floor_getattr(path, &st, NULL);
    return fill(buf, name, &st, next, FUSE_FILL_DIR_PLUS);
}

static int floor_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t offset,
                         struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
    (void)fi;
    int plus = (flags & FUSE_READDIR_PLUS) != 0;
    int root = !strcmp(path, "/");
    if (!root && strcmp(path, "/photos")) return -ENOTDIR;
    long long count = 2 + (root ? 2 : folder_files);
    char name[32];
    for (long long i = offset; i < count; i++) {
        if (i == 0) strcpy(name, ".");
        else if (i == 1) strcpy(name, "..");
        else if (root) strcpy(name, i == 2 ? "item.bin" : "photos");
        else snprintf(name, sizeof name, "p%lld.jpg", i - 1);
        if (entry(buf, fill, path, name, i + 1, plus)) break;
    }
    return 0;
}

static int floor_open(const char *path, struct fuse_file_info *fi) {
    if (file_size(path) < 0) return -ENOENT;
    fi->keep_cache = 1;
    return 0;
}

static int floor_read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)fi;
    long long total = file_size(path);
    if (total < 0) return -ENOENT;
    if (offset >= total) return 0;
    if ((long long)size > total - offset) size = total - offset;
    for (size_t done = 0; done < size;) {
        size_t at = (offset + done) % PATTERN, n = PATTERN - at;
        if (n > size - done) n = size - done;
        memcpy(buf + done, pattern + at, n);
        done += n;
    }
    return (int)size;
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
    struct fuse_operations ops = {
        .init = floor_init, .getattr = floor_getattr, .readdir = floor_readdir,
        .open = floor_open, .read = floor_read,
    };
    char *words[] = { "fuse-floor", "-o", "ro,default_permissions,noatime,auto_unmount,fsname=fuse-floor", NULL };
    struct fuse_args args = FUSE_ARGS_INIT(3, words);
    struct fuse *fuse = fuse_new(&args, &ops, sizeof ops, NULL);
    if (!fuse) return 1;
    if (fuse_mount(fuse, argv[1])) { fuse_destroy(fuse); return 1; }
    int rc = fuse_loop_mt_31(fuse, 0);
    fuse_unmount(fuse);
    fuse_destroy(fuse);
    return rc ? 1 : 0;
}
