import Foundation
import Synchronization

/// What `reckon verify` found in an export: each file against its
/// manifest record, and the memos in `memos.json` and `markdown/` against
/// the manifest's counts.
package struct ExportVerification: Sendable {
    package enum FileStatus: String, Sendable, CaseIterable {
        /// Its size and SHA-256 are what the manifest lists.
        case ok
        /// Listed, but not there.
        case missing
        /// There, but its size or SHA-256 is not what the manifest lists.
        case changed
        /// There, but the manifest does not list it.
        case unlisted
        /// There, but it could not be read to its end (a damaged zip entry, a
        /// file that is not a regular file), or the zip's central directory
        /// describes it otherwise than its own header does.
        case unreadable
    }

    package struct FileCheck: Sendable {
        package var place: ExportManifest.Place
        package var path: String
        package var status: FileStatus
        /// What was found: its size and SHA-256 (nil when it could not be read).
        package var size: Int?
        package var sha256: String?
        /// What is wrong, in words; nil when it is ok.
        package var problem: String?
    }

    /// Something wrong with the memos an export holds: the file (or
    /// `markdown/`) and a sentence about it.
    package struct MemoProblem: Sendable {
        package var path: String
        package var message: String
    }

    package var isZip: Bool
    /// Every file checked: the manifest, then each listed or found file, in the order of their paths.
    package var files: [FileCheck] = []
    package var problems: [MemoProblem] = []
    /// What the manifest counts, and what `memos.json` and `markdown/`
    /// hold (nil when the export has no such file, or it was not read).
    package var manifestCounts: MemoCounts?
    package var memosJSONCounts: MemoCounts?
    package var markdownCounts: MemoCounts?
    package var manifest: ExportManifest?
    /// The export's memos, from an intact `memos.json`, when they were asked for.
    package var memos: [MemoID: MemoState]?

    /// Whether anything differs from the manifest.
    package var damaged: Bool { files.contains { $0.status != .ok } || !problems.isEmpty }
}

