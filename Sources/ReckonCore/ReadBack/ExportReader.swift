import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why an export could not be read: the file (as shown) and what is wrong with it.
package struct ExportReadError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "\(path): \(reason)" }
}

extension ExportManifest {
    /// Reads a `manifest.json` reckon wrote: schema 1 (files without `in`,
    /// all beside the manifest) or 2. `shown` names the file in messages.
    package static func read(_ data: Data, shown: String) throws(ExportReadError) -> ExportManifest {
        func fail(_ reason: String) -> ExportReadError { ExportReadError(path: shown, reason: reason) }
        let value: JSONValue
        do {
            value = try JSONParser.parse(data).value
        } catch {
            throw fail(error.readerMessage)
        }
        guard case .object(let fields) = value, fields["generator"] == .string("reckon") else {
            throw fail("is not a manifest reckon wrote (it has no \"generator\": \"reckon\")")
        }
        guard case .number(let text)? = fields["schemaVersion"], let version = Int(text), version >= 1 else {
            throw fail("has no schemaVersion reckon knows")
        }
        guard version <= 2 else { throw fail("has schemaVersion \(version), newer than the version 2 this reckon reads") }
        // Read field by field: a manifest lists every file, 200,000 records
        // for 100,000 memos, which a decoder would take seconds over.
        let typed = ManifestValues(shown: shown)
        let source = try typed.object(fields["source"], "source")
        let counts = try typed.object(fields["counts"], "counts")
        var formats: [ExportFormat] = []
        for (n, item) in try typed.array(fields["formats"], "formats").enumerated() {
            guard let format = ExportFormat(rawValue: try typed.string(item, "formats[\(n)]")) else { throw typed.wrong("formats[\(n)]") }
            formats.append(format)
        }
        var files: [File] = []
        for (n, item) in try typed.array(fields["files"], "files").enumerated() {
            let record = try typed.object(item, "files[\(n)]")
            // Schema 1 lists only files beside the manifest, without "in".
            let place = record["in"] == nil ? Place.folder : Place(rawValue: try typed.string(record["in"], "files[\(n)].in"))
            guard let place else { throw typed.wrong("files[\(n)].in") }
            files.append(
                File(
                    place: place, path: try typed.string(record["path"], "files[\(n)].path"), size: try typed.int(record["size"], "files[\(n)].size"),
                    sha256: try typed.string(record["sha256"], "files[\(n)].sha256")))
        }
        var missing: [Missing] = []
        for (n, item) in try typed.array(fields["missing"], "missing").enumerated() {
            let record = try typed.object(item, "missing[\(n)]")
            guard let id = MemoID(try typed.string(record["id"], "missing[\(n)].id")) else { throw typed.wrong("missing[\(n)].id") }
            missing.append(
                Missing(
                    id: id, path: try typed.string(record["path"], "missing[\(n)].path"),
                    reason: try typed.string(record["reason"], "missing[\(n)].reason")))
        }
        var exportedAt: Timestamp?
        if let time = fields["exportedAt"], time != .null {
            guard let parsed = Timestamp(iso8601: try typed.string(time, "exportedAt")) else { throw typed.wrong("exportedAt") }
            exportedAt = parsed
        }
        guard case .bool(let includeArchived)? = fields["includeArchived"] else { throw typed.wrong("includeArchived") }
        var manifest = ExportManifest(
            source: Source(
                name: try typed.string(source["name"], "source.name"), label: try typed.string(source["label"], "source.label"),
                path: try typed.string(source["path"], "source.path")),
            exportedAt: exportedAt, includeArchived: includeArchived, formats: formats,
            counts: MemoCounts(
                active: try typed.int(counts["active"], "counts.active"), archived: try typed.int(counts["archived"], "counts.archived")),
            files: files, missing: missing)
        manifest.schemaVersion = version
        if let limit = fields["memoBytes"] {
            guard case .number(let text) = limit, let bytes = Int(text), bytes >= 1 else { throw typed.wrong("memoBytes") }
            manifest.memoBytes = bytes
        }
        if case .string(let text)? = fields["reckonVersion"] { manifest.reckonVersion = text }
        if let pipeline = fields["pipeline"] { manifest.pipeline = try typed.string(pipeline, "pipeline") }
        if let writer = fields["zipWriter"] { manifest.zipWriter = try typed.string(writer, "zipWriter") }
        return manifest
    }

