import Foundation

/// What an export wrote: `manifest.json` in the export folder and in the zip.
public struct ExportManifest: Sendable, Equatable, Codable {
    public struct Source: Sendable, Equatable, Codable {
        public var name: String
        public var label: String
        public var path: String
    }

    public struct File: Sendable, Equatable, Codable {
        public var path: String
        public var size: Int
        public var sha256: String
    }

    public struct Missing: Sendable, Equatable, Codable {
        public var id: MemoID
        public var path: String
        public var reason: String
    }

    public var generator = "reckon"
    public var reckonVersion = Reckon.version
    public var schemaVersion = 1
    public var source: Source
    /// The newest modification time among the exported memos: the export's
    /// time that depends on its input only, so the same input gives the same bytes.
    public var exportedAt: Timestamp?
    public var includeArchived: Bool
    public var formats: [ExportFormat]
    /// The memos exported, Active and Archived.
    public var counts: MemoCounts
    /// `memos.json` and every Markdown file, each with its size and SHA-256.
    public var files: [File]
    /// Memos that should have been exported but could not be read.
    public var missing: [Missing]
}

/// What an export wrote, in short: the manifest's facts without its list of
/// files (that list is in `manifest.json`), and the totals a report shows.
public struct ExportSummary: Sendable, Equatable {
    public var formats: [ExportFormat]
    public var exportedAt: Timestamp?
    public var counts: MemoCounts
    public var missing: [ExportManifest.Missing]
    /// `memos.json`'s size and SHA-256.
    public var json: ExportManifest.File
    /// The sizes of all Markdown files together.
    public var markdownBytes: Int
}

/// Writes one side's memos as `memos.json`, `markdown/` and `memos.zip` into a
/// staging folder, streaming: each memo is read, written and let go. What is
/// noted per memo (its id, times, file names, size and digest) is sorted
/// through files in the staging folder, so memory does not grow with the side.
public struct Exporter {
    /// The side's store, which lists and reads its memos.
    public let store: any MemoStore
    /// How many values a sort holds before it spills a run to the staging folder.
    package var sortRunLength = 8192

    public init(store: any MemoStore) {
        self.store = store
    }

    /// The names an export folder holds.
    public static let jsonName = "memos.json"
    public static let markdownName = "markdown"
    public static let zipName = "memos.zip"
    public static let manifestName = "manifest.json"

    /// A memo to export and how its file's name spells its id, in export order.
    struct Planned: Spillable {
        var createdAt: Timestamp?
        var id: MemoID
        var spelledAs: IDSpelling

        static func < (a: Planned, b: Planned) -> Bool { JSONExport.precedes(created: a.createdAt, a.id, created: b.createdAt, b.id) }

        func write(to record: inout Record) {
            record.add(createdAt)
            record.add(id)
            spelledAs.write(to: &record)
        }

        init(createdAt: Timestamp?, id: MemoID, spelledAs: IDSpelling) {
            self.createdAt = createdAt
            self.id = id
            self.spelledAs = spelledAs
        }

        init(from reader: inout RecordReader) {
            self.init(createdAt: reader.timestamp(), id: reader.id(), spelledAs: IDSpelling(from: &reader))
        }
    }

    /// How many memos are read at a time, and how many of those one core
    /// takes at a time (the zip's read-ahead takes files as many at a time).
    var batchSize = 1024
    var chunkSize = 64
    /// Files up to this size are read ahead whole for the zip.
    static let readAheadLimit = 1 << 20

    /// A memo as it goes into `memos.json` and `markdown/`, rendered on any core.
    struct Rendered: Sendable {
        var json: Data
        var archived: Bool
        var shortName: String
        var longName: String
        var markdown: String
        var modified: Timestamp

