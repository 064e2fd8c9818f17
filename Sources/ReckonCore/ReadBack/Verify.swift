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

    /// The memos read from one `memos.json`, by id.
    final class KeptMemos {
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
        let zipCentral = FileKind(path: zipURL.path).isRegular ? Pending { Self.checkCentralDirectory(of: zipURL) } : nil
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
        // memos.json (read as memos), the zip (hashed) and runs of Markdown files, on every core: the large files start first.
        let chunks = stride(from: 0, to: markdownRecords.count, by: 256).map { markdownRecords[$0..<min(markdownRecords.count, $0 + 256)] }
        let readMarkdown = !markdownRecords.isEmpty || manifest.formats.contains(.markdown)
        let base = export.url
        let root = base.path
        let reader = OneThreadAtATime(memosJSONReader(memoBytes: manifest.memoBytes))
        let read = Mutex([[(ExportVerification.FileCheck, MarkdownFile?)]](repeating: [], count: wholeFiles.count + chunks.count))
        let jsonFacts = Mutex<MemosJSONReader.Facts?>(nil)
        let whole = wholeFiles.filter { $0.path == Exporter.jsonName } + wholeFiles.filter { $0.path != Exporter.jsonName }
        Workers.perform(iterations: whole.count + chunks.count) { job in
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
        memos.json = jsonFacts.withLock { $0 }
        let all = read.withLock { $0 }
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
        let reader = kept.map { kept in MemosJSONReader { memo in kept.states[memo.id] = MemoState(memo) } } ?? MemosJSONReader()
        reader.memoBytes = memoBytes
        return reader
    }

    /// What a zip on its own without its manifest is, in `verify` and `restore` alike.
    static let noManifestWords = "the zip holds no manifest.json, so nothing in it can be checked"

    /// Why a path the manifest lists is never read or trusted.
    static let outsideTheExport = "is not a path inside the export (absolute, with '..' or a control character), so it is not read"

    // MARK: The zip

    /// Reads every entry of the zip at `url` and checks it against the
    /// zip records of `folderManifest`, or, for a zip on its own
    /// (`folderManifest` nil), against the manifest it holds; `checked` is
    /// its central directory when that was checked already.
    private func verifyZip(
        at url: URL, folderManifest: ExportManifest?, central checked: CentralDirectoryCheck? = nil, memos: inout Memos,
        into result: inout ExportVerification
    ) {
        let expected = folderManifest?.files.filter { $0.place == .zip }
        let zipShown = export.isZip ? "" : Exporter.zipName
        let readJSON = memos.json == nil
        let readMarkdown = memos.markdown == nil
        var seen: [String: (size: Int, sha256: String)] = [:]
        var order: [String] = []
        var twice: [ExportVerification.FileCheck] = []
        var manifestData: Data?
        /// The zip's own manifest, when the pass on every core parsed it already.
        var parsedManifest: Result<ExportManifest, ExportReadError>?
        var markdown: [MarkdownFile] = []
        /// Where the zip broke: the entry being read (nil between entries) and libarchive's words.
        var failure: (entry: String?, words: String)?
        var current: String?
        /// Each entry libarchive read, in order, for the central directory check.
        var streamed: [StreamedEntry] = []
        // A zip's own manifest is read while its central directory is checked: what it allows is needed before memos.json is read.
        let shownManifest = joinPath(export.shown, Exporter.manifestName)
        var manifestAhead: Pending<ManifestRead?>?
        var central: CentralDirectoryCheck
        if let checked {
            central = checked
        } else {
            let listed = Self.listCentralDirectory(of: url)
            if folderManifest == nil, case .success(let listing) = listed {
                manifestAhead = Pending { Self.readManifestAhead(in: listing, shown: shownManifest) }
            }
            central = Self.checkCentralDirectory(listed)
        }
        defer { _ = manifestAhead?.wait() }
        if let pass = readOnEveryCore(
            url, central: central, folderManifest: folderManifest, manifestAhead: manifestAhead, readJSON: readJSON, readMarkdown: readMarkdown)
        {
            seen = pass.seen
            order = pass.order
            manifestData = pass.manifestData
            parsedManifest = pass.manifest
            markdown = pass.markdown
            streamed = pass.streamed
            if let json = pass.json {
                memos.json = json
                memos.jsonPath = joinPath(zipShown, Exporter.jsonName)
            }
        } else {
            // Something in the zip is not as reckon writes it: it is read again through libarchive, whose words say what.
            kept?.states = [:]
            readWithLibarchive()
        }
        func readWithLibarchive() {
            // A zip's own manifest comes last: the memo size it allows is read from it first, on its own.
            let memoBytes =
                folderManifest?.memoBytes
                ?? (try? ArchiveReader.entry(named: Exporter.manifestName, of: url)).flatMap { data in
                    data.flatMap { try? ExportManifest.read($0, shown: Exporter.manifestName).memoBytes }
                } ?? ExportManifest.defaultMemoBytes
            let reader = readJSON ? memosJSONReader(memoBytes: memoBytes) : nil
            do {
                try ArchiveReader.stream(url) { name, entry, readAll in
                    current = name
                    let facts = ArchiveReader.facts(of: entry)
                    let hasher = SHA256()
                    var size = 0
                    var kept: Data?
                    // A second entry of a name is checked, but its bytes are not read as the export's.
                    let first = seen[name] == nil
                    let keep =
                        first && ((expected == nil && name == Exporter.manifestName) || (readMarkdown && name.hasPrefix(Exporter.markdownName + "/")))
                    let feed = first && readJSON && name == Exporter.jsonName
                    if keep { kept = Data() }
                    try readAll { chunk in
                        hasher.update(chunk)
                        size += chunk.count
                        if keep { kept!.append(contentsOf: chunk) }
                        if feed { try reader!.feed(chunk) }
                    }
                    if feed {
                        memos.json = try reader!.finish()
                        memos.jsonPath = joinPath(zipShown, Exporter.jsonName)
                    }
                    if let kept, name.hasPrefix(Exporter.markdownName + "/") {
                        markdown.append(MarkdownFile(path: name, memo: MarkdownExport.frontMatter(of: kept)))
                    }
                    if name == Exporter.manifestName && expected == nil { manifestData = kept }
                    let found = (size: size, sha256: hasher.finalize().hex)
                    streamed.append(StreamedEntry(name: facts.name, size: size, declaredSize: facts.size))
                    if seen[name] == nil {
                        order.append(name)
                        seen[name] = found
                    } else {
                        twice.append(
                            .init(
                                place: .zip, path: name, status: .unlisted, size: found.size, sha256: found.sha256,
                                problem: "\(export.isZip ? export.shown : export.shown(Exporter.zipName)) \(ArchiveReader.heldTwiceWords(name))"))
                    }
                    current = nil
                }
            } catch {
                failure = (current, archiveWords(error, zip: url))
                // The manifest comes last: when the zip broke before it, it is
                // read on its own, the damaged entries skipped, so that what it
                // lists can still be checked.
                if current != Exporter.manifestName, seen[Exporter.manifestName] == nil,
                    let data = try? ArchiveReader.entry(named: Exporter.manifestName, of: url)
                {
                    order.append(Exporter.manifestName)
                    seen[Exporter.manifestName] = (data.count, SHA256.hex(of: data))
                    if expected == nil { manifestData = data }
                }
            }
        }
        // The central directory, which unzip and Python's zipfile go by,
        // against each entry's own header and what was read.
        if failure == nil, let entries = central.entries { Self.compare(entries, with: streamed, into: &central) }
        defer { Self.report(central, zip: export.isZip ? "" : Exporter.zipName, into: &result) }
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
                result.files.append(
                    .init(
                        place: .zip, path: Exporter.manifestName, status: failure == nil ? .missing : .unreadable,
                        problem: failure == nil ? Self.noManifestWords : unread(Exporter.manifestName)))
                return
            }
            do {
                let manifest = try
                    (parsedManifest
                    ?? Result { () throws(ExportReadError) in
                        try ExportManifest.read(manifestData, shown: joinPath(export.shown, Exporter.manifestName))
                    }).get()
                result.manifest = manifest
                result.manifestCounts = manifest.counts
                records = manifest.files
                result.files.append(
                    .init(
                        place: .zip, path: Exporter.manifestName, status: .ok, size: seen[Exporter.manifestName]!.size,
                        sha256: seen[Exporter.manifestName]!.sha256))
                seen[Exporter.manifestName] = nil
            } catch {
                result.files.append(.init(place: .zip, path: Exporter.manifestName, status: .unreadable, problem: error.reason))
                return
            }
        }
        // The zip's checks go after what is there, in the order of their paths, built in place: there is one for every entry.
        let start = result.files.count
        result.files.reserveCapacity(start + records.count + twice.count)
        for record in records {
            // An entry whose name leaves the folder it is unzipped into is never whole.
            guard (try? ZipEntryRules.checkName(record.path)) != nil else {
                seen[record.path] = nil
                result.files.append(.init(place: .zip, path: record.path, status: .unreadable, problem: Self.outsideTheExport))
                continue
            }
            if let found = seen.removeValue(forKey: record.path) {
                result.files.append(Self.compare(record, size: found.size, sha256: found.sha256))
            } else {
                result.files.append(
                    .init(place: .zip, path: record.path, status: failure == nil ? .missing : .unreadable, problem: unread(record.path)))
            }
        }
        if !seen.isEmpty {
            for name in order where seen[name] != nil {
                result.files.append(
                    .init(
                        place: .zip, path: name, status: .unlisted, size: seen[name]!.size, sha256: seen[name]!.sha256,
                        problem: "manifest.json does not list it"))
            }
        }
        let anyUnreadable = result.files.indices.dropFirst(start).contains { result.files[$0].status == .unreadable }
        result.files += twice
        Self.sortByPath(&result.files, from: start)
        if let failure, !anyUnreadable {
            result.problems.append(.init(path: export.isZip ? "" : Exporter.zipName, message: failure.words))
        }
    }

    /// Sorts the checks from `start` on by their paths' bytes. Checks made
    /// in that order already, as they nearly always are, are left unmoved:
    /// sorting a slice copies every check out and back.
    private static func sortByPath(_ files: inout [ExportVerification.FileCheck], from start: Int) {
        let inOrder = files.indices.dropFirst(start + 1).allSatisfy { !utf8Precedes(files[$0].path, files[$0 - 1].path) }
        if !inOrder { files[start...].sort { utf8Precedes($0.path, $1.path) } }
    }

    // MARK: The zip's central directory

    /// An entry as libarchive read it: its name's bytes, the bytes read
    /// from it and the size its header declares.
    struct StreamedEntry {
        var name: [UInt8]
        var size: Int
        var declaredSize: Int64?
    }

    /// What the zip's central directory says of its entries, each record
    /// checked against the local header and data descriptor it points at.
    struct CentralDirectoryCheck: Sendable {
        struct Entry: Sendable {
            /// The name in the central directory, and in the entry's own
            /// header (nil when that could not be read).
            var name: [UInt8]
            var headerName: [UInt8]?
            var size: UInt64
            /// Where its data lies, when its header could be read.
            var placed: PlacedEntry?
            var flags: UInt16 = 0
            /// Its Unix mode, when the zip was made on Unix (the high half of its external attributes).
            var unixMode: UInt32?
        }

        /// A disagreement about one entry: its place in the directory (from
        /// 1), the name it is shown under (its own header's, which libarchive
        /// reads, when that could be read) and what disagrees.
        struct Finding: Sendable {
            var entry: Int
            var name: String
            var words: String
        }

        /// Every record, in order; nil when the directory cannot be read.
        var entries: [Entry]?
        /// What is wrong with the zip as a whole.
        var zipProblems: [String] = []
        var findings: [Finding] = []
    }

    /// A zip's central directory as read, before it is checked: the file,
    /// its end record, and every record in order.
    struct CentralDirectoryListing: Sendable {
        var file: ZipFile
        var end: CentralDirectoryEnd
        var records: [CentralRecord]
    }

    /// Reads every record of the central directory of the zip at `url`.
    static func listCentralDirectory(of url: URL) -> Result<CentralDirectoryListing, ZipStructureError> {
        Result { () throws(ZipStructureError) in
            let file = try ZipFile(url: url)
            let end = try CentralDirectoryEnd.read(file)
            var records: [CentralRecord] = []
            // A record takes at least 46 bytes: a count the directory cannot hold reserves nothing more.
            records.reserveCapacity(Int(min(end.count, end.size / 46)))
            try CentralRecord.forEach(in: file, end) { records.append($0) }
            return CentralDirectoryListing(file: file, end: end, records: records)
        }
    }

    /// Reads the central directory of the zip at `url` on its own and checks
    /// it against the entries (`checkCentralDirectory(_:)`).
    static func checkCentralDirectory(of url: URL) -> CentralDirectoryCheck { checkCentralDirectory(listCentralDirectory(of: url)) }

    /// Checks that a zip's central directory, as `listed`, and its entries
    /// agree: each record's name, method, flags, version, time, extra
    /// fields, CRC-32 and sizes against its entry's local header (and data
    /// descriptor), and that the entries lie one after another from the
    /// start of the file to the directory, where the records put them.
    static func checkCentralDirectory(_ listed: Result<CentralDirectoryListing, ZipStructureError>) -> CentralDirectoryCheck {
        var check = CentralDirectoryCheck()
        let (file, end, records): (ZipFile, CentralDirectoryEnd, [CentralRecord])
        switch listed {
        case .success(let listing): (file, end, records) = (listing.file, listing.end, listing.records)
        case .failure(let error):
            check.zipProblems.append("the zip's central directory cannot be read: " + error.words)
            return check
        }
        // Each record against its own header on every core (a read each), then where each lies against where the one before ended, in order.
        let checked = mapOnEveryCore(records, chunkSize: 4096) { slice in
            slice.map { checkRecord($0, directory: end, file: file) }
        }.joined()
        var entries: [CentralDirectoryCheck.Entry] = []
        entries.reserveCapacity(records.count)
        // Where the next entry should start: where the one before it ended.
        var next: UInt64? = 0
        for record in checked {
            entries.append(record.entry)
            let placement = record.placed.map { placementProblems(disk: $0.disk, offset: $0.offset, expectedAt: next) } ?? []
            let problems = placement + record.problems
            let name = String(decoding: record.entry.headerName ?? record.entry.name, as: UTF8.self)
            check.findings += problems.map { .init(entry: entries.count, name: name, words: $0) }
            next = record.ends
        }
        if let next, next != end.offset {
            check.zipProblems.append(
                next < end.offset
                    ? "the zip's last entry ends at byte \(next), but its central directory starts at byte \(end.offset): the bytes between belong to no entry"
                    : "the zip's last entry ends at byte \(next), past the start of its central directory at byte \(end.offset)")
        }
        if end.commentLength > 0 {
            check.zipProblems.append("the zip ends with a comment of \(counted(end.commentLength, "byte")), which reckon never writes")
        }
        check.entries = entries
        return check
    }

    /// What one central record gave: its entry, what disagrees (but for
    /// where it lies), the disk and byte the record puts it at (nil when
    /// they cannot be read), and where it ends (nil when that cannot be told).
    private struct CheckedRecord: Sendable {
        var entry: CentralDirectoryCheck.Entry
        var problems: [String]
        var placed: (disk: UInt32, offset: UInt64)?
        var ends: UInt64?
    }

    /// One central record against the local header (and data descriptor)
    /// it points at.
    private static func checkRecord(_ record: CentralRecord, directory end: CentralDirectoryEnd, file: ZipFile) -> CheckedRecord {
        let wide: (compressedSize: UInt64, uncompressedSize: UInt64, localHeaderOffset: UInt64, diskStart: UInt32)
        do throws(ZipStructureError) {
            wide = try record.wide()
        } catch {
            return CheckedRecord(entry: .init(name: record.name, size: UInt64(record.uncompressedSize)), problems: [error.words])
        }
        var entry = CentralDirectoryCheck.Entry(
            name: record.name, size: wide.uncompressedSize, flags: record.flags,
            unixMode: record.versionMadeBy >> 8 == 3 ? record.externalAttributes >> 16 : nil)
        let placed = (disk: wide.diskStart, offset: wide.localHeaderOffset)
        let header: LocalHeader
        do throws(ZipStructureError) {
            header = try LocalHeader.read(at: wide.localHeaderOffset, before: end.offset, in: file)
        } catch {
            return CheckedRecord(
                entry: entry, problems: ["\(says) puts this entry's header at byte \(wide.localHeaderOffset), but \(error.words)"], placed: placed)
        }
        entry.headerName = header.name
        entry.placed = PlacedEntry(
            dataOffset: header.dataOffset, compressedSize: wide.compressedSize, size: wide.uncompressedSize, crc32: record.crc32,
            method: record.method)
        let data = checkData(
            record, compressedSize: wide.compressedSize, uncompressedSize: wide.uncompressedSize, header: header, directory: end, file: file)
        let layout = layoutProblems(record, header, size: wide.uncompressedSize, compressedSize: wide.compressedSize, offset: wide.localHeaderOffset)
        return CheckedRecord(entry: entry, problems: layout + headerProblems(record, header) + data.problems, placed: placed, ends: data.ends)
    }

    /// What a finding on an entry's fields starts with: the central
    /// directory, which unzip and Python's zipfile go by.
    static let says = "the zip's central directory"
    /// How a finding ends on a field the central directory and the entry's
    /// own header both hold.
    private static let goesBy = "; Python's zipfile would go by the first"

    /// Where the central directory puts an entry (on `disk`, at byte
    /// `offset`) against where it should be, in words: on disk 0, at
    /// `expectedAt` when that is known.
    private static func placementProblems(disk: UInt32, offset: UInt64, expectedAt: UInt64?) -> [String] {
        var problems: [String] = []
        if disk != 0 { problems.append("\(says) puts this entry on disk \(disk), but the zip is one file") }
        if let expectedAt, offset != expectedAt {
            problems.append(
                "\(says) puts this entry at byte \(offset), but "
                    + (expectedAt == 0 ? "the first entry starts at byte 0" : "the entry before it ends at byte \(expectedAt)"))
        }
        return problems
    }

    /// The fields a central record and its entry's local header both hold,
    /// but for the CRC-32 and sizes (`checkData`), in words where they
    /// differ: the name, method, flags, version needed, time and extra
    /// fields; and a name beyond ASCII that the record does not mark as UTF-8.
    private static func headerProblems(_ record: CentralRecord, _ header: LocalHeader) -> [String] {
        var problems: [String] = []
        if header.name != record.name {
            problems.append(
                "\(says) names this entry \(shownName(record.name)), but its own header says \(shownName(header.name))"
                    + differingByte(record.name, header.name) + "; unzip would see the first")
        }
        if header.method != record.method {
            problems.append(
                "\(says) says this entry is \(methodWords(record.method)), but its own header says \(methodWords(header.method))" + goesBy)
        }
        if header.flags != record.flags {
            problems.append(
                "\(says) gives this entry the flags \(hex(record.flags)), but its own header says \(hex(header.flags))"
                    + " (they differ in: \(flagWords(header.flags ^ record.flags)))" + goesBy)
        }
        // reckon flags every name as UTF-8; unflagged, a name beyond ASCII reads as another one in zipfile (as CP437).
        if record.name.contains(where: { $0 >= 0x80 }) && record.flags & 0x0800 == 0 {
            problems.append("\(says) does not mark this entry's name as UTF-8, so Python's zipfile would read it as another name")
        }
        if header.versionNeeded != record.versionNeeded {
            problems.append(
                "\(says) says this entry needs zip version \(versionWords(record.versionNeeded)) to extract, "
                    + "but its own header says \(versionWords(header.versionNeeded))" + goesBy)
        }
        if header.modified != record.modified {
            problems.append(
                "\(says) dates this entry \(dosTimeWords(record.modified)), but its own header says \(dosTimeWords(header.modified))" + goesBy)
        }
        if withoutZip64(record.extra) != withoutZip64(header.extra) {
            problems.append("\(says) gives this entry other extra fields than its own header does" + goesBy)
        }
        return problems
    }

    /// The same extra fields, but for zip64's, which differs between a
    /// central record and its local header by design; nil when their
    /// lengths do not add up.
    static func withoutZip64(_ extra: [UInt8]) -> [UInt8]? {
        guard let fields = zipExtraFields(extra) else { return nil }
        var bytes: [UInt8] = []
        for field in fields where field.id != zip64FieldID {
            let length = UInt16(field.data.count)
            bytes += [UInt8(field.id & 0xFF), UInt8(field.id >> 8), UInt8(length & 0xFF), UInt8(length >> 8)]
            bytes += field.data
        }
        return bytes
    }

    /// An entry's data against its central record's CRC-32 and sizes
    /// (`compressedSize` and `uncompressedSize`, from the zip64 field where
    /// the record keeps them there): the data must end before the central
    /// directory, and the local header, or with bit 3 the data descriptor
    /// after the data, must give the same values. What disagrees, and where
    /// the entry ends (nil when that cannot be told).
    private static func checkData(
        _ record: CentralRecord, compressedSize: UInt64, uncompressedSize: UInt64, header: LocalHeader,
        directory end: CentralDirectoryEnd, file: ZipFile
    ) -> (problems: [String], ends: UInt64?) {
        guard compressedSize <= end.offset - header.dataOffset else {
            return (
                ["\(says) says this entry is \(counted(compressedSize, "byte")) compressed, which runs past the start of the central directory"], nil
            )
        }
        var problems: [String] = []
        let central = valuesWords(record.crc32, compressedSize, uncompressedSize)
        /// That the header gives other values than the central record.
        func headerDisagrees() -> String {
            "\(says) gives this entry \(central), but its own header says "
                + valuesWords(header.crc32, header.compressedSize, header.uncompressedSize) + goesBy
        }
        let dataEnd = header.dataOffset + compressedSize
        guard header.sizesFollowData else {
            if (header.crc32, header.compressedSize, header.uncompressedSize) != (record.crc32, compressedSize, uncompressedSize) {
                problems.append(headerDisagrees())
            }
            return (problems, dataEnd)
        }
        // Bit 3: the header's CRC-32 and sizes may be zero (libarchive
        // writes the uncompressed size it was told); the data descriptor
        // after the data holds them.
        func agrees<T: Equatable & BinaryInteger>(_ value: T, _ central: T) -> Bool { value == 0 || value == central }
        if !agrees(header.crc32, record.crc32) || !agrees(header.compressedSize, compressedSize)
            || !agrees(header.uncompressedSize, uncompressedSize)
        {
            problems.append(headerDisagrees())
        }
        let descriptor: DataDescriptor
        do throws(ZipStructureError) {
            descriptor = try DataDescriptor.read(at: dataEnd, wide: header.hasZip64Field, before: end.offset, in: file)
        } catch {
            problems.append("\(says) says this entry is \(counted(compressedSize, "byte")) compressed, but after that many bytes \(error.words)")
            return (problems, nil)
        }
        if (descriptor.crc32, descriptor.compressedSize, descriptor.uncompressedSize) != (record.crc32, compressedSize, uncompressedSize) {
            problems.append(
                "\(says) gives this entry \(central), but the data descriptor after its data says "
                    + valuesWords(descriptor.crc32, descriptor.compressedSize, descriptor.uncompressedSize) + goesBy)
        }
        return (problems, dataEnd + UInt64(descriptor.length))
    }

    /// An entry's CRC-32 and sizes as words: `CRC-32 6b807e78, 140 bytes
    /// compressed and 178 uncompressed`.
    private static func valuesWords(_ crc: UInt32, _ compressed: UInt64, _ uncompressed: UInt64) -> String {
        "CRC-32 \(crcWords(crc)), \(counted(compressed, "byte")) compressed and \(uncompressed) uncompressed"
    }

    /// The central directory's records against the entries libarchive
    /// read, in order: as many, the same names byte for byte, the same
    /// sizes. (That each is a regular file is `layoutProblems`'s.)
    static func compare(_ central: [CentralDirectoryCheck.Entry], with streamed: [StreamedEntry], into check: inout CentralDirectoryCheck) {
        guard central.count == streamed.count else {
            check.zipProblems.append(
                "the zip's central directory lists \(counted(central.count, "entry", "entries")), but \(streamed.count) \(streamed.count == 1 ? "was" : "were") read from the zip"
            )
            return
        }
        let says = "the zip's central directory"
        for (n, (record, read)) in zip(central, streamed).enumerated() {
            let name = String(decoding: read.name, as: UTF8.self)
            func found(_ words: String) { check.findings.append(.init(entry: n + 1, name: name, words: words)) }
            // A header that names the entry otherwise was found already.
            if read.name != record.name && record.headerName == record.name {
                found(
                    "\(says) names this entry \(shownName(record.name)), but \(shownName(read.name)) was read in its place"
                        + differingByte(record.name, read.name) + "; unzip would see the first")
            }
            if let other = [Int64(read.size), read.declaredSize].compactMap({ $0 }).first(where: { Int64(exactly: record.size) != $0 }) {
                found("\(says) says this entry is \(counted(record.size, "byte")), but reading it gives \(other)")
            }
        }
    }

    /// Puts what the central directory check found into `result`: a
    /// finding on the file check of its entry, which is then not whole,
    /// or on the zip when no entry of that name was checked.
    private static func report(_ central: CentralDirectoryCheck, zip: String, into result: inout ExportVerification) {
        for words in central.zipProblems { result.problems.append(.init(path: zip, message: words)) }
        let shown = 20
        for finding in central.findings.prefix(shown) {
            if let at = result.files.firstIndex(where: { $0.place == .zip && $0.path == finding.name }) {
                if result.files[at].status == .ok {
                    result.files[at].status = .unreadable
                    result.files[at].problem = finding.words
                } else {
                    result.files[at].problem = [result.files[at].problem, finding.words].compactMap { $0 }.joined(separator: "; ")
                }
            } else {
                result.problems.append(.init(path: zip, message: "entry \(finding.entry), \(quoted(finding.name, limit: 200)): \(finding.words)"))
            }
        }
        if central.findings.count > shown {
            result.problems.append(
                .init(
                    path: zip,
                    message: "\(central.findings.count - shown) more disagreements between the zip's central directory "
                        + "and its entries are not shown"))
        }
    }

    /// A name from a zip, quoted for a message.
    private static func shownName(_ bytes: [UInt8]) -> String { quoted(String(decoding: bytes, as: UTF8.self), limit: 200) }

    /// Where two names that read alike differ (bytes that are not UTF-8 show as one mark); "" when they read differently.
    private static func differingByte(_ a: [UInt8], _ b: [UInt8]) -> String {
        guard shownName(a) == shownName(b) else { return "" }
        let at = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        return " (they differ in byte \(at + 1) of the name)"
    }

    static func hex(_ flags: UInt16) -> String {
        let digits = String(flags, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    private static func crcWords(_ crc: UInt32) -> String {
        let digits = String(crc, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The general-purpose flags in words (APPNOTE 4.4.4).
    static func flagWords(_ flags: UInt16) -> String {
        let known: [Int: String] = [0: "encrypted", 3: "sizes after the data", 11: "UTF-8 name"]
        return (0..<16).filter { flags & (1 << $0) != 0 }.map { known[$0] ?? "bit \($0)" }.joined(separator: ", ")
    }

    static func methodWords(_ method: UInt16) -> String {
        switch method {
        case 0: "stored without compression (method 0)"
        case 8: "deflated (method 8)"
        case 12: "compressed with bzip2 (method 12)"
        case 14: "compressed with LZMA (method 14)"
        case 93: "compressed with Zstandard (method 93)"
        case 95: "compressed with XZ (method 95)"
        case 98: "compressed with PPMd (method 98)"
        case 99: "encrypted with AES (method 99)"
        default: "compressed with method \(method)"
        }
    }

    static func versionWords(_ version: UInt16) -> String { "\(version / 10).\(version % 10)" }

    /// An MS-DOS time and date (APPNOTE 4.4.6) as `2026-04-18 09:15:00`.
    private static func dosTimeWords(_ value: UInt32) -> String {
        let date = value >> 16
        let time = value & 0xFFFF
        func two(_ n: UInt32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(1980 + (date >> 9))-\(two(date >> 5 & 0xF))-\(two(date & 0x1F)) \(two(time >> 11)):\(two(time >> 5 & 0x3F)):\(two((time & 0x1F) * 2))"
    }

    /// What a Unix mode makes a file, for one that is not a regular file.
    static func kindWords(_ mode: UInt32) -> String {
        switch mode & 0o170000 {
        case 0o040000: "a folder"
        case 0o120000: "a link"
        case 0o140000: "a socket"
        case 0o010000: "a FIFO"
        case 0o020000: "a character device"
        case 0o060000: "a block device"
        default: "of no file type"
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

extension ExportVerification {
    /// Where a checked file is, as a path inside the export.
    func shownPath(_ file: FileCheck) -> String {
        file.place == .zip && !isZip ? Exporter.zipName + "/" + file.path : file.path
    }

    /// What `verify` prints: a line for each file or memo that is not as
    /// the manifest says, then a sentence on the whole export.
    package func text(shown: String) -> String {
        var lines: [String] = []
        var beside = 0
        var inZip = 0
        // By index: a check is read in place, not copied, and there is one for every file.
        for index in files.indices {
            let place = files[index].place
            if place == .folder && files[index].path != Exporter.manifestName { beside += 1 }
            if place == .zip && !(isZip && files[index].path == Exporter.manifestName) { inZip += 1 }
            guard files[index].status != .ok else { continue }
            lines.append(
                "\(files[index].status.rawValue)  \(escapedForDisplay(shownPath(files[index]))): \(escapedForDisplay(files[index].problem ?? ""))")
        }
        for problem in problems {
            lines.append("damaged  \(escapedForDisplay(problem.path.isEmpty ? shown : problem.path)): \(escapedForDisplay(problem.message))")
        }
        let placeWords =
            isZip
            ? "\(counted(inZip, "entry", "entries")) of the zip \(inZip == 1 ? "matches" : "match") its manifest.json"
            : "\(counted(beside, "file")) beside manifest.json" + (inZip > 0 ? " and \(counted(inZip, "entry", "entries")) of memos.zip" : "")
                + (beside == 1 && inZip == 0 ? " matches it" : " match it")
        if damaged {
            let bad = files.count { $0.status != .ok }
            var parts = ["\(bad) of \(files.count) files differ from manifest.json"]
            // A problem named on the zip itself is the zip's (its structure, libarchive's failure); the rest are the memos'.
            let ofZip = problems.count { $0.path == (isZip ? "" : Exporter.zipName) }
            for (count, what) in [(ofZip, "the zip"), (problems.count - ofZip, "the memos")] where count > 0 {
                parts.append("\(counted(count, "problem")) with \(what)")
            }
            lines.append("\(escapedForDisplay(shown)): DAMAGED: \(parts.joined(separator: ", and ")).")
        } else {
            let counts = manifestCounts ?? MemoCounts()
            var held: [String] = []
            if memosJSONCounts != nil { held.append("memos.json") }
            if markdownCounts != nil { held.append("markdown/") }
            lines.append(
                "\(escapedForDisplay(shown)): whole. The \(placeWords), size and SHA-256; "
                    + "\(counts.inWords) in \(held.isEmpty ? "none of its files" : held.joined(separator: " and ")), as manifest.json counts.")
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// What `verify --json` prints (schema version 1, on <doc:Formats#verify-json-and-diff-json>).
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
            "files": .array(
                files.map { file in
                    .object([
                        "in": .string(file.place.rawValue), "path": .string(file.path), "status": .string(file.status.rawValue),
                        "size": file.size.map(JSONValue.integer) ?? .null, "sha256": file.sha256.map(JSONValue.string) ?? .null,
                        "problem": file.problem.map(JSONValue.string) ?? .null
                    ])
                }),
            "problems": .array(problems.map { .object(["path": .string($0.path), "message": .string($0.message)]) }),
            "counts": .object(["manifest": counts(manifestCounts), "memosJSON": counts(memosJSONCounts), "markdown": counts(markdownCounts)]),
            "against": against.map { .object(["side": .string($0.side), "changes": .array($0.changes.map(\.json))]) } ?? .null
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
