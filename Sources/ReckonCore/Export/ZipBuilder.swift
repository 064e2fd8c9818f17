import CZip
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes an export's `memos.zip` through libzip, deflating on every core.
///
/// Entries are handed over in order and gathered into parts of 4 MiB or
/// 1,024 entries; each part is deflated into a zip of its own
/// (`.zip-part-N` in the staging folder) on another core. `finish` then writes the container
/// once: each entry's compressed bytes are copied, not deflated again,
/// from its part (or from the previous run's zip) in the order handed
/// over, so the bytes are the same whatever the worker count. libzip
/// renames its file into place without a flush: it writes a staging name,
/// which is flushed and then renamed to `memos.zip` here.
///
/// One caller hands entries over; not `Sendable` to it.
package final class ZipBuilder {
    /// One entry: its name, time and bytes, the file whose bytes it holds,
    /// or an entry of the previous run's zip copied as it is.
    package struct Entry: Sendable {
        package enum Contents: Sendable {
            case data(Data)
            /// A file that is whole when handed over, with its size.
            case file(URL, size: Int)
            /// The entry of the previous run's zip at this index (see `PreviousZip`).
            case copy(Int32)
        }

        package var name: String
        package var modified: Timestamp
        package var contents: Contents

        package init(name: String, modified: Timestamp, contents: Contents) {
            self.name = name
            self.modified = modified
            self.contents = contents
        }
    }

    /// The writer and its settings, as the manifest records them: an entry
    /// is copied raw from a previous zip only when that zip was written with
    /// the same.
    package static let settings = "libzip \(String(cString: zip_libzip_version())), deflate level 1"

    /// Where an entry's compressed bytes come from: a part, or the previous
    /// zip (`part == -1`); and the entry's time.
    private struct Placed {
        var part: Int32
        var index: Int32
        var modified: Int64
    }

    private let url: URL
    private let previous: PreviousZip?
    private var placed: [Placed] = []
    private var pending: [Entry] = []
    private var pendingBytes = 0
    private var parts = 0
    private let group = DispatchGroup()
    /// How many parts are being deflated at most, so memory stays bounded.
    private let slots: Int
    private let free: DispatchSemaphore
    private let state = State()
    private var finished = false
    /// How many entries were copied from the previous zip.
    package private(set) var copied = 0

    /// What the cores deflating parts share: how many are at work, and the
    /// first failure.
    private final class State: Sendable {
        let busy = Atomic(0)
        let failure = Mutex<OutputError?>(nil)
    }

    /// How many bytes, or entries, a part gathers before it is deflated.
    static let partBytes = 4 << 20
    static let partEntries = 1024

    /// Writes to `url` (in a staging folder, beside which the parts are
    /// written), copying entries marked `.copy` from `previous`.
    package init(url: URL, previous: PreviousZip? = nil) {
        self.url = url
        self.previous = previous
        slots = Workers.count ?? ProcessInfo.processInfo.activeProcessorCount
        free = DispatchSemaphore(value: max(slots, 1))
    }

    deinit {
        group.wait()
        for part in 0..<parts { unlink(partPath(part)) }
    }

    /// Whether every core is deflating a part: then the zip sets the pace,
    /// and its caller had best leave the cores to it.
    package var isBehind: Bool { !Workers.one && state.busy.load(ordering: .relaxed) >= slots }

    /// Hands entries over, in order. Throws what stopped a part, if something did.
    package func add(_ entries: [Entry]) throws {
        for entry in entries {
            try ZipWriter.checkName(entry.name)
            let modified = Int64(min(max(entry.modified, ZipWriter.earliest), ZipWriter.latest).seconds)
            switch entry.contents {
            case .copy(let index):
                placed.append(Placed(part: -1, index: index, modified: modified))
                copied += 1
            case .data(let data):
                placed.append(Placed(part: Int32(parts), index: Int32(pending.count), modified: modified))
                pending.append(entry)
                pendingBytes += data.count
            case .file(_, let size):
                placed.append(Placed(part: Int32(parts), index: Int32(pending.count), modified: modified))
                pending.append(entry)
                pendingBytes += size
            }
            TestStop.at("zip-entry-written")
            if pendingBytes >= Self.partBytes || pending.count >= Self.partEntries { try startPart() }
        }
    }

    /// Deflates the entries gathered into a part of their own, on another core.
    private func startPart() throws {
        if let failure = state.failure.withLock({ $0 }) { throw failure }
        guard !pending.isEmpty else { return }
        let entries = pending
        let path = partPath(parts)
        let zipPath = url.path
        parts += 1
        pending = []
        pendingBytes = 0
        free.wait()
        state.busy.add(1, ordering: .relaxed)
        Workers.async(group: group) { [free, state] in
            defer {
                state.busy.subtract(1, ordering: .relaxed)
                free.signal()
            }
            do throws(OutputError) {
                try Self.writePart(entries, to: path, reportedAs: zipPath)
            } catch {
                state.failure.withLock { $0 = $0 ?? error }
            }
        }
    }

    private func partPath(_ part: Int) -> String {
        url.deletingLastPathComponent().appendingPathComponent(".zip-part-\(part)").path
    }

    /// Deflates `entries` into a new zip at `path`; a failure is told as one of the zip at `shown`.
    private static func writePart(_ entries: [Entry], to path: String, reportedAs shown: String) throws(OutputError) {
        var code: Int32 = 0
        guard let archive = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code) else { throw failure(code: code, shown) }
        for entry in entries {
            let source: OpaquePointer?
            switch entry.contents {
            case .data(let data):
                // libzip frees the copy once the part is written.
                let buffer = malloc(max(data.count, 1))!
                data.copyBytes(to: buffer.assumingMemoryBound(to: UInt8.self), count: data.count)
                source = zip_source_buffer(archive, buffer, UInt64(data.count), 1)
                if source == nil { Glibc.free(buffer) }
            case .file(let file, let size): source = zip_source_file(archive, file.path, 0, Int64(size))
            case .copy: preconditionFailure("a copied entry is never in a part")
            }
            guard let source else { throw discard(archive, shown) }
            let index = zip_file_add(archive, entry.name, source, zip_flags_t(ZIP_FL_ENC_UTF_8))
            guard index >= 0 else {
                zip_source_free(source)
                throw discard(archive, shown)
            }
            guard zip_set_file_compression(archive, UInt64(index), ZIP_CM_DEFLATE, 1) == 0 else { throw discard(archive, shown) }
        }
        guard zip_close(archive) == 0 else { throw discard(archive, shown) }
    }

    /// Writes the container: every entry, in the order handed over, copied
    /// from its part or from the previous zip; then flushes it and renames
    /// it to its name. Gives its size and SHA-256.
    package func finish() throws -> (size: Int, digest: SHA256.Digest) {
        precondition(!finished, "a zip is finished once")
        finished = true
        try startPart()
        group.wait()
        if let failure = state.failure.withLock({ $0 }) { throw failure }
        let shown = url.path
        var code: Int32 = 0
        var opened: [OpaquePointer] = []
        defer { for archive in opened { zip_discard(archive) } }
        for part in 0..<parts {
            guard let archive = zip_open(partPath(part), ZIP_RDONLY, &code) else { throw Self.failure(code: code, shown) }
            opened.append(archive)
        }
        let unsynced = url.deletingLastPathComponent().appendingPathComponent(".unsynced-" + url.lastPathComponent).path
        guard let archive = zip_open(unsynced, ZIP_CREATE | ZIP_TRUNCATE, &code) else { throw Self.failure(code: code, shown) }
        for entry in placed {
            let from = entry.part < 0 ? previous!.archive : opened[Int(entry.part)]
            let index = UInt64(entry.index)
            guard let name = zip_get_name(from, index, zip_flags_t(ZIP_FL_ENC_RAW)),
                let source = zip_source_zip(archive, from, index, 0, 0, -1)
            else { throw Self.discard(archive, shown) }
            let added = zip_file_add(archive, name, source, zip_flags_t(ZIP_FL_ENC_UTF_8))
            guard added >= 0 else {
                zip_source_free(source)
                throw Self.discard(archive, shown)
            }
            // A regular file, 0644, at the memo's time; libzip writes no owner.
            guard zip_file_set_mtime(archive, UInt64(added), time_t(entry.modified), 0) == 0,
                zip_file_set_external_attributes(archive, UInt64(added), 0, UInt8(ZIP_OPSYS_UNIX), UInt32(0o100644) << 16) == 0
            else { throw Self.discard(archive, shown) }
        }
        guard zip_close(archive) == 0 else { throw Self.discard(archive, shown) }
        placed = []
        let written = try Self.flushAndHash(unsynced, shown: shown)
        guard rename(unsynced, url.path) == 0 else { throw OutputError(path: shown, reason: AtomicFile.lastError()) }
        for part in 0..<parts {
            guard unlink(partPath(part)) == 0 else { throw OutputError(path: partPath(part), reason: AtomicFile.lastError()) }
        }
        parts = 0
        return written
    }

    /// Reads the file at `path` once for its size and SHA-256 and flushes it to disk.
    private static func flushAndHash(_ path: String, shown: String) throws(OutputError) -> (size: Int, digest: SHA256.Digest) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw OutputError(path: shown, reason: AtomicFile.lastError()) }
        defer { close(fd) }
        let hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 1)
        defer { buffer.deallocate() }
        var size = 0
        while true {
            let count = read(fd, buffer.baseAddress!, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw OutputError(path: shown, reason: AtomicFile.lastError()) }
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            size += count
        }
        guard fsync(fd) == 0 else { throw OutputError(path: shown, reason: AtomicFile.lastError()) }
        return (size, hasher.finalize())
    }

    /// libzip's error on `archive`, told as one of the zip at `shown`, after discarding the archive.
    private static func discard(_ archive: OpaquePointer, _ shown: String) -> OutputError {
        let error = failure(zip_get_error(archive), shown)
        zip_discard(archive)
        return error
    }

    private static func failure(code: Int32, _ shown: String) -> OutputError {
        var error = zip_error_t()
        zip_error_init_with_code(&error, code)
        defer { zip_error_fini(&error) }
        return failure(&error, shown)
    }

    /// The system's words when the system failed, else libzip's own.
    private static func failure(_ error: UnsafeMutablePointer<zip_error_t>!, _ shown: String) -> OutputError {
        if zip_error_system_type(error) == ZIP_ET_SYS, zip_error_code_system(error) != 0 {
            return OutputError(path: shown, reason: String(cString: strerror(zip_error_code_system(error))))
        }
        return OutputError(path: shown, reason: String(cString: zip_error_strerror(error)))
    }
}

