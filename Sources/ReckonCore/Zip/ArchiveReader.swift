import CArchive
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An error from libarchive, with the library's own message.
package struct ArchiveError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }

    package init(message: String) { self.message = message }
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

extension ArchiveReader {
    /// Why a zip holding two entries named `name` is not read, after the zip's name.
    package static func heldTwiceWords(_ name: String) -> String {
        "holds two entries named \(quoted(name, limit: 200)); reckon never writes a zip like that, "
            + "and which of the two is the export cannot be told: the export is damaged"
    }
}

/// What went wrong reading the zip at `zip`, in words without its path:
/// libarchive's own message, or the reason of any other error.
func archiveWords(_ error: any Error, zip: URL) -> String {
    guard let archive = error as? ArchiveError else { return errorWords(error) }
    return archive.message.dropPrefix(zip.path + ": ").trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Runs `body` with this thread alone in the C.UTF-8 locale (`uselocale`):
/// libarchive's zip reader turns a UTF-8 entry name into "the current
/// locale", which in the C locale loses every letter beyond ASCII. The
/// process's locale is never changed.
package func withUTF8Names<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    let utf8 = newlocale(1 << LC_CTYPE, "C.UTF-8", nil)
    defer { if let utf8 { freelocale(utf8) } }
    return try inLocale(utf8, body)
}

/// Runs `body` with this thread in `locale` (when there is one), then puts
/// the thread's locale back.
package func inLocale<T, E: Error>(_ locale: locale_t?, _ body: () throws(E) -> T) throws(E) -> T {
    guard let locale else { return try body() }
    let previous = uselocale(locale)
    defer { uselocale(previous) }
    return try body()
}
