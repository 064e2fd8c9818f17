import Foundation
import Synchronization

/// Verify of a zip: each entry read and checked against its manifest.
extension ExportVerifier {
    /// What reading a zip's entries found, for checking against its manifest.
    struct ZipEntriesRead {
        /// Each entry's size and SHA-256 by name (the first of a name held twice).
        var seen: [String: (size: Int, sha256: String)] = [:]
        /// The names in the order the zip holds them.
        var order: [String] = []
        /// The second entries of a name held twice.
        var twice: [ExportVerification.FileCheck] = []
        var manifestData: Data?
        /// The zip's own manifest, when the pass on every core parsed it already.
        var parsedManifest: Result<ExportManifest, ExportReadError>?
        var markdown: [MarkdownFile] = []
        /// Where the zip broke: the entry being read (nil between entries) and libarchive's words.
        var failure: (entry: String?, words: String)?
        /// Each entry libarchive read, in order, for the central directory check.
        var streamed: [StreamedEntry] = []
    }

    /// Reads every entry of the zip at `url` and checks it against the
    /// zip records of `folderManifest`, or, for a zip on its own
    /// (`folderManifest` nil), against the manifest it holds; `checked` is
    /// its central directory when that was checked already.
    func verifyZip(
        at url: URL, folderManifest: ExportManifest?, central checked: CentralDirectoryCheck? = nil, memos: inout Memos,
        into result: inout ExportVerification
    ) {
        let expected = folderManifest?.files.filter { $0.place == .zip }
        let zipShown = export.isZip ? "" : Exporter.zipName
        let readJSON = memos.json == nil
        let readMarkdown = memos.markdown == nil
        var read = ZipEntriesRead()
        // A zip's own manifest is read while its central directory is checked: what it allows is needed before memos.json is read.
        let shownManifest = joinPath(export.shown, Exporter.manifestName)
        var manifestAhead: Pending<ManifestRead?>?
        var central: CentralDirectoryCheck
        if let checked {
            central = checked
        } else {
            let listed = Self.listCentralDirectory(of: url)
            if folderManifest == nil, case .success(let listing) = listed {
                manifestAhead = Pending(on: workers) { Self.readManifestAhead(in: listing, shown: shownManifest) }
            }
            central = Self.checkCentralDirectory(listed, on: workers)
        }
        defer { _ = manifestAhead?.wait() }
        if let pass = readOnEveryCore(
            url, central: central, folderManifest: folderManifest, manifestAhead: manifestAhead, readJSON: readJSON, readMarkdown: readMarkdown)
        {
            read.seen = pass.seen
            read.order = pass.order
            read.manifestData = pass.manifestData
            read.parsedManifest = pass.manifest
            read.markdown = pass.markdown
            read.streamed = pass.streamed
            if let json = pass.json {
                memos.json = json
                memos.jsonPath = joinPath(zipShown, Exporter.jsonName)
            }
        } else {
            // Something in the zip is not as reckon writes it: it is read again through libarchive, whose words say what.
            kept?.states = [:]
            read = readWithLibarchive(url, folderManifest: folderManifest, readJSON: readJSON, readMarkdown: readMarkdown, memos: &memos)
        }
        // The central directory, which unzip and Python's zipfile go by,
        // against each entry's own header and what was read.
        if read.failure == nil, let entries = central.entries { Self.compare(entries, with: read.streamed, into: &central) }
        defer { Self.report(central, zip: export.isZip ? "" : Exporter.zipName, into: &result) }
        if readMarkdown && !read.markdown.isEmpty && read.failure == nil {
            memos.markdown = read.markdown
            memos.markdownIn = zipShown
        }
        checkEntries(read, expected: expected, into: &result)
    }

