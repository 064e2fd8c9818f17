// A preload that counts the file-system calls a process makes on regular
// files and folders, and fails exactly one of them.
//
// Loaded with LD_PRELOAD into one reckon run, with:
//   RECKON_FAULT_LOG=FILE    at exit, write one line per counted call:
//                            "N<TAB>function<TAB>path"
//   RECKON_FAULT_AT=N        fail the Nth counted call (from 1) ...
//   RECKON_FAULT_ERRNO=E     ... with errno E (a number, e.g. 5 for EIO)
// The variables (and LD_PRELOAD) are removed from the environment at load,
// so a process the run starts is neither counted nor failed.
//
// Counted: open/openat/creat for writing, write/pwrite/writev/pwritev,
// copy_file_range/sendfile/fallocate, fsync/fdatasync/syncfs, rename/
// renameat/renameat2, link/linkat/symlink/symlinkat, mkdir/mkdirat,
// unlink/unlinkat/rmdir, ftruncate/truncate, fwrite/fflush/fclose, mkstemp
// and the raw syscall() numbers among these. Calls on descriptors that are
// not regular files or folders (stdout, stderr, pipes, sockets) are not.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "faults.h"

static long fail_at = 0;
static int fail_errno = 0;
static int logging = 0;
static char log_path[4096];
static long counter = 0;
// Calls made before this library's constructor ran (by other libraries'
// constructors) are neither counted nor failed, so call N is the same call
// in every run.
static int started = 0;

// The log, kept in memory and written once at exit.
static char *log_text = NULL;
static size_t log_length = 0, log_capacity = 0;
static int log_lock = 0;

static long (*real_syscall)(long, ...);

// A descriptor whose flush was failed: flushing it again is a retry that
// cannot be trusted (the kernel may have dropped the dirty pages), and is
// logged as such until the descriptor is closed.
static int failed_flush_fd = -1;

