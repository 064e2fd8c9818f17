// Linux calls that Swift's Glibc module does not expose, reached through
// syscall(2) so that no _GNU_SOURCE is needed.
#include <fcntl.h>
#include <linux/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Swaps two paths atomically (renameat2 with RENAME_EXCHANGE).
static inline int reckon_rename_exchange(const char *first, const char *second) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, first, AT_FDCWD, second, 1 << 1);
}

/// Renames first to second unless second exists (renameat2 with RENAME_NOREPLACE).
static inline int reckon_rename_no_replace(const char *first, const char *second) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, first, AT_FDCWD, second, 1 << 0);
}

/// renameat2 within one open folder: RENAME_EXCHANGE (flags 2) swaps two
/// names, RENAME_NOREPLACE (flags 1) renames unless the second name exists.
static inline int reckon_renameat2(int folder, const char *first, const char *second, unsigned int flags) {
    return (int)syscall(SYS_renameat2, folder, first, folder, second, flags);
}

/// O_NOATIME (open(2)): read without moving the access time; only the
/// file's owner (or a process with CAP_FOWNER) may ask, else EPERM.
static const int reckon_o_noatime = 01000000;

/// Flushes the file system that holds fd to disk (syncfs).
static inline int reckon_syncfs(int fd) {
    return (int)syscall(SYS_syncfs, fd);
}

/// Copies up to count bytes between two files inside the kernel (copy_file_range).
static inline long reckon_copy_file_range(int in, int out, unsigned long count) {
    return (long)syscall(SYS_copy_file_range, in, NULL, out, NULL, count, 0);
}

/// Whether the file or folder at path (a link not followed) is marked
/// immutable or append-only (chattr +i, +a), which stops even root from
/// deleting it: 1 if so, 0 if not, -1 when it cannot be told (statx).
static inline int reckon_is_immutable(const char *path) {
    struct statx info;
    const unsigned long long flags = STATX_ATTR_IMMUTABLE | STATX_ATTR_APPEND;
    if (syscall(SYS_statx, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, 0, &info) != 0) return -1;
    return (info.stx_attributes_mask & info.stx_attributes & flags) != 0;
}

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

/// A pipe whose ends are closed on exec (pipe2 with O_CLOEXEC).
static inline int reckon_pipe_cloexec(int fds[2]) {
    return (int)syscall(SYS_pipe2, fds, O_CLOEXEC);
}

/// Starts path with argv and envp (NULL-terminated, made by the caller) and
/// fds[0..2] as its stdin, stdout and stderr, in a process group of its own,
/// so that it gets SIGKILL when the calling thread ends (PR_SET_PDEATHSIG
/// follows the thread that forks): call it from the thread that waits for
/// the child. The child runs only async-signal-safe calls before execve.
/// Returns the pid, or -1 with errno (execve's own when the program could
/// not be started; that child is reaped here).
static inline pid_t reckon_spawn(const char *path, char *const argv[], char *const envp[], const int fds[3]) {
    int report[2];
    if (reckon_pipe_cloexec(report) != 0) return -1;
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        // The parent may have died before the death signal was set.
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
        struct sigaction standard = {0};
        standard.sa_handler = SIG_DFL;
        for (int number = 1; number < NSIG; number++) sigaction(number, &standard, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        // Moved above 2 first, so that no descriptor is overwritten before it is copied.
        int moved[3];
        for (int i = 0; i < 3; i++) {
            moved[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            if (moved[i] < 0) goto failed;
        }
        for (int i = 0; i < 3; i++) {
            if (dup2(moved[i], i) < 0) goto failed;
        }
        // Only the three: a descriptor another thread opened without O_CLOEXEC is not inherited.
        if (syscall(SYS_close_range, 3, ~0U, 1 << 2 /* CLOSE_RANGE_CLOEXEC */) != 0) {
            for (int fd = 3; fd < 4096; fd++) {
                if (fd != report[1]) close(fd);
            }
        }
        execve(path, argv, envp);
    failed:;
        const int error = errno;
        (void)!write(report[1], &error, sizeof error);
        _exit(127);
    }
    const int forkError = errno;
    close(report[1]);
    if (pid < 0) {
        close(report[0]);
        errno = forkError;
        return -1;
    }
    setpgid(pid, pid);
    int error = 0;
    ssize_t count;
    do count = read(report[0], &error, sizeof error);
    while (count < 0 && errno == EINTR);
    close(report[0]);
    if (count == (ssize_t)sizeof error) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        errno = error;
        return -1;
    }
    return pid;
}