    /// Reads the zip at `url` through libarchive, entry by entry, with
    /// `memos.json` read as it streams by when `readJSON`.
    private func readWithLibarchive(
        _ url: URL, folderManifest: ExportManifest?, readJSON: Bool, readMarkdown: Bool, memos: inout Memos
    ) -> ZipEntriesRead {
        let expected = folderManifest?.files.filter { $0.place == .zip }
        let zipShown = export.isZip ? "" : Exporter.zipName
        var read = ZipEntriesRead()
        var current: String?
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
                let first = read.seen[name] == nil
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
                    read.markdown.append(MarkdownFile(path: name, memo: MarkdownExport.frontMatter(of: kept)))
                }
                if name == Exporter.manifestName && expected == nil { read.manifestData = kept }
                let found = (size: size, sha256: hasher.finalize().hex)
                read.streamed.append(StreamedEntry(name: facts.name, size: size, declaredSize: facts.size))
                if read.seen[name] == nil {
                    read.order.append(name)
                    read.seen[name] = found
                } else {
                    read.twice.append(
                        .init(
                            place: .zip, path: name, status: .unlisted, size: found.size, sha256: found.sha256,
                            problem: "\(export.isZip ? export.shown : export.shown(Exporter.zipName)) \(ArchiveReader.heldTwiceWords(name))"))
                }
                current = nil
            }
        } catch {
            read.failure = (current, archiveWords(error, zip: url))
            // The manifest comes last: when the zip broke before it, it is
            // read on its own, the damaged entries skipped, so that what it
            // lists can still be checked.
            if current != Exporter.manifestName, read.seen[Exporter.manifestName] == nil,
                let data = try? ArchiveReader.entry(named: Exporter.manifestName, of: url)
            {
                read.order.append(Exporter.manifestName)
                read.seen[Exporter.manifestName] = (data.count, SHA256.hex(of: data))
                if expected == nil { read.manifestData = data }
            }
        }
        return read
    }

    /// Checks the entries `read` found against the zip records `expected`
    /// of the folder's manifest, or, for a zip on its own (`expected` nil),
    /// against the manifest it holds.
    private func checkEntries(_ read: ZipEntriesRead, expected: [ExportManifest.File]?, into result: inout ExportVerification) {
        var seen = read.seen
        let failure = read.failure
        /// Why a listed entry that was not read whole was not.
        func unread(_ name: String) -> String {
            guard let failure else { return "manifest.json lists it, but the zip does not hold it" }
            if failure.entry == name { return failure.words.dropPrefix("the entry \(name) ") }
            return "was not read: " + (failure.entry.map { "the zip is damaged at \($0), before it" } ?? "the zip \(failure.words)")
        }
        var records = expected ?? []
        if expected == nil {
            guard let manifestData = read.manifestData else {
                result.files.append(
                    .init(
                        place: .zip, path: Exporter.manifestName, status: failure == nil ? .missing : .unreadable,
                        problem: failure == nil ? Self.noManifestWords : unread(Exporter.manifestName)))
                return
            }
            do {
                let manifest = try
                    (read.parsedManifest
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
        result.files.reserveCapacity(start + records.count + read.twice.count)
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
            for name in read.order where seen[name] != nil {
                result.files.append(
                    .init(
                        place: .zip, path: name, status: .unlisted, size: seen[name]!.size, sha256: seen[name]!.sha256,
                        problem: "manifest.json does not list it"))
            }
        }
        let anyUnreadable = result.files.indices.dropFirst(start).contains { result.files[$0].status == .unreadable }
        result.files += read.twice
        Self.sortByPath(&result.files, from: start)
        if let failure, !anyUnreadable {
            result.problems.append(.init(path: export.isZip ? "" : Exporter.zipName, message: failure.words))
        }
    }

    /// Sorts the checks from `start` on by their paths' bytes. Checks made
    /// in that order already, as they nearly always are, are left unmoved:
    /// sorting a slice copies every check out and back.
    static func sortByPath(_ files: inout [ExportVerification.FileCheck], from start: Int) {
        let inOrder = files.indices.dropFirst(start + 1).allSatisfy { !utf8Precedes(files[$0].path, files[$0 - 1].path) }
        if !inOrder { files[start...].sort { utf8Precedes($0.path, $1.path) } }
    }
}
