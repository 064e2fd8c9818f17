import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What an export wrote: `manifest.json` in the export folder and in the zip.
package struct ExportManifest: Sendable, Equatable, Codable {
    package struct Source: Sendable, Equatable, Codable {
        package var name: String
        package var label: String
        package var path: String
    }

    /// Where a listed file is: in the export folder beside the manifest, or
    /// inside `memos.zip` (written `"in": "folder"` or `"in": "zip"`).
    package enum Place: String, Sendable, Equatable, Codable, CaseIterable {
        case folder
        case zip
    }

    package struct File: Sendable, Equatable, Codable {
        /// Where the file is.
        package var place: Place
        /// Its path in the export folder, or its entry name in the zip.
        package var path: String
        package var size: Int
        package var sha256: String

        package init(place: Place = .folder, path: String, size: Int, sha256: String) {
            self.place = place
            self.path = path
            self.size = size
            self.sha256 = sha256
        }

        enum CodingKeys: String, CodingKey {
            case place = "in"
            case path, size, sha256
        }
    }

    package struct Missing: Sendable, Equatable, Codable {
        package var id: MemoID
        package var path: String
        package var reason: String
    }

    package var generator = "reckon"
    package var reckonVersion = Reckon.version
    /// 2 since each file says where it is (`in`) and `memos.zip` is listed.
    package var schemaVersion = 2
    package var source: Source
    /// The pipeline whose run wrote the export (its `name`); nil for
    /// `reckon export`, and in exports written before runs recorded it.
    package var pipeline: String? = nil
    /// The newest modification time among the exported memos: the export's
    /// time that depends on its input only, so the same input gives the same bytes.
    package var exportedAt: Timestamp?
    package var includeArchived: Bool
    package var formats: [ExportFormat]
    /// The memos exported, Active and Archived.
    package var counts: MemoCounts
    /// Every file written, each with where it is, its size and SHA-256: in
    /// the folder's manifest first the files beside it (`memos.zip`
    /// included), then the entries of `memos.zip`; in the zip's manifest the
    /// zip's other entries. Each part sorted by the paths' UTF-8 bytes.
    package var files: [File]
    /// Memos that should have been exported but could not be read.
    package var missing: [Missing]
    /// The most bytes one memo's entry in `memos.json` takes, which is what
    /// reading the export back allows one memo: 64 MiB (the read limit of a
    /// memo file), or the longest entry when one is longer (a store's rows
    /// have no size limit). A manifest without it means 64 MiB.
    package var memoBytes = Self.defaultMemoBytes
    /// The writer of `memos.zip` and its settings (`ZipBuilder.settings`),
    /// when the export has a zip; nil in exports written before it was recorded.
    package var zipWriter: String? = nil

    /// `memoBytes` of a manifest that does not give it.
    package static let defaultMemoBytes = Int(ReadLimits().memoSizeLimit)
}

