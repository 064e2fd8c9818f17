import Foundation

/// What `reckon verify` found in an export: each file against its
/// manifest record, and the memos in `memos.json` and `markdown/` against
/// the manifest's counts.
public struct ExportVerification: Sendable {
    public enum FileStatus: String, Sendable {
        /// Its size and SHA-256 are what the manifest lists.
        case ok
        /// Listed, but not there.
        case missing
        /// There, but its size or SHA-256 is not what the manifest lists.
        case changed
        /// There, but the manifest does not list it.
        case unlisted
        /// There, but it could not be read to its end (a damaged zip entry, a
        /// file that is not a regular file).
        case unreadable
    }

    public struct FileCheck: Sendable {
        public var place: ExportManifest.Place
        public var path: String
        public var status: FileStatus
        /// What was found: its size and SHA-256 (nil when it could not be read).
        public var size: Int?
        public var sha256: String?
        /// What is wrong, in words; nil when it is ok.
        public var problem: String?
    }

    /// Something wrong with the memos an export holds: the file (or
    /// `markdown/`) and a sentence about it.
    public struct MemoProblem: Sendable {
        public var path: String
        public var message: String
    }

    public var isZip: Bool
    /// Every file checked: the manifest, then each listed or found file, in the order of their paths.
    public var files: [FileCheck] = []
    public var problems: [MemoProblem] = []
    /// What the manifest counts, and what `memos.json` and `markdown/`
    /// hold (nil when the export has no such file, or it was not read).
    public var manifestCounts: MemoCounts?
    public var memosJSONCounts: MemoCounts?
    public var markdownCounts: MemoCounts?
    package var manifest: ExportManifest?
    /// The export's memos, from an intact `memos.json`, when they were asked for.
    package var memos: [MemoID: MemoState]?

    /// Whether anything differs from the manifest.
    public var damaged: Bool { files.contains { $0.status != .ok } || !problems.isEmpty }
}