// Finds the C library's syscall(); other libraries' constructors may call
// in before this one's.
static void ready(void) {
    if (!real_syscall) real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

__attribute__((constructor)) static void faults_start(void) {
    ready();
    const char *at = getenv("RECKON_FAULT_AT");
    const char *number = getenv("RECKON_FAULT_ERRNO");
    const char *log = getenv("RECKON_FAULT_LOG");
    if (at) fail_at = atol(at);
    fail_errno = number ? atoi(number) : EIO;
    if (log && strlen(log) < sizeof log_path) {
        strcpy(log_path, log);
        logging = 1;
    }
    unsetenv("RECKON_FAULT_AT");
    unsetenv("RECKON_FAULT_ERRNO");
    unsetenv("RECKON_FAULT_LOG");
    unsetenv("LD_PRELOAD");
    started = 1;
}

static void log_append(const char *text, size_t length) {
    while (__atomic_exchange_n(&log_lock, 1, __ATOMIC_ACQUIRE)) {}
    if (log_length + length > log_capacity) {
        size_t capacity = log_capacity ? log_capacity * 2 : 1 << 20;
        while (capacity < log_length + length) capacity *= 2;
        char *grown = realloc(log_text, capacity);
        if (grown) {
            log_text = grown;
            log_capacity = capacity;
        }
    }
    if (log_length + length <= log_capacity) {
        memcpy(log_text + log_length, text, length);
        log_length += length;
    }
    __atomic_store_n(&log_lock, 0, __ATOMIC_RELEASE);
}

__attribute__((destructor)) static void faults_end(void) {
    if (!logging) return;
    int fd = (int)real_syscall(SYS_openat, AT_FDCWD, log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    size_t done = 0;
    while (done < log_length) {
        long wrote = real_syscall(SYS_write, fd, log_text + done, log_length - done);
        if (wrote <= 0) break;
        done += (size_t)wrote;
    }
    real_syscall(SYS_close, fd);
}

// Whether a descriptor is a regular file or a folder.
static int is_file(int fd) {
    ready();
    struct stat info;
    if (real_syscall(SYS_fstat, fd, &info) != 0) return 0;
    return S_ISREG(info.st_mode) || S_ISDIR(info.st_mode);
}

// Whether a path names a regular file or folder, or nothing yet.
static int is_file_path(int dirfd, const char *path) {
    struct stat info;
    ready();
    if (real_syscall(SYS_newfstatat, dirfd, path, &info, 0) != 0) return 1;
    return S_ISREG(info.st_mode) || S_ISDIR(info.st_mode);
}

// Counts one call; returns 1 when this is the call to fail (errno is set).
static int count(const char *function, int fd, int dirfd, const char *path) {
    ready();
    if (!started) return 0;
    long n = __atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST);
    if (logging) {
        char where[4096] = "";
        if (path) {
            if (path[0] != '/' && dirfd >= 0) {
                char link[64];
                snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
                long length = real_syscall(SYS_readlinkat, AT_FDCWD, link, where, sizeof where - 1);
                if (length > 0) {
                    where[length] = 0;
                    strncat(where, "/", sizeof where - strlen(where) - 1);
                }
            }
            strncat(where, path, sizeof where - strlen(where) - 1);
        } else if (fd >= 0) {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            long length = real_syscall(SYS_readlinkat, AT_FDCWD, link, where, sizeof where - 1);
            if (length > 0) where[length] = 0;
        }
        char line[4300];
        int length = snprintf(line, sizeof line, "%ld\t%s\t%s\n", n, function, where);
        if (length > 0) log_append(line, (size_t)length < sizeof line ? (size_t)length : sizeof line - 1);
    }
    if (n == fail_at) {
        errno = fail_errno;
        return 1;
    }
    return 0;
}

static int cwd_fd(int dirfd) { return dirfd == AT_FDCWD ? AT_FDCWD : dirfd; }

#define WRITING(flags) (((flags) & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0)

static int open_at(const char *function, int dirfd, const char *path, int flags, mode_t mode,
                   int (*real)(int, const char *, int, ...)) {
    if (WRITING(flags) && is_file_path(dirfd, path) && count(function, -1, dirfd == AT_FDCWD ? -1 : dirfd, path))
        return -1;
    return real(dirfd, path, flags, mode);
}

int open(const char *path, int flags, ...) {
    va_list list;
    va_start(list, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(list, mode_t) : 0;
    va_end(list);
    return open_at("open", AT_FDCWD, path, flags, mode, REAL(openat));
}
int open64(const char *path, int flags, ...) {
    va_list list;
    va_start(list, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(list, mode_t) : 0;
    va_end(list);
    return open_at("open", AT_FDCWD, path, flags, mode, REAL(openat));
}
int openat(int dirfd, const char *path, int flags, ...) {
    va_list list;
    va_start(list, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(list, mode_t) : 0;
    va_end(list);
    return open_at("openat", cwd_fd(dirfd), path, flags, mode, REAL(openat));
}
int openat64(int dirfd, const char *path, int flags, ...) {
    va_list list;
    va_start(list, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(list, mode_t) : 0;
    va_end(list);
    return open_at("openat", cwd_fd(dirfd), path, flags, mode, REAL(openat));
}
int creat(const char *path, mode_t mode) {
    return open_at("creat", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, REAL(openat));
}
int creat64(const char *path, mode_t mode) { return creat(path, mode); }

FILE *fopen(const char *path, const char *mode) {
    if (strpbrk(mode, "wa+") && is_file_path(AT_FDCWD, path) && count("fopen", -1, -1, path)) return NULL;
    return REAL(fopen)(path, mode);
}
FILE *fopen64(const char *path, const char *mode) { return fopen(path, mode); }

#define FD_CALL(name, fd, call) \
    do { \
        if (is_file(fd) && count(name, fd, -1, NULL)) return -1; \
        return call; \
    } while (0)

ssize_t write(int fd, const void *buffer, size_t size) { FD_CALL("write", fd, REAL(write)(fd, buffer, size)); }
ssize_t pwrite(int fd, const void *buffer, size_t size, off_t offset) {
    FD_CALL("pwrite", fd, REAL(pwrite)(fd, buffer, size, offset));
}
ssize_t pwrite64(int fd, const void *buffer, size_t size, off64_t offset) {
    FD_CALL("pwrite", fd, REAL(pwrite64)(fd, buffer, size, offset));
}
ssize_t writev(int fd, const struct iovec *vector, int count_) { FD_CALL("writev", fd, REAL(writev)(fd, vector, count_)); }
ssize_t pwritev(int fd, const struct iovec *vector, int count_, off_t offset) {
    FD_CALL("pwritev", fd, REAL(pwritev)(fd, vector, count_, offset));
}
ssize_t copy_file_range(int in, off64_t *in_offset, int out, off64_t *out_offset, size_t length, unsigned int flags) {
    FD_CALL("copy_file_range", out, REAL(copy_file_range)(in, in_offset, out, out_offset, length, flags));
}
ssize_t sendfile(int out, int in, off_t *offset, size_t count_) { FD_CALL("sendfile", out, REAL(sendfile)(out, in, offset, count_)); }
ssize_t sendfile64(int out, int in, off64_t *offset, size_t count_) {
    FD_CALL("sendfile", out, REAL(sendfile64)(out, in, offset, count_));
}
int fallocate(int fd, int mode, off_t offset, off_t length) { FD_CALL("fallocate", fd, REAL(fallocate)(fd, mode, offset, length)); }
int posix_fallocate(int fd, off_t offset, off_t length) {
    if (is_file(fd) && count("posix_fallocate", fd, -1, NULL)) return errno;
    return REAL(posix_fallocate)(fd, offset, length);
}
static int flush(const char *function, int fd, int (*real)(int)) {
    if (!is_file(fd)) return real(fd);
    if (fd == failed_flush_fd && logging) log_append("0\tretried a failed flush\t\n", 26);
    if (count(function, fd, -1, NULL)) {
        failed_flush_fd = fd;
        return -1;
    }
    return real(fd);
}
int fsync(int fd) { return flush("fsync", fd, REAL(fsync)); }
int fdatasync(int fd) { return flush("fdatasync", fd, REAL(fdatasync)); }
int close(int fd) {
    if (fd == failed_flush_fd) failed_flush_fd = -1;
    return REAL(close)(fd);
}
int syncfs(int fd) { FD_CALL("syncfs", fd, REAL(syncfs)(fd)); }
int ftruncate(int fd, off_t length) { FD_CALL("ftruncate", fd, REAL(ftruncate)(fd, length)); }
int ftruncate64(int fd, off64_t length) { FD_CALL("ftruncate", fd, REAL(ftruncate64)(fd, length)); }

#define PATH_CALL(name, dirfd, path, call) \
    do { \
        if (count(name, -1, (dirfd) == AT_FDCWD ? -1 : (dirfd), path)) return -1; \
        return call; \
    } while (0)

int truncate(const char *path, off_t length) { PATH_CALL("truncate", AT_FDCWD, path, REAL(truncate)(path, length)); }
int rename(const char *from, const char *to) { PATH_CALL("rename", AT_FDCWD, to, REAL(rename)(from, to)); }
int renameat(int fromfd, const char *from, int tofd, const char *to) {
    PATH_CALL("renameat", tofd, to, REAL(renameat)(fromfd, from, tofd, to));
}
int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags) {
    PATH_CALL("renameat2", tofd, to, REAL(renameat2)(fromfd, from, tofd, to, flags));
}
int link(const char *from, const char *to) { PATH_CALL("link", AT_FDCWD, to, REAL(link)(from, to)); }
int linkat(int fromfd, const char *from, int tofd, const char *to, int flags) {
    PATH_CALL("linkat", tofd, to, REAL(linkat)(fromfd, from, tofd, to, flags));
}
int symlink(const char *target, const char *path) { PATH_CALL("symlink", AT_FDCWD, path, REAL(symlink)(target, path)); }
int symlinkat(const char *target, int dirfd, const char *path) {
    PATH_CALL("symlinkat", dirfd, path, REAL(symlinkat)(target, dirfd, path));
}
int mkdir(const char *path, mode_t mode) { PATH_CALL("mkdir", AT_FDCWD, path, REAL(mkdir)(path, mode)); }
int mkdirat(int dirfd, const char *path, mode_t mode) { PATH_CALL("mkdirat", dirfd, path, REAL(mkdirat)(dirfd, path, mode)); }
int unlink(const char *path) { PATH_CALL("unlink", AT_FDCWD, path, REAL(unlink)(path)); }
int unlinkat(int dirfd, const char *path, int flags) { PATH_CALL("unlinkat", dirfd, path, REAL(unlinkat)(dirfd, path, flags)); }
int rmdir(const char *path) { PATH_CALL("rmdir", AT_FDCWD, path, REAL(rmdir)(path)); }
int remove(const char *path) { PATH_CALL("remove", AT_FDCWD, path, REAL(remove)(path)); }

int mkstemp(char *template) {
    if (count("mkstemp", -1, -1, template)) return -1;
    return REAL(mkstemp)(template);
}
int mkstemp64(char *template) { return mkstemp(template); }
int mkostemp(char *template, int flags) {
    if (count("mkostemp", -1, -1, template)) return -1;
    return REAL(mkostemp)(template, flags);
}
int mkstemps(char *template, int suffix) {
    if (count("mkstemps", -1, -1, template)) return -1;
    return REAL(mkstemps)(template, suffix);
}

// A stream that writes to a regular file or folder: a stream opened for
// reading is not counted.
static int writes_file(FILE *stream) { return stream && __fwritable(stream) && is_file(fileno(stream)); }

size_t fwrite(const void *buffer, size_t size, size_t items, FILE *stream) {
    if (writes_file(stream) && count("fwrite", fileno(stream), -1, NULL)) return 0;
    return REAL(fwrite)(buffer, size, items, stream);
}
int fflush(FILE *stream) {
    if (writes_file(stream) && count("fflush", fileno(stream), -1, NULL)) return EOF;
    return REAL(fflush)(stream);
}
int fclose(FILE *stream) {
    if (writes_file(stream) && count("fclose", fileno(stream), -1, NULL)) {
        int saved = errno;
        REAL(fclose)(stream);
        errno = saved;
        return EOF;
    }
    return REAL(fclose)(stream);
}

// The raw system call, through which reckon renames with renameat2 and
// flushes with syncfs: those numbers are counted, every other passes.
long syscall(long number, ...) {
    ready();
    va_list list;
    va_start(list, number);
    long a = va_arg(list, long), b = va_arg(list, long), c = va_arg(list, long);
    long d = va_arg(list, long), e = va_arg(list, long), f = va_arg(list, long);
    va_end(list);
    switch (number) {
    case SYS_renameat2:
        if (count("syscall(renameat2)", -1, (int)c == AT_FDCWD ? -1 : (int)c, (const char *)d)) return -1;
        break;
    case SYS_syncfs:
        if (is_file((int)a) && count("syscall(syncfs)", (int)a, -1, NULL)) return -1;
        break;
    case SYS_copy_file_range:
        if (is_file((int)c) && count("syscall(copy_file_range)", (int)c, -1, NULL)) return -1;
        break;
    default: break;
    }
    return real_syscall(number, a, b, c, d, e, f);
}