/// What an export wrote, in short: the manifest's facts without its list of
/// files (that list is in `manifest.json`), and the totals a report shows.
package struct ExportSummary: Sendable, Equatable {
    package var formats: [ExportFormat]
    package var exportedAt: Timestamp?
    package var counts: MemoCounts
    package var missing: [ExportManifest.Missing]
    /// `memos.json`'s size and SHA-256 (size 0 and no digest when neither
    /// JSON nor zip was asked for, so it was not written).
    package var json: ExportManifest.File
    /// The sizes of all Markdown files together.
    package var markdownBytes: Int
    /// `memos.zip`'s size and SHA-256, when it was asked for.
    package var zip: ExportManifest.File?
    /// How many memos were taken whole from the previous run, unread,
    /// because their files are the ones that run read.
    package var reusedMemos = 0
    /// How many zip entries were copied, compressed, from the previous run's zip.
    package var copiedZipEntries = 0
    /// How many blocks of the zip's `memos.json` were copied, compressed,
    /// from the previous run's zip, and how many it has.
    package var copiedJSONBlocks = 0
    package var jsonBlocks = 0
}

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

    package init(store: any MemoStore) {
        self.store = store
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

    /// A memo as it goes into `memos.json` and `markdown/`, rendered on any
    /// core, or taken whole from the previous run.
    /// Handed from core to core and held in several lists at once, so
    /// a class: passing one on costs one reference, not a copy of each field.
    final class Rendered: Sendable {
        let id: MemoID
        let createdAt: Timestamp?
        let modified: Timestamp
        let archived: Bool
        /// The memo as read; nil when it was taken from the previous run unread.
        let memo: Memo?
        /// Its entry in `memos.json`; empty when the memo is `streamed`.
        let json: Data
        /// Whether the memo is long (`streamedBytes` or more of body): then
        /// its entry and Markdown file are written straight from its text, in
        /// pieces, and never held whole.
        let streamed: Bool
        /// The SHA-256 of `json`, which holds everything the Markdown file is
        /// made from: an unchanged fingerprint means an unchanged file. Nil
        /// when no index is read or written.
        let fingerprint: SHA256.Digest?
        let shortName: String
        let longName: String
        /// Whether a Markdown file is written.
        let withMarkdown: Bool

        init(_ memo: Memo, markdown withMarkdown: Bool, fingerprinted: Bool) {
            id = memo.id
            createdAt = memo.createdAt
            modified = memo.modifiedAt
            archived = memo.archivedAt != nil
            self.memo = memo
            streamed = (memo.body?.utf8.count ?? 0) >= Exporter.streamedBytes
            json = streamed ? Data() : JSONExport.entry(of: memo)
            if !fingerprinted {
                fingerprint = nil
            } else if streamed {
                let hasher = SHA256()
                JSONExport.write(memo, depth: 2) { hasher.update($0) }
                fingerprint = hasher.finalize()
            } else {
                fingerprint = json.withUnsafeBytes { SHA256.digest(of: $0) }
            }
            let names = MarkdownExport.fileNames(memo)
            shortName = "\(Exporter.markdownName)/\(names.short)"
            longName = "\(Exporter.markdownName)/\(names.long)"
            self.withMarkdown = withMarkdown
        }

        /// A memo the previous run holds whole: its record there, and its
        /// entry in that run's `memos.json`, checked against the record.
        init(taking entry: MarkdownIndex.Entry, json: Data, names: (short: String, long: String), markdown withMarkdown: Bool) {
            id = entry.id
            createdAt = entry.createdAt
            modified = entry.modified
            archived = entry.archived
            memo = nil
            self.json = json
            streamed = false
            fingerprint = entry.fingerprint
            shortName = names.short
            longName = names.long
            self.withMarkdown = withMarkdown
        }

        /// Thrown for a memo taken unread whose previous Markdown file
        /// cannot be reused: it must be read to be rendered.
        struct NeedsReading: Error {}

        /// Renders and writes the Markdown file under the short name when
        /// allowed and free, else under the long one, read-only. `staging`
        /// is the export folder's path.
        func writeMarkdown(into staging: String, mayTakeShortName: Bool) throws -> MarkdownFile? {
            guard withMarkdown else { return nil }
            guard let memo else { throw NeedsReading() }
            // A long memo's file is written from its text in pieces, and the zip reads it back from the file.
            var data = Data()
            var size = 0
            func write(_ path: String) throws -> (digest: SHA256.Digest, inode: UInt64)? {
                (data, size) = (Data(), 0)
                return try OutputFile.writeReadOnly(toNew: staging + "/" + path) { write in
                    try MarkdownExport.write(memo) { bytes in
                        if !streamed { data.append(contentsOf: bytes) }
                        size += bytes.count
                        try write(bytes)
                    }
                }
            }
            var path = shortName
            var created = mayTakeShortName ? try write(path) : nil
            if created == nil {
                path = longName
                created = try write(path)
                guard created != nil else { throw OutputError(path: staging + "/" + path, reason: "something already stands there") }
            }
            return MarkdownFile(
                written: Written(path: path, size: size, digest: created!.digest, modified: modified),
                inode: created!.inode, data: streamed ? nil : data)
        }

        /// The previous run's file of this memo, read, that may be put into
        /// the staging folder in place of a rendered one: `name` in the
        /// previous `markdown/`, `target` its path in staging.
        struct PreviousFile {
            var entry: MarkdownIndex.Entry
            var markdown: OpenFolder
            var name: String
            var target: String
            var data: Data
            var info: stat
        }

        /// Reads the previous run's file (`entry`, in `markdown`) when this
        /// run computes the same name for the memo and the file still holds
        /// the bytes the index (and so the previous manifest) lists; nil when
        /// the file is to be rendered instead. Never through a link.
        func readPrevious(_ entry: MarkdownIndex.Entry, from markdown: OpenFolder, into staging: String, mayTakeShortName: Bool)
            -> PreviousFile?
        {
            guard withMarkdown, entry.fingerprint == fingerprint else { return nil }
            // A short name this run may not take, or finds taken (as the
            // name is made), or a long one while the short is free: rendered.
            guard
                entry.path == shortName
                    ? mayTakeShortName
                    : entry.path == longName && (!mayTakeShortName || FileKind(path: staging + "/" + shortName) != .missing)
            else { return nil }
            let name = String(entry.path.dropFirst(Exporter.markdownName.count + 1))
            guard let fd = try? openForReading(atPath: name, in: markdown) else { return nil }
            defer { close(fd) }
            var info = stat()
            var data = Data()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size < 1 << 30,
                (try? readWhole(fd, size: Int(info.st_size), into: &data)) != nil,
                data.withUnsafeBytes({ SHA256.digest(of: $0) }) == entry.digest
            else { return nil }
            return PreviousFile(entry: entry, markdown: markdown, name: name, target: staging + "/" + entry.path, data: data, info: info)
        }

        /// Puts the previous run's file, read, into the staging folder. By a
        /// hard link only when it is the very file reckon wrote there (its
        /// inode) and still read-only, so nothing outside the runs shares the
        /// new file; else, or where links are not used, by a copy of the
        /// bytes. Links go into `markdown`, the staging `markdown/` folder,
        /// opened once, so no path is walked again for each file; nil there
        /// (links not used, or the folder not opened) copies. Gives the file
        /// and whether it was linked (then `holdsLinked` checks the link);
        /// nil, leaving nothing behind, when the file is to be rendered
        /// instead. The previous run is left as it is.
        func place(_ previous: PreviousFile, linkingInto markdown: OpenFolder?) throws -> (file: MarkdownFile, linked: Bool)? {
            let (entry, data, info) = (previous.entry, previous.data, previous.info)
            if let markdown, UInt64(info.st_ino) == entry.inode && info.st_mode & 0o7777 == 0o444 {
                if linkat(previous.markdown.fd, previous.name, markdown.fd, previous.name, 0) == 0 {
                    let file = MarkdownFile(
                        written: Written(path: entry.path, size: data.count, digest: entry.digest, modified: modified),
                        inode: entry.inode, data: forZip(data), reused: true)
                    return (file, true)
                }
                // The name taken: rendered. Another file system, or one without links: copied.
                guard errno != EEXIST else { return nil }
            }
            guard let created = try OutputFile.writeReadOnly(data, toNew: previous.target) else { return nil }
            let file = MarkdownFile(
                written: Written(path: entry.path, size: data.count, digest: created.digest, modified: modified),
                inode: created.inode, data: forZip(data), reused: true)
            return (file, false)
        }

        /// Whether the name the previous file was linked under in `markdown`
        /// holds the file just read; another swapped in meanwhile goes.
        func holdsLinked(_ previous: PreviousFile, in markdown: OpenFolder) -> Bool {
            var linked = stat()
            guard fstatat(markdown.fd, previous.name, &linked, AT_SYMLINK_NOFOLLOW) == 0, linked.st_ino == previous.info.st_ino,
                linked.st_dev == previous.info.st_dev
            else {
                unlinkat(markdown.fd, previous.name, 0)
                return false
            }
            return true
        }

        /// A reused file's bytes, kept for the zip unless they are a long
        /// memo's, which the zip reads from the file instead.
        private func forZip(_ data: Data) -> Data? { data.count >= Exporter.streamedBytes ? nil : data }
    }

    /// A Markdown file written, with its inode (for the next run's index)
    /// and its bytes for the zip (nil for a long memo's: the zip reads the file).
    struct MarkdownFile: Sendable {
        var written: Written
        var inode: UInt64
        var data: Data?
        /// Whether it is the previous run's file, linked or copied: then its
        /// zip entry may be copied from the previous run's zip.
        var reused = false
    }

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

    /// One export, in three steps: pass 1 (`plan`) picks the memos and their
    /// order, noting which the previous run holds unchanged; pass 2
    /// (`writeMemos`) reads or takes each memo and writes it to
    /// `memos.json`, `markdown/` and the zip; `finish` closes `memos.json`,
    /// writes the manifests, finishes the zip and removes what only the zip
    /// needed.
    private struct Run {
        let exporter: Exporter
        /// Held while a chunk's previous Markdown files are put in place (`writeMarkdown`).
        let placingLock = NSLock()
        let formats: [ExportFormat]
        let includeArchived: Bool
        let staging: URL
        let source: ExportManifest.Source
        let zipped: Bool
        /// Whether `memos.json` and Markdown files are written (the zip needs both).
        let withJSON: Bool
        let withMarkdown: Bool
        /// With an index read or written, each memo file's identity is noted:
        /// a memo whose file is the one the previous run read is taken whole
        /// from that run, unread.
        let fingerprinted: Bool
        /// Memos that should have been exported but could not be read, or whose id is held twice.
        var missing: [ExportManifest.Missing] = []
        /// The first memo the disk failed to give (`Problem.Kind.diskTrouble`).
        var diskTrouble: Problem?

        init(_ exporter: Exporter, formats: [ExportFormat], includeArchived: Bool, staging: URL) {
            let spec = exporter.store.spec
            self.exporter = exporter
            self.formats = formats
            self.includeArchived = includeArchived
            self.staging = staging
            source = ExportManifest.Source(name: spec.name, label: spec.label, path: spec.path)
            zipped = formats.contains(.zip)
            withJSON = formats.contains(.json) || zipped
            withMarkdown = formats.contains(.markdown) || zipped
            fingerprinted = exporter.previous != nil || exporter.index != nil
        }

        /// Reads the memos in `batch`, `chunkSize` at a time on every core,
        /// and maps each by `work` there; a memo that cannot be read is
        /// noted as missing and left out.
        mutating func read<Kept, Output: Sendable>(
            _ batch: [(MemoID, IDSpelling)], chunkSize: Int, as reading: MemoReading<Kept>,
            then work: @escaping @Sendable (Kept) -> Output
        ) -> [((MemoID, IDSpelling), Output)] {
            let outcomes = exporter.store.read(batch, chunkSize: chunkSize, as: reading, then: work)
            return zip(batch, outcomes).compactMap { memo, outcome in
                switch outcome {
                case .success(let output): return (memo, output)
                case .failure(let problem):
                    if problem.kind == .diskTrouble, diskTrouble == nil { diskTrouble = problem }
                    missing.append(.init(id: memo.0, path: problem.path, reason: problem.message))
                    return nil
                }
            }
        }

        // MARK: Pass 1

        /// What pass 1 found: which memos, and how many, with the newest
        /// modification time among them.
        struct Plan {
            /// The memos, read back in export order (creation time, then id).
            let memos: SpillSort<Planned>
            /// How many are exported, and the newest modification time among
            /// them; without the ids held twice.
            var count = 0
            var exportedAt: Timestamp?
            /// The ids held twice, left out whole: reckon never picks one of two.
            var heldTwice: [MemoID: Problem] = [:]

            /// Counts `memo` in.
            mutating func tally(_ memo: Planned) {
                count += 1
                exportedAt = max(exportedAt ?? memo.modified, memo.modified)
            }

            mutating func append(_ memo: Planned) throws {
                try memos.append(memo)
                tally(memo)
            }
        }

        /// The previous run's records in id order, read alongside the
        /// listing, when its memos may be taken unread.
        struct PreviousRecords {
            private var byID: MarkdownIndex.RecordsByID?
            private var next: MarkdownIndex.Entry?

            init(_ previous: MarkdownIndex.Previous?) {
                byID = previous.flatMap { $0.takesUnread ? $0 : nil }?.byID()
                next = byID?.next()
            }

            /// The previous run's record of `id`; ids must be asked for in order.
            mutating func record(of id: MemoID) -> MarkdownIndex.Entry? {
                while let record = next, record.id < id { next = byID!.next() }
                return next.flatMap { $0.id == id ? $0 : nil }
            }
        }

        /// Pass 1: which memos, in which order (creation time, then id);
        /// how many, and the newest modification time among them. The
        /// listing is planned `batchSize` memos at a time.
        mutating func plan(
            known: IDMap<MemoSummary>, listMemos: ((MemoID, IndexEntry, IDSpelling?) throws -> Void) throws -> [Problem]
        ) throws -> Plan {
            var batch: [(MemoID, IDSpelling)] = []
            var previous = PreviousRecords(exporter.previous)
            var plan = Plan(memos: SpillSort<Planned>(scratch: staging, runLength: exporter.sortRunLength))
            let problems = try listMemos { id, entry, file in
                guard !entry.isDeleted, includeArchived || !entry.isArchived else { return }
                batch.append((id, file ?? entry.spelledAs))
                if batch.count == exporter.batchSize { try planBatch(&batch, known: known, previous: &previous, into: &plan) }
            }
            try planBatch(&batch, known: known, previous: &previous, into: &plan)
            // An id held twice is left out whole: reckon never picks one of two.
            for problem in problems where problem.kind == .duplicateID {
                if let id = problem.id, plan.heldTwice[id] == nil { plan.heldTwice[id] = problem }
            }
            // Counted again without the ids held twice, when there are any.
            if !plan.heldTwice.isEmpty {
                plan.count = 0
                plan.exportedAt = nil
                let counting = try plan.memos.sorted()
                while let memo = try counting.next() {
                    if plan.heldTwice[memo.id] == nil { plan.tally(memo) }
                }
            }
            return plan
        }

        /// Plans the memos in `batch` and empties it: a memo whose file is the
        /// one the previous run read is planned from that run's record,
        /// unread; the rest from their summaries, known or read now.
        mutating func planBatch(
            _ batch: inout [(MemoID, IDSpelling)], known: IDMap<MemoSummary>, previous: inout PreviousRecords, into plan: inout Plan
        ) throws {
            let identities = fingerprinted ? exporter.store.fileIdentities(batch) : batch.map { _ in nil }
            var unread: [(MemoID, IDSpelling)] = []
            var sources: [MemoID: FileIdentity] = [:]
            for (memo, identity) in zip(batch, identities) {
                guard let identity, let record = previous.record(of: memo.0), record.source == identity, !record.json.isEmpty else {
                    unread.append(memo)
                    sources[memo.0] = identity
                    continue
                }
                guard includeArchived || !record.archived else { continue }
                try plan.append(
                    Planned(
                        createdAt: record.createdAt, id: memo.0, spelledAs: memo.1, modified: record.modified,
                        source: identity, unchanged: true))
            }
            batch.removeAll(keepingCapacity: true)
            let summaries =
                unread.compactMap { memo in known[memo.0].map { (memo, $0) } }
                + read(unread.filter { known[$0.0] == nil }, chunkSize: exporter.chunkSize, as: .summary, then: { $0 })
            for ((id, spelledAs), memo) in summaries where memo.deletedAt == nil && (includeArchived || memo.archivedAt == nil) {
                try plan.append(
                    Planned(
                        createdAt: memo.createdAt, id: id, spelledAs: spelledAs, modified: memo.modifiedAt,
                        source: sources[id], unchanged: false))
            }
        }

        // MARK: Pass 2

        /// Where pass 2 writes, and what it counts.
        struct Outputs {
            /// `memos.json`, written through `writer`; nil when it is not written.
            let json: OutputFile?
            var writer: JSONWriter
            /// Every file written, for the manifests.
            let written: SpillSort<Written>
            /// The zip, deflated on every core while the memos are read.
            let zipWriter: ZipBuilder?
            /// `memos.json` deflated for the zip as it is written; nil without a zip.
            let blocks: JSONBlocks?
            var counts = MemoCounts()
            var markdownBytes = 0
            /// The most bytes one memo's entry in `memos.json` takes.
            var largestEntry = 0
            /// How many memos were taken whole from the previous run, unread.
            var reusedMemos = 0

            /// Writes `memo`'s entry in `memos.json` and counts it; lists its
            /// Markdown file, when it has one, and gives `index` its record.
            mutating func record(_ memo: Rendered, planned: Planned, markdown: MarkdownFile?, index: MarkdownIndex.Writer?) throws {
                var entryRange = 0..<0
                if let json, memo.streamed {
                    // The comma and indent before the entry, then the entry in pieces.
                    writer.written(Data())
                    try writeJSON(writer.take())
                    let start = json.size
                    try JSONExport.write(memo.memo!, depth: 2) { try writeJSON($0) }
                    entryRange = start..<json.size
                    blocks?.memoEnded(id: memo.id)
                } else if let json {
                    writer.written(memo.json)
                    let bytes = writer.take()
                    let start = json.size + bytes.count - memo.json.count
                    entryRange = start..<start + memo.json.count
                    try writeJSON(bytes)
                    blocks?.memoEnded(id: memo.id)
                }
                largestEntry = max(largestEntry, entryRange.count)
                if memo.archived { counts.archived += 1 } else { counts.active += 1 }
                if memo.memo == nil { reusedMemos += 1 }
                if let markdown {
                    let file = markdown.written
                    try written.append(file)
                    try index?.append(
                        .init(
                            createdAt: memo.createdAt, id: memo.id, fingerprint: memo.fingerprint!, path: file.path,
                            digest: file.digest, inode: markdown.inode, modified: memo.modified, archived: memo.archived,
                            json: entryRange, source: planned.source))
                    markdownBytes += file.size
                }
            }

            /// Writes the next bytes of `memos.json`, and hands them to the zip's blocks.
            func writeJSON(_ bytes: Data) throws(OutputError) {
                try json!.write(bytes)
                bytes.withUnsafeBytes { blocks?.wrote($0) }
            }

            /// Closes `memos.json`, when it is written, and lists it. Gives
            /// its size and SHA-256 (size 0 and no digest when it is not written).
            mutating func closeJSON(source: ExportManifest.Source, time: Timestamp) throws -> Written {
                var jsonFile = Written(path: Exporter.jsonName, size: 0, digest: SHA256().finalize(), modified: time)
                guard let json else { return jsonFile }
                writer.endArray()
                writer.key("schemaVersion")
                writer.value(.integer(1))
                writer.key("source")
                writer.value(try JSONValue(encoding: source))
                writer.endObject()
                try writeJSON(writer.take() + [0x0A])
                jsonFile.size = json.size
                jsonFile.digest = try json.finish()
                try Exporter.makeReadOnly(json.url)
                try written.append(jsonFile)
                return jsonFile
            }
        }

        /// Pass 2: reads each memo again (or takes it from the previous run)
        /// and writes it everywhere, then lets it go; memos are read and
        /// rendered, and Markdown files written, on every core, `batchSize`
        /// at a time.
        mutating func writeMemos(_ plan: Plan, progress: (Int, Int) -> Void) throws -> Outputs {
            let json = withJSON ? try OutputFile(staging.appendingPathComponent(Exporter.jsonName)) : nil
            if withMarkdown { try AtomicFile.makeFolder(staging.appendingPathComponent(Exporter.markdownName)) }
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("exportedAt")
            writer.string(plan.exportedAt?.iso8601)
            writer.key("memos")
            writer.beginArray()
            let written = SpillSort<Written>(scratch: staging, runLength: exporter.sortRunLength)
            // The zip is written while the memos are read: each batch's Markdown
            // files go to it in export order, deflated on every core; an
            // unchanged memo's entry is copied from the previous run's zip.
            let zipWriter =
                zipped ? ZipBuilder(url: staging.appendingPathComponent(Exporter.zipName), previous: exporter.previous?.zip) : nil
            let blocks = zipWriter.map { _ in
                JSONBlocks(url: staging.appendingPathComponent(JSONBlocks.fileName), previous: exporter.previous?.jsonBlocks)
            }
            let recorder = Recorder(
                Outputs(json: json, writer: writer, written: written, zipWriter: zipWriter, blocks: blocks), index: exporter.index,
                staging: staging)
            do {
                let order = try plan.memos.sorted()
                var position = 0
                var batch: [Planned] = []
                // The previous run's records of this batch's memos, read alongside them in export order.
                var reusable: [MemoID: MarkdownIndex.Entry] = [:]
                while let memo = try order.next() {
                    if let problem = plan.heldTwice[memo.id] {
                        missing.append(
                            .init(
                                id: memo.id, path: problem.path,
                                reason: "the id is held twice (\(problem.message)), and reckon does not pick one"))
                        continue
                    }
                    batch.append(memo)
                    if let entry = exporter.previous?.entry(createdAt: memo.createdAt, id: memo.id) { reusable[memo.id] = entry }
                    if batch.count == exporter.batchSize {
                        progress(position, plan.count)
                        position += batch.count
                        try writeBatch(&batch, reusable: &reusable, into: recorder)
                    }
                }
                try writeBatch(&batch, reusable: &reusable, into: recorder)
            } catch {
                // Nothing may still write into the staging folder once the caller has the error.
                _ = try? recorder.finish()
                throw error
            }
            let outputs = try recorder.finish()
            progress(plan.count, plan.count)
            // The index's copy sorted by id is written while the zip is deflated.
            exporter.index?.startWritingByID()
            return outputs
        }

        /// Writes the memos of `batch`, in export order, and empties it and
        /// `reusable` (the previous run's records of them): renders each
        /// (or takes it from the previous run), writes its Markdown file,
        /// and hands the memos to `recorder`.
        mutating func writeBatch(
            _ batch: inout [Planned], reusable: inout [MemoID: MarkdownIndex.Entry], into recorder: Recorder
        ) throws {
            // While the zip's thread is behind, it sets the pace: this
            // batch's work is done here, in one piece, leaving it a core.
            let spread = recorder.zipWriter?.isBehind != true
            let memos = render(batch, reusable: reusable, spread: spread)
            batch.removeAll(keepingCapacity: true)
            let kept = try writeMarkdownFiles(memos, reusable: reusable, spread: spread)
            reusable.removeAll(keepingCapacity: true)
            try recorder.record(kept)
        }

        /// Hands each batch's Markdown files to the zip and records its
        /// memos (`Outputs.record`) on another core, in batch order, while
        /// the next batch is rendered and written here. One batch is
        /// recorded at a time; `outputs` is touched only by it, and by the
        /// caller once `finish` has waited for the last.
        final class Recorder: @unchecked Sendable {
            private var outputs: Outputs
            private let index: MarkdownIndex.Writer?
            private let staging: URL
            /// The batch being recorded; only the caller's thread touches it.
            private var inFlight: Pending<Result<Void, any Error>>?
            /// The zip the batches go to, kept apart from `outputs` so the
            /// caller may ask whether it is behind while a batch is recorded.
            let zipWriter: ZipBuilder?

            init(_ outputs: Outputs, index: MarkdownIndex.Writer?, staging: URL) {
                self.outputs = outputs
                self.index = index
                self.staging = staging
                zipWriter = outputs.zipWriter
            }

            /// Records `kept` once the batch before it is recorded; throws
            /// what stopped that batch, if something did.
            func record(_ kept: [(Planned, Rendered, MarkdownFile?)]) throws {
                try waitForBatch()
                inFlight = Pending { [self] in Result { try recordNow(kept) } }
            }

            /// The outputs, once every batch is recorded.
            func finish() throws -> Outputs {
                try waitForBatch()
                return outputs
            }

            private func waitForBatch() throws {
                guard let batch = inFlight else { return }
                inFlight = nil
                try batch.wait().get()
            }

            private func recordNow(_ kept: [(Planned, Rendered, MarkdownFile?)]) throws {
                let previousZip = zipWriter?.previous
                try zipWriter?.add(
                    kept.compactMap { _, _, file in
                        file.map { file in
                            let copied = file.reused ? file.data.flatMap { previousZip?.entry(named: file.written.path, holding: $0) } : nil
                            return .init(
                                name: file.written.path, modified: file.written.modified,
                                contents: copied.map { .copy($0) } ?? file.data.map { .data($0) }
                                    ?? .file(staging.appending(path: file.written.path, directoryHint: .notDirectory), size: file.written.size))
                        }
                    })
                for (planned, memo, markdown) in kept {
                    try outputs.record(memo, planned: planned, markdown: markdown, index: index)
                }
            }
        }

        /// How many memos one core takes at a time: `chunkSize` when the
        /// work is spread over every core, else all `count` in one piece.
        func pieces(of count: Int, spread: Bool) -> Int { spread ? exporter.chunkSize : max(count, 1) }

        /// Reads `memos` and renders each, on every core.
        mutating func readAndRender(_ memos: [(MemoID, IDSpelling)], spread: Bool) -> [MemoID: Rendered] {
            let withMarkdown = withMarkdown
            let fingerprinted = fingerprinted
            return Dictionary(
                uniqueKeysWithValues: read(
                    memos, chunkSize: pieces(of: memos.count, spread: spread), as: .memo,
                    then: { Rendered($0, markdown: withMarkdown, fingerprinted: fingerprinted) }
                )
                .map { ($0.0.0, $0.1) })
        }

        /// The memos of a batch, rendered, in its order: the unchanged memos
        /// the previous run holds whole taken from it, the rest read. A memo
        /// that cannot be read is left out.
        mutating func render(_ batch: [Planned], reusable: [MemoID: MarkdownIndex.Entry], spread: Bool) -> [(Planned, Rendered)] {
            let withMarkdown = withMarkdown
            let previousJSON = exporter.previous?.json ?? -1
            let unchanged = batch.compactMap { $0.unchanged ? reusable[$0.id] : nil }
            let taken = Dictionary(
                uniqueKeysWithValues: mapOnEveryCore(unchanged, chunkSize: pieces(of: unchanged.count, spread: spread)) { chunk in
                    zip(chunk, MarkdownIndex.Previous.jsonEntries(chunk, in: previousJSON)).compactMap { entry, json in
                        entry.names.flatMap { names in
                            json.map { (entry.id, Rendered(taking: entry, json: $0, names: names, markdown: withMarkdown)) }
                        }
                    }
                }.joined())
            let fresh = readAndRender(batch.filter { taken[$0.id] == nil }.map { ($0.id, $0.spelledAs) }, spread: spread)
            return batch.compactMap { plan in taken[plan.id].map { (plan, $0) } ?? fresh[plan.id].map { (plan, $0) } }
        }

        /// Writes the Markdown file of each of `memos` (when it has one) on
        /// every core, reusing the previous run's file where it can. A memo
        /// taken unread whose previous file cannot be reused is read and
        /// rendered after all, and left out when it cannot be read. Gives
        /// the memos kept, each with its file.
        mutating func writeMarkdownFiles(
            _ memos: [(Planned, Rendered)], reusable: [MemoID: MarkdownIndex.Entry], spread: Bool
        ) throws -> [(Planned, Rendered, MarkdownFile?)] {
            var memos = memos
            let previousMarkdown = exporter.previous?.markdown
            // The short name unless an earlier memo took it: an earlier
            // batch's file is found when the name is created, this batch's here.
            var shortNames = Set<String>()
            let named = memos.map { _, memo in
                (memo, shortNames.insert(memo.shortName).inserted, previousMarkdown.flatMap { folder in reusable[memo.id].map { (folder, $0) } })
            }
            var outcomes = writeMarkdown(named, spread: spread)
            // A memo taken unread whose previous file cannot be reused is read and rendered after all.
            let unreusable = outcomes.indices.filter { if case .failure(let error) = outcomes[$0] { error is Rendered.NeedsReading } else { false } }
            if !unreusable.isEmpty {
                let reread = readAndRender(unreusable.map { (memos[$0].0.id, memos[$0].0.spelledAs) }, spread: spread)
                let retried = writeMarkdown(unreusable.compactMap { at in reread[memos[at].1.id].map { ($0, named[at].1, nil) } }, spread: spread)
                var next = retried.makeIterator()
                for at in unreusable {
                    if let memo = reread[memos[at].1.id] {
                        memos[at].1 = memo
                        outcomes[at] = next.next()!
                    }
                }
            }
            let kept = zip(memos, outcomes).filter { if case .failure(let error) = $0.1 { !(error is Rendered.NeedsReading) } else { true } }
            return try kept.map { memo, outcome in (memo.0, memo.1, try outcome.get()) }
        }

        /// Writes each memo's Markdown file on every core: the previous
        /// run's file where it can (`previous`), else rendered. A chunk's
        /// previous files are read and hashed first, then put in place by one
        /// core at a time: ext4 adds names to a folder one at a time, and a
        /// core waiting for that in the kernel spins, where it could read
        /// the next chunk. Each link is checked after, outside that turn.
        func writeMarkdown(_ named: [(Rendered, Bool, (OpenFolder, MarkdownIndex.Entry)?)], spread: Bool) -> [Result<MarkdownFile?, any Error>] {
            let stagingPath = staging.path
            let placing = placingLock
            let linkingInto = exporter.linksReusedFiles ? OpenFolder(stagingPath + "/" + Exporter.markdownName) : nil
            return Array(
                mapOnEveryCore(named, chunkSize: pieces(of: named.count, spread: spread)) { chunk in
                    let read = chunk.map { memo, mayTakeShortName, previous in
                        previous.flatMap { memo.readPrevious($0.1, from: $0.0, into: stagingPath, mayTakeShortName: mayTakeShortName) }
                    }
                    let placed = placing.withLock {
                        zip(chunk, read).map { named, read in
                            read.map { read in Result { try named.0.place(read, linkingInto: linkingInto) } }
                        }
                    }
                    return zip(chunk, zip(read, placed)).map { named, readAndPlaced in
                        let outcome: Result<MarkdownFile?, any Error>
                        switch readAndPlaced {
                        case (let read?, .success(let placed?)?) where !placed.linked || named.0.holdsLinked(read, in: linkingInto!):
                            outcome = .success(placed.file)
                        case (_, .failure(let error)?):
                            outcome = .failure(error)
                        default:
                            outcome = Result { try named.0.writeMarkdown(into: stagingPath, mayTakeShortName: named.1) }
                        }
                        if case .success(.some) = outcome { TestStop.at("markdown-file-written") }
                        return outcome
                    }
                }.joined())
        }

        // MARK: The finish

        /// Finishes the export: closes `memos.json`, writes the manifest (and
        /// with the zip, finishes it and removes what only it needed).
        func finish(_ plan: Plan, _ outputs: Outputs) throws -> ExportSummary {
            var outputs = outputs
            let time = plan.exportedAt ?? ZipEntryRules.earliest
            let jsonFile = try outputs.closeJSON(source: source, time: time)
            outputs.blocks?.close()
            TestStop.at("memos-written")

            var manifest = ExportManifest(
                source: source, pipeline: exporter.pipeline, exportedAt: plan.exportedAt, includeArchived: includeArchived, formats: formats,
                counts: outputs.counts, files: [], missing: missing.sorted { $0.id < $1.id })
            manifest.memoBytes = max(manifest.memoBytes, outputs.largestEntry)
            if zipped { manifest.zipWriter = ZipBuilder.settings }
            let manifestURL = staging.appendingPathComponent(Exporter.manifestName)
            let folderManifest: (size: Int, digest: SHA256.Digest)
            let zipFile: Written?
            var jsonBlocks: [JSONBlocks.Block] = []
            var copiedJSONBlocks = 0
            if let zipWriter = outputs.zipWriter {
                let finished = try finishZip(zipWriter, manifest: manifest, to: manifestURL, json: outputs.blocks!, outputs.written, time: time)
                let stream = try outputs.blocks!.finished()
                copiedJSONBlocks = stream.copied
                folderManifest = finished.manifest
                zipFile = finished.zip
                // Where each block of memos.json is in the zip, for the next run.
                jsonBlocks = stream.blocks.map { block in
                    var block = block
                    block.offset += zipWriter.deflatedAt!
                    return block
                }
            } else {
                folderManifest = try Exporter.writeManifest(manifest, to: manifestURL) { list, _ in
                    let files = try outputs.written.sorted()
                    while let file = try files.next() { try list(.folder, file) }
                }
                zipFile = nil
            }
            try Exporter.makeReadOnly(manifestURL)
            try exporter.index?.finish(manifest: folderManifest.digest, zip: zipFile?.digest, jsonBlocks: jsonBlocks)
            TestStop.at("manifest-written")
            return ExportSummary(
                formats: formats, exportedAt: plan.exportedAt, counts: outputs.counts, missing: manifest.missing,
                json: jsonFile.record, markdownBytes: formats.contains(.markdown) ? outputs.markdownBytes : 0, zip: zipFile?.record,
                reusedMemos: outputs.reusedMemos, copiedZipEntries: outputs.zipWriter?.copied ?? 0,
                copiedJSONBlocks: copiedJSONBlocks, jsonBlocks: jsonBlocks.count)
        }

        /// Writes the folder's manifest (to `manifestURL`) and finishes the
        /// zip: `memos.json` and the zip's own manifest are deflated on the
        /// zip's thread while the folder's manifest is written here. The
        /// zip's manifest lists the zip's other entries and goes last, so a
        /// zip cut short lacks it. Gives the folder manifest's size and
        /// SHA-256, and the zip as the folder's manifest lists it.
        func finishZip(
            _ zipWriter: ZipBuilder, manifest: ExportManifest, to manifestURL: URL, json blocks: JSONBlocks,
            _ written: SpillSort<Written>, time: Timestamp
        ) throws -> (manifest: (size: Int, digest: SHA256.Digest), zip: Written?) {
            let staging = staging
            let formats = formats
            try zipWriter.add([.init(name: Exporter.jsonName, modified: time, contents: .deflated(blocks))])
            let innerURL = staging.appendingPathComponent(".zip-" + Exporter.manifestName)
            let inner = try Exporter.writeManifest(manifest, to: innerURL) { list, _ in
                let files = try written.sorted()
                while let file = try files.next() { try list(.zip, file) }
            }
            try zipWriter.add([.init(name: Exporter.manifestName, modified: time, contents: .file(innerURL, size: inner.size))])
            // What is written so far goes to disk while the last entries are
            // deflated, so the flush before publishing has little more than the zip left.
            // Its failure fails the export: the pages it could not write may
            // be gone, and a later flush on another descriptor is not told.
            let earlyFlush = DispatchGroup()
            let earlyFlushFailure = Mutex<OutputError?>(nil)
            Workers.async(group: earlyFlush) {
                do throws(OutputError) { try ExportFolder.flush(staging) } catch { earlyFlushFailure.withLock { $0 = error } }
            }
            defer { earlyFlush.wait() }
            // The container is written on another core while the folder's manifest lists the files;
            // nothing else touches the zip meanwhile, and it is waited for before this returns or throws.
            nonisolated(unsafe) let container = zipWriter
            let zipFinished = Pending { Result { try container.finish() } }
            defer { _ = zipFinished.wait() }
            var zipFile: Written?
            let folderManifest = try Exporter.writeManifest(manifest, to: manifestURL) { list, later in
                let files = try written.sorted()
                while let file = try files.next() {
                    // Which files `written` holds stay beside the manifest.
                    if formats.contains(file.path == Exporter.jsonName ? .json : .markdown) { try list(.folder, file) }
                }
                try later(.folder) {
                    let (size, digest) = try zipFinished.wait().get()
                    guard unlink(innerURL.path) == 0 else { throw OutputError(path: innerURL.path, reason: AtomicFile.lastError()) }
                    try Exporter.makeReadOnly(staging.appendingPathComponent(Exporter.zipName))
                    zipFile = Written(path: Exporter.zipName, size: size, digest: digest, modified: time)
                    // Files only the zip needed go now, before the manifest is whole.
                    if !formats.contains(.json) {
                        let json = staging.appendingPathComponent(Exporter.jsonName)
                        guard unlink(json.path) == 0 else { throw OutputError(path: json.path, reason: AtomicFile.lastError()) }
                    }
                    if !formats.contains(.markdown) { try FileTree.remove(staging.appendingPathComponent(Exporter.markdownName).path) }
                    TestStop.at("zip-written")
                    return zipFile!
                }
                try list(.zip, Written(path: Exporter.manifestName, size: inner.size, digest: inner.digest, modified: time))
                let entries = try written.sorted()
                while let file = try entries.next() { try list(.zip, file) }
            }
            earlyFlush.wait()
            if let failure = earlyFlushFailure.withLock({ $0 }) { throw failure }
            return (folderManifest, zipFile)
        }
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