        init(_ memo: Memo) {
            json = JSONExport.entry(of: memo)
            archived = memo.archivedAt != nil
            let names = MarkdownExport.fileNames(memo)
            shortName = "\(Exporter.markdownName)/\(names.short)"
            longName = "\(Exporter.markdownName)/\(names.long)"
            markdown = MarkdownExport.render(memo)
            modified = memo.modifiedAt
        }

        /// Writes the Markdown file under the short name when allowed and
        /// free, else under the long one.
        func writeMarkdown(into staging: URL, mayTakeShortName: Bool) throws -> Written {
            var path = shortName
            var file = mayTakeShortName ? try OutputFile(creatingNew: staging.appending(path: path, directoryHint: .notDirectory)) : nil
            if file == nil {
                path = longName
                file = try OutputFile(staging.appending(path: path, directoryHint: .notDirectory))
            }
            try file!.write(markdown)
            return Written(path: path, size: file!.size, digest: try file!.finish(), modified: modified)
        }
    }

    /// One file written: its path in the export folder, and what the
    /// manifest and the zip say of it; in the order of the paths' bytes.
    struct Written: Spillable {
        var path: String
        var size: Int
        var digest: SHA256.Digest
        var modified: Timestamp

        var record: ExportManifest.File { .init(path: path, size: size, sha256: digest.hex) }

        static func < (a: Written, b: Written) -> Bool { a.path.utf8.lexicographicallyPrecedes(b.path.utf8) }

        func write(to record: inout Record) {
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

        init(from reader: inout RecordReader) {
            self.init(path: reader.text()!, size: reader.int(), digest: reader.digest(), modified: reader.timestamp()!)
        }
    }

    /// Exports `side`, already listed, into `staging` (an empty, existing
    /// folder). Soft-deleted memos are never exported; archived ones only when asked.
    public func export(_ side: SideListing, formats: [ExportFormat], includeArchived: Bool, into staging: URL,
                       progress: (Int, Int) -> Void = { _, _ in }) throws -> ExportSummary {
        try export(formats: formats, includeArchived: includeArchived, into: staging, progress: progress) { add in
            for (id, entry) in side.entries.pairs { try add(id, entry, side.files[id]) }
        }
    }

    /// Lists the side at `spec` and exports it in one go, holding nothing
    /// per memo: the listing and both export orders are sorted through files
    /// in `staging`. Returns the listing (its status and problems) and, unless
    /// it failed, what was exported. A side whose index cannot be used is
    /// rebuilt from its memo files in memory first.
    public func export(formats: [ExportFormat], includeArchived: Bool, into staging: URL,
                       progress: (Int, Int) -> Void = { _, _ in }) throws -> (SideListing, ExportSummary?) {
        struct ListingStopped: Error {}
        var listing = SideListing(spec: store.spec)
        do {
            let summary = try export(formats: formats, includeArchived: includeArchived, into: staging, progress: progress) { add in
                listing = try store.list(scratch: staging) { id, entry, file in
                    if let entry { try add(id, entry, file) }
                }
                if listing.status == .failed || listing.rebuiltFromMemoFiles { throw ListingStopped() }
            }
            return (listing, summary)
        } catch is ListingStopped {
            guard listing.status != .failed else { return (listing, nil) }
            let side = store.load(deep: false)
            return (side, try export(side, formats: formats, includeArchived: includeArchived, into: staging, progress: progress))
        }
    }