/// Checks an export against its `manifest.json`: every file's size and
/// SHA-256, every zip entry read to its end through libarchive (so its CRC
/// is checked), the zip's central directory against each entry's own header
/// and what libarchive read, and the counts and ids in `memos.json` and `markdown/`.
package struct ExportVerifier {
    let export: ExportOnDisk
    /// Where the export's memos are kept, when they are asked for (`--against`).
    let kept: KeptMemos?
    /// The threads the export is read back on.
    let workers: Workers

    /// The memos read from one `memos.json`, by id.
    final class KeptMemos {
        var states: [MemoID: MemoState] = [:]
    }

    /// Reads `export` back on `workers`' threads.
    package init(_ export: ExportOnDisk, keepMemos: Bool = false, on workers: Workers = Workers()) {
        self.export = export
        self.workers = workers
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
            verifyZip(at: export.url, folderManifest: nil, memos: &memos, into: &result)
        } else {
            verifyFolder(memos: &memos, into: &result)
        }
        if let manifest = result.manifest { checkMemos(memos, against: manifest, into: &result) }
        if !result.damaged { result.memos = kept?.states }
        return result
    }

    // MARK: The folder

    private func verifyFolder(memos: inout Memos, into result: inout ExportVerification) {
        // The zip's central directory needs nothing else: it is checked while the folder is read.
        let zipURL = export.url.appendingPathComponent(Exporter.zipName)
        let zipCentral =
            FileKind(path: zipURL.path).isRegular ? Pending(on: workers) { [workers] in Self.checkCentralDirectory(of: zipURL, on: workers) } : nil
        defer { _ = zipCentral?.wait() }
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
        /// Each path checked, in the order met (the manifest's, then the files it does not list), to put the checks in order.
        var paths: [String] = []
        var markdownRecords: [ExportManifest.File] = []
        /// The other files, each read whole on its own: memos.json as memos, the rest hashed.
        var wholeFiles: [ExportManifest.File] = []
        for record in manifest.files where record.place == .folder {
            paths.append(record.path)
            // A path from the manifest is read only when it stays inside the export.
            guard (try? ZipEntryRules.checkName(record.path)) != nil else {
                checks[record.path] = .init(place: .folder, path: record.path, status: .unreadable, problem: Self.outsideTheExport)
                continue
            }
            // What the listing of files passed over (a folder where a file should be) is named as what it is.
            let kind =
                onDisk.removeValue(forKey: record.path)
                ?? Optional(FileKind(path: export.url.appending(path: record.path, directoryHint: .notDirectory).path)).flatMap {
                    $0 == .missing ? nil : $0
                }
            guard let kind, kind.isRegular else {
                checks[record.path] = .init(
                    place: .folder, path: record.path, status: kind == nil ? .missing : .unreadable,
                    problem: kind == nil ? "manifest.json lists it, but it is not there" : "is \(kind!.description), not a regular file")
                continue
            }
            if record.path.hasPrefix(Exporter.markdownName + "/") {
                markdownRecords.append(record)
            } else {
                wholeFiles.append(record)
            }
        }
        let readMarkdown = !markdownRecords.isEmpty || manifest.formats.contains(.markdown)
        let (all, jsonFacts) = readListed(whole: wholeFiles, markdown: markdownRecords, memoBytes: manifest.memoBytes)
        memos.json = jsonFacts
        for (check, _) in all.joined() { checks[check.path] = check }
        if readMarkdown { memos.markdown = all[wholeFiles.count...].joined().compactMap { $0.1 } }
        for (path, kind) in onDisk {
            paths.append(path)
            checks[path] = .init(
                place: .folder, path: path, status: .unlisted,
                problem: kind.isRegular ? "manifest.json does not list it" : "is \(kind.description), which reckon never puts in an export")
        }
        let zipCheck = checks[Exporter.zipName]
        // In the order met, which is nearly the paths' order, so the sort has little to do; a path listed twice is checked once.
        let start = result.files.count
        result.files.reserveCapacity(start + checks.count)
        for path in paths {
            if let check = checks.removeValue(forKey: path) { result.files.append(check) }
        }
        Self.sortByPath(&result.files, from: start)
        if let zipCheck, zipCheck.status == .ok || zipCheck.status == .changed {
            verifyZip(at: zipURL, folderManifest: manifest, central: zipCentral?.wait(), memos: &memos, into: &result)
        }
    }

    /// Reads the files the manifest lists, on every core: `memos.json`
    /// (read as memos), the other whole files (hashed) and runs of Markdown
    /// files; the large files start first. Gives each job's checks, the
    /// whole files' first, and what `memos.json` held.
    private func readListed(whole wholeFiles: [ExportManifest.File], markdown markdownRecords: [ExportManifest.File], memoBytes: Int)
        -> (checks: [[(ExportVerification.FileCheck, MarkdownFile?)]], json: MemosJSONReader.Facts?)
    {
        let chunks = stride(from: 0, to: markdownRecords.count, by: 256).map { markdownRecords[$0..<min(markdownRecords.count, $0 + 256)] }
        let base = export.url
        let root = base.path
        let reader = OneThreadAtATime(memosJSONReader(memoBytes: memoBytes))
        let read = Mutex([[(ExportVerification.FileCheck, MarkdownFile?)]](repeating: [], count: wholeFiles.count + chunks.count))
        let jsonFacts = Mutex<MemosJSONReader.Facts?>(nil)
        let whole = wholeFiles.filter { $0.path == Exporter.jsonName } + wholeFiles.filter { $0.path != Exporter.jsonName }
        workers.perform(iterations: whole.count + chunks.count) { job in
            guard job >= whole.count else {
                let record = whole[job]
                let url = base.appending(path: record.path, directoryHint: .notDirectory)
                let check: ExportVerification.FileCheck
                if record.path == Exporter.jsonName {
                    do throws(ReadFailure) {
                        let facts = try reader.value.read(url)
                        jsonFacts.withLock { $0 = facts }
                        check = Self.compare(record, size: facts.size, sha256: facts.sha256)
                    } catch {
                        check = .init(place: .folder, path: record.path, status: .unreadable, problem: error.message)
                    }
                } else {
                    do throws(OutputError) {
                        let (size, digest) = try Exporter.sizeAndDigest(of: url)
                        check = Self.compare(record, size: size, sha256: digest.hex)
                    } catch {
                        check = .init(place: .folder, path: record.path, status: .unreadable, problem: error.reason)
                    }
                }
                read.withLock { $0[job] = [(check, nil)] }
                return
            }
            let checked = chunks[job - whole.count].map { record -> (ExportVerification.FileCheck, MarkdownFile?) in
                do throws(ReadFailure) {
                    let data = try readRegularFile(atPath: root + "/" + record.path, limit: 1 << 30)
                    let check = Self.compare(record, size: data.count, sha256: SHA256.hex(of: data))
                    return (check, MarkdownFile(path: record.path, memo: MarkdownExport.frontMatter(of: data)))
                } catch {
                    return (.init(place: .folder, path: record.path, status: .unreadable, problem: error.message), nil)
                }
            }
            read.withLock { $0[job] = checked }
        }
        return (read.withLock { $0 }, jsonFacts.withLock { $0 })
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
        let problem: String? =
            size != record.size
            ? "is \(counted(size, "byte")); manifest.json lists \(record.size)"
            : sha256 != record.sha256 ? "its SHA-256 is not what manifest.json lists" : nil
        return .init(place: record.place, path: record.path, status: problem == nil ? .ok : .changed, size: size, sha256: sha256, problem: problem)
    }

    /// A reader of `memos.json` that allows one memo `memoBytes` (its
    /// manifest's) and keeps each memo's state when asked.
    func memosJSONReader(memoBytes: Int) -> MemosJSONReader {
        let reader =
            kept.map { kept in MemosJSONReader(on: workers) { memo in kept.states[memo.id] = MemoState(memo) } } ?? MemosJSONReader(on: workers)
        reader.memoBytes = memoBytes
        return reader
    }

    /// What a zip on its own without its manifest is, in `verify` and `restore` alike.
    static let noManifestWords = "the zip holds no manifest.json, so nothing in it can be checked"

    /// Why a path the manifest lists is never read or trusted.
    static let outsideTheExport = "is not a path inside the export (absolute, with '..' or a control character), so it is not read"

    // MARK: The memos

    /// Checks the memos read from `memos.json` and `markdown/` against the
    /// manifest's counts and missing memos, and against each other.
    private func checkMemos(_ memos: Memos, against manifest: ExportManifest, into result: inout ExportVerification) {
        func problem(_ path: String, _ message: String) { result.problems.append(.init(path: path, message: message)) }
        let missing = Set(manifest.missing.map(\.id))
        if let json = memos.json {
            result.memosJSONCounts = json.counts
            for message in json.problems { problem(memos.jsonPath, message) }
            if json.counts != manifest.counts {
                problem(memos.jsonPath, "holds \(json.counts.inWords); manifest.json counts \(manifest.counts.inWords)")
            }
            for id in json.ids.intersection(missing).sorted() {
                problem(memos.jsonPath, "holds memo \(id), which manifest.json says could not be exported")
            }
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
        return ExportDiff.changes(
            from: exported.mapValues { MemoState($0.summary) }, to: now, toMillisecond: side.spec.kind.precision == .millisecond)
    }
}
