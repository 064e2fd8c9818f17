import CArchive
import Foundation
import ReckonCore

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a zip archive through libarchive, for the tests that need a zip
/// reckon's own writer would not make (an entry held twice): deflate at
/// level 1, UTF-8 names flagged as UTF-8, permissions 0644, no owner, each
/// entry's time given by the caller.
/// The one owner of the `struct archive` pointer; not `Sendable`.
package final class ZipWriter {
    private let archive: OpaquePointer
    /// C.UTF-8, in which libarchive is called. In the C locale it passes
    /// every entry's UTF-8 name through iconv, opened anew for each entry;
    /// in a UTF-8 locale it copies the name. The bytes written are the same.
    private let utf8Names: locale_t?
    private let path: String
    private let sink: Sink
    private var finished = false

    /// Where libarchive's bytes go: the file, counted and hashed on the way,
    /// so the zip's size and SHA-256 need no second read.
    private final class Sink {
        let fd: Int32
        let hasher = SHA256()
        var size = 0
        /// The `errno` of a write that failed.
        var failure: Int32 = 0

        init(fd: Int32) { self.fd = fd }
    }

    /// Opens `url` for writing. Names are handed over as UTF-8. libarchive
    /// 3.6 computes zip's DOS times with `localtime_r`, so the bytes depend
    /// on the time zone: `reckon` pins `TZ=UTC` once at start-up
    /// (main.swift); nothing here changes it.
    package init(url: URL) throws(ArchiveError) {
        path = url.path
        guard let archive = archive_write_new() else { throw ArchiveError(message: "\(url.path): libarchive could not start writing") }
        self.archive = archive
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            archive_write_free(archive)
            throw ArchiveError(message: "\(url.path): \(AtomicFile.lastError())")
        }
        sink = Sink(fd: fd)
        utf8Names = newlocale(1 << LC_CTYPE, "C.UTF-8", nil)
        try inLocale(utf8Names) { () throws(ArchiveError) in try configure() }
    }

    private func configure() throws(ArchiveError) {
        try check(archive_write_set_format_zip(archive))
        try check(archive_write_set_options(archive, "zip:compression=deflate,zip:compression-level=1,zip:hdrcharset=UTF-8"))
        // No padding after the last block, as libarchive writes a regular file.
        try check(archive_write_set_bytes_in_last_block(archive, 1))
        try check(
            archive_write_open(
                archive, Unmanaged.passUnretained(sink).toOpaque(), nil,
                { _, context, buffer, length in
                    let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
                    let bytes = UnsafeRawBufferPointer(start: buffer, count: length)
                    guard writeAll(sink.fd, bytes) else {
                        sink.failure = errno
                        return -1
                    }
                    sink.hasher.update(bytes)
                    sink.size += length
                    return length
                }, nil))
    }

    deinit {
        if !finished { _ = inLocale(utf8Names) { archive_write_close(archive) } }
        archive_write_free(archive)
        close(sink.fd)
        if let utf8Names { freelocale(utf8Names) }
    }

    /// Adds one regular file, its contents streamed from `source` in chunks.
    package func add(name: String, modified: Timestamp, size: Int, contents source: URL) throws {
        let fd = open(source.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw OutputError(path: source.path, reason: AtomicFile.lastError()) }
        defer { close(fd) }
        var buffer = Data(count: 1 << 16)
        try add(name: name, modified: modified, size: size) { write in
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { throw OutputError(path: source.path, reason: AtomicFile.lastError()) }
                if count == 0 { break }
                try write(buffer.prefix(count))
            }
        }
    }

    /// Adds one regular file whose bytes `produce` hands over in order.
    package func add(name: String, modified: Timestamp, size: Int, produce: ((Data) throws -> Void) throws -> Void) throws {
        try inLocale(utf8Names) { () throws in try addInLocale(name: name, modified: modified, size: size, produce: produce) }
    }

    private func addInLocale(name: String, modified: Timestamp, size: Int, produce: ((Data) throws -> Void) throws -> Void) throws {
        try ZipEntryRules.checkName(name)
        let entry = archive_entry_new()!
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname_utf8(entry, name)
        archive_entry_set_filetype(entry, 0o100000)  // AE_IFREG
        archive_entry_set_perm(entry, 0o644)
        archive_entry_set_size(entry, la_int64_t(size))
        let time = min(max(modified, ZipEntryRules.earliest), ZipEntryRules.latest)
        archive_entry_set_mtime(entry, time_t(time.seconds), 0)
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        try check(archive_write_header(archive, entry))
        var written = 0
        try produce { data in
            written += data.count
            let count = data.withUnsafeBytes { archive_write_data(archive, $0.baseAddress, $0.count) }
            guard count >= 0 else { throw ArchiveError(message: errorMessage()) }
        }
        guard written == size else { throw ArchiveError(message: "\(path): \(name): \(counted(written, "byte")) written, \(size) announced") }
        try check(archive_write_finish_entry(archive))
    }

    /// Writes the central directory and closes the file; gives the zip's
    /// size and SHA-256.
    @discardableResult
    package func finish() throws(ArchiveError) -> (size: Int, digest: SHA256.Digest) {
        finished = true
        try inLocale(utf8Names) { () throws(ArchiveError) in try check(archive_write_close(archive)) }
        return (sink.size, sink.hasher.finalize())
    }

    private func check(_ code: Int32) throws(ArchiveError) {
        guard code >= ARCHIVE_WARN else { throw ArchiveError(message: errorMessage()) }
    }

    /// libarchive's own message, or the file's when writing it failed, after the zip's path.
    private func errorMessage() -> String {
        if sink.failure != 0 { return "\(path): \(String(cString: strerror(sink.failure)))" }
        return "\(path): " + (archive_error_string(archive).map { String(cString: $0) } ?? "libarchive error \(archive_errno(archive))")
    }
}