/// The previous run's `memos.zip`, opened to copy entries from: only when
/// its SHA-256 is the one that run recorded (so its compressed bytes are
/// the ones reckon wrote) and it was written with the same writer and
/// settings (`ZipBuilder.settings`).
package final class PreviousZip: @unchecked Sendable {
    fileprivate let archive: OpaquePointer

    /// Opens the zip at `url`, never through a link, when its SHA-256 is `digest`.
    package init?(_ url: URL, digest: SHA256.Digest) {
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        let hasher = SHA256()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Self.hash(fd, into: hasher), hasher.finalize() == digest,
            lseek(fd, 0, SEEK_SET) == 0
        else {
            close(fd)
            return nil
        }
        var code: Int32 = 0
        // libzip owns the descriptor from here, and reads the bytes just hashed.
        guard let archive = zip_fdopen(fd, ZIP_RDONLY, &code) else {
            close(fd)
            return nil
        }
        self.archive = archive
    }

    deinit { zip_discard(archive) }

    private static func hash(_ fd: Int32, into hasher: SHA256) -> Bool {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer.baseAddress!, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return false }
            if count == 0 { return true }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// The index of the entry named `name` when it is deflated and its
    /// CRC-32 and size in the central directory are those of `data`.
    package func entry(named name: String, holding data: Data) -> Int32? {
        let index = zip_name_locate(archive, name, zip_flags_t(ZIP_FL_ENC_RAW))
        guard index >= 0 else { return nil }
        var facts = zip_stat_t()
        zip_stat_init(&facts)
        guard zip_stat_index(archive, UInt64(index), 0, &facts) == 0, facts.comp_method == UInt16(ZIP_CM_DEFLATE),
            facts.size == UInt64(data.count)
        else { return nil }
        let crc = data.withUnsafeBytes { bytes in
            crc32(0, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), uInt(bytes.count))
        }
        return UInt32(crc) == facts.crc ? Int32(index) : nil
    }
}
