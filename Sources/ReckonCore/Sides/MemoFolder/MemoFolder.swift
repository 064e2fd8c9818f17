import CSimdJSON
import Foundation

/// Reads one side stored as a memo folder: `index.json` plus `memos/<uuid>.json`.
///
/// Nothing is written, renamed or deleted. Links inside the folder are
/// reported, never followed.
package struct MemoFolder: MemoStore {
    package let spec: SideSpec
    package var limits: ReadLimits
    /// How many values a sort holds before it spills a run to its scratch
    /// folder (when it has one).
    package var sortRunLength = spillRunLength
    /// The folder the side's path names.
    let url: URL
    /// Where the names in `memos/` come from.
    package var memoListing = MemoListing.folder
    /// What the process decides for the store (workers).
    package var process: ProcessSettings

    /// Where the names in `memos/` come from.
    package enum MemoListing: Sendable {
        /// The folder's own entries.
        case folder
        /// Names given by whoever keeps this folder as a cache of another
        /// (nil when that one has no `memos/`): a listing never depends on
        /// what the cache happens to hold, and a cached file's identity
        /// proves nothing.
        case given([String]?)
    }

    /// Hands each name in `memos/` to `each`: the folder's own, or the
    /// remote's, each taken as a regular file. False when the folder cannot be listed.
    private func listMemos(in path: String, each: (UnsafeRawBufferPointer, ListedKind) throws -> Void) throws -> Bool {
        guard case .given(let names) = memoListing else { return try listFolder(atPath: path, each: each) }
        for name in names ?? [] {
            var name = name
            try name.withUTF8 { try each(UnsafeRawBufferPointer($0), .regularFile) }
        }
        return true
    }

    package init(_ spec: SideSpec, limits: ReadLimits = ReadLimits(), process: ProcessSettings = ProcessSettings()) {
        guard let side = spec.kind as? MemoFolderSide else { preconditionFailure("a memo folder is read from a folder") }
        self.init(spec, url: side.url, limits: limits, process: process)
    }

    /// Reads the folder at `url` as the side `spec` (a remote's cache, read as the remote).
    package init(_ spec: SideSpec, url: URL, limits: ReadLimits = ReadLimits(), process: ProcessSettings = ProcessSettings()) {
        self.spec = spec
        self.limits = limits
        self.process = process
        self.url = url
    }

    /// The folder holding `index.json` and `memos/`.
    var root: URL { Self.resolveRoot(url) }

    /// The folder holding `index.json`: the path itself, or its `60dMemo`
    /// subfolder when the path is the cloud folder's parent.
    /// A `60dMemo` that is a link is taken too, so that it is reported as a
    /// link rather than as a folder without `index.json`.
    package static func resolveRoot(_ url: URL) -> URL {
        let nested = url.appendingPathComponent(nestedFolder)
        if FileKind(path: url.appendingPathComponent("index.json").path) == .missing,
            FileKind(path: url.appendingPathComponent("memos").path) == .missing,
            [.directory, .link].contains(FileKind(path: nested.path))
        {
            return nested
        }
        return url
    }

    /// How deep a clean index nests (the document, `entries`, an entry): the
    /// fast paths, which do not count levels, are taken only when the limit allows it.
    static let cleanIndexDepth = 3

    /// The folder the cloud folder nests its files in, when a side's path is its parent.
    package static let nestedFolder = "60dMemo"

    /// The side with each problem's path made relative to the side's own
    /// path, as the user spelled it: `60dMemo/memos/…` when the files are
    /// nested. Reading works inside the nested folder; what is shown and
    /// kept is this, so every printed path names the file itself.
    func placed(_ side: SideListing) -> SideListing {
        side.inside(nesting)
    }

    /// `60dMemo` when the side's files are nested in that folder, else empty.
    var nesting: String {
        root == url ? "" : Self.nestedFolder
    }

    /// Reads the index only (no memo file): with simdjson when the file is
    /// clean, else with the careful reader that names every problem.
    package func readIndex() -> SideListing {
        placed(readIndexInRoot())
    }

    /// `readIndex` with problem paths relative to the folder holding `index.json`.
    private func readIndexInRoot() -> SideListing {
        do {
            var (side, sorter) = try sortIndex(scratch: nil)
            guard let sorter else { return side }
            var entries = try SortedEntries(sorter.sorted())
            var kept: [IndexEntry] = []
            while let entry = try entries.next() { kept.append(entry) }
            side.entries = IDMap(sortedKeys: kept.map(\.id), values: kept)
            side.problems += entries.repeatProblems
            return side
        } catch {
            return SideListing(spec: spec, status: .failed, problems: [Problem(.unreadableFile, path: "index.json", errorWords(error))])
        }
    }

    /// Checks the side's folder and reads its index into a sorter: each
    /// usable entry keyed by its id and its place in the file, a repeated id
    /// included. The listing returned has the index's status and problems;
    /// no sorter when the side failed.
    private func sortIndex(scratch: URL?) throws -> (SideListing, SpillSort<PlacedEntry>?) {
        var side = SideListing(spec: spec)
        func fail(_ kind: Problem.Kind, _ path: String, _ message: String) -> (SideListing, SpillSort<PlacedEntry>?) {
            side.status = .failed
            side.problems.append(Problem(kind, path: path, message))
            return (side, nil)
        }
        switch FileKind(path: root.path) {
        case .directory: break
        case .missing: return fail(.unreadableFolder, "", "the folder does not exist")
        case .link: return fail(.link, "", "is a link; links are not followed")
        case .regular:
            return fail(.unreadableFolder, "", "is a file, but neither a memo folder nor the app's store (a store starts with SQLite's header)")
        case let other: return fail(.unreadableFolder, "", "is \(other.description), not a folder")
        }
        guard access(root.path, R_OK | X_OK) == 0 else {
            return fail(.unreadableFolder, "", "the folder cannot be read (permission denied)")
        }
        let indexPath = root.appendingPathComponent("index.json").path
        let indexSize: Int64
        switch FileKind(path: indexPath) {
        case .regular(let size): indexSize = size
        case .missing: return fail(.missingIndex, "index.json", "there is no index.json in this folder")
        case .link: return fail(.link, "index.json", "is a link; links are not followed")
        case let other: return fail(.notRegularFile, "index.json", "is \(other.description), not a regular file")
        }
        if indexSize > 0, indexSize <= limits.indexSizeLimit, limits.depthLimit >= Self.cleanIndexDepth {
            let sorter = SpillSort<PlacedEntry>(scratch: scratch, runLength: sortRunLength)
            var position = 0
            let clean = try IndexReader.forEachClean(atPath: indexPath) { entry in
                try sorter.append(PlacedEntry(entry: entry, position: position))
                position += 1
            }
            if clean { return (side, sorter) }
        }
        let data: Data
        do {
            data = try readRegularFile(atPath: indexPath, limit: limits.indexSizeLimit)
        } catch {
            return fail(.unreadableFile, "index.json", error.message)
        }
        do {
            let index = try IndexReader.read(data, depthLimit: limits.depthLimit)
            let sorter = SpillSort<PlacedEntry>(scratch: scratch, runLength: sortRunLength)
            for (position, entry) in index.entries.enumerated() { try sorter.append(PlacedEntry(entry: entry, position: position)) }
            side.problems += index.problems
            return (side, sorter)
        } catch let failure as IndexReader.Failure {
            if failure.kind == .corruptIndex { side.damaged.append(DamagedFile(path: "index.json", bytes: data)) }
            return fail(failure.kind, "index.json", failure.message)
        }
    }

    /// An index entry and its place in the file, ordered by id, then place.
    struct PlacedEntry: Spillable {
        var entry: IndexEntry
        var position: Int

        static func < (a: PlacedEntry, b: PlacedEntry) -> Bool { (a.entry.id, a.position) < (b.entry.id, b.position) }

        func write(to record: inout Record) {
            record.add(entry.id)
            record.add(position)
            entry.add(to: &record)
        }

        init(entry: IndexEntry, position: Int) {
            self.entry = entry
            self.position = position
        }

        init(from reader: inout RecordReader) {
            let id = reader.id()
            position = reader.int()
            entry = IndexEntry(id: id, from: &reader)
        }
    }

    /// A name listed in `memos/` that holds an id (`<id>.json`), ordered by
    /// id, then name.
    struct ListedFile: Spillable {
        var id: MemoID
        var spelledAs: IDSpelling
        /// Nil for a regular file; else what it is, for messages.
        var other: FileKind?

        var name: String { spelledAs.fileName(of: id) }

        static func < (a: ListedFile, b: ListedFile) -> Bool { a.id != b.id ? a.id < b.id : a.name < b.name }

        func write(to record: inout Record) {
            record.add(id)
            spelledAs.write(to: &record)
            switch other {
            case nil: record.add(UInt8(0))
            case .link: record.add(UInt8(1))
            case let kind?:
                record.add(UInt8(2))
                record.add(kind.description)
            }
        }

        init(id: MemoID, spelledAs: IDSpelling, other: FileKind?) {
            self.id = id
            self.spelledAs = spelledAs
            self.other = other
        }

        init(from reader: inout RecordReader) {
            id = reader.id()
            spelledAs = IDSpelling(from: &reader)
            switch reader.byte() {
            case 0: other = nil
            case 1: other = .link
            default: other = .special(reader.text()!)
            }
        }
    }

    /// Index entries read back from `sortIndex` in id order, each id once:
    /// the first in the file is kept, and a later one is a problem worded as
    /// the careful reader words it.
    struct SortedEntries {
        private let values: SortedValues<PlacedEntry>
        private var ahead: PlacedEntry?
        private var repeats: [(position: Int, problem: Problem)] = []

        init(_ values: SortedValues<PlacedEntry>) throws {
            self.values = values
            ahead = try values.next()
        }

        /// The id `next()` gives.
        var nextID: MemoID? { ahead?.entry.id }

        mutating func next() throws -> IndexEntry? {
            guard let first = ahead else { return nil }
            ahead = try values.next()
            while let later = ahead, later.entry.id == first.entry.id {
                repeats.append((later.position, IndexReader.repeated(later.entry.id, at: later.position, first: first.position)))
                ahead = try values.next()
            }
            return first.entry
        }

        /// Whether `id` came more than once (asked right after `next()` gave it).
        func repeated(_ id: MemoID) -> Bool { repeats.last?.problem.id == id }

        /// The problems of the repeated ids so far, in file order.
        var repeatProblems: [Problem] { repeats.sorted { $0.position < $1.position }.map(\.problem) }
    }

    /// Counts a side: from the index alone — with simdjson when the file is
    /// clean, else with the careful reader that names every problem — or,
    /// when the index cannot be used, from the memo files, marked degraded.
    package func count() -> SideListing {
        let indexPath = root.appendingPathComponent("index.json").path
        if FileKind(path: root.path) == .directory, case .regular(let size) = FileKind(path: indexPath), size <= limits.indexSizeLimit, size > 0,
            limits.depthLimit >= Self.cleanIndexDepth
        {
            var counts = reckon_index_counts()
            if reckon_count_clean_index(indexPath, &counts, UInt32(process.threads.count ?? 0)) == 0 {
                return SideListing(spec: spec, precounted: MemoCounts(active: Int(counts.active), archived: Int(counts.archived)))
            }
        }
        let side = readIndexInRoot()
        return side.indexUnusable ? load(deep: true) : placed(side)
    }

    /// Reads the index and lists `memos/`, finding dangling entries and
    /// orphan files; with `deep`, also reads and parses every memo file.
    /// When `index.json` cannot be used the side is not given up: its
    /// entries are rebuilt from the memo files and it is marked degraded.
    package func load(deep: Bool) -> SideListing {
        placed(loadInRoot(deep: deep))
    }

    /// `load` with problem paths relative to the folder holding `index.json`.
    private func loadInRoot(deep: Bool) -> SideListing {
        var entries: [IndexEntry] = []
        var files: [(MemoID, IDSpelling)] = []
        var side: SideListing
        do {
            side = try listInRoot(scratch: nil) { id, entry, file in
                if let entry { entries.append(entry) }
                if let file { files.append((id, file)) }
            }
        } catch {
            return SideListing(spec: spec, status: .failed, problems: [Problem(.unreadableFolder, path: "", errorWords(error))])
        }
        side.entries = IDMap(sortedKeys: entries.map(\.id), values: entries)
        side.files = IDMap(sortedKeys: files.map(\.0), values: files.map(\.1))
        entries = []
        guard side.status != .failed, deep || side.rebuiltFromMemoFiles else { return side }

        var memos: [(MemoID, MemoSummary)] = []
        var rebuilt: [(MemoID, IndexEntry)] = []
        let outcomes = readJudged(files, chunkSize: 256, as: .summary) { $0 }
        for ((id, spelledAs), outcome) in zip(files, outcomes) {
            switch outcome {
            case .success(let memo):
                memos.append((id, memo))
                if side.rebuiltFromMemoFiles {
                    rebuilt.append(
                        (
                            id,
                            IndexEntry(
                                id: id, spelledAs: spelledAs, modifiedTime: memo.modifiedAt,
                                archivedAt: memo.archivedAt, deletedAt: memo.deletedAt, changeTag: memo.changeTag)
                        ))
                }
            case .failure(let judged):
                side.problems.append(judged.problem)
                if let bytes = judged.bytes { side.damaged.append(DamagedFile(path: judged.problem.path, bytes: bytes)) }
            }
        }
        side.memos = IDMap(sortedKeys: memos.map(\.0), values: memos.map(\.1))
        if side.rebuiltFromMemoFiles {
            side.entries = IDMap(sortedKeys: rebuilt.map(\.0), values: rebuilt.map(\.1))
        } else {
            for (id, memo) in memos {
                guard let entry = side.entries[id], let spelled = side.files[id],
                    let disagreement = Self.disagreement(of: entry, with: memo)
                else { continue }
                side.problems.append(Problem(.indexDisagrees, path: "memos/" + spelled.fileName(of: id), id: id, disagreement))
            }
        }
        return side
    }

    /// How an index entry disagrees with its memo file, in words
    /// ("index.json says modified 2026-04-18T09:15:00Z, the memo file says
    /// 2026-04-20T10:00:00Z"); nil when the modification time, the archived
    /// and the deleted state are the same instants in both.
    static func disagreement(of entry: IndexEntry, with memo: MemoSummary) -> String? {
        func said(_ field: String, _ value: Timestamp?) -> String { value.map { "\(field) \($0.iso8601)" } ?? "not \(field)" }
        var parts: [String] = []
        if entry.modifiedTime != memo.modifiedAt {
            parts.append("index.json says modified \(entry.modifiedTime.iso8601), the memo file says \(memo.modifiedAt.iso8601)")
        }
        for (field, index, file) in [("archived", entry.archivedAt, memo.archivedAt), ("deleted", entry.deletedAt, memo.deletedAt)]
        where index != file {
            parts.append("index.json says \(said(field, index)), the memo file says \(said(field, file))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// Reads the index and lists `memos/`, and hands each id to `visit` in id
    /// order with its index entry and its memo file's name (either may be
    /// absent), finding on the way dangling entries, orphan files, names
    /// spelled unlike the index and repeated ids. The listing returned holds
    /// the status and the problems, not the entries or files: `visit` gets
    /// those. With `scratch`, sorting spills there, so memory does not grow
    /// with the side. When the index cannot be used, the side is marked
    /// degraded, to be rebuilt from its memo files, and `visit` gets no entries.
    package func list(scratch: URL?, visit: (MemoID, IndexEntry?, IDSpelling?) throws -> Void) throws -> SideListing {
        placed(try listInRoot(scratch: scratch, visit: visit))
    }

    /// `list` with problem paths relative to the folder holding `index.json`.
    private func listInRoot(scratch: URL?, visit: (MemoID, IndexEntry?, IDSpelling?) throws -> Void) throws -> SideListing {
        var (side, indexSorter) = try sortIndex(scratch: scratch)
        let rebuild = side.indexUnusable
        if rebuild {
            side.status = .degraded
            side.rebuiltFromMemoFiles = true
            indexSorter = SpillSort(scratch: nil, runLength: 1)
        }
        guard side.status != .failed, let indexSorter else { return side }
        var listingProblems: [(name: String, problem: Problem)] = []
        guard let sortedFiles = try sortMemoFiles(scratch: scratch, side: &side, problems: &listingProblems) else { return side }
        let (fileSorter, memosMissing) = sortedFiles

        // Both lists in id order, side by side.
        let indexProblemIDs = Set(side.problems.compactMap(\.id))
        var entries = try SortedEntries(indexSorter.sorted())
        let files = try fileSorter.sorted()
        var file = try files.next()
        var entryProblems: [Problem] = []
        var orphans: [Problem] = []
        var danglingCount = 0
        while let id = [entries.nextID, file?.id].compactMap({ $0 }).min() {
            let (kept, fileProblem) = try memoFile(of: id, &file, in: files, problems: &listingProblems)
            let entry = entries.nextID == id ? try entries.next() : nil
            if let entry {
                if let kept, kept != entry.spelledAs {
                    entryProblems.append(
                        Problem(
                            .nameSpelling, path: "memos/" + kept.fileName(of: id), id: id,
                            "the index spells this id \(entry.spelling)", severity: .warning))
                } else if kept == nil && !entry.isDeleted && !indexProblemIDs.contains(id) && !fileProblem && !entries.repeated(id) {
                    danglingCount += 1
                    if !memosMissing {
                        entryProblems.append(
                            Problem(
                                .danglingEntry, path: "memos/" + entry.spelledAs.fileName(of: id), id: id,
                                "index.json lists this memo but its file is missing"))
                    }
                }
            } else if let kept, !rebuild, !indexProblemIDs.contains(id) {
                orphans.append(Problem(.orphanFile, path: "memos/" + kept.fileName(of: id), id: id, "this memo file has no entry in index.json"))
            }
            try visit(id, entry, kept)
        }
        if memosMissing && danglingCount > 0 {
            let memos = danglingCount == 1 ? "1 memo" : "\(danglingCount) memos"
            entryProblems.append(
                Problem(.unreadableFolder, path: "memos", "the folder is missing, so the files of \(memos) in index.json are missing"))
        }
        side.problems += entries.repeatProblems
        side.problems += listingProblems.sorted { $0.name < $1.name }.map(\.problem)
        side.problems += entryProblems + orphans
        return side
    }

    /// Lists `memos/` and sorts each name that holds an id by id; other
    /// names are problems. Whether the folder is missing; nil when it
    /// cannot be listed (the side then failed, and says why).
    private func sortMemoFiles(scratch: URL?, side: inout SideListing, problems listingProblems: inout [(name: String, problem: Problem)])
        throws -> (SpillSort<ListedFile>, memosMissing: Bool)?
    {
        let fileSorter = SpillSort<ListedFile>(scratch: scratch, runLength: sortRunLength)
        let memosURL = root.appendingPathComponent("memos")
        let memosKind: FileKind
        switch memoListing {
        case .folder: memosKind = FileKind(path: memosURL.path)
        case .given(let names): memosKind = names == nil ? .missing : .directory
        }
        switch memosKind {
        case .missing: break
        case .directory:
            let listed = try listMemos(in: memosURL.path) { name, kind in
                func problem(_ problem: (String) -> Problem) {
                    let text = displayName(name)
                    listingProblems.append((text, problem("memos/" + text)))
                }
                guard name.count > 5, name.suffix(5).elementsEqual(".json".utf8) else {
                    return problem { Problem(.orphanFile, path: $0, "not a memo file (no .json ending); left alone", severity: .warning) }
                }
                let stem = UnsafeRawBufferPointer(rebasing: name.dropLast(5))
                guard let id = MemoID(utf8: stem) else {
                    return problem { Problem(.invalidID, path: $0, "the file name is not <uuid>.json; the file is not read") }
                }
                let other: FileKind? = if case .other(let other) = kind { other } else { nil }
                try fileSorter.append(ListedFile(id: id, spelledAs: IDSpelling(stem), other: other))
            }
            guard listed else {
                side.status = .failed
                side.problems.append(Problem(.unreadableFolder, path: "memos", "the folder cannot be listed"))
                return nil
            }
        case let other:
            side.status = .failed
            side.problems.append(Problem(.unreadableFolder, path: "memos", "is \(other.description), not a folder"))
            return nil
        }
        return (fileSorter, memosKind == .missing)
    }

    /// The memo file of `id` among the listed files: the first regular file
    /// by name; a later one is a duplicate, and one that is not a regular
    /// file a problem. Moves `file` past the files of `id`, and says
    /// whether any of them was a problem.
    private func memoFile(
        of id: MemoID, _ file: inout ListedFile?, in files: SortedValues<ListedFile>,
        problems listingProblems: inout [(name: String, problem: Problem)]
    ) throws -> (kept: IDSpelling?, fileProblem: Bool) {
        var kept: IDSpelling?
        var fileProblem = false
        while let listed = file, listed.id == id {
            var problem: Problem?
            if let kept {
                problem = Problem(
                    .duplicateID, path: "memos/" + listed.name, id: id, "another file, memos/\(kept.fileName(of: id)), holds the same id")
            } else {
                switch listed.other {
                case nil: kept = listed.spelledAs
                case .some(.link): problem = Problem(.link, path: "memos/" + listed.name, id: id, "is a link; links are not followed")
                case .some(let other):
                    problem = Problem(.notRegularFile, path: "memos/" + listed.name, id: id, "is \(other.description), not a regular file")
                }
            }
            if let problem {
                listingProblems.append((listed.name, problem))
                fileProblem = true
            }
            file = try files.next()
        }
        return (kept, fileProblem)
    }

    package func read<Kept, Output: Sendable>(
        _ memos: [(MemoID, IDSpelling)], chunkSize: Int, as reading: MemoReading<Kept>,
        then work: @escaping @Sendable (Kept) -> Output
    ) -> [Result<Output, Problem>] {
        let nesting = nesting
        return readJudged(memos, chunkSize: chunkSize, as: reading, then: work).map { $0.mapError { $0.problem.inside(nesting) } }
    }

    package func fileIdentities(_ memos: [(MemoID, IDSpelling)]) -> [FileIdentity?] {
        // A cache's files change when the cache is refreshed, not with the remote.
        guard case .folder = memoListing, let folder = OpenFolder(root.path + "/memos") else { return memos.map { _ in nil } }
        return Array(
            mapOnEveryCore(memos, chunkSize: 256, on: process.threads) { chunk in
                chunk.map { id, spelledAs in FileIdentity(of: spelledAs.fileName(of: id), in: folder) }
            }.joined())
    }

    /// A memo file that could not be used: the problem and, when its bytes were read but are not a usable
    /// memo, those bytes for the quarantine.
    struct Judged: Error {
        var problem: Problem
        var bytes: Data?
    }

    /// `read`, keeping the bytes of what was judged damaged, with problem
    /// paths relative to the folder holding `index.json`. The results come
    /// back in the order given, so the outcome does not depend on the machine.
    func readJudged<Kept, Output: Sendable>(
        _ files: [(MemoID, IDSpelling)], chunkSize: Int, as reading: MemoReading<Kept>,
        then work: @escaping @Sendable (Kept) -> Output
    ) -> [Result<Output, Judged>] {
        let folder = OpenFolder(root.path + "/memos")
        return Array(
            mapOnEveryCore(files, chunkSize: chunkSize, on: process.threads) { chunk in
                // Each chunk has its own buffer and its own parser.
                var buffer = Data()
                let parser = MemoParser()
                return chunk.map { id, spelledAs in
                    readChecked(
                        id, spelledAs.fileName(of: id), in: folder, buffer: &buffer,
                        as: { data, depthLimit throws(MemoReader.Failure) in try reading.parse(data, depthLimit, parser) }
                    ).map(work)
                }
            }.joined())
    }

    /// One memo file read by `parse` (which gives the id it holds and what
    /// is kept of it), or the problem that makes its id uncomparable, with
    /// the path inside the folder holding `index.json`. The file is opened
    /// inside `folder` (`memos/`, opened); `buffer` is reused from call to call.
    private func readChecked<Kept>(
        _ id: MemoID, _ name: String, in folder: OpenFolder?, buffer: inout Data,
        as parse: (Data, Int) throws(MemoReader.Failure) -> (MemoID, Kept)
    ) -> Result<Kept, Judged> {
        // The path is spelled only for a problem: most files have none.
        var path: String { "memos/" + name }
        do {
            guard let folder else { throw ReadFailure(message: "cannot be opened: the memos folder cannot be opened") }
            try readRegularFile(atPath: name, in: folder, limit: limits.memoSizeLimit, into: &buffer)
            let (held, kept) = try parse(buffer, limits.depthLimit)
            guard held == id else {
                return .failure(
                    Judged(
                        problem: Problem(.idMismatch, path: path, id: id, "the file holds id \(held), not the one in its name"),
                        bytes: buffer))
            }
            return .success(kept)
        } catch let failure as ReadFailure {
            return .failure(Judged(problem: Problem(.unreadableFile, path: path, id: id, failure.message)))
        } catch let failure as MemoReader.Failure {
            return .failure(Judged(problem: Problem(.corruptMemo, path: path, id: id, failure.message), bytes: buffer))
        } catch {
            return .failure(Judged(problem: Problem(.unreadableFile, path: path, id: id, errorWords(error))))
        }
    }
}
