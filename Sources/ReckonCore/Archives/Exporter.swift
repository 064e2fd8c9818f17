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
    public var folder = MemoFolder()

    public init() {}

    /// The names an export folder holds.
    public static let jsonName = "memos.json"
    public static let markdownName = "markdown"
    public static let zipName = "memos.zip"
    public static let manifestName = "manifest.json"

    /// A memo to export and where its file is, in export order.
    struct Planned: Spillable {
        var createdAt: Timestamp?
        var id: MemoID
        var name: String

        static func < (a: Planned, b: Planned) -> Bool { JSONExport.precedes(created: a.createdAt, a.id, created: b.createdAt, b.id) }

        func write(to record: inout Record) {
            record.add(createdAt)
            record.add(id)
            record.add(name)
        }

        init(createdAt: Timestamp?, id: MemoID, name: String) {
            self.createdAt = createdAt
            self.id = id
            self.name = name
        }

        init(from reader: inout RecordReader) {
            self.init(createdAt: reader.timestamp(), id: reader.id(), name: reader.text()!)
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
        try export(side.spec, formats: formats, includeArchived: includeArchived, into: staging, progress: progress) { add in
            for (id, entry) in side.entries.pairs { try add(id, entry, side.files[id]) }
        }
    }

    /// Lists the side at `spec` and exports it in one go, holding nothing
    /// per memo: the listing and both export orders are sorted through files
    /// in `staging`. Returns the listing (its status and problems) and, unless
    /// it failed, what was exported. A side whose index cannot be used is
    /// rebuilt from its memo files in memory first.
    public func export(reading spec: SideSpec, formats: [ExportFormat], includeArchived: Bool, into staging: URL,
                       progress: (Int, Int) -> Void = { _, _ in }) throws -> (SideListing, ExportSummary?) {
        struct ListingStopped: Error {}
        var listing = SideListing(spec: spec)
        do {
            let summary = try export(spec, formats: formats, includeArchived: includeArchived, into: staging, progress: progress) { add in
                listing = try folder.list(spec, scratch: staging) { id, entry, file in
                    if let entry { try add(id, entry, file) }
                }
                if listing.status == .failed || listing.rebuiltFromMemoFiles { throw ListingStopped() }
            }
            return (listing, summary)
        } catch is ListingStopped {
            guard listing.status != .failed else { return (listing, nil) }
            let side = folder.load(spec, deep: false)
            return (side, try export(side, formats: formats, includeArchived: includeArchived, into: staging, progress: progress))
        }
    }

    /// Exports the memos `listMemos` hands over (each index entry with its
    /// file's spelling when it has a file, in any order): streaming, each
    /// memo read, written and let go.
    private func export(_ spec: SideSpec, formats: [ExportFormat], includeArchived: Bool, into staging: URL, progress: (Int, Int) -> Void,
                        listMemos: ((MemoID, IndexEntry, IDSpelling?) throws -> Void) throws -> Void) throws -> ExportSummary {
        let root = MemoFolder.resolveRoot(spec.url)
        var missing: [ExportManifest.Missing] = []
        func read(_ id: MemoID, _ name: String) -> Memo? {
            switch folder.readChecked(id, name, root: root) {
            case .success(let memo): return memo
            case .failure(let problem):
                missing.append(.init(id: id, path: problem.path, reason: problem.message))
                return nil
            }
        }

        // Pass 1: which memos, in which order (creation time, then id).
        let planned = SpillSort<Planned>(scratch: staging, runLength: folder.sortRunLength)
        var plannedCount = 0
        var exportedAt: Timestamp?
        try listMemos { id, entry, file in
            guard !entry.isDeleted, includeArchived || !entry.isArchived else { return }
            let name = (file ?? entry.spelledAs).fileName(of: id)
            guard let memo = read(id, name), memo.deletedAt == nil, includeArchived || memo.archivedAt == nil else { return }
            try planned.append(Planned(createdAt: memo.createdAt, id: id, name: name))
            plannedCount += 1
            exportedAt = max(exportedAt ?? memo.modifiedAt, memo.modifiedAt)
        }
        let source = ExportManifest.Source(name: spec.name, label: spec.label, path: spec.path)

        // Pass 2: read each memo again and write it everywhere, then let it go.
        let json = try OutputFile(staging.appendingPathComponent(Self.jsonName))
        let markdownFolder = staging.appendingPathComponent(Self.markdownName)
        try AtomicFile.makeFolder(markdownFolder)
        try json.write("{\n  \"exportedAt\" : \(exportedAt.map { "\"\($0.iso8601)\"" } ?? "null"),\n  \"memos\" : [\n")
        let written = SpillSort<Written>(scratch: staging, runLength: folder.sortRunLength)
        var markdownBytes = 0
        var counts = MemoCounts()
        let encoder = makeJSONEncoder()
        let order = try planned.sorted()
        var position = 0
        while let plan = try order.next() {
            progress(position, plannedCount)
            position += 1
            guard let memo = read(plan.id, plan.name) else { continue }
            if counts.total > 0 { try json.write(",\n") }
            try json.write(Self.indent(try encoder.encode(JSONExport.value(of: memo)), "    "))
            if memo.archivedAt != nil { counts.archived += 1 } else { counts.active += 1 }

            // The short name unless an earlier memo took it.
            var path = "\(Self.markdownName)/\(MarkdownExport.fileName(memo))"
            let markdown: OutputFile
            if let file = try OutputFile(creatingNew: staging.appending(path: path, directoryHint: .notDirectory)) {
                markdown = file
            } else {
                path = "\(Self.markdownName)/\(MarkdownExport.fileName(memo, longID: true))"
                markdown = try OutputFile(staging.appending(path: path, directoryHint: .notDirectory))
            }
            try markdown.write(MarkdownExport.render(memo))
            try written.append(Written(path: path, size: markdown.size, digest: try markdown.finish(), modified: memo.modifiedAt))
            markdownBytes += markdown.size
        }
        progress(plannedCount, plannedCount)
        try json.write("\n  ],\n  \"schemaVersion\" : 1,\n  \"source\" : ")
        try json.write(Self.indent(try encoder.encode(source), "  ", firstLine: false))
        try json.write("\n}\n")
        let time = exportedAt ?? ZipWriter.earliest
        let jsonFile = Written(path: Self.jsonName, size: json.size, digest: try json.finish(), modified: time)
        try written.append(jsonFile)

        let manifest = ExportManifest(source: source, exportedAt: exportedAt, includeArchived: includeArchived, formats: formats,
                                      counts: counts, files: [], missing: missing.sorted { $0.id < $1.id })
        let manifestURL = staging.appendingPathComponent(Self.manifestName)
        let manifestSize = try Self.writeManifest(manifest, files: written.sorted(), to: manifestURL, encoder: encoder)

        if formats.contains(.zip) {
            let zip = try ZipWriter(url: staging.appendingPathComponent(Self.zipName))
            var manifestPending = true
            let files = try written.sorted()
            while let file = try files.next() {
                if manifestPending, Self.manifestName.utf8.lexicographicallyPrecedes(file.path.utf8) {
                    try zip.add(name: Self.manifestName, modified: time, size: manifestSize, contents: manifestURL)
                    manifestPending = false
                }
                try zip.add(name: file.path, modified: file.modified, size: file.size, contents: staging.appending(path: file.path, directoryHint: .notDirectory))
            }
            if manifestPending { try zip.add(name: Self.manifestName, modified: time, size: manifestSize, contents: manifestURL) }
            try zip.finish()
        }
        if !formats.contains(.json) { try FileManager.default.removeItem(at: staging.appendingPathComponent(Self.jsonName)) }
        if !formats.contains(.markdown) { try FileManager.default.removeItem(at: markdownFolder) }
        return ExportSummary(formats: formats, exportedAt: exportedAt, counts: counts, missing: manifest.missing,
                             json: jsonFile.record, markdownBytes: markdownBytes)
    }

    /// The encoder's pretty JSON with `prefix` before each line (but the
    /// first, unless `firstLine`), as it stands nested in a larger document.
    static func indent(_ json: Data, _ prefix: String, firstLine: Bool = true) -> Data {
        let pad = Array(prefix.utf8)
        var out = [UInt8]()
        out.reserveCapacity(json.count + json.count / 4)
        json.withUnsafeBytes { bytes in
            var start = 0
            while true {
                let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
                if (start > 0 || firstLine) && end > start { out += pad }
                out += bytes[start..<end]
                guard end < bytes.count else { break }
                out.append(0x0A)
                start = end + 1
            }
        }
        return Data(out)
    }

    /// Writes the manifest as JSONEncoder would write `manifest` with `files`
    /// as its file list, one file record at a time. Returns its size.
    static func writeManifest(_ manifest: ExportManifest, files: SortedValues<Written>, to url: URL, encoder: JSONEncoder) throws -> Int {
        var skeleton = manifest
        skeleton.files = []
        let text = String(decoding: try encoder.encode(skeleton), as: UTF8.self)
        let marker = "\"files\" : [\n\n  ]"
        guard let range = text.range(of: marker) else { throw OutputError(path: url.path, reason: "the manifest has no files list") }
        let output = try OutputFile(url)
        try output.write(String(text[..<range.lowerBound]) + "\"files\" : [\n")
        var first = true
        while let file = try files.next() {
            if !first { try output.write(",\n") }
            first = false
            try output.write(indent(try encoder.encode(file.record), "    "))
        }
        try output.write("\n  ]" + String(text[range.upperBound...]) + "\n")
        _ = try output.finish()
        return output.size
    }
}