    /// Exports the memos `listMemos` hands over (each index entry with its
    /// file's spelling when it has a file, in any order): streaming, each
    /// memo read, written and let go.
    private func export(formats: [ExportFormat], includeArchived: Bool, into staging: URL, progress: (Int, Int) -> Void,
                        listMemos: ((MemoID, IndexEntry, IDSpelling?) throws -> Void) throws -> Void) throws -> ExportSummary {
        let spec = store.spec
        var missing: [ExportManifest.Missing] = []
        /// Reads the memos in `batch` on every core and maps each by `work`
        /// there; a memo that cannot be read is noted as missing and left out.
        func read<Kept, Output: Sendable>(_ batch: [(MemoID, IDSpelling)], as reading: MemoReading<Kept>,
                                          then work: @escaping @Sendable (Kept) -> Output) -> [((MemoID, IDSpelling), Output)] {
            let outcomes = store.read(batch, chunkSize: chunkSize, as: reading, then: work)
            return zip(batch, outcomes).compactMap { memo, outcome in
                switch outcome {
                case .success(let output): return (memo, output)
                case .failure(let problem):
                    missing.append(.init(id: memo.0, path: problem.path, reason: problem.message))
                    return nil
                }
            }
        }
        var batch: [(MemoID, IDSpelling)] = []

        // Pass 1: which memos, in which order (creation time, then id).
        let planned = SpillSort<Planned>(scratch: staging, runLength: sortRunLength)
        var plannedCount = 0
        var exportedAt: Timestamp?
        func plan() throws {
            let memos = read(batch, as: .summary) { $0 }
            batch.removeAll(keepingCapacity: true)
            for ((id, spelledAs), memo) in memos where memo.deletedAt == nil && (includeArchived || memo.archivedAt == nil) {
                try planned.append(Planned(createdAt: memo.createdAt, id: id, spelledAs: spelledAs))
                plannedCount += 1
                exportedAt = max(exportedAt ?? memo.modifiedAt, memo.modifiedAt)
            }
        }
        try listMemos { id, entry, file in
            guard !entry.isDeleted, includeArchived || !entry.isArchived else { return }
            batch.append((id, file ?? entry.spelledAs))
            if batch.count == batchSize { try plan() }
        }
        try plan()
        let source = ExportManifest.Source(name: spec.name, label: spec.label, path: spec.path)

        // Pass 2: read each memo again and write it everywhere, then let it
        // go; memos are read and rendered, and Markdown files written, on every core.
        let json = try OutputFile(staging.appendingPathComponent(Self.jsonName))
        let markdownFolder = staging.appendingPathComponent(Self.markdownName)
        try AtomicFile.makeFolder(markdownFolder)
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("exportedAt")
        writer.string(exportedAt?.iso8601)
        writer.key("memos")
        writer.beginArray()
        let written = SpillSort<Written>(scratch: staging, runLength: sortRunLength)
        var markdownBytes = 0
        var counts = MemoCounts()
        let order = try planned.sorted()
        var position = 0
        func export() throws {
            let memos = read(batch, as: .memo, then: Rendered.init).map(\.1)
            batch.removeAll(keepingCapacity: true)
            // The short name unless an earlier memo took it: an earlier
            // batch's file is found when the name is created, this batch's here.
            var shortNames = Set<String>()
            let named = memos.map { memo in (memo, shortNames.insert(memo.shortName).inserted) }
            let files = try mapOnEveryCore(named, chunkSize: chunkSize) { chunk in
                chunk.map { memo, mayTakeShortName in Result { try memo.writeMarkdown(into: staging, mayTakeShortName: mayTakeShortName) } }
            }.joined().map { try $0.get() }
            for (memo, file) in zip(memos, files) {
                writer.written(memo.json)
                try json.write(writer.take())
                if memo.archived { counts.archived += 1 } else { counts.active += 1 }
                try written.append(file)
                markdownBytes += file.size
            }
        }
        while let plan = try order.next() {
            batch.append((plan.id, plan.spelledAs))
            if batch.count == batchSize {
                progress(position, plannedCount)
                position += batch.count
                try export()
            }
        }
        try export()
        progress(plannedCount, plannedCount)
        writer.endArray()
        writer.key("schemaVersion")
        writer.value(.integer(1))
        writer.key("source")
        writer.value(try JSONValue(encoding: source))
        writer.endObject()
        try json.write(writer.take() + [0x0A])
        let time = exportedAt ?? ZipWriter.earliest
        let jsonFile = Written(path: Self.jsonName, size: json.size, digest: try json.finish(), modified: time)
        try written.append(jsonFile)

        let manifest = ExportManifest(source: source, exportedAt: exportedAt, includeArchived: includeArchived, formats: formats,
                                      counts: counts, files: [], missing: missing.sorted { $0.id < $1.id })
        let manifestURL = staging.appendingPathComponent(Self.manifestName)
        let manifestSize = try Self.writeManifest(manifest, files: written.sorted(), to: manifestURL)

        if formats.contains(.zip) {
            // What is written so far goes to disk while the zip is deflated,
            // so the flush before publishing has little more than the zip left.
            let earlyFlush = DispatchGroup()
            DispatchQueue.global().async(group: earlyFlush) { try? ExportFolder.flush(staging) }
            defer { earlyFlush.wait() }
            let archive = try ZipWriter(url: staging.appendingPathComponent(Self.zipName))
            func addManifest() throws {
                try archive.add(name: Self.manifestName, modified: time, size: manifestSize, contents: manifestURL)
            }
            var manifestPending = true
            let files = try written.sorted()
            let stagingPath = staging.path
            // Small files are read on the other core while this one deflates; large ones are streamed.
            try withReadAhead(chunks: {
                var chunk: [Written] = []
                while chunk.count < chunkSize, let file = try files.next() { chunk.append(file) }
                return chunk
            }, load: { chunk in
                chunk.map { file -> Result<Data, ReadFailure>? in
                    guard file.size <= Self.readAheadLimit else { return nil }
                    return Result { () throws(ReadFailure) in try readRegularFile(atPath: stagingPath + "/" + file.path, limit: Int64(Self.readAheadLimit)) }
                }
            }) { chunk, contents in
                for (file, contents) in zip(chunk, contents) {
                    if manifestPending, Self.manifestName.utf8.lexicographicallyPrecedes(file.path.utf8) {
                        try addManifest()
                        manifestPending = false
                    }
                    if let contents {
                        let data = try contents.mapError { OutputError(path: stagingPath + "/" + file.path, reason: $0.message) }.get()
                        try archive.add(name: file.path, modified: file.modified, size: file.size) { write in try write(data) }
                    } else {
                        try archive.add(name: file.path, modified: file.modified, size: file.size,
                                        contents: staging.appending(path: file.path, directoryHint: .notDirectory))
                    }
                }
            }
            if manifestPending { try addManifest() }
            try archive.finish()
        }
        if !formats.contains(.json) { try FileManager.default.removeItem(at: staging.appendingPathComponent(Self.jsonName)) }
        if !formats.contains(.markdown) { try FileManager.default.removeItem(at: markdownFolder) }
        return ExportSummary(formats: formats, exportedAt: exportedAt, counts: counts, missing: manifest.missing,
                             json: jsonFile.record, markdownBytes: markdownBytes)
    }

    /// Writes the manifest: `manifest` with `files` as its file list,
    /// which is streamed, one file record at a time. Returns its size.
    static func writeManifest(_ manifest: ExportManifest, files: SortedValues<Written>, to url: URL) throws -> Int {
        guard case .object(var fields) = try JSONValue(encoding: manifest) else { throw OutputError(path: url.path, reason: "the manifest is not an object") }
        fields["files"] = nil
        let output = try OutputFile(url)
        var writer = JSONWriter()
        writer.beginObject()
        for key in (Array(fields.keys) + ["files"]).sorted() {
            writer.key(key)
            guard key == "files" else {
                writer.value(fields[key]!)
                continue
            }
            writer.beginArray()
            while let file = try files.next() {
                writer.value(.object(["path": .string(file.path), "sha256": .string(file.digest.hex), "size": .integer(file.size)]))
                try output.write(writer.take())
            }
            writer.endArray()
        }
        writer.endObject()
        try output.write(writer.take() + [0x0A])
        _ = try output.finish()
        return output.size
    }
}
