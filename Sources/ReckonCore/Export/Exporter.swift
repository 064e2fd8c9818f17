import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes one side's memos as `memos.json`, `markdown/` and `memos.zip` into a
/// staging folder, streaming: each memo is read, written and let go. What is
/// noted per memo (its id, times, file names, size and digest) is sorted
/// through files in the staging folder, so memory does not grow with the side.
package struct Exporter {
    /// The side's store, which lists and reads its memos.
    package let store: any MemoStore
    /// How many values a sort holds before it spills a run to the staging folder.
    package var sortRunLength = spillRunLength
    /// The previous run's index, whose Markdown files are reused for the
    /// memos that did not change; nil renders every file.
    package var previous: MarkdownIndex.Previous?
    /// Where this export's index is written, for the next run; nil writes none.
    package var index: MarkdownIndex.Writer?
    /// Whether a reused file is hard-linked (else copied, as on a file system without links).
    package var linksReusedFiles = true
    /// The pipeline whose run this export is, named in the manifest; nil for `reckon export`.
    package var pipeline: String?
    /// What the process decides for the export (workers, test checkpoints).
    package var process: ProcessSettings

    package init(store: any MemoStore, process: ProcessSettings = ProcessSettings()) {
        self.store = store
        self.process = process
    }

    /// The names an export folder holds.
    package static let jsonName = "memos.json"
    package static let markdownName = "markdown"
    package static let zipName = "memos.zip"
    package static let manifestName = "manifest.json"

    /// A memo to export, how its file's name spells its id and when it was
    /// last modified, in export order; with its file's identity, and whether
    /// that file is the one the previous run read.
    struct Planned: Spillable {
        var createdAt: Timestamp?
        var id: MemoID
        var spelledAs: IDSpelling
        var modified: Timestamp
        var source: FileIdentity?
        /// Whether the memo is taken whole from the previous run, unread.
        var unchanged: Bool

        static func < (a: Planned, b: Planned) -> Bool { JSONExport.precedes(created: a.createdAt, a.id, created: b.createdAt, b.id) }

        func write(to record: inout Record) {
            record.add(createdAt)
            record.add(id)
            spelledAs.write(to: &record)
            record.add(modified)
            record.add(source)
            record.add(unchanged)
        }

        init(createdAt: Timestamp?, id: MemoID, spelledAs: IDSpelling, modified: Timestamp, source: FileIdentity?, unchanged: Bool) {
            self.createdAt = createdAt
            self.id = id
            self.spelledAs = spelledAs
            self.modified = modified
            self.source = source
            self.unchanged = unchanged
        }

        init(from reader: inout RecordReader) {
            self.init(
                createdAt: reader.timestamp(), id: reader.id(), spelledAs: IDSpelling(from: &reader), modified: reader.timestamp()!,
                source: reader.identity(), unchanged: reader.flag())
        }
    }

    /// How many memos are read at a time, and how many of those one core
    /// takes at a time.
    package var batchSize = 1024
    package var chunkSize = 64

    /// How long a memo's body is, in bytes, from which it is `streamed`.
    static let streamedBytes = 4 << 20

    /// One file written: its path in the export folder, and what the
    /// manifest and the zip say of it; in the order of the paths' bytes.
    package struct Written: Spillable, Sendable {
        var path: String
        var size: Int
        var digest: SHA256.Digest
        var modified: Timestamp

        var record: ExportManifest.File { .init(path: path, size: size, sha256: digest.hex) }

        package static func < (a: Written, b: Written) -> Bool { utf8Precedes(a.path, b.path) }

        package func write(to record: inout Record) {
            record.add(path)
            record.add(size)
            record.add(digest)
            record.add(modified)
        }

        init(path: String, size: Int, digest: SHA256.Digest, modified: Timestamp) {
            self.path = path
            self.size = size
            self.digest = digest
            self.modified = modified
        }

        package init(from reader: inout RecordReader) {
            self.init(path: reader.text()!, size: reader.int(), digest: reader.digest(), modified: reader.timestamp()!)
        }
    }

    /// Exports `side`, already listed, into `staging` (an empty, existing
    /// folder). Soft-deleted memos are never exported; archived ones only
    /// when asked; an id held twice (two files or two index entries) never.
    /// Only the formats asked for are left in `staging`, beside a
    /// `manifest.json` that lists them.
    package func export(
        _ side: SideListing, formats: [ExportFormat], includeArchived: Bool, into staging: URL,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> ExportSummary {
        // A deep check read every memo's summary already: the export reads each memo once more, to write it.
        try export(formats: formats, includeArchived: includeArchived, into: staging, progress: progress, known: side.memos) { add in
            for (id, entry) in side.entries.pairs { try add(id, entry, side.files[id]) }
            return side.problems
        }
    }

    /// Lists the side at `spec` and exports it in one go, holding nothing
    /// per memo: the listing and both export orders are sorted through files
    /// in `staging`. Returns the listing (its status and problems) and, unless
    /// it failed, what was exported. A side whose index cannot be used is
    /// rebuilt from its memo files in memory first.
    package func export(
        formats: [ExportFormat], includeArchived: Bool, into staging: URL,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> (SideListing, ExportSummary?) {
        struct ListingStopped: Error {}
        var listing = SideListing(spec: store.spec)
        do {
            let summary = try export(formats: formats, includeArchived: includeArchived, into: staging, progress: progress) { add in
                listing = try store.list(scratch: staging) { id, entry, file in
                    if let entry { try add(id, entry, file) }
                }
                if listing.status == .failed || listing.rebuiltFromMemoFiles { throw ListingStopped() }
                return listing.problems
            }
            return (listing, summary)
        } catch is ListingStopped {
            guard listing.status != .failed else { return (listing, nil) }
            let side = store.load(deep: false)
            return (side, try export(side, formats: formats, includeArchived: includeArchived, into: staging, progress: progress))
        }
    }

    /// Exports the memos `listMemos` hands over (each index entry with its
    /// file's spelling when it has a file, in any order; then it gives the
    /// side's problems, paths as shown): streaming, each memo read, written
    /// and let go. Markdown is written only for `markdown` or `zip`, and
    /// `memos.json` only for `json` or `zip`; what only the zip needed is
    /// removed from `staging` before the manifest is written.
    private func export(
        formats: [ExportFormat], includeArchived: Bool, into staging: URL, progress: (Int, Int) -> Void,
        known: IDMap<MemoSummary> = IDMap(), listMemos: ((MemoID, IndexEntry, IDSpelling?) throws -> Void) throws -> [Problem]
    ) throws -> ExportSummary {
        var run = Run(self, formats: formats, includeArchived: includeArchived, staging: staging)
        let plan = try run.plan(known: known, listMemos: listMemos)
        let outputs = try run.writeMemos(plan, progress: progress)
        // A memo the disk failed to give is not left out: the export fails,
        // so the earlier one stays, and the next run exports it whole.
        if let trouble = run.diskTrouble { throw ReadFailure(message: "\(trouble.path): \(trouble.message)") }
        return try run.finish(plan, outputs)
    }

    /// Makes an exported file read-only (0444), so that a hard link to it
    /// from a later run can never make this run editable through that one.
    static func makeReadOnly(_ url: URL) throws(OutputError) {
        guard chmod(url.path, 0o444) == 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
    }

    /// A regular file's size and SHA-256, read once; a link is not followed.
    package static func sizeAndDigest(of url: URL) throws(OutputError) -> (Int, SHA256.Digest) {
        let fd: Int32
        do { fd = try openForReading(atPath: url.path) } catch { throw OutputError(path: url.path, reason: error.message) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw OutputError(path: url.path, reason: "is not a regular file") }
        let hasher = SHA256()
        let size = try readChunks(of: fd, path: url.path) { hasher.update($0) }
        return (size, hasher.finalize())
    }

    /// Reads `fd` to its end, handing each chunk of up to 64 KiB to `chunk`;
    /// gives how many bytes it read. A failed read is told as one of `path`.
    static func readChunks(
        of fd: Int32, path: String,
        _ chunk: (UnsafeRawBufferPointer) throws(OutputError) -> Void
    ) throws(OutputError) -> Int {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { buffer.deallocate() }
        var size = 0
        while true {
            let count = read(fd, buffer.baseAddress!, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw OutputError(path: path, reason: AtomicFile.lastError()) }
            if count == 0 { return size }
            try chunk(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            size += count
        }
    }

    /// Writes the manifest: `manifest` with the files `list` hands over
    /// (each with where it is) as its file list, streamed one file record
    /// at a time. Returns its size and SHA-256.
    ///
    /// `list` may hand over, once, a record that is not known yet (`later`):
    /// its place in the list is kept, the records after it go to a side file
    /// meanwhile, and it is asked for when the list is done. So the manifest
    /// is written while, say, the zip it lists is still being deflated.
    package static func writeManifest(
        _ manifest: ExportManifest, to url: URL,
        list: (
            _ record: (ExportManifest.Place, Written) throws -> Void,
            _ later: (ExportManifest.Place, @escaping () throws -> Written) throws -> Void
        ) throws -> Void
    ) throws -> (size: Int, digest: SHA256.Digest) {
        guard case .object(var fields) = try JSONValue(encoding: manifest) else {
            throw OutputError(path: url.path, reason: "the manifest is not an object")
        }
        fields["files"] = nil
        let output = try OutputFile(url)
        var writer = JSONWriter()
        /// The record asked for at the end, with the writer as it stood at its place.
        var pending: (place: ExportManifest.Place, produce: () throws -> Written, writer: JSONWriter)?
        /// Where the records after the pending one go until it is known.
        var rest: OutputFile?
        func append(_ place: ExportManifest.Place, _ file: Written, with writer: inout JSONWriter) {
            // The record's keys in their sorted order, written without building a value.
            writer.beginObject()
            writer.key("in")
            writer.string(place.rawValue)
            writer.key("path")
            writer.string(file.path)
            writer.key("sha256")
            writer.string(file.digest.hex)
            writer.key("size")
            writer.value(.integer(file.size))
            writer.endObject()
        }
        writer.beginObject()
        for key in (Array(fields.keys) + ["files"]).sorted() {
            writer.key(key)
            guard key == "files" else {
                writer.value(fields[key]!)
                continue
            }
            writer.beginArray()
            try (rest ?? output).write(writer.take())
            try list(
                { place, file in
                    append(place, file, with: &writer)
                    try (rest ?? output).write(writer.take())
                },
                { place, produce in
                    precondition(pending == nil, "one record at most is written later")
                    pending = (place, produce, writer)
                    // A stand-in moves the writer past the record; its bytes are dropped.
                    append(place, Written(path: "", size: 0, digest: SHA256().finalize(), modified: ZipEntryRules.earliest), with: &writer)
                    _ = writer.take()
                    rest = try OutputFile(URL(fileURLWithPath: url.path + ".rest.tmp"))
                })
            writer.endArray()
        }
        writer.endObject()
        try (rest ?? output).write(writer.take() + [0x0A])
        if let pending, let rest {
            var held = pending.writer
            append(pending.place, try pending.produce(), with: &held)
            try output.write(held.take())
            _ = try rest.finish()
            try Self.copy(rest.url, into: output)
            unlink(rest.url.path)
        }
        let digest = try output.finish()
        return (output.size, digest)
    }

    /// Appends the bytes of the file at `url` to `output`.
    static func copy(_ url: URL, into output: OutputFile) throws(OutputError) {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw OutputError(path: url.path, reason: AtomicFile.lastError()) }
        defer { close(fd) }
        _ = try readChunks(of: fd, path: url.path) { (bytes) throws(OutputError) in try output.write(Data(bytes)) }
    }
}