    /// The record of the file at `path` in `place`, if listed.
    package func record(_ place: Place, _ path: String) -> File? {
        files.first { $0.place == place && $0.path == path }
    }
}

/// A manifest's values read as the types reckon writes there; a value of
/// another type, or none, fails naming its key in the file `shown`.
private struct ManifestValues {
    let shown: String

    func wrong(_ key: String) -> ExportReadError {
        ExportReadError(path: shown, reason: "the key \(key) is missing or has a value reckon never writes there")
    }

    func string(_ value: JSONValue?, _ key: String) throws(ExportReadError) -> String {
        guard case .string(let text)? = value else { throw wrong(key) }
        return text
    }

    func int(_ value: JSONValue?, _ key: String) throws(ExportReadError) -> Int {
        guard case .number(let text)? = value, let number = Int(text) else { throw wrong(key) }
        return number
    }

    func object(_ value: JSONValue?, _ key: String) throws(ExportReadError) -> [String: JSONValue] {
        guard case .object(let members)? = value else { throw wrong(key) }
        return members
    }

    func array(_ value: JSONValue?, _ key: String) throws(ExportReadError) -> [JSONValue] {
        guard case .array(let items)? = value else { throw wrong(key) }
        return items
    }
}

/// Reads a `memos.json` as its bytes arrive: hashes it, splits it
/// (`MemosSplitter`), reads each memo and hands it over, and notes the
/// counts, the ids and what is wrong. Not `Sendable`.
package final class MemosJSONReader {
    /// What the whole file held.
    package struct Facts: Sendable {
        package var size = 0
        package var sha256 = ""
        package var counts = MemoCounts()
        package var ids: Set<MemoID> = []
        /// What is wrong inside the file, each a sentence after its name.
        package var problems: [String] = []
        package var exportedAt: String?
    }

    private var splitter = MemosSplitter()
    private let hasher = SHA256()
    private var facts = Facts()
    /// Memos split off but not yet read, and their bytes.
    private var pending: [[UInt8]] = []
    private var pendingBytes = 0
    private var position = 0
    private let each: (Memo) throws -> Void
    /// The threads the memos are read on.
    let workers: Workers

    /// `each` gets every memo that could be read, in the file's order; the
    /// memos are read on `workers`' threads.
    package init(on workers: Workers = Workers(), each: @escaping (Memo) throws -> Void = { _ in }) {
        self.workers = workers
        self.each = each
    }

    /// The size manifest.json lists, when known: a file growing past it is
    /// damaged, and is not read further.
    package var expectedSize: Int?

    /// The most bytes one memo may take: the manifest's `memoBytes`.
    package var memoBytes: Int {
        get { splitter.memoBytes }
        set { splitter.memoBytes = newValue }
    }

    package func feed(_ bytes: UnsafeRawBufferPointer) throws {
        hasher.update(bytes)
        facts.size += bytes.count
        if let expectedSize, facts.size > expectedSize {
            throw ReadFailure(
                message: "is larger than the \(counted(expectedSize, "byte")) manifest.json lists: the export is damaged; 'reckon verify' says more")
        }
        try splitter.feed(bytes) { element in
            pendingBytes += element.count
            pending.append(element)
            if pending.count == 1024 || pendingBytes >= 1 << 23 { try readPending() }
        }
    }

    /// Reads the memos split off so far on every core, then takes them in
    /// the file's order: the outcome is the same on any number of threads.
    private func readPending() throws {
        guard !pending.isEmpty else { return }
        let read = mapOnEveryCore(pending, chunkSize: 64, on: workers) { chunk in
            let parser = MemoParser()
            return chunk.map { element -> Result<Memo, MemoReader.Failure> in
                guard !element.isEmpty else { return .failure(MemoReader.Failure(message: "is empty (a comma too many)")) }
                return Result { () throws(MemoReader.Failure) in try MemoReader.read(Data(element), parser: parser) }
            }
        }
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
        for result in read.joined() {
            defer { position += 1 }
            let memo: Memo
            switch result {
            case .success(let read): memo = read
            case .failure(let error):
                facts.problems.append("memos[\(position)] \(error.message)")
                continue
            }
            guard facts.ids.insert(memo.id).inserted else {
                facts.problems.append("memos[\(position)] holds the id \(memo.id), which an earlier memo holds too")
                continue
            }
            if memo.archivedAt != nil { facts.counts.archived += 1 } else { facts.counts.active += 1 }
            try each(memo)
        }
    }

    /// What the file held, once every byte was fed.
    package func finish() throws -> Facts {
        try readPending()
        facts.sha256 = hasher.finalize().hex
        guard let skeleton = finishSplitter() else { return facts }
        do {
            guard case .object(let fields) = try JSONParser.parse(Data(skeleton)).value else {
                facts.problems.append("is not a JSON object")
                return facts
            }
            if case .string(let time)? = fields["exportedAt"] { facts.exportedAt = time }
            guard case .number(let text)? = fields["schemaVersion"], let version = Int(text) else {
                facts.problems.append("has no schemaVersion")
                return facts
            }
            if version > 1 { facts.problems.append("has schemaVersion \(version), newer than the version 1 this reckon reads") }
        } catch {
            facts.problems.append(error.readerMessage)
        }
        return facts
    }

    private func finishSplitter() -> [UInt8]? {
        if let skeleton = splitter.finish() { return skeleton }
        facts.problems.append(splitter.failure!)
        return nil
    }

    /// Reads the file at `url` whole, in chunks.
    package func read(_ url: URL) throws(ReadFailure) -> Facts {
        try readChunks(url.path) { try feed($0) }
        do {
            return try finish()
        } catch let failure as ReadFailure {
            throw failure
        } catch {
            throw ReadFailure(message: errorWords(error))
        }
    }
}

