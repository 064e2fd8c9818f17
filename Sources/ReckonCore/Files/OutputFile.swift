import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A new file written in order through a buffer, counting and hashing what
/// it writes. Used for outputs that are built in a staging folder and
/// published by renaming. Owns its descriptor; not `Sendable`.
package final class OutputFile {
    package let url: URL
    private var fd: Int32
    private var buffer: [UInt8] = []
    private let hasher = SHA256()
    package private(set) var size = 0

    /// Creates the file; fails if something already stands at the path.
    package convenience init(_ url: URL) throws(OutputError) {
        guard let fd = try Self.create(url) else { throw OutputError(path: url.path, reason: "something already stands there") }
        self.init(url: url, fd: fd)
    }

    private init(url: URL, fd: Int32) {
        self.url = url
        self.fd = fd
        buffer.reserveCapacity(1 << 16)
    }

    /// A descriptor for a new file at `url`; nil when the path is taken.
    private static func create(_ url: URL) throws(OutputError) -> Int32? {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if fd < 0 && errno == EEXIST { return nil }
        guard fd >= 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
        return fd
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Writes `data` as a new read-only (0444) file at `path` in one go, for
    /// the many small files of an export; gives its SHA-256 and inode, or
    /// nil when something already stands at the path.
    package static func writeReadOnly(_ data: Data, toNew path: String) throws -> (digest: SHA256.Digest, inode: UInt64)? {
        try writeReadOnly(toNew: path) { write in try data.withUnsafeBytes { try write($0) } }
    }

    /// Writes a new read-only (0444) file at `path` from the bytes
    /// `produce` hands over in order, through a buffer of 64 KiB (larger
    /// pieces go straight to the file); gives its SHA-256 and inode, or nil
    /// when something already stands at the path.
    package static func writeReadOnly(
        toNew path: String, _ produce: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws -> (digest: SHA256.Digest, inode: UInt64)? {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o444)
        if fd < 0 && errno == EEXIST { return nil }
        guard fd >= 0 else { throw OutputError(path: path, reason: AtomicFile.lastError()) }
        defer { close(fd) }
        let hasher = SHA256()
        var buffer: [UInt8] = []
        func flush() throws(OutputError) {
            guard buffer.withUnsafeBytes({ writeAll(fd, $0) }) else { throw OutputError(path: path, reason: AtomicFile.lastError()) }
            buffer.removeAll(keepingCapacity: true)
        }
        try produce { bytes in
            hasher.update(bytes)
            if buffer.count + bytes.count <= 1 << 16 { return buffer.append(contentsOf: bytes) }
            try flush()
            guard bytes.count >= 1 << 16 else { return buffer.append(contentsOf: bytes) }
            guard writeAll(fd, bytes) else { throw OutputError(path: path, reason: AtomicFile.lastError()) }
        }
        try flush()
        // Whatever the umask took away: exactly read-only for everyone.
        var info = stat()
        guard fchmod(fd, 0o444) == 0, fstat(fd, &info) == 0 else { throw OutputError(path: path, reason: AtomicFile.lastError()) }
        return (hasher.finalize(), UInt64(info.st_ino))
    }

    package func write(_ text: String) throws(OutputError) {
        try write(Data(text.utf8))
    }

    /// Writes `data` after what was written; a piece of 64 KiB or more goes
    /// straight to the file, never copied into the buffer.
    package func write(_ data: Data) throws(OutputError) {
        try data.withUnsafeBytes { bytes in Result { () throws(OutputError) in try write(bytes) } }.get()
    }

    /// Writes `bytes` after what was written, as `write(_:)` writes data.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
        hasher.update(bytes)
        size += bytes.count
        guard bytes.count >= 1 << 16 else {
            buffer.append(contentsOf: bytes)
            if buffer.count >= 1 << 16 { try flush() }
            return
        }
        try flush()
        guard writeAll(fd, bytes) else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
    }

    private func flush() throws(OutputError) {
        guard buffer.withUnsafeBytes({ writeAll(fd, $0) }) else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered, flushes the file to disk when asked
    /// (`sync`), and closes; returns the SHA-256 of the contents.
    package func finish(sync: Bool = false) throws(OutputError) -> SHA256.Digest {
        try flush()
        if sync, fsync(fd) != 0 { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
        close(fd)
        fd = -1
        return hasher.finalize()
    }
}
