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

/// Writes one side's memos as `memos.json`, `markdown/` and `memos.zip` into a
/// staging folder, streaming: each memo is read, written and let go.
public struct Exporter {
    public var folder = MemoFolder()

    public init() {}

    /// The names an export folder holds.
    public static let jsonName = "memos.json"
    public static let markdownName = "markdown"
    public static let zipName = "memos.zip"
    public static let manifestName = "manifest.json"

    /// Exports `side` into `staging` (an empty, existing folder). Soft-deleted
    /// memos are never exported; archived ones only when asked.
    public func export(_ side: SideListing, formats: [ExportFormat], includeArchived: Bool, into staging: URL,
                       progress: (Int, Int) -> Void = { _, _ in }) throws -> ExportManifest {
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
        let selected = side.entries.values.filter { !$0.isDeleted && (includeArchived || !$0.isArchived) }.sorted { $0.id < $1.id }
        for entry in selected {
            let name = side.files[entry.id] ?? entry.spelling + ".json"
            guard let memo = read(entry.id, name), memo.deletedAt == nil, includeArchived || memo.archivedAt == nil else { continue }
            planned.append(Planned(id: entry.id, name: name, createdAt: memo.createdAt, modifiedAt: memo.modifiedAt))
        }
        planned.sort { JSONExport.precedes(created: $0.createdAt, $0.id, created: $1.createdAt, $1.id) }
        let exportedAt = planned.map(\.modifiedAt).max()
        let source = ExportManifest.Source(name: side.spec.name, label: side.spec.label, path: side.spec.path)

        // Pass 2: read each memo again and write it everywhere, then let it go.
        let json = try OutputFile(staging.appendingPathComponent(Self.jsonName))
        let markdownFolder = staging.appendingPathComponent(Self.markdownName)
        try AtomicFile.makeFolder(markdownFolder)
        try json.write("{\n  \"exportedAt\" : \(exportedAt.map { "\"\($0.iso8601)\"" } ?? "null"),\n  \"memos\" : [\n")
        var files: [ExportManifest.File] = []
        var usedNames: Set<String> = []
        var counts = MemoCounts()
        var modifiedTimes: [String: Timestamp] = [:]
        let encoder = makeJSONEncoder()
        for (position, plan) in planned.enumerated() {
            progress(position, planned.count)
            guard let memo = read(plan.id, plan.name) else { continue }
            let object = String(decoding: try encoder.encode(JSONExport.value(of: memo)), as: UTF8.self)
            let indented = object.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n")
            try json.write((counts.total == 0 ? "" : ",\n") + indented)
            if memo.archivedAt != nil { counts.archived += 1 } else { counts.active += 1 }

            var name = MarkdownExport.fileName(memo)
            if usedNames.contains(name) { name = MarkdownExport.fileName(memo, longID: true) }
            usedNames.insert(name)
            let markdown = try OutputFile(markdownFolder.appendingPathComponent(name))
            try markdown.write(MarkdownExport.render(memo))
            files.append(.init(path: "\(Self.markdownName)/\(name)", size: markdown.size, sha256: try markdown.finish()))
            modifiedTimes[files[files.count - 1].path] = memo.modifiedAt
        }
        progress(planned.count, planned.count)
        let sourceJSON = String(decoding: try encoder.encode(source), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n  ")
        try json.write("\n  ],\n")
        try json.write("  \"schemaVersion\" : 1,\n  \"source\" : \(sourceJSON)\n}\n")
        files.insert(.init(path: Self.jsonName, size: json.size, sha256: try json.finish()), at: 0)

        let manifest = ExportManifest(source: source, exportedAt: exportedAt, includeArchived: includeArchived, formats: formats,
                                      counts: counts, files: files.sorted { Array($0.path.utf8).lexicographicallyPrecedes($1.path.utf8) },
                                      missing: missing.sorted { $0.id < $1.id })
        let manifestURL = staging.appendingPathComponent(Self.manifestName)
        let manifestSize = try Self.writeManifest(manifest, to: manifestURL, encoder: encoder)

        if formats.contains(.zip) {
            let zip = try ZipWriter(url: staging.appendingPathComponent(Self.zipName))
            let time = exportedAt ?? ZipWriter.earliest
            var entries: [(name: String, write: () throws -> Void)] = [
                (Self.manifestName, { try zip.add(name: Self.manifestName, modified: time, size: manifestSize, contents: manifestURL) }),
            ]
            for file in files {
                let url = staging.appendingPathComponent(file.path)
                let modified = modifiedTimes[file.path] ?? time
                entries.append((file.path, { try zip.add(name: file.path, modified: modified, size: file.size, contents: url) }))
            }
            for entry in entries.sorted(by: { Array($0.name.utf8).lexicographicallyPrecedes($1.name.utf8) }) { try entry.write() }
            try zip.finish()
        }
        if !formats.contains(.json) { try FileManager.default.removeItem(at: staging.appendingPathComponent(Self.jsonName)) }
        if !formats.contains(.markdown) { try FileManager.default.removeItem(at: markdownFolder) }
        return manifest
    }

    /// Writes the manifest as JSONEncoder would, but one file record at a
    /// time, so a manifest of 100,000 files is never held twice. Returns its size.
    static func writeManifest(_ manifest: ExportManifest, to url: URL, encoder: JSONEncoder) throws -> Int {
        var skeleton = manifest
        skeleton.files = []
        let text = String(decoding: try encoder.encode(skeleton), as: UTF8.self)
        let marker = "\"files\" : [\n\n  ]"
        guard let range = text.range(of: marker) else { throw OutputError(path: url.path, reason: "the manifest has no files list") }
        let output = try OutputFile(url)
        try output.write(String(text[..<range.lowerBound]) + "\"files\" : [\n")
        for (position, file) in manifest.files.enumerated() {
            let object = String(decoding: try encoder.encode(file), as: UTF8.self)
            try output.write((position == 0 ? "" : ",\n") + object.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
        }
        try output.write("\n  ]" + String(text[range.upperBound...]) + "\n")
        _ = try output.finish()
        return output.size
    }
}
