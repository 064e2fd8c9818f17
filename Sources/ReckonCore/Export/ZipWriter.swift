import CArchive
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An error from libarchive, with the library's own message.
package struct ArchiveError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// Writes a zip archive through libarchive: deflate at level 1, UTF-8 names flagged as
/// UTF-8, permissions 0644, no owner, each entry's time given by the caller.
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

    /// Refuses a name that is absolute, climbs with `..`, holds a backslash,
    /// an empty part or a control character.
    package static func checkName(_ name: String) throws(ArchiveError) {
        // Over the UTF-8 bytes, part by part: it runs for every entry.
        func isSafe(length: Int, dots: Int) -> Bool { length > 0 && !(dots == length && length <= 2) }
        var length = 0
        var dots = 0
        var safe = !containsControlCharacter(name)
        for byte in name.utf8 where safe {
            switch byte {
            case UInt8(ascii: "/"):
                safe = isSafe(length: length, dots: dots)
                length = 0
                dots = 0
            case UInt8(ascii: "\\"): safe = false
            case UInt8(ascii: "."):
                length += 1
                dots += 1
            default: length += 1
            }
        }
        guard safe, isSafe(length: length, dots: dots) else { throw ArchiveError(message: "unsafe entry name \(quoted(name))") }
    }

    /// Whether `text` holds a control character (general category Cc:
    /// U+0000–U+001F and U+007F–U+009F), found in its UTF-8 bytes: U+0080–U+009F
    /// are the only scalars encoded as 0xC2 followed by 0x80–0x9F.
    package static func containsControlCharacter(_ text: String) -> Bool {
        var afterC2 = false
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || (afterC2 && byte < 0xA0) { return true }
            afterC2 = byte == 0xC2
        }
        return false
    }

    /// The earliest and latest instants a zip entry can carry.
    package static let earliest = Timestamp(iso8601: "1980-01-01T00:00:00Z")!
    static let latest = Timestamp(iso8601: "2107-12-31T23:59:58Z")!

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
        try Self.checkName(name)
        let entry = archive_entry_new()!
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname_utf8(entry, name)
        archive_entry_set_filetype(entry, 0o100000)  // AE_IFREG
        archive_entry_set_perm(entry, 0o644)
        archive_entry_set_size(entry, la_int64_t(size))
        let time = min(max(modified, Self.earliest), Self.latest)
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