/// Checks an export against its `manifest.json`: every file's size and
/// SHA-256, every zip entry read to its end through libarchive (so its CRC
/// is checked), and the counts and ids in `memos.json` and `markdown/`.
package struct ExportVerifier {
    let export: ExportOnDisk
    /// Where the export's memos are kept, when they are asked for (`--against`).
    private let kept: KeptMemos?

    /// The memos read from one `memos.json`, by id.
    private final class KeptMemos {
        var states: [MemoID: MemoState] = [:]
    }

    package init(_ export: ExportOnDisk, keepMemos: Bool = false) {
        self.export = export
        kept = keepMemos ? KeptMemos() : nil
    }

    /// A Markdown file read back: its id and archived state, when its front matter gives them.
    struct MarkdownFile: Sendable {
        var path: String
        var memo: (id: MemoID, archived: Bool)?
    }

    /// What was read of the memos, and where.
    struct Memos {
        var json: MemosJSONReader.Facts?
        var jsonPath = Exporter.jsonName
        var markdown: [MarkdownFile]?
        /// Where the Markdown files are: "" for the folder, `memos.zip` for the zip.
        var markdownIn = ""
        var markdownPath: String { joinPath(markdownIn, Exporter.markdownName + "/") }
    }

    package func verify() -> ExportVerification {
        var result = ExportVerification(isZip: export.isZip)
        var memos = Memos()
        if export.isZip {
            verifyZip(at: export.url, expected: nil, memos: &memos, into: &result)
        } else {
            verifyFolder(memos: &memos, into: &result)
        }
        if let manifest = result.manifest { checkMemos(memos, against: manifest, into: &result) }
        if !result.damaged { result.memos = kept?.states }
        return result
    }

    // MARK: The folder

    private func verifyFolder(memos: inout Memos, into result: inout ExportVerification) {
        let manifest: ExportManifest
        do {
            manifest = try export.folderManifest()
        } catch {
            let missing = FileKind(path: export.url.appendingPathComponent(Exporter.manifestName).path) == .missing
            result.files.append(.init(place: .folder, path: Exporter.manifestName, status: missing ? .missing : .unreadable, problem: error.reason))
            return
        }
        result.manifest = manifest
        result.manifestCounts = manifest.counts
        result.files.append(.init(place: .folder, path: Exporter.manifestName, status: .ok))
        var onDisk = filesOnDisk()
        onDisk[Exporter.manifestName] = nil
        var checks: [String: ExportVerification.FileCheck] = [:]
        var markdownRecords: [ExportManifest.File] = []
        for record in manifest.files where record.place == .folder {
            // A path from the manifest is read only when it stays inside the export.
            guard (try? ZipWriter.checkName(record.path)) != nil else {
                checks[record.path] = .init(place: .folder, path: record.path, status: .unreadable, problem: Self.outsideTheExport)
                continue
            }
            let url = export.url.appending(path: record.path, directoryHint: .notDirectory)
            // What the listing of files passed over (a folder where a file should be) is named as what it is.
            let kind = onDisk.removeValue(forKey: record.path) ?? Optional(FileKind(path: url.path)).flatMap { $0 == .missing ? nil : $0 }
            guard let kind, kind.isRegular else {
                checks[record.path] = .init(place: .folder, path: record.path, status: kind == nil ? .missing : .unreadable,
                                            problem: kind == nil ? "manifest.json lists it, but it is not there" : "is \(kind!.description), not a regular file")
                continue
            }
            if record.path == Exporter.jsonName {
                let reader = memosJSONReader()
                do {
                    let facts = try reader.read(url)
                    memos.json = facts
                    checks[record.path] = Self.compare(record, size: facts.size, sha256: facts.sha256)
                } catch {
                    checks[record.path] = .init(place: .folder, path: record.path, status: .unreadable, problem: error.message)
                }
            } else if record.path.hasPrefix(Exporter.markdownName + "/") {
                markdownRecords.append(record)
            } else {
                do {
                    let (size, digest) = try Exporter.sizeAndDigest(of: url)
                    checks[record.path] = Self.compare(record, size: size, sha256: digest.hex)
                } catch {
                    checks[record.path] = .init(place: .folder, path: record.path, status: .unreadable, problem: error.reason)
                }
            }
        }
        if !markdownRecords.isEmpty || manifest.formats.contains(.markdown) {
            let root = export.url.path
            let read = mapOnEveryCore(markdownRecords, chunkSize: 256) { chunk in
                chunk.map { record -> (ExportVerification.FileCheck, MarkdownFile?) in
                    do throws(ReadFailure) {
                        let data = try readRegularFile(atPath: root + "/" + record.path, limit: 1 << 30)
                        let check = Self.compare(record, size: data.count, sha256: SHA256.hex(of: data))
                        return (check, MarkdownFile(path: record.path, memo: MarkdownExport.frontMatter(of: data)))
                    } catch {
                        return (.init(place: .folder, path: record.path, status: .unreadable, problem: error.message), nil)
                    }
                }
            }.flatMap { $0 }
            for (check, _) in read { checks[check.path] = check }
            memos.markdown = read.compactMap { $0.1 }
        }
        for (path, kind) in onDisk {
            checks[path] = .init(place: .folder, path: path, status: .unlisted,
                                 problem: kind.isRegular ? "manifest.json does not list it" : "is \(kind.description), which reckon never puts in an export")
        }
        result.files += checks.values.sorted { utf8Precedes($0.path, $1.path) }
        if let zip = checks[Exporter.zipName], zip.status == .ok || zip.status == .changed {
            let expected = manifest.files.filter { $0.place == .zip }
            verifyZip(at: export.url.appendingPathComponent(Exporter.zipName), expected: expected, memos: &memos, into: &result)
        }
    }

    /// Every file and folder under the export, by its path inside it
    /// (folders are walked, never links), with what it is.
    private func filesOnDisk() -> [String: FileKind] {
        var found: [String: FileKind] = [:]
        func walk(_ folder: String, _ prefix: String) {
            _ = listFolder(atPath: folder) { nameBytes, listed in
                let name = String(decoding: nameBytes, as: UTF8.self)
                let path = prefix + name
                switch listed {
                case .regularFile: found[path] = .regular(size: 0)
                case .other(.directory): walk(folder + "/" + name, path + "/")
                case .other(let kind): found[path] = kind
                }
            }
        }
        walk(export.url.path, "")
        return found
    }

    /// A file found with `size` and `sha256` against its record.
    static func compare(_ record: ExportManifest.File, size: Int, sha256: String) -> ExportVerification.FileCheck {
        let problem: String? = size != record.size ? "is \(size) bytes; manifest.json lists \(record.size)"
            : sha256 != record.sha256 ? "its SHA-256 is not what manifest.json lists" : nil
        return .init(place: record.place, path: record.path, status: problem == nil ? .ok : .changed, size: size, sha256: sha256, problem: problem)
    }

    /// A reader of `memos.json` that keeps each memo's state when asked.
    private func memosJSONReader() -> MemosJSONReader {
        guard let kept else { return MemosJSONReader() }
        return MemosJSONReader { memo in kept.states[memo.id] = MemoState(memo) }
    }

    /// Why a path the manifest lists is never read or trusted.
    static let outsideTheExport = "is not a path inside the export (absolute, with '..' or a control character), so it is not read"

    // MARK: The zip

    /// Reads every entry of the zip at `url` and checks it against
    /// `expected` (the folder manifest's zip records), or, for a zip on its
    /// own (`expected` nil), against the manifest it holds.
    private func verifyZip(at url: URL, expected: [ExportManifest.File]?, memos: inout Memos, into result: inout ExportVerification) {
        let zipShown = export.isZip ? "" : Exporter.zipName
        let readJSON = memos.json == nil
        let readMarkdown = memos.markdown == nil
        var seen: [String: (size: Int, sha256: String)] = [:]
        var order: [String] = []
        var twice: [ExportVerification.FileCheck] = []
        var manifestData: Data?
        var markdown: [MarkdownFile] = []
        /// Where the zip broke: the entry being read (nil between entries) and libarchive's words.
        var failure: (entry: String?, words: String)?
        var current: String?
        let reader = readJSON ? memosJSONReader() : nil
        do {
            try ArchiveReader.stream(url) { name, _, readAll in
                current = name
                let hasher = SHA256()
                var size = 0
                var kept: Data?
                let keep = (expected == nil && name == Exporter.manifestName) || (readMarkdown && name.hasPrefix(Exporter.markdownName + "/"))
                if keep { kept = Data() }
                try readAll { chunk in
                    hasher.update(chunk)
                    size += chunk.count
                    if keep { kept!.append(contentsOf: chunk) }
                    if readJSON && name == Exporter.jsonName { try reader!.feed(chunk) }
                }
                if readJSON && name == Exporter.jsonName {
                    memos.json = reader!.finish()
                    memos.jsonPath = joinPath(zipShown, Exporter.jsonName)
                }
                if let kept, name.hasPrefix(Exporter.markdownName + "/") { markdown.append(MarkdownFile(path: name, memo: MarkdownExport.frontMatter(of: kept))) }
                if name == Exporter.manifestName && expected == nil { manifestData = kept }
                let found = (size: size, sha256: hasher.finalize().hex)
                if seen[name] == nil {
                    order.append(name)
                    seen[name] = found
                } else {
                    twice.append(.init(place: .zip, path: name, status: .unlisted, size: found.size, sha256: found.sha256,
                                       problem: "the zip holds a second entry of this name"))
                }
                current = nil
            }
        } catch {
            failure = (current, archiveWords(error, zip: url))
            // The manifest comes last: when the zip broke before it, it is
            // read on its own, the damaged entries skipped, so that what it
            // lists can still be checked.
            if current != Exporter.manifestName, seen[Exporter.manifestName] == nil,
               let data = try? ArchiveReader.entry(named: Exporter.manifestName, of: url) {
                order.append(Exporter.manifestName)
                seen[Exporter.manifestName] = (data.count, SHA256.hex(of: data))
                if expected == nil { manifestData = data }
            }
        }
        if readMarkdown && !markdown.isEmpty && failure == nil {
            memos.markdown = markdown
            memos.markdownIn = zipShown
        }
        /// Why a listed entry that was not read whole was not.
        func unread(_ name: String) -> String {
            guard let failure else { return "manifest.json lists it, but the zip does not hold it" }
            if failure.entry == name { return failure.words.dropPrefix("the entry \(name) ") }
            return "was not read: " + (failure.entry.map { "the zip is damaged at \($0), before it" } ?? "the zip \(failure.words)")
        }
        var records = expected ?? []
        if expected == nil {
            guard let manifestData else {
                result.files.append(.init(place: .zip, path: Exporter.manifestName, status: failure == nil ? .missing : .unreadable,
                                          problem: failure == nil ? "the zip holds no manifest.json, so nothing in it can be checked" : unread(Exporter.manifestName)))
                return
            }
            do {
                let manifest = try ExportManifest.read(manifestData, shown: joinPath(export.shown, Exporter.manifestName))
                result.manifest = manifest
                result.manifestCounts = manifest.counts
                records = manifest.files
                result.files.append(.init(place: .zip, path: Exporter.manifestName, status: .ok, size: seen[Exporter.manifestName]!.size,
                                          sha256: seen[Exporter.manifestName]!.sha256))
                seen[Exporter.manifestName] = nil
            } catch {
                result.files.append(.init(place: .zip, path: Exporter.manifestName, status: .unreadable, problem: error.reason))
                return
            }
        }
        var checks: [ExportVerification.FileCheck] = []
        for record in records {
            // An entry whose name leaves the folder it is unzipped into is never whole.
            guard (try? ZipWriter.checkName(record.path)) != nil else {
                seen[record.path] = nil
                checks.append(.init(place: .zip, path: record.path, status: .unreadable, problem: Self.outsideTheExport))
                continue
            }
            if let found = seen.removeValue(forKey: record.path) {
                checks.append(Self.compare(record, size: found.size, sha256: found.sha256))
            } else {
                checks.append(.init(place: .zip, path: record.path, status: failure == nil ? .missing : .unreadable, problem: unread(record.path)))
            }
        }
        for name in order where seen[name] != nil {
            checks.append(.init(place: .zip, path: name, status: .unlisted, size: seen[name]!.size, sha256: seen[name]!.sha256,
                                problem: "manifest.json does not list it"))
        }
        result.files += (checks + twice).sorted { utf8Precedes($0.path, $1.path) }
        if let failure, !checks.contains(where: { $0.status == .unreadable }) {
            result.problems.append(.init(path: export.isZip ? "" : Exporter.zipName, message: failure.words))
        }
    }

    // MARK: The memos

    /// Checks the memos read from `memos.json` and `markdown/` against the
    /// manifest's counts and missing memos, and against each other.
    private func checkMemos(_ memos: Memos, against manifest: ExportManifest, into result: inout ExportVerification) {
        func problem(_ path: String, _ message: String) { result.problems.append(.init(path: path, message: message)) }
        let missing = Set(manifest.missing.map(\.id))
        if let json = memos.json {
            result.memosJSONCounts = json.counts
            for message in json.problems { problem(memos.jsonPath, message) }
            if json.counts != manifest.counts { problem(memos.jsonPath, "holds \(json.counts.inWords); manifest.json counts \(manifest.counts.inWords)") }
            for id in json.ids.intersection(missing).sorted() { problem(memos.jsonPath, "holds memo \(id), which manifest.json says could not be exported") }
        }
        guard let markdown = memos.markdown else { return }
        var counts = MemoCounts()
        var ids: Set<MemoID> = []
        for file in markdown {
            guard let memo = file.memo else {
                problem(joinPath(memos.markdownIn, file.path), "has no front matter with the memo's id")
                continue
            }
            guard ids.insert(memo.id).inserted else {
                problem(joinPath(memos.markdownIn, file.path), "holds memo \(memo.id), which another Markdown file holds too")
                continue
            }
            if memo.archived { counts.archived += 1 } else { counts.active += 1 }
        }
        result.markdownCounts = counts
        if counts != manifest.counts { problem(memos.markdownPath, "holds \(counts.inWords); manifest.json counts \(manifest.counts.inWords)") }
        if let json = memos.json, json.problems.isEmpty {
            for id in json.ids.subtracting(ids).sorted() { problem(memos.markdownPath, "has no file for memo \(id), which memos.json holds") }
            for id in ids.subtracting(json.ids).sorted() { problem(memos.markdownPath, "has a file for memo \(id), which memos.json does not hold") }
        }
    }
}

