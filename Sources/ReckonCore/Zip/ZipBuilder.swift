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
/// (`.zip-part-N` in the staging folder) on another core. `finish` then
/// writes the container once (`ZipContainer`): each entry's compressed
/// bytes are copied, not deflated again, from its part (or from the
/// previous run's zip) in the order handed over, so the bytes are the same
/// whatever the worker count. It is written under a staging name, flushed,
/// and renamed to its name.
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
            /// Bytes deflated elsewhere (`JSONBlocks`), waited for when the
            /// zip is finished, whole in a file that goes once copied.
            case deflated(JSONBlocks)
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
    package static let settings = "libzip \(String(cString: zip_libzip_version())), deflate level 1; \(JSONBlocks.settings)"

    /// Where an entry's compressed bytes come from: a part, the previous
    /// zip (`part == -1`) or a stream deflated elsewhere (`part == -2`,
    /// `index` in `deflated`); and the entry's time.
    private struct Placed {
        var part: Int32
        var index: Int32
        var modified: Int64
    }

    private let url: URL
    /// The previous run's zip, whose entries may be copied.
    let previous: PreviousZip?
    /// Where a test stops the process.
    private let checkpoints: Checkpoints
    /// The threads the parts are deflated on.
    private let workers: Workers
    private var placed: [Placed] = []
    private var deflated: [(name: String, stream: JSONBlocks)] = []
    /// Where the data of the entry deflated elsewhere starts in the zip, once it is finished.
    package private(set) var deflatedAt: UInt64?
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
    /// `process`: the workers, and where a test stops the process.
    package init(url: URL, previous: PreviousZip? = nil, process: ProcessSettings = ProcessSettings()) {
        self.url = url
        self.previous = previous
        checkpoints = process.checkpoints
        workers = process.threads
        slots = workers.threads
        free = DispatchSemaphore(value: max(slots, 1))
    }

    deinit {
        group.wait()
        for part in 0..<parts { unlink(partPath(part)) }
    }

    /// Whether every core is deflating a part: then the zip sets the pace,
    /// and its caller had best leave the cores to it.
    package var isBehind: Bool { !workers.one && state.busy.load(ordering: .relaxed) >= slots }

    /// Hands entries over, in order. Throws what stopped a part, if something did.
    package func add(_ entries: [Entry]) throws {
        for entry in entries {
            try ZipEntryRules.checkName(entry.name)
            let modified = Int64(min(max(entry.modified, ZipEntryRules.earliest), ZipEntryRules.latest).seconds)
            switch entry.contents {
            case .copy(let index):
                placed.append(Placed(part: -1, index: index, modified: modified))
                copied += 1
            case .deflated(let stream):
                placed.append(Placed(part: -2, index: Int32(deflated.count), modified: modified))
                deflated.append((entry.name, stream))
            case .data(let data):
                placed.append(Placed(part: Int32(parts), index: Int32(pending.count), modified: modified))
                pending.append(entry)
                pendingBytes += data.count
            case .file(_, let size):
                placed.append(Placed(part: Int32(parts), index: Int32(pending.count), modified: modified))
                pending.append(entry)
                pendingBytes += size
            }
            checkpoints.at("zip-entry-written")
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
        workers.async(group: group) { [free, state] in
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

    /// How a part's name starts.
    package static let partPrefix = ".zip-part-"

    private func partPath(_ part: Int) -> String {
        url.deletingLastPathComponent().appendingPathComponent(Self.partPrefix + String(part)).path
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
            case .copy, .deflated: preconditionFailure("a copied entry is never in a part")
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

    /// Writes the container: every entry, in the order handed over, its
    /// compressed bytes copied from its part or from the previous zip, and
    /// the central directory after them (gathered in a side file meanwhile);
    /// then flushes it and renames it to its name. Gives its size and SHA-256.
    package func finish() throws -> (size: Int, digest: SHA256.Digest) {
        precondition(!finished, "a zip is finished once")
        finished = true
        try startPart()
        group.wait()
        if let failure = state.failure.withLock({ $0 }) { throw failure }
        let shown = url.path
        let folder = url.deletingLastPathComponent()
        let output = try OutputFile(folder.appendingPathComponent(".unsynced-" + url.lastPathComponent))
        let central = try OutputFile(folder.appendingPathComponent(".zip-central.tmp"))
        // The parts are read in turn, one open at a time.
        var part: (number: Int32, archive: OpaquePointer)?
        defer { if let part { zip_discard(part.archive) } }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var previousEntries = previous.map(PreviousZip.Reader.init)
        for entry in placed {
            if entry.part == -2 {
                try appendDeflated(entry, to: output, central: central, shown: shown)
                continue
            }
            var (number, index) = (entry.part, UInt64(entry.index))
            if entry.part == -1 {
                let listed = previous!.entries[Int(entry.index)]
                if let (name, bytes) = try? previousEntries!.compressedBytes(of: entry.index) {
                    let record = ZipContainer.Record(
                        name: name, method: listed.method, modified: entry.modified, crc: listed.crc, size: listed.size,
                        compressedSize: listed.compressedSize, offset: UInt64(output.size))
                    try output.write(Data(record.localHeader()))
                    try bytes.withUnsafeBytes { bytes in Result { () throws(OutputError) in try output.write(bytes) } }.get()
                    try central.write(Data(record.centralRecord()))
                    continue
                }
                // Its local header does not lie where the directory says:
                // deflated again from the file the export holds, in a part of its own.
                copied -= 1
                (number, index) = (Int32(parts), 0)
                parts += 1
                let file = folder.appending(path: listed.name, directoryHint: .notDirectory)
                try Self.writePart(
                    [Entry(name: listed.name, modified: ZipEntryRules.earliest, contents: .file(file, size: Int(listed.size)))],
                    to: partPath(Int(number)), reportedAs: shown)
            }
            if part?.number != number {
                if let part { zip_discard(part.archive) }
                part = nil
                var code: Int32 = 0
                guard let archive = zip_open(partPath(Int(number)), ZIP_RDONLY, &code) else { throw Self.failure(code: code, shown) }
                part = (number, archive)
            }
            try copyEntry(index, of: part!.archive, modified: entry.modified, to: output, central: central, buffer: &buffer, shown: shown)
        }
        let directory = (offset: UInt64(output.size), size: UInt64(central.size), count: UInt64(placed.count))
        _ = try central.finish()
        try Exporter.copy(central.url, into: output)
        guard unlink(central.url.path) == 0 else { throw OutputError(path: central.url.path, reason: AtomicFile.lastError()) }
        try output.write(Data(ZipContainer.end(of: directory)))
        let digest = try output.finish(sync: true)
        guard rename(output.url.path, url.path) == 0 else { throw OutputError(path: shown, reason: AtomicFile.lastError()) }
        placed = []
        try removeParts(shown: shown)
        return (output.size, digest)
    }

    /// Appends `memos.json`, deflated on its own stream, to `output`, and
    /// its record to `central`.
    private func appendDeflated(_ entry: Placed, to output: OutputFile, central: OutputFile, shown: String) throws {
        let name = deflated[Int(entry.index)].name
        let stream = try deflated[Int(entry.index)].stream.finished()
        let record = ZipContainer.Record(
            name: Array(name.utf8), method: UInt16(ZIP_CM_DEFLATE), modified: entry.modified, crc: stream.crc, size: UInt64(stream.size),
            compressedSize: UInt64(stream.compressedSize), offset: UInt64(output.size))
        try output.write(Data(record.localHeader()))
        deflatedAt = UInt64(output.size)
        try Exporter.copy(stream.url, into: output)
        guard UInt64(output.size) - deflatedAt! == record.compressedSize else {
            throw OutputError(path: shown, reason: "memos.json's compressed bytes changed while they were copied")
        }
        try central.write(Data(record.centralRecord()))
    }

    /// Copies the entry at `index` of the part `from`, its bytes as they
    /// are compressed, to `output`, and its record to `central`.
    private func copyEntry(
        _ index: UInt64, of from: OpaquePointer, modified: Int64, to output: OutputFile, central: OutputFile, buffer: inout [UInt8], shown: String
    ) throws {
        var facts = zip_stat_t()
        zip_stat_init(&facts)
        guard zip_stat_index(from, index, 0, &facts) == 0, let name = zip_get_name(from, index, zip_flags_t(ZIP_FL_ENC_RAW)) else {
            throw Self.failure(zip_get_error(from), shown)
        }
        var record = ZipContainer.Record(
            name: Array(UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: strlen(name))),
            method: facts.comp_method, modified: modified, crc: facts.crc, size: facts.size, compressedSize: facts.comp_size,
            offset: UInt64(output.size))
        try output.write(Data(record.localHeader()))
        guard let file = zip_fopen_index(from, index, zip_flags_t(ZIP_FL_COMPRESSED)) else { throw Self.failure(zip_get_error(from), shown) }
        defer { zip_fclose(file) }
        var copied: UInt64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { zip_fread(file, $0.baseAddress, UInt64($0.count)) }
            guard count >= 0 else { throw Self.failure(zip_file_get_error(file), shown) }
            if count == 0 { break }
            try output.write(Data(buffer[..<Int(count)]))
            copied += UInt64(count)
        }
        guard copied == facts.comp_size else { throw OutputError(path: shown, reason: "an entry's compressed bytes were cut short") }
        record.compressedSize = copied
        try central.write(Data(record.centralRecord()))
    }

    /// Removes the parts the container was copied from.
    private func removeParts(shown: String) throws {
        for number in 0..<parts {
            guard unlink(partPath(number)) == 0 else {
                throw OutputError(path: shown, reason: "its part \(Self.partPrefix)\(number) could not be removed: \(AtomicFile.lastError())")
            }
        }
        parts = 0
        for (_, stream) in deflated {
            let part = try stream.finished().url
            guard unlink(part.path) == 0 else {
                throw OutputError(path: shown, reason: "its part \(part.lastPathComponent) could not be removed: \(AtomicFile.lastError())")
            }
        }
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
/// settings (`ZipBuilder.settings`). Its central directory is read once,
/// by reckon's own reader, and entries are then read at offsets (`pread`),
/// so any core may ask.
package final class PreviousZip: Sendable {
    /// What the central directory says of one entry.
    struct Listed: Sendable {
        var name: String
        var method: UInt16
        var crc: UInt32
        var size: UInt64
        var compressedSize: UInt64
        var headerOffset: UInt64
    }

    private let file: ZipFile
    /// Where the central directory starts: every entry ends before it.
    private let directoryStart: UInt64
    /// Every entry, in the directory's order.
    let entries: [Listed]
    /// The place in `entries` of the first entry of each name.
    private let indexByName: [String: Int32]

    /// Opens the zip at `url`, never through a link, when its SHA-256 is `digest`.
    package init?(_ url: URL, digest: SHA256.Digest) {
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        let hasher = SHA256()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
            (try? Exporter.readChunks(of: fd, path: url.path) { hasher.update($0) }) != nil, hasher.finalize() == digest
        else {
            close(fd)
            return nil
        }
        // The directory is read from the same descriptor as the bytes just hashed.
        file = ZipFile(descriptor: fd, size: UInt64(info.st_size))
        var entries: [Listed] = []
        guard let end = try? CentralDirectoryEnd.read(file),
            (try? CentralRecord.forEach(in: file, end) { record in
                guard let wide = try? record.wide(), let name = String(validating: record.name, as: UTF8.self) else { return }
                entries.append(
                    Listed(
                        name: name, method: record.method, crc: record.crc32, size: wide.uncompressedSize,
                        compressedSize: wide.compressedSize, headerOffset: wide.localHeaderOffset))
            }) != nil, UInt64(entries.count) == end.count
        else { return nil }
        directoryStart = end.offset
        indexByName = Dictionary(zip(entries.map(\.name), entries.indices.map { Int32($0) }), uniquingKeysWith: { first, _ in first })
        self.entries = entries
    }

    /// The `count` bytes at `offset`; nil when the file does not hold them all.
    package func bytes(at offset: UInt64, count: Int) -> Data? {
        guard count >= 0, count < 1 << 30, offset < UInt64(Int64.max) else { return nil }
        var data = Data(count: count)
        guard data.withUnsafeMutableBytes({ file.read(into: $0, at: offset) }) else { return nil }
        return data
    }

    /// The index of the entry named `name` when it is deflated and its
    /// CRC-32 and size in the central directory are those of `data`.
    package func entry(named name: String, holding data: Data) -> Int32? {
        guard let index = indexByName[name], case let listed = entries[Int(index)], listed.method == UInt16(ZIP_CM_DEFLATE),
            listed.size == UInt64(data.count)
        else { return nil }
        let crc = data.withUnsafeBytes { bytes in
            crc32(0, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), uInt(bytes.count))
        }
        return UInt32(crc) == listed.crc ? index : nil
    }

    /// Reads the previous zip's entries, asked for in the order they lie in
    /// it, through a window of 4 MiB that moves forward: one read for many
    /// small entries. Owned by one caller.
    struct Reader {
        let zip: PreviousZip
        private var window: [UInt8] = []
        private var windowStart: UInt64 = 0

        init(_ zip: PreviousZip) { self.zip = zip }

        /// The name and compressed bytes of entry `index`, found after its
        /// local header, which must give its name, method, CRC-32 and sizes
        /// as the directory does, and say that no data descriptor follows.
        mutating func compressedBytes(of index: Int32) throws(ZipStructureError) -> (name: [UInt8], bytes: ArraySlice<UInt8>) {
            let listed = zip.entries[Int(index)]
            let name = Array(listed.name.utf8)
            let header = Array(try bytes(listed.headerOffset, count: 30 + name.count))
            /// A size as the header holds it: itself, or all ones when it is in a zip64 field.
            func holds(_ field: UInt32, _ size: UInt64) -> Bool { UInt64(field) == size || field == 0xFFFF_FFFF }
            guard header.hasSignature((3, 4), at: 0), header.le16(6) & 0x0008 == 0, header.le16(8) == listed.method,
                header.le32(14) == listed.crc, holds(header.le32(18), listed.compressedSize), holds(header.le32(22), listed.size),
                Int(header.le16(26)) == name.count, header[30...].elementsEqual(name)
            else { throw ZipStructureError(words: "the local header of \(listed.name) does not give it as the central directory does") }
            return (name, try bytes(listed.headerOffset + 30 + UInt64(name.count) + UInt64(header.le16(28)), count: Int(listed.compressedSize)))
        }

        /// The `count` bytes at `offset`, all before the central directory.
        private mutating func bytes(_ offset: UInt64, count: Int) throws(ZipStructureError) -> ArraySlice<UInt8> {
            guard offset <= zip.directoryStart, UInt64(count) <= zip.directoryStart - offset else {
                throw ZipStructureError(words: "an entry runs into the central directory, at byte \(zip.directoryStart)")
            }
            if offset < windowStart || offset + UInt64(count) > windowStart + UInt64(window.count) {
                windowStart = offset
                window = try zip.file.bytes(Int(max(UInt64(count), min(4 << 20, zip.directoryStart - offset))), at: offset, "an entry")
            }
            let from = Int(offset - windowStart)
            return window[from..<(from + count)]
        }
    }
}

/// The zip container around entries deflated elsewhere (APPNOTE 6.3):
/// local headers, the central directory and its end records, zip64 where
/// a size, an offset or the count needs it. libzip holds every entry it
/// adds until the zip is closed (about 70 MB more at 100,000 entries), so
/// the container is written here, one entry at a time, while libzip
/// deflates the parts and reads entries' compressed bytes back. Every
/// field is fixed or comes from the entry, so the same entries give the
/// same bytes.
enum ZipContainer {
    /// One entry's facts, as both its headers give them.
    struct Record {
        var name: [UInt8]
        var method: UInt16
        /// Seconds since 1970, written as a DOS time in UTC.
        var modified: Int64
        var crc: UInt32
        var size: UInt64
        var compressedSize: UInt64
        /// Where its local header starts.
        var offset: UInt64

        /// Whether a size needs zip64's 8 bytes.
        private var largeSizes: Bool { size >= 0xFFFF_FFFF || compressedSize >= 0xFFFF_FFFF }
        private var flags: UInt16 { name.allSatisfy { $0 < 0x80 } ? 0 : 0x0800 }
        private var versionNeeded: UInt16 { largeSizes || offset >= 0xFFFF_FFFF ? 45 : 20 }

        /// The DOS time and date of `modified`, in UTC.
        private var dosTime: (time: UInt16, date: UInt16) {
            var seconds = time_t(modified)
            var fields = tm()
            gmtime_r(&seconds, &fields)
            let date = (Int(fields.tm_year) - 80) << 9 | Int(fields.tm_mon + 1) << 5 | Int(fields.tm_mday)
            let time = Int(fields.tm_hour) << 11 | Int(fields.tm_min) << 5 | Int(fields.tm_sec) / 2
            return (UInt16(time), UInt16(date))
        }

        func localHeader() -> [UInt8] {
            var bytes = Bytes()
            bytes.add32(0x0403_4b50)
            bytes.add16(versionNeeded)
            common(&bytes, sizesInZip64: largeSizes)
            bytes.add16(UInt16(name.count))
            bytes.add16(largeSizes ? 20 : 0)
            bytes.data += name
            if largeSizes {
                bytes.add16(0x0001)
                bytes.add16(16)
                bytes.add64(size)
                bytes.add64(compressedSize)
            }
            return bytes.data
        }

        func centralRecord() -> [UInt8] {
            let large = [size, compressedSize, offset].filter { $0 >= 0xFFFF_FFFF }
            var bytes = Bytes()
            bytes.add32(0x0201_4b50)
            bytes.add16(3 << 8 | 63)  // made on Unix, by APPNOTE 6.3
            bytes.add16(versionNeeded)
            common(&bytes, sizesInZip64: false)
            bytes.add16(UInt16(name.count))
            bytes.add16(large.isEmpty ? 0 : UInt16(4 + 8 * large.count))
            bytes.add16(0)  // no comment
            bytes.add16(0)  // disk 0
            bytes.add16(0)  // internal attributes
            bytes.add32(UInt32(0o100644) << 16)  // a regular file, 0644
            bytes.add32(UInt32(min(offset, 0xFFFF_FFFF)))
            bytes.data += name
            if !large.isEmpty {
                bytes.add16(0x0001)
                bytes.add16(UInt16(8 * large.count))
                for value in large { bytes.add64(value) }
            }
            return bytes.data
        }

        /// Flags, method, time, CRC-32 and the sizes (all ones where zip64 holds them).
        private func common(_ bytes: inout Bytes, sizesInZip64: Bool) {
            bytes.add16(flags)
            bytes.add16(method)
            let (time, date) = dosTime
            bytes.add16(time)
            bytes.add16(date)
            bytes.add32(crc)
            bytes.add32(sizesInZip64 ? 0xFFFF_FFFF : UInt32(min(compressedSize, 0xFFFF_FFFF)))
            bytes.add32(sizesInZip64 ? 0xFFFF_FFFF : UInt32(min(size, 0xFFFF_FFFF)))
        }
    }

    /// The end records of a central directory: zip64's record and locator
    /// first when a number does not fit the plain record, which then holds
    /// all ones in its place.
    static func end(of directory: (offset: UInt64, size: UInt64, count: UInt64)) -> [UInt8] {
        var bytes = Bytes()
        if directory.count >= 0xFFFF || directory.size >= 0xFFFF_FFFF || directory.offset >= 0xFFFF_FFFF {
            let recordAt = directory.offset + directory.size
            bytes.add32(0x0606_4b50)
            bytes.add64(44)
            bytes.add16(3 << 8 | 63)
            bytes.add16(45)
            bytes.add32(0)
            bytes.add32(0)
            bytes.add64(directory.count)
            bytes.add64(directory.count)
            bytes.add64(directory.size)
            bytes.add64(directory.offset)
            bytes.add32(0x0706_4b50)
            bytes.add32(0)
            bytes.add64(recordAt)
            bytes.add32(1)
        }
        bytes.add32(0x0605_4b50)
        bytes.add16(0)
        bytes.add16(0)
        bytes.add16(UInt16(min(directory.count, 0xFFFF)))
        bytes.add16(UInt16(min(directory.count, 0xFFFF)))
        bytes.add32(UInt32(min(directory.size, 0xFFFF_FFFF)))
        bytes.add32(UInt32(min(directory.offset, 0xFFFF_FFFF)))
        bytes.add16(0)  // no comment
        return bytes.data
    }

    /// Little-endian fields, appended in order.
    private struct Bytes {
        var data: [UInt8] = []
        mutating func add16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { data += $0 } }
        mutating func add32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { data += $0 } }
        mutating func add64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { data += $0 } }
    }
}
