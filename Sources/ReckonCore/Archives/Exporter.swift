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
/// kept per memo is small and fixed: its id, times, file names, size and digest.
public struct Exporter {
    public var folder = MemoFolder()

    public init() {}

    /// The names an export folder holds.
    public static let jsonName = "memos.json"
    public static let markdownName = "markdown"
    public static let zipName = "memos.zip"
    public static let manifestName = "manifest.json"

    /// One file written: its path in the export folder, and what the
    /// manifest and the zip say of it.
    struct Written {
        var path: String
        var size: Int
        var digest: SHA256.Digest
        var modified: Timestamp

        var record: ExportManifest.File { .init(path: path, size: size, sha256: digest.hex) }

        static func inOrder(_ a: Written, _ b: Written) -> Bool { a.path.utf8.lexicographicallyPrecedes(b.path.utf8) }
    }

    /// Exports `side` into `staging` (an empty, existing folder). Soft-deleted
    /// memos are never exported; archived ones only when asked.
    public func export(_ side: SideListing, formats: [ExportFormat], includeArchived: Bool, into staging: URL,
                       progress: (Int, Int) -> Void = { _, _ in }) throws -> ExportSummary {
        let root = MemoFolder.resolveRoot(side.spec.url)
        var missing: [ExportManifest.Missing] = []
        func read(_ id: MemoID, _ name: String) -> Memo? {
            switch folder.readChecked(id, name, root: root) {
            case .success(let memo): return memo
            case .failure(let problem):
                missing.append(.init(id: id, path: problem.path, reason: problem.message))
                return nil
            }
        }

        // Pass 1: which memos, in which order. Only small facts are kept.
        struct Planned { var id: MemoID; var name: String; var createdAt: Timestamp?; var modifiedAt: Timestamp }
        var planned: [Planned] = []
        let selected = side.entries.values.filter { !$0.isDeleted && (includeArchived || !$0.isArchived) }.map(\.id)
        for id in selected {
            let name = side.files[id] ?? side.entries[id]!.spelling + ".json"
            guard let memo = read(id, name), memo.deletedAt == nil, includeArchived || memo.archivedAt == nil else { continue }
            planned.append(Planned(id: id, name: name, createdAt: memo.createdAt, modifiedAt: memo.modifiedAt))
        }
        planned.sort { JSONExport.precedes(created: $0.createdAt, $0.id, created: $1.createdAt, $1.id) }
        let exportedAt = planned.map(\.modifiedAt).max()
        let source = ExportManifest.Source(name: side.spec.name, label: side.spec.label, path: side.spec.path)

        // Pass 2: read each memo again and write it everywhere, then let it go.
        let json = try OutputFile(staging.appendingPathComponent(Self.jsonName))
        let markdownFolder = staging.appendingPathComponent(Self.markdownName)
        try AtomicFile.makeFolder(markdownFolder)
        try json.write("{\n  \"exportedAt\" : \(exportedAt.map { "\"\($0.iso8601)\"" } ?? "null"),\n  \"memos\" : [\n")
        var written: [Written] = []
        written.reserveCapacity(planned.count + 1)
        var usedPaths: Set<String> = []
        var counts = MemoCounts()
        let encoder = makeJSONEncoder()
        for (position, plan) in planned.enumerated() {
            progress(position, planned.count)
            guard let memo = read(plan.id, plan.name) else { continue }
            if counts.total > 0 { try json.write(",\n") }
            try json.write(Self.indent(try encoder.encode(JSONExport.value(of: memo)), "    "))
            if memo.archivedAt != nil { counts.archived += 1 } else { counts.active += 1 }

            var path = "\(Self.markdownName)/\(MarkdownExport.fileName(memo))"
            if usedPaths.contains(path) { path = "\(Self.markdownName)/\(MarkdownExport.fileName(memo, longID: true))" }
            usedPaths.insert(path)
            let markdown = try OutputFile(staging.appending(path: path, directoryHint: .notDirectory))
            try markdown.write(MarkdownExport.render(memo))
            written.append(Written(path: path, size: markdown.size, digest: try markdown.finish(), modified: memo.modifiedAt))
        }
        usedPaths = []
        progress(planned.count, planned.count)
        planned = []
        try json.write("\n  ],\n  \"schemaVersion\" : 1,\n  \"source\" : ")
        try json.write(Self.indent(try encoder.encode(source), "  ", firstLine: false))
        try json.write("\n}\n")
        let time = exportedAt ?? ZipWriter.earliest
        let jsonFile = Written(path: Self.jsonName, size: json.size, digest: try json.finish(), modified: time)
        written.append(jsonFile)
        written.sort(by: Written.inOrder)

        let manifest = ExportManifest(source: source, exportedAt: exportedAt, includeArchived: includeArchived, formats: formats,
                                      counts: counts, files: [], missing: missing.sorted { $0.id < $1.id })
        let manifestURL = staging.appendingPathComponent(Self.manifestName)
        let manifestSize = try Self.writeManifest(manifest, files: written, to: manifestURL, encoder: encoder)

        if formats.contains(.zip) {
            let zip = try ZipWriter(url: staging.appendingPathComponent(Self.zipName))
            var manifestPending = true
            for file in written {
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
        let markdownBytes = written.reduce(0) { $0 + ($1.path == Self.jsonName ? 0 : $1.size) }
        return ExportSummary(formats: formats, exportedAt: exportedAt, counts: counts, missing: manifest.missing,
                             json: jsonFile.record, markdownBytes: markdownBytes)
    }

    /// The encoder's pretty JSON with `prefix` before each line (but the
    /// first, unless `firstLine`), as it stands nested in a larger document.
    static func indent(_ json: Data, _ prefix: String, firstLine: Bool = true) -> Data {
        let pad = Data(prefix.utf8)
        var out = Data(capacity: json.count + json.count / 4)
        for (number, line) in json.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            if number > 0 { out.append(0x0A) }
            if (number > 0 || firstLine) && !line.isEmpty { out.append(pad) }
            out.append(line)
        }
        return out
    }

    /// Writes the manifest as JSONEncoder would write `manifest` with `files`
    /// as its file list, one file record at a time. Returns its size.
    static func writeManifest(_ manifest: ExportManifest, files: [Written], to url: URL, encoder: JSONEncoder) throws -> Int {
        var skeleton = manifest
        skeleton.files = []
        let text = String(decoding: try encoder.encode(skeleton), as: UTF8.self)
        let marker = "\"files\" : [\n\n  ]"
        guard let range = text.range(of: marker) else { throw OutputError(path: url.path, reason: "the manifest has no files list") }
        let output = try OutputFile(url)
        try output.write(String(text[..<range.lowerBound]) + "\"files\" : [\n")
        for (position, file) in files.enumerated() {
            if position > 0 { try output.write(",\n") }
            try output.write(indent(try encoder.encode(file.record), "    "))
        }
        try output.write("\n  ]" + String(text[range.upperBound...]) + "\n")
        _ = try output.finish()
        return output.size
    }
}
