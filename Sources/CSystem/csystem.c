#define _GNU_SOURCE
#include <malloc.h>
#include "csystem.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int csystem_flock(int fd, int operation) { return flock(fd, operation); }
int csystem_start_writeback(int fd, int64_t offset, int64_t count) {
    return sync_file_range(fd, offset, count, SYNC_FILE_RANGE_WRITE);
}
int csystem_syncfs(int fd) { return syncfs(fd); }
int csystem_limit_malloc_arenas(int count) { return mallopt(M_ARENA_MAX, count); }
int csystem_open_tmpfile(const char *directory, unsigned int mode) {
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)mode);
}
int csystem_rename_noreplace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
int csystem_open_tmpfile_at(int directory, unsigned int mode) {
    return openat(directory, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)mode);
}
int csystem_renameat_noreplace(int directory, const char *from, const char *to) {
    return renameat2(directory, from, directory, to, RENAME_NOREPLACE);
}
int csystem_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
int csystem_set_process_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }
int csystem_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
int csystem_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *directory) {
    return posix_spawn_file_actions_addchdir_np(actions, directory);
}
int csystem_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
int csystem_peer_credentials(int fd, uint32_t *uid, int32_t *pid) {
    struct ucred cred;
    socklen_t length = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) return -1;
    *uid = cred.uid;
    *pid = cred.pid;
    return 0;
}
short csystem_spawn_setsid_flag(void) { return POSIX_SPAWN_SETSID; }
int csystem_exited(int status) { return WIFEXITED(status); }
int csystem_exit_status(int status) { return WEXITSTATUS(status); }
int csystem_term_signal(int status) { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
