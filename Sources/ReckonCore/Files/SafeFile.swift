import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What stands at a path, found without following a link.
package enum FileKind: Equatable, Sendable {
    case missing
    case regular(size: Int64)
    case directory
    case link
    /// A FIFO, socket or device; the string names it for messages.
    case special(String)

    /// Looks at a path with `lstat`, so links are seen as links.
    package init(path: String) {
        self = path.withCString { FileKind(cPath: $0) }
    }

    /// Looks at a path given as its bytes, which may not be UTF-8.
    package init(bytes: [UInt8]) {
        self = (bytes.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { FileKind(cPath: $0.baseAddress!) }
    }

    private init(cPath path: UnsafePointer<CChar>) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            self = .missing
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: self = .regular(size: Int64(info.st_size))
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .link
        case S_IFIFO: self = .special("a FIFO")
        case S_IFSOCK: self = .special("a socket")
        case S_IFCHR, S_IFBLK: self = .special("a device")
        default: self = .special("not a regular file")
        }
    }

    package var isRegular: Bool {
        if case .regular = self { return true }
        return false
    }

    /// What this is, for a message ("a folder", "a link").
    package var description: String {
        switch self {
        case .missing: "missing"
        case .regular: "a file"
        case .directory: "a folder"
        case .link: "a link"
        case .special(let name): name
        }
    }
}

/// What a folder listing says one of its names is: a regular file, or
/// (when the listing does not say, or says something else) what `lstat` finds.
package enum ListedKind: Equatable, Sendable {
    case regularFile
    case other(FileKind)
}

/// Hands each name in a folder (without "." and "..") to `each`, unsorted,
/// as its bytes, with its kind. The kind comes from the listing itself where
/// the file system gives it, so a folder of 100,000 memo files costs no
/// `lstat` and no string per name. False when the folder cannot be opened
/// or its listing breaks off.
package func listFolder(atPath path: String, each: (UnsafeRawBufferPointer, ListedKind) throws -> Void) rethrows -> Bool {
    guard let folder = opendir(path) else { return false }
    defer { closedir(folder) }
    while true {
        errno = 0
        guard let entry = readdir(folder) else { return errno == 0 }
        try withUnsafeBytes(of: &entry.pointee.d_name) { field in
            let name = UnsafeRawBufferPointer(rebasing: field[..<(field.firstIndex(of: 0) ?? field.count)])
            if name.elementsEqual(".".utf8) || name.elementsEqual("..".utf8) { return }
            if Int32(entry.pointee.d_type) == Int32(DT_REG) { return try each(name, .regularFile) }
            let kind = FileKind(path: path + "/" + String(decoding: name, as: UTF8.self))
            try each(name, kind.isRegular ? .regularFile : .other(kind))
        }
    }
}

