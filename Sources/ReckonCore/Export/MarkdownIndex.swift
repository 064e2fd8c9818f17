import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the newest run folder of a pipeline's export holds, kept beside
/// the run folders as `.reckon-markdown-index`: for each memo its
/// fingerprint (the SHA-256 of its entry in `memos.json`, which holds
/// everything its Markdown file is made from) and where that entry is, the
/// Markdown file's name, SHA-256 and inode, the memo's modification time and
/// archived state, and the identity of the memo file the run read. The next
/// run takes a memo whose file has the same identity whole, unread, and
/// reuses the Markdown file of every memo whose fingerprint and computed
/// name are unchanged, instead of rendering and writing it again.
///
/// The header names the run by the SHA-256 of its `manifest.json`, so an
/// index that does not belong to the folder `latest` points at is never
/// used, and seals the records by their SHA-256, so a damaged index is not
/// used at all. The records come twice: in export order, for a run to read
/// alongside its own memos, and then sorted by id, for it to read alongside
/// the listing, which comes in id order. Each is read one record at a time,
/// so memory does not grow with the number of memos, and the copy by id is
/// sorted by the run that writes it, while its zip is still being
/// deflated, rather than by the next run before it can start. Last come
/// the blocks of the run's zipped `memos.json` (`JSONBlocks`), for the next
/// run to copy those whose bytes it writes again.
package enum MarkdownIndex {
    /// The index's name in the runs' folder.
    package static let fileName = ".reckon-markdown-index"
    /// The first bytes of an index: its format, version 6.
    static let magic = Array("reckon-markdown-index 6\n".utf8)
    /// The magic, both renderers' versions, the run's manifest's SHA-256,
    /// the SHA-256 of its `memos.zip` and of the zip writer's settings as
    /// that manifest lists them (zeros without a zip), the read limits the
    /// run checked its memos against, where the records sorted by id start
    /// and where the blocks start, and the SHA-256 of those limits, every
    /// byte after the header, the zip's two digests and those two starts.
    package static let headerSize = magic.count + 8 + 8 + 32 + 32 + 32 + 8 + 8 + 8 + 8 + 32

    /// What the header holds for the zip writer's settings.
    static var zipSettingsDigest: SHA256.Digest { Array(ZipBuilder.settings.utf8).withUnsafeBytes { SHA256.digest(of: $0) } }

    /// One memo's Markdown file, as the index records it, with what lets
    /// the next run take the memo whole from this run without reading it.
    package struct Entry: Equatable {
        package var createdAt: Timestamp?
        package var id: MemoID
        var fingerprint: SHA256.Digest
        /// The file's path in the run folder (`markdown/…`).
        var path: String
        var digest: SHA256.Digest
        /// The file's inode when reckon wrote it (or linked it): a file
        /// replaced by another, even one with the same bytes, is not linked.
        var inode: UInt64
        /// The memo's modification time and whether it is archived.
        var modified: Timestamp
        var archived: Bool
        /// Where the memo's entry is in the run's `memos.json` (an empty
        /// range when the run wrote none).
        var json: Range<Int>
        /// The identity of the memo file this run read; nil when there was
        /// none that proves anything.
        var source: FileIdentity?

        func write(to record: inout Record) {
            record.add(createdAt)
            record.add(id)
            record.add(fingerprint)
            record.add(path)
            record.add(digest)
            record.add(inode)
            record.add(modified)
            record.add(archived)
            record.add(json.lowerBound)
            record.add(json.count)
            record.add(source)
        }

        package init(
            createdAt: Timestamp?, id: MemoID, fingerprint: SHA256.Digest, path: String, digest: SHA256.Digest, inode: UInt64,
            modified: Timestamp, archived: Bool, json: Range<Int>, source: FileIdentity?
        ) {
            self.createdAt = createdAt
            self.id = id
            self.fingerprint = fingerprint
            self.path = path
            self.digest = digest
            self.inode = inode
            self.modified = modified
            self.archived = archived
            self.json = json
            self.source = source
        }

        init(from reader: inout RecordReader) {
            let createdAt = reader.timestamp()
            let id = reader.id()
            let fingerprint = reader.digest()
            let path = reader.text() ?? ""
            let digest = reader.digest()
            let inode = reader.uint64()
            let modified = reader.timestamp() ?? Timestamp(seconds: 0)
            let archived = reader.flag()
            let start = max(0, reader.int())
            let count = min(max(0, reader.int()), Int.max - start)
            self.init(
                createdAt: createdAt, id: id, fingerprint: fingerprint, path: path, digest: digest, inode: inode,
                modified: modified, archived: archived, json: start..<start + count, source: reader.identity())
        }

        /// The memo's two Markdown names (`markdown/…`), made again from the
        /// recorded one, which is either; nil when it is neither shape.
        var names: (short: String, long: String)? {
            // The id spelled once: each spelling makes a string.
            let id = id.value
            for ending in [id + ".md", id.prefix(8) + ".md"] where path.hasSuffix(ending) {
                return MarkdownExport.fileNames(stem: String(path.dropLast(ending.count)), id: id)
            }
            return nil
        }
    }

    /// An entry in id order, as the index's second copy of its records is sorted.
    struct ByID: Spillable {
        var entry: Entry

        static func < (a: ByID, b: ByID) -> Bool { a.entry.id < b.entry.id }
        static func == (a: ByID, b: ByID) -> Bool { a.entry.id == b.entry.id }
        func write(to record: inout Record) { entry.write(to: &record) }
        init(entry: Entry) { self.entry = entry }
        init(from reader: inout RecordReader) { entry = Entry(from: &reader) }
    }

    /// The index of the run `latest` points at in `runs`, when there is one
    /// that belongs to it and was written by these renderers; nil otherwise,
    /// and then every memo is read and rendered. A run that reads memos
    /// under other `limits` takes none unread: each must be checked again.
    /// The previous zip is hashed on one of `workers`' threads.
    package static func previous(in runs: URL, limits: ReadLimits, on workers: Workers = Workers()) -> Previous? {
        let latest = runs.appendingPathComponent(ExportFolder.latestName)
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: latest.path),
            ExportFolder.runOrder(target) != nil
        else { return nil }
        let folder = runs.appendingPathComponent(target)
        // The run folder and its `markdown/` as they are, never through a link.
        guard let run = OpenFolder(folder.path), let markdown = OpenFolder(Exporter.markdownName, in: run) else { return nil }
        // Never waiting on a FIFO, and only a regular file.
        let fd = open(runs.appendingPathComponent(fileName).path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return nil
        }
        let json = openat(run.fd, Exporter.jsonName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        let previous = Previous(folder: folder, markdown: markdown, fd: fd, json: json)
        var cursor = Cursor(fd: fd, at: 0)
        guard let header = cursor.bytes(headerSize).map(Array.init), header.starts(with: magic) else { return nil }
        var reader = RecordReader(header[magic.count...])
        guard reader.uint64() == MarkdownExport.version, reader.uint64() == JSONExport.version,
            let manifest = try? Exporter.sizeAndDigest(of: folder.appendingPathComponent(Exporter.manifestName)),
            reader.digest() == manifest.1
        else { return nil }
        let zipDigest = reader.digest()
        if reader.digest() == zipSettingsDigest { previous.zipDigest = zipDigest }
        // A damaged index is not used at all.
        let zipBytes = header[(headerSize - 128)..<(headerSize - 64)]
        let limitBytes = header[(headerSize - 64)..<(headerSize - 48)]
        let startBytes = header[(headerSize - 48)..<(headerSize - 32)]
        let (sizeLimit, depthLimit, byIDStart, blocksStart) = (reader.int(), reader.int(), reader.int(), reader.int())
        previous.takesUnread = sizeLimit == Int(limits.memoSizeLimit) && depthLimit == limits.depthLimit
        let seal = reader.digest()
        let hasher = SHA256()
        limitBytes.withUnsafeBytes { hasher.update($0) }
        var size = headerSize
        while let chunk = cursor.rest() {
            chunk.withUnsafeBytes { hasher.update($0) }
            size += chunk.count
        }
        zipBytes.withUnsafeBytes { hasher.update($0) }
        startBytes.withUnsafeBytes { hasher.update($0) }
        guard hasher.finalize() == seal, (headerSize...size).contains(byIDStart), (byIDStart...size).contains(blocksStart) else { return nil }
        previous.starts = (byIDStart, blocksStart)
        // The zip is hashed on another core while the export is planned.
        if let zipDigest = previous.zipDigest {
            let url = folder.appendingPathComponent(Exporter.zipName)
            previous.openingZip = Pending(on: workers) { PreviousZip(url, digest: zipDigest) }
        }
        return previous
    }

    /// An index being read alongside the memos of a run, with the run's
    /// `memos.json`. Owns its descriptors; not `Sendable`.
    package final class Previous {
        /// The run folder the index describes.
        package let folder: URL
        /// Its `markdown/`, opened without following a link.
        let markdown: OpenFolder
        private let fd: Int32
        /// Its `memos.json`, opened without following a link (-1 when it has none).
        let json: Int32
        /// Whether its memos were read under this run's limits, so that one
        /// whose file is unchanged may be taken unread.
        package var takesUnread = false
        /// The SHA-256 of the run's `memos.zip` as its manifest lists it,
        /// when it was written with this reckon's zip writer and settings.
        fileprivate var zipDigest: SHA256.Digest?
        /// The run's `memos.zip`, when its bytes are the ones the run wrote
        /// (`zipDigest`): waits for it to be opened.
        package var zip: PreviousZip? { openingZip?.wait() }
        /// The run's `memos.zip` being opened, once the index is found sound.
        fileprivate var openingZip: Pending<PreviousZip?>?
        /// Where the records sorted by id start, after those in export
        /// order, and where the blocks start, after them.
        fileprivate var starts = (byID: headerSize, blocks: headerSize) {
            didSet { inOrder = Cursor(fd: fd, at: headerSize, end: starts.byID) }
        }
        /// The blocks of the run's zipped `memos.json`, with the zip that
        /// holds them, when that zip is the one the run wrote.
        package private(set) lazy var jsonBlocks: JSONBlocks.Previous? = zip.flatMap { zip in
            var cursor = Cursor(fd: fd, at: starts.blocks)
            var blocks: [SHA256.Digest: JSONBlocks.Block] = [:]
            while let bytes = cursor.record() {
                var reader = RecordReader(bytes)
                let block = JSONBlocks.Block(from: &reader)
                guard reader.readWhole else { return nil }
                blocks[block.digest] = block
            }
            return JSONBlocks.Previous(blocks: blocks, zip: zip)
        }
        /// The records in export order, read as the run asks for them.
        private var inOrder: Cursor
        private var pending: Entry?

        fileprivate init(folder: URL, markdown: OpenFolder, fd: Int32, json: Int32) {
            self.folder = folder
            self.markdown = markdown
            self.fd = fd
            self.json = json
            inOrder = Cursor(fd: fd, at: headerSize, end: headerSize)
        }

        deinit {
            close(fd)
            if json >= 0 { close(json) }
        }

        /// The record of the memo `id` created at `createdAt`, when the
        /// index holds one. Memos must be asked for in export order.
        package func entry(createdAt: Timestamp?, id: MemoID) -> Entry? {
            while let entry = pending ?? inOrder.next() {
                pending = entry
                if entry.id == id && entry.createdAt == createdAt { return entry }
                guard JSONExport.precedes(created: entry.createdAt, entry.id, created: createdAt, id) else { return nil }
                pending = nil
            }
            return nil
        }

        /// Every record in id order, one at a time, to be read alongside a
        /// listing, which comes in id order.
        package func byID() -> RecordsByID { RecordsByID(owner: self, cursor: Cursor(fd: fd, at: starts.byID, end: starts.blocks)) }

        /// Each memo's entry in the run's `memos.json` (open as `json`),
        /// when it still holds the bytes whose SHA-256 the index recorded as
        /// its fingerprint; nil for one that does not. Entries that lie one
        /// after another in the file, as a batch's do, are read together,
        /// up to 8 MiB in one `pread`, instead of one call each. Safe on any
        /// core, as the file is read at an offset.
        static func jsonEntries(_ entries: ArraySlice<Entry>, in json: Int32) -> [Data?] {
            func readable(_ entry: Entry) -> Bool { json >= 0 && !entry.json.isEmpty && entry.json.count < 1 << 30 }
            var found: [Data?] = []
            found.reserveCapacity(entries.count)
            var first = entries.startIndex
            while first < entries.endIndex {
                guard readable(entries[first]) else {
                    found.append(nil)
                    first += 1
                    continue
                }
                // The run: each entry after the one before it, all within 8 MiB of the first's start (the first alone may be larger).
                let start = entries[first].json.lowerBound
                var end = first + 1
                while end < entries.endIndex, readable(entries[end]), entries[end].json.lowerBound >= entries[end - 1].json.upperBound,
                    entries[end].json.upperBound - start <= 1 << 23
                {
                    end += 1
                }
                var bytes = [UInt8](repeating: 0, count: entries[end - 1].json.upperBound - start)
                let read = bytes.withUnsafeMutableBytes { pread(json, $0.baseAddress!, $0.count, off_t(start)) }
                for entry in entries[first..<end] {
                    // A file cut short gives the entries it still holds whole.
                    let range = (entry.json.lowerBound - start)..<(entry.json.upperBound - start)
                    let data = range.upperBound <= read ? Data(bytes[range]) : nil
                    found.append(data.flatMap { $0.withUnsafeBytes { SHA256.digest(of: $0) } == entry.fingerprint ? $0 : nil })
                }
                first = end
            }
            return found
        }
    }

    /// The index's records sorted by id, read one at a time; keeps the
    /// index open while it is read.
    package struct RecordsByID {
        fileprivate let owner: Previous
        fileprivate var cursor: Cursor

        /// The next record; nil at the end.
        package mutating func next() -> Entry? { cursor.next() }
    }

    /// Reads the index's records one at a time, each its length (4 bytes)
    /// and its fields, through a buffer filled 64 KiB at a time, up to
    /// `end`; stops there or at a record that was not written by this index
    /// (the rest is then not used).
    fileprivate struct Cursor {
        let fd: Int32
        /// Where the next read of the file starts, and where reading stops.
        private var offset: Int
        private let end: Int
        private var buffer: [UInt8] = []
        private var at = 0
        private var ended = false

        init(fd: Int32, at offset: Int, end: Int = .max) {
            self.fd = fd
            self.offset = offset
            self.end = end
        }

        mutating func next() -> Entry? {
            // The shortest record is 1 + 16 + 32 + 1 + 32 + 8 + 1 + 1 + 8 + 8 + 1
            // bytes; a record of another length, or one whose fields do not
            // fill it exactly, was not written by this index.
            guard let bytes = record(), bytes.count >= 109 else {
                ended = true
                return nil
            }
            var reader = RecordReader(bytes)
            let entry = Entry(from: &reader)
            guard reader.readWhole else {
                ended = true
                return nil
            }
            return entry
        }

        /// The next record's bytes (after its length); nil at the end, or
        /// at a record too long to be one this index wrote.
        mutating func record() -> ArraySlice<UInt8>? {
            guard !ended, let length = bytes(4) else {
                ended = true
                return nil
            }
            let count = length.reversed().reduce(0) { $0 << 8 | Int($1) }
            guard count < 1 << 16, let bytes = bytes(count) else {
                ended = true
                return nil
            }
            return bytes
        }

        /// The next `count` bytes; nil when the file ends first.
        mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
            while buffer.count - at < count {
                guard fill() else { return nil }
            }
            defer { at += count }
            return buffer[at..<(at + count)]
        }

        /// All the bytes buffered, or the next 64 KiB of the file; nil at its end.
        mutating func rest() -> ArraySlice<UInt8>? {
            guard at < buffer.count || fill() else { return nil }
            defer { at = buffer.count }
            return buffer[at...]
        }

        /// Reads up to 64 KiB more; false at the end or on a failed read.
        private mutating func fill() -> Bool {
            guard offset < end else { return false }
            var more = [UInt8](repeating: 0, count: min(1 << 16, end - offset))
            var read: Int
            repeat {
                read = more.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, $0.count, off_t(offset)) }
            } while read < 0 && errno == EINTR
            guard read > 0 else { return false }
            buffer = Array(buffer[at...]) + more[..<read]
            at = 0
            offset += read
            return true
        }
    }

    /// Writes a run's index, record by record in export order, to a
    /// temporary file in the runs' folder; `install` puts it in place once
    /// the run is published. Owns its descriptor; not `Sendable`.
    package final class Writer {
        package let url: URL
        private var fd: Int32
        private var buffer: [UInt8] = []
        /// The SHA-256 of the records so far, for the header.
        private let hasher = SHA256()
        /// The limits the run reads its memos under, as the header holds them.
        private let limitBytes: [UInt8]
        /// The records again, to be written sorted by id once all are in.
        private let byID: SpillSort<ByID>
        /// How many bytes of records are written or buffered.
        private var size = 0
        /// Where the records sorted by id start, once they are written.
        private var byIDStart: Int?
        /// The records being written again sorted by id, on another core.
        private var sorting: Pending<Result<Void, OutputError>>?
        /// The threads the copy by id is written on.
        private let workers: Workers

        /// Creates the temporary file at `url`, replacing one a dead run
        /// left; the copy by id is sorted `runLength` records at a time, on
        /// one of `workers`' threads.
        package init(url: URL, limits: ReadLimits, runLength: Int = spillRunLength, on workers: Workers = Workers()) throws(OutputError) {
            self.url = url
            self.workers = workers
            var bytes = Record()
            bytes.add(Int(limits.memoSizeLimit))
            bytes.add(limits.depthLimit)
            limitBytes = bytes.bytes
            unlink(url.path)
            fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
            buffer = [UInt8](repeating: 0, count: headerSize)
            size = headerSize
            byID = SpillSort(scratch: url.deletingLastPathComponent(), runLength: runLength)
            limitBytes.withUnsafeBytes { hasher.update($0) }
        }

        deinit { if fd >= 0 { close(fd) } }

        /// Adds a memo's record; records come in export order.
        package func append(_ entry: Entry) throws(OutputError) {
            try write(entry)
            try byID.append(ByID(entry: entry))
        }

        private func write(_ entry: Entry) throws(OutputError) {
            var record = Record()
            entry.write(to: &record)
            try write(record)
        }

        /// Writes one record: its length, then its bytes.
        private func write(_ record: Record) throws(OutputError) {
            withUnsafeBytes(of: UInt32(record.bytes.count).littleEndian) {
                hasher.update($0)
                buffer += $0
            }
            record.bytes.withUnsafeBytes { hasher.update($0) }
            buffer += record.bytes
            size += 4 + record.bytes.count
            if buffer.count >= 1 << 16 { try flush() }
        }

        /// Starts writing the records again, sorted by id, after those in
        /// export order, on another core, so that it overlaps the zip's
        /// deflate and the manifests; nothing may be asked of the index
        /// until `finish`, which waits for it.
        func startWritingByID() {
            nonisolated(unsafe) let index = self
            sorting = Pending(on: workers) { Result { () throws(OutputError) in try index.writeByID() } }
        }

        /// Writes the records again, sorted by id, after those in export
        /// order; nothing may be appended after. `finish` does it when it
        /// was not done.
        private func writeByID() throws(OutputError) {
            guard byIDStart == nil else { return }
            byIDStart = size
            let sorted = try byID.sorted()
            while let record = try sorted.next() { try write(record.entry) }
        }

        /// Writes the blocks of the run's zipped `memos.json` and the header,
        /// naming the run by its manifest's SHA-256 and sealing the records
        /// by theirs, and flushes the file to disk.
        package func finish(manifest: SHA256.Digest, zip: SHA256.Digest?, jsonBlocks: [JSONBlocks.Block] = []) throws(OutputError) {
            try waitForSorting()
            try writeByID()
            let blocksStart = size
            for block in jsonBlocks {
                var record = Record()
                block.write(to: &record)
                try write(record)
            }
            try flush()
            var zipBytes = Record()
            if let zip {
                zipBytes.add(zip)
                zipBytes.add(zipSettingsDigest)
            } else {
                zipBytes.bytes = [UInt8](repeating: 0, count: 64)
            }
            zipBytes.bytes.withUnsafeBytes { hasher.update($0) }
            var start = Record()
            start.add(byIDStart!)
            start.add(blocksStart)
            start.bytes.withUnsafeBytes { hasher.update($0) }
            var header = Record()
            header.bytes = magic
            header.add(UInt64(MarkdownExport.version))
            header.add(UInt64(JSONExport.version))
            header.add(manifest)
            header.bytes += zipBytes.bytes
            header.bytes += limitBytes
            header.bytes += start.bytes
            header.add(hasher.finalize())
            let written = header.bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress!, $0.count, 0) }
            guard written == header.bytes.count, fsync(fd) == 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
            close(fd)
            fd = -1
        }

        private func flush() throws(OutputError) {
            guard buffer.withUnsafeBytes({ writeAll(fd, $0) }) else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
            buffer.removeAll(keepingCapacity: true)
        }

        private func waitForSorting() throws(OutputError) {
            guard let sorting else { return }
            self.sorting = nil
            try sorting.wait().get()
        }

        /// Renames the finished index into place in `runs`.
        package func install(in runs: URL) throws(OutputError) {
            let target = runs.appendingPathComponent(fileName)
            guard rename(url.path, target.path) == 0 else { throw OutputError(path: target.path, reason: AtomicFile.lastError()) }
        }

        /// Removes the temporary file of a run that was not published.
        package func discard() {
            _ = sorting?.wait()
            unlink(url.path)
        }
    }
}