extension ExportVerifier {
    /// How `side` moved on since the export whose memos are `exported`:
    /// every memo the side would export now (not deleted; archived only
    /// when the export took archived memos) that the export lacks or holds
    /// with other fields, and every exported memo the side would no longer
    /// export. Unknown keys are not compared: a side's listing does not keep them.
    package static func changes(since exported: [MemoID: MemoState], manifest: ExportManifest, side: SideListing) -> [ExportChange] {
        var now: [MemoID: MemoState] = [:]
        for (id, entry) in side.entries.pairs where !entry.isDeleted && (manifest.includeArchived || !entry.isArchived) {
            guard let summary = side.memos[id], summary.deletedAt == nil, manifest.includeArchived || summary.archivedAt == nil else { continue }
            now[id] = MemoState(summary)
        }
        return ExportDiff.changes(from: exported.mapValues { MemoState($0.summary) }, to: now, toMillisecond: side.spec.location.isStore)
    }
}

extension ExportVerification {
    /// Where a checked file is, as a path inside the export.
    func shownPath(_ file: FileCheck) -> String {
        file.place == .zip && !isZip ? Exporter.zipName + "/" + file.path : file.path
    }

    /// What `verify` prints: a line for each file or memo that is not as
    /// the manifest says, then a sentence on the whole export.
    package func text(shown: String) -> String {
        var lines: [String] = []
        for file in files where file.status != .ok {
            lines.append("\(file.status.rawValue)  \(escapedForDisplay(shownPath(file))): \(escapedForDisplay(file.problem ?? ""))")
        }
        for problem in problems {
            lines.append("damaged  \(escapedForDisplay(problem.path.isEmpty ? shown : problem.path)): \(escapedForDisplay(problem.message))")
        }
        let beside = files.count { $0.place == .folder && $0.path != Exporter.manifestName }
        let inZip = files.count { $0.place == .zip && !(isZip && $0.path == Exporter.manifestName) }
        let where_ = isZip ? "\(inZip) entries of the zip match its manifest.json"
            : "\(beside) files beside manifest.json" + (inZip > 0 ? " and \(inZip) entries of memos.zip" : "") + " match it"
        if damaged {
            let bad = files.count { $0.status != .ok }
            var parts = ["\(bad) of \(files.count) files differ from manifest.json"]
            if !problems.isEmpty { parts.append("\(problems.count) problem\(problems.count == 1 ? "" : "s") with the memos") }
            lines.append("\(escapedForDisplay(shown)): DAMAGED: \(parts.joined(separator: ", and ")).")
        } else {
            let counts = manifestCounts ?? MemoCounts()
            var held: [String] = []
            if memosJSONCounts != nil { held.append("memos.json") }
            if markdownCounts != nil { held.append("markdown/") }
            lines.append("\(escapedForDisplay(shown)): whole. The \(where_), size and SHA-256; "
                         + "\(counts.inWords) in \(held.isEmpty ? "none of its files" : held.joined(separator: " and ")), as manifest.json counts.")
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// What `verify --json` prints (schema version 1, in the README).
    package func json(shown: String, against: (side: String, changes: [ExportChange])?) -> JSONValue {
        func counts(_ value: MemoCounts?) -> JSONValue {
            value.map { .object(["active": .integer($0.active), "archived": .integer($0.archived)]) } ?? .null
        }
        let status = damaged ? "damaged" : against.map { $0.changes.isEmpty } == false ? "moved-on" : "whole"
        return .object([
            "schemaVersion": .integer(1),
            "export": .string(shown),
            "kind": .string(isZip ? "zip" : "folder"),
            "status": .string(status),
            "files": .array(files.map { file in
                .object(["in": .string(file.place.rawValue), "path": .string(file.path), "status": .string(file.status.rawValue),
                         "size": file.size.map(JSONValue.integer) ?? .null, "sha256": file.sha256.map(JSONValue.string) ?? .null,
                         "problem": file.problem.map(JSONValue.string) ?? .null])
            }),
            "problems": .array(problems.map { .object(["path": .string($0.path), "message": .string($0.message)]) }),
            "counts": .object(["manifest": counts(manifestCounts), "memosJSON": counts(memosJSONCounts), "markdown": counts(markdownCounts)]),
            "against": against.map { .object(["side": .string($0.side), "changes": .array($0.changes.map(\.json))]) } ?? .null,
        ])
    }
}

extension ExportChange {
    /// The lines `diff` and `verify --against` print: the change in words,
    /// padded to one width, the id and the title.
    package static func lines(_ changes: [ExportChange]) -> String {
        let width = changes.map(\.words.count).max() ?? 0
        return changes.map { change in
            let words = change.words.padding(toLength: width, withPad: " ", startingAt: 0)
            return "\(words)  \(change.id)" + (change.title.map { "  \(escapedForDisplay(quoted($0)))" } ?? "") + "\n"
        }.joined()
    }

    /// `1 added, 0 removed, 2 edited, 0 archived, 0 unarchived`.
    package static func totalsText(_ changes: [ExportChange]) -> String {
        ExportDiff.totals(changes).map { "\($0.1) \($0.0.rawValue)" }.joined(separator: ", ")
    }
}