/// An open folder, so that the files in it are opened by name alone
/// instead of walking the whole path each time.
package final class OpenFolder: Sendable {
    let fd: Int32

    /// Nil when the folder cannot be opened (or is a link).
    package init?(_ path: String) {
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 { return nil }
    }

    /// The folder `name` inside `parent`; nil when it cannot be opened (or is a link).
    package init?(_ name: String, in parent: OpenFolder) {
        fd = openat(parent.fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 { return nil }
    }

    deinit { close(fd) }
}

/// Reads a whole regular file without following a link and without blocking
/// on a FIFO, refusing files larger than `limit` bytes. A relative path is
/// taken inside `folder` when one is given.
package func readRegularFile(atPath path: String, in folder: OpenFolder? = nil, limit: Int64) throws(ReadFailure) -> Data {
    var data = Data()
    try readRegularFile(atPath: path, in: folder, limit: limit, into: &data)
    return data
}

/// Opens a file for reading, never through a link and never waiting on a
/// FIFO; the caller closes it.
package func openForReading(atPath path: String, in folder: OpenFolder? = nil) throws(ReadFailure) -> Int32 {
    // Without touching the file's access time, as restic reads, where the
    // file's owner may ask that (else the kernel refuses, and it is asked again).
    var fd = openat(folder?.fd ?? AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | reckon_o_noatime)
    if fd < 0 && errno == EPERM { fd = openat(folder?.fd ?? AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
    guard fd >= 0 else {
        let code = errno
        if code == ELOOP { throw ReadFailure(message: "is a link; links are not followed") }
        throw ReadFailure(message: "cannot be opened: \(String(cString: strerror(code)))")
    }
    return fd
}

/// Reads a file as `readRegularFile(atPath:in:limit:)` does into `data`,
/// reusing its storage, so reading many files one after another does not
/// allocate and clear a buffer for each.
package func readRegularFile(atPath path: String, in folder: OpenFolder? = nil, limit: Int64, into data: inout Data) throws(ReadFailure) {
    let fd = try openForReading(atPath: path, in: folder)
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
        throw ReadFailure(message: "cannot be examined: \(String(cString: strerror(errno)))")
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
        throw ReadFailure(message: "is not a regular file")
    }
    let size = Int64(info.st_size)
    guard size <= limit else {
        throw ReadFailure(message: "is \(counted(size, "byte")), over the limit of \(counted(limit, "byte"))")
    }
    try readWhole(fd, size: Int(size), into: &data)
}

/// Writes all of `bytes` to `fd`, again after a signal cut a write short;
/// false, with `errno` telling why, when a write fails.
package func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var done = 0
    while done < bytes.count {
        let count = write(fd, bytes.baseAddress! + done, bytes.count - done)
        if count < 0 {
            if errno == EINTR { continue }
            return false
        }
        done += count
    }
    return true
}

/// Fills `buffer` with the bytes of `fd` at `offset`, reading again where
/// a read comes back short or interrupted; false when the file ends first
/// (`errno` is then 0) or a read fails (`errno` says why).
package func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: off_t) -> Bool {
    var done = 0
    while done < buffer.count {
        let count = pread(fd, buffer.baseAddress! + done, buffer.count - done, offset + off_t(done))
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else {
            if count == 0 { errno = 0 }
            return false
        }
        done += count
    }
    return true
}

/// Reads the `size` bytes an open file holds into `data` (fewer when it
/// ends first).
package func readWhole(_ fd: Int32, size: Int, into data: inout Data) throws(ReadFailure) {
    data.count = size
    var done = 0
    while done < size {
        let count = data.withUnsafeMutableBytes { buffer in
            read(fd, buffer.baseAddress! + done, size - done)
        }
        if count < 0 {
            if errno == EINTR { continue }
            throw ReadFailure(message: "cannot be read: \(String(cString: strerror(errno)))")
        }
        if count == 0 { break }
        done += count
    }
    data.count = done
}

/// Why a file could not be read; the message completes "<path> …".
package struct ReadFailure: Error, Equatable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// What says a file is unchanged without reading it, as restic and rsync
/// judge it: its device, inode, size, and modification and change times to
/// the nanosecond. Writing a file always moves its change time, which no
/// user can set back, so a file whose identity is the same holds the same bytes.
package struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int
    /// Nanoseconds since 1970.
    var modified: Int64
    var changed: Int64

    /// The identity of the regular file `name` in `folder`, not followed
    /// through a link; nil for anything else, and for a file changed less
    /// than a second ago: the file system's clock moves in ticks, so a write
    /// in the same tick could leave its times as they are, and such an
    /// identity proves nothing.
    package init?(of name: String, in folder: OpenFolder) {
        var info = stat()
        var now = timespec()
        guard fstatat(folder.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG,
            clock_gettime(CLOCK_REALTIME, &now) == 0
        else { return nil }
        func nanoseconds(_ time: timespec) -> Int64 { Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) }
        guard nanoseconds(now) - nanoseconds(info.st_ctim) >= 1_000_000_000 else { return nil }
        self.init(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int(info.st_size),
            modified: nanoseconds(info.st_mtim), changed: nanoseconds(info.st_ctim))
    }

    init(device: UInt64, inode: UInt64, size: Int, modified: Int64, changed: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
    }
}