/// Reads an archive back through libarchive, to verify what was written.
package enum ArchiveReader {
    package struct Entry: Equatable, Sendable {
        package var name: String
        package var data: Data
        package var modified: Int64
        package var permissions: UInt32
    }

    /// Every entry of the zip at `url`, with its bytes. An archive that is
    /// damaged or cut short is an error naming the file, never a shorter list.
    package static func entries(of url: URL) throws(ArchiveError) -> [Entry] {
        var result: [Entry] = []
        do {
            try stream(url) { name, entry, readAll in
                var data = Data()
                try readAll { data.append(contentsOf: $0) }
                result.append(
                    Entry(
                        name: name, data: data, modified: Int64(archive_entry_mtime(entry)),
                        permissions: UInt32(archive_entry_perm(entry))))
            }
        } catch let error as ArchiveError {
            throw error
        } catch {
            throw ArchiveError(message: "\(url.path): \(error)")
        }
        return result
    }

    /// Reads the zip at `url` entry by entry, streaming: `body` gets each
    /// entry's name, its header and a function that hands its bytes over in
    /// chunks. Every entry is read to its end, whether `body` asks for its
    /// bytes or not, so libarchive checks every CRC; with `skippingUnread`,
    /// an entry `body` does not ask for is passed over unread, so damage in
    /// it does not stop the reading. An archive that is damaged or cut short
    /// throws an `ArchiveError` naming the file and the entry; what `body`
    /// throws is passed on.
    package static func stream(
        _ url: URL, skippingUnread: Bool = false,
        _ body: (String, OpaquePointer, (_ chunk: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> Void
    ) throws {
        try reading(url) { archive, failure in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            var count = 0
            while true {
                var entry: OpaquePointer?
                let status = archive_read_next_header(archive, &entry)
                if status == ARCHIVE_EOF { break }
                guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else {
                    throw failure("is damaged or cut short after \(counted(count, "entry", "entries"))")
                }
                let name = archive_entry_pathname_utf8(entry).map { String(cString: $0) } ?? ""
                var done = false
                func readAll(_ chunk: (UnsafeRawBufferPointer) throws -> Void) throws {
                    guard !done else { return }
                    done = true
                    while true {
                        let read = archive_read_data(archive, &buffer, buffer.count)
                        guard read >= 0 else { throw failure("the entry \(name) is damaged or cut short") }
                        if read == 0 { break }
                        try buffer.withUnsafeBytes { try chunk(UnsafeRawBufferPointer(rebasing: $0[..<read])) }
                    }
                }
                try body(name, entry, readAll)
                if !done && skippingUnread {
                    guard archive_read_data_skip(archive) >= ARCHIVE_WARN else {
                        throw failure("is damaged or cut short after \(counted(count, "entry", "entries"))")
                    }
                } else {
                    try readAll { _ in }
                }
                count += 1
            }
        }
    }

    /// What libarchive read of an entry's header, beside its name as text:
    /// the name's bytes as libarchive gives them (UTF-8), the size it
    /// declares (nil when unset) and its mode (type and permissions).
    package static func facts(of entry: OpaquePointer) -> (name: [UInt8], size: Int64?, mode: UInt32) {
        let name =
            archive_entry_pathname_utf8(entry).map { text in
                Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
            } ?? []
        let size = archive_entry_size_is_set(entry) != 0 ? Int64(archive_entry_size(entry)) : nil
        return (name, size, UInt32(archive_entry_mode(entry)))
    }

    /// The bytes of the entry `name` of the zip at `url`, the entries before
    /// it skipped unread, so that damage inside one of them does not hide
    /// it; nil when the zip holds no such entry.
    package static func entry(named name: String, of url: URL) throws -> Data? {
        try reading(url) { archive, failure in
            var entry: OpaquePointer?
            // ARCHIVE_EOF (1) is above ARCHIVE_WARN: the loop ends there, never skipping past the last entry.
            while case let status = archive_read_next_header(archive, &entry), status == ARCHIVE_OK || status == ARCHIVE_WARN, let header = entry {
                guard archive_entry_pathname_utf8(header).map({ String(cString: $0) }) == name else {
                    guard archive_read_data_skip(archive) >= ARCHIVE_WARN else { throw failure("is damaged or cut short") }
                    continue
                }
                var data = Data()
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let read = archive_read_data(archive, &buffer, buffer.count)
                    guard read >= 0 else { throw failure("the entry \(name) is damaged or cut short") }
                    if read == 0 { return data }
                    data.append(contentsOf: buffer[..<read])
                }
            }
            return nil
        }
    }

    /// libarchive's message for what it could not read, in a person's words
    /// where it is one of the usual ones.
    static func words(_ message: String?) -> String {
        guard let message else { return "it is damaged (libarchive gives no reason)" }
        if message == "Unrecognized archive format" { return "it is not a zip, or it is cut short before the list of entries at its end" }
        if message.hasPrefix("Truncated") { return "the file ends inside it" }
        if message == "Damaged Zip archive" { return "the zip is damaged" }
        if message.contains("decompression failed") { return "its compressed bytes are damaged and cannot be uncompressed" }
        if let crc = message.firstMatch(of: /ZIP bad CRC: (0x[0-9a-f]+) should be (0x[0-9a-f]+)/) {
            return "its bytes are not the ones it was written with (their CRC-32 is \(crc.1), the zip says \(crc.2))"
        }
        if let size = message.firstMatch(of: /ZIP uncompressed data is wrong size \(read ([0-9]+), expected ([0-9]+)\)/) {
            return "it holds \(Int(size.1).map { counted($0, "byte") } ?? "\(size.1) bytes"), but the zip says \(size.2)"
        }
        return "libarchive says: " + message
    }

    /// Opens the zip at `url` with libarchive's seekable zip reader, in the
    /// C.UTF-8 locale, for `body`, which gets the reader and a function
    /// that makes an error of libarchive's words.
    private static func reading<T>(_ url: URL, _ body: (OpaquePointer, @escaping (String) -> ArchiveError) throws -> T) throws -> T {
        try withUTF8Names { () throws -> T in
            guard let archive = archive_read_new() else { throw ArchiveError(message: "\(url.path): libarchive could not start reading") }
            defer { archive_read_free(archive) }
            func failure(_ what: String) -> ArchiveError {
                let detail = words(archive_error_string(archive).map { String(cString: $0) })
                return ArchiveError(message: "\(url.path): \(what): \(detail)")
            }
            // The seekable reader starts from the central directory, so a zip cut
            // short anywhere fails; the streaming one would stop quietly at the cut.
            archive_read_support_format_zip_seekable(archive)
            guard archive_read_open_filename(archive, url.path, 1 << 16) == ARCHIVE_OK else { throw failure("cannot be opened as a zip") }
            return try body(archive, failure)
        }
    }
}

/// Runs `body` with this thread alone in the C.UTF-8 locale (`uselocale`):
/// libarchive's zip reader turns a UTF-8 entry name into "the current
/// locale", which in the C locale loses every letter beyond ASCII. The
/// process's locale is never changed.
func withUTF8Names<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    let utf8 = newlocale(1 << LC_CTYPE, "C.UTF-8", nil)
    defer { if let utf8 { freelocale(utf8) } }
    return try inLocale(utf8, body)
}

/// Runs `body` with this thread in `locale` (when there is one), then puts
/// the thread's locale back.
func inLocale<T, E: Error>(_ locale: locale_t?, _ body: () throws(E) -> T) throws(E) -> T {
    guard let locale else { return try body() }
    let previous = uselocale(locale)
    defer { uselocale(previous) }
    return try body()
}
