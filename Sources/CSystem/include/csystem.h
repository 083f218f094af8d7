// The few libc facilities Swift's Glibc module does not export: they are
// declared only under _GNU_SOURCE, are macros, or are variadic. csystem.c is
// compiled with _GNU_SOURCE; this header uses only plain C types, so it
// imports the same way whatever the importer's feature macros.
#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stdint.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/xattr.h>   // llistxattr, lgetxattr, lsetxattr, fsetxattr: not in Glibc's module

// flock(2), whose name Swift resolves to the struct.
int csystem_flock(int fd, int operation);
// sync_file_range(fd, offset, count, SYNC_FILE_RANGE_WRITE): start writeback.
int csystem_start_writeback(int fd, int64_t offset, int64_t count);
int csystem_syncfs(int fd);
// mallopt(M_ARENA_MAX, count): how many malloc arenas threads may spread over.
int csystem_limit_malloc_arenas(int count);
// open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode): a file with no name.
int csystem_open_tmpfile(const char *directory, unsigned int mode);
// renameat2(..., RENAME_NOREPLACE); -1 with ENOSYS or EINVAL where unsupported.
int csystem_rename_noreplace(const char *from, const char *to);
// openat(directory, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode).
int csystem_open_tmpfile_at(int directory, unsigned int mode);
// renameat2(directory, from, directory, to, RENAME_NOREPLACE).
int csystem_renameat_noreplace(int directory, const char *from, const char *to);
// prctl(PR_SET_DUMPABLE, 0).
int csystem_set_not_dumpable(void);
// prctl(PR_SET_NAME, name): the process name ps -o comm, pgrep and top show.
int csystem_set_process_name(const char *name);
// pipe2(fds, O_CLOEXEC).
int csystem_pipe_cloexec(int fds[2]);
int csystem_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *directory);
// posix_spawn_file_actions_addclosefrom_np(actions, from): close every
// descriptor from `from` up in the child.
int csystem_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);
// getsockopt(SO_PEERCRED): the user and process at the other end of a Unix
// socket, as the kernel recorded them at connect (or listen).
int csystem_peer_credentials(int fd, uint32_t *uid, int32_t *pid);
// POSIX_SPAWN_SETSID.
short csystem_spawn_setsid_flag(void);
// The <sys/wait.h> macros.
int csystem_exited(int status);
int csystem_exit_status(int status);
int csystem_term_signal(int status);

#endif