/// Reads the regular file at `path` (never through a link) in chunks of 1 MiB.
package func readChunks(_ path: String, _ chunk: (UnsafeRawBufferPointer) throws -> Void) throws(ReadFailure) {
    let fd = try openForReading(atPath: path)
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw ReadFailure(message: "is not a regular file") }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else { throw ReadFailure(message: "cannot be read: \(String(cString: strerror(errno)))") }
        if count == 0 { return }
        do {
            try buffer.withUnsafeBytes { try chunk(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        } catch let failure as ReadFailure {
            throw failure
        } catch {
            throw ReadFailure(message: errorWords(error))
        }
    }
}

extension MarkdownExport {
    /// The id and archived state a Markdown file's front matter gives
    /// (`id:` and `archived:` lines between the `---` lines), or nil when
    /// it has no front matter with a valid id.
    package static func frontMatter(of data: Data) -> (id: MemoID, archived: Bool)? {
        data.withUnsafeBytes { bytes -> (id: MemoID, archived: Bool)? in
            var id: MemoID?
            var archived = false
            var start = 0
            var first = true
            // Line by line, as bytes: the front matter only, never the body.
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                if line.elementsEqual("---".utf8) {
                    if !first { return id.map { ($0, archived) } }
                } else if first {
                    return nil
                } else if line.starts(with: "id: ".utf8) {
                    id = MemoID(utf8: UnsafeRawBufferPointer(rebasing: line[4...]))
                } else if line.starts(with: "archived: ".utf8) {
                    archived = true
                }
                first = false
                start = end + 1
            }
            return nil
        }
    }
}

