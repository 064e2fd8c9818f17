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