/// An export named on the command line: a folder reckon exported into
/// (holding `manifest.json`), or a `memos.zip` on its own.
package struct ExportOnDisk: Sendable {
    package let url: URL
    /// The path as the user gave it, for messages.
    package let shown: String
    package let isZip: Bool

    /// The export at `url`: a folder, or a regular file read as a zip.
    package init(url: URL, shown: String) throws(ExportReadError) {
        self.url = url
        self.shown = shown
        switch FileKind(path: url.path) {
        case .directory: isZip = false
        case .regular: isZip = true
        case .missing: throw ExportReadError(path: shown, reason: "there is nothing here")
        case let other: throw ExportReadError(path: shown, reason: "is \(other.description), not an export folder or a memos.zip")
        }
    }

    /// A path inside the export, as shown in messages.
    package func shown(_ inside: String) -> String { joinPath(shown, inside) }

    /// The folder's `manifest.json`, read and checked.
    package func folderManifest() throws(ExportReadError) -> ExportManifest {
        let path = url.appendingPathComponent(Exporter.manifestName).path
        let data: Data
        do {
            data = try readRegularFile(atPath: path, limit: 1 << 30)
        } catch {
            if FileKind(path: path) == .missing {
                throw ExportReadError(path: shown(Exporter.manifestName), reason: "is missing, so this folder is not an export reckon can check")
            }
            throw ExportReadError(path: shown(Exporter.manifestName), reason: error.message)
        }
        return try ExportManifest.read(data, shown: shown(Exporter.manifestName))
    }

    /// Reads every memo of the export from its `memos.json` (beside the
    /// manifest, else inside `memos.zip`), handing each to `each` in the
    /// file's order, then checks that file against the manifest: its size
    /// and SHA-256, and that every memo in it could be read. What `each`
    /// was given counts only when this returns.
    package func readMemos(on workers: Workers = Workers(), each: @escaping (Memo) throws -> Void) throws -> (
        ExportManifest, MemosJSONReader.Facts
    ) {
        let reader = MemosJSONReader(on: workers, each: each)
        var manifest: ExportManifest?
        var place = ExportManifest.Place.zip
        var facts: MemosJSONReader.Facts?
        let zipURL = isZip ? url : url.appendingPathComponent(Exporter.zipName)
        let zipShown = isZip ? shown : shown(Exporter.zipName)
        if !isZip {
            let folder = try folderManifest()
            manifest = folder
            reader.memoBytes = folder.memoBytes
            if let record = folder.record(.folder, Exporter.jsonName) {
                place = .folder
                reader.expectedSize = Int(record.size)
                do {
                    facts = try reader.read(url.appendingPathComponent(Exporter.jsonName))
                } catch {
                    throw ExportReadError(path: shown(Exporter.jsonName), reason: error.message)
                }
            } else if folder.record(.zip, Exporter.jsonName) == nil {
                throw ExportReadError(
                    path: shown,
                    reason:
                        "holds no memos.json, beside its manifest or in memos.zip (it was exported as Markdown alone), so its memos cannot be read back"
                )
            }
        }
        if facts == nil {
            let fromZip = try readFromZip(zipURL, zipShown: zipShown, manifest: manifest, reader: reader)
            manifest = fromZip.manifest
            facts = fromZip.facts
        }
        let jsonShown = place == .folder ? shown(Exporter.jsonName) : joinPath(zipShown, Exporter.jsonName)
        guard let manifest else { throw ExportReadError(path: zipShown, reason: "holds no manifest.json, so its memos cannot be checked") }
        guard let facts else { throw ExportReadError(path: zipShown, reason: "holds no memos.json, so its memos cannot be read back") }
        guard let record = manifest.record(place, Exporter.jsonName) else {
            throw ExportReadError(path: jsonShown, reason: "is not listed in manifest.json, so it cannot be checked")
        }
        guard record.size == facts.size, record.sha256 == facts.sha256 else {
            throw ExportReadError(
                path: jsonShown,
                reason: "is not what manifest.json lists (its size or SHA-256 differs): the export is damaged; 'reckon verify' says more")
        }
        if let problem = facts.problems.first { throw ExportReadError(path: jsonShown, reason: problem) }
        return (manifest, facts)
    }
}

extension ExportOnDisk {
    /// Reads `memos.json` (and, for a zip on its own, the manifest first)
    /// from the zip at `zipURL` with zlib, one stream, at the places its
    /// central directory gives, feeding `reader`; no other entry is read.
    /// The directory is first checked as `verify` checks it: what verify
    /// calls damaged in the zip as a whole, in `memos.json` or in the zip's
    /// own manifest is thrown in verify's words, before anything is fed.
    /// When an entry proves damaged on the way, libarchive reads it again
    /// to name the damage, which is thrown: what was fed counts for nothing.
    fileprivate func readFromZip(_ zipURL: URL, zipShown: String, manifest known: ExportManifest?, reader: MemosJSONReader) throws
        -> (manifest: ExportManifest?, facts: MemosJSONReader.Facts)
    {
        let listed = ExportVerifier.listCentralDirectory(of: zipURL)
        guard case .success(let listing) = listed else {
            throw ExportReadError(path: zipShown, reason: ExportVerifier.checkCentralDirectory(listed, on: reader.workers).zipProblems[0])
        }
        var names = Set<[UInt8]>()
        if let twice = listing.records.first(where: { !names.insert($0.name).inserted }) {
            throw ExportReadError(path: zipShown, reason: ArchiveReader.heldTwiceWords(String(decoding: twice.name, as: UTF8.self)))
        }
        let check = ExportVerifier.checkCentralDirectory(listed, on: reader.workers)
        if let problem = check.zipProblems.first { throw ExportReadError(path: zipShown, reason: problem) }
        /// Where the entry `name` lies, once verify's check found nothing wrong with it; nil when the zip holds none.
        func place(_ name: String) throws(ExportReadError) -> PlacedEntry? {
            guard let index = listing.records.firstIndex(where: { $0.name == Array(name.utf8) }) else { return nil }
            if let finding = check.findings.first(where: { $0.entry == index + 1 }) {
                throw ExportReadError(path: joinPath(zipShown, name), reason: finding.words)
            }
            return check.entries?[index].placed
        }
        let json = try place(Exporter.jsonName)
        let inflater = EntryInflater()
        var manifest = known
        if isZip {
            // A zip's own manifest comes last: it is read first, on its own, for the memo size it allows.
            guard let placed = try place(Exporter.manifestName) else { throw ExportReadError(path: zipShown, reason: ExportVerifier.noManifestWords) }
            var data = Data()
            guard try inflater.read(placed, of: listing.file, { data.append(contentsOf: $0) }) else {
                throw libarchiveWords(zipURL, zipShown: zipShown, entry: Exporter.manifestName)
            }
            manifest = try ExportManifest.read(data, shown: joinPath(zipShown, Exporter.manifestName))
            reader.memoBytes = manifest!.memoBytes
        }
        guard let json else { throw ExportReadError(path: zipShown, reason: "holds no memos.json, so its memos cannot be read back") }
        reader.expectedSize = manifest?.record(.zip, Exporter.jsonName).map { Int($0.size) }
        let facts: MemosJSONReader.Facts
        do {
            guard try inflater.read(json, of: listing.file, { try reader.feed($0) }) else {
                throw libarchiveWords(zipURL, zipShown: zipShown, entry: Exporter.jsonName)
            }
            facts = try reader.finish()
        } catch let error as ExportReadError {
            throw error
        } catch let error as ReadFailure {
            throw ExportReadError(path: joinPath(zipShown, Exporter.jsonName), reason: error.message)
        } catch {
            throw ExportReadError(path: zipShown, reason: errorWords(error))
        }
        return (manifest, facts)
    }

    /// What libarchive says of the damaged `entry` in the zip at `zipURL`,
    /// read again on its own, as an error to throw.
    private func libarchiveWords(_ zipURL: URL, zipShown: String, entry: String) -> ExportReadError {
        do {
            try ArchiveReader.stream(zipURL, skippingUnread: true) { name, _, readAll in
                if name == entry { try readAll { _ in } }
            }
        } catch {
            return ExportReadError(path: zipShown, reason: archiveWords(error, zip: zipURL))
        }
        return ExportReadError(
            path: joinPath(zipShown, entry), reason: "cannot be uncompressed whole: the export is damaged; 'reckon verify' says more")
    }
}

extension String {
    /// The text without `prefix`, when it starts with it.
    func dropPrefix(_ prefix: String) -> String { hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self }
}
