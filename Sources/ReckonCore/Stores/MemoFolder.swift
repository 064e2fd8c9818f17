import CSimdJSON
import Foundation
import Synchronization

/// Reads one side stored as a memo folder: `index.json` plus `memos/<uuid>.json`.
///
/// Nothing is written, renamed or deleted. Links inside the folder are
/// reported, never followed.
public struct MemoFolder: Sendable, Equatable {
    /// Largest `index.json` read.
    public var indexSizeLimit: Int64 = 1 << 30
    /// Largest memo file read.
    public var memoSizeLimit: Int64 = 64 << 20
    /// Deepest nesting of JSON arrays and objects read.
    public var depthLimit = 64

    public init() {}

    /// The folder holding `index.json`: the path itself, or its `60dMemo`
    /// subfolder when the path is the cloud folder's parent.
    public static func resolveRoot(_ url: URL) -> URL {
        let nested = url.appendingPathComponent("60dMemo")
        if FileKind(path: url.appendingPathComponent("index.json").path) == .missing,
           FileKind(path: url.appendingPathComponent("memos").path) == .missing,
           FileKind(path: nested.path) == .directory {
            return nested
        }
        return url
    }

    /// Reads the index only (no memo file): with simdjson when the file is
    /// clean, else with the careful reader that names every problem.
    public func readIndex(_ spec: SideSpec) -> SideListing {
        var side = SideListing(spec: spec)
        let root = Self.resolveRoot(spec.url)
        func fail(_ kind: Problem.Kind, _ path: String, _ message: String) -> SideListing {
            side.status = .failed
            side.problems.append(Problem(kind, path: path, message))
            return side
        }
        switch FileKind(path: root.path) {
        case .directory: break
        case .missing: return fail(.unreadableFolder, "", "the folder does not exist")
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
        if indexSize > 0, indexSize <= indexSizeLimit, let index = IndexReader.readClean(atPath: indexPath) {
            side.entries = IDMap(firstOf: index.entries, id: \.id, value: { $0 })
            return side
        }
        let data: Data
        do {
            data = try readRegularFile(atPath: indexPath, limit: indexSizeLimit)
        } catch {
            return fail(.unreadableFile, "index.json", error.message)
        }
        do {
            let index = try IndexReader.read(data, depthLimit: depthLimit)
            side.entries = IDMap(firstOf: index.entries, id: \.id, value: { $0 })
            side.problems += index.problems
        } catch {
            return fail(error.kind, "index.json", error.message)
        }
        return side
    }

    /// Counts a side: from the index alone — with simdjson when the file is
    /// clean, else with the careful reader that names every problem — or,
    /// when the index cannot be used, from the memo files, marked degraded.
    public func count(_ spec: SideSpec) -> SideListing {
        let indexPath = Self.resolveRoot(spec.url).appendingPathComponent("index.json").path
        if case .regular(let size) = FileKind(path: indexPath), size <= indexSizeLimit, size > 0 {
            var counts = reckon_index_counts()
            if reckon_count_clean_index(indexPath, &counts) == 0 {
                return SideListing(spec: spec, precounted: MemoCounts(active: Int(counts.active), archived: Int(counts.archived)))
            }
        }
        let side = readIndex(spec)
        return side.indexUnusable ? load(spec, deep: true) : side
    }

    /// Reads the index and lists `memos/`, finding dangling entries and
    /// orphan files; with `deep`, also reads and parses every memo file.
    /// When `index.json` cannot be used the side is not given up: its
    /// entries are rebuilt from the memo files and it is marked degraded.
    public func load(_ spec: SideSpec, deep: Bool) -> SideListing {
        var side = readIndex(spec)
        let rebuild = side.indexUnusable
        if rebuild {
            side.status = .degraded
            side.rebuiltFromMemoFiles = true
        }
        guard side.status != .failed else { return side }
        let memosURL = Self.resolveRoot(spec.url).appendingPathComponent("memos")

        var listing: [(name: String, kind: ListedKind)] = []
        switch FileKind(path: memosURL.path) {
        case .missing: break
        case .directory:
            guard let items = listFolder(atPath: memosURL.path) else {
                side.status = .failed
                side.problems.append(Problem(.unreadableFolder, path: "memos", "the folder cannot be listed"))
                return side
            }
            listing = items.sorted { $0.name < $1.name }
        case let other:
            side.status = .failed
            side.problems.append(Problem(.unreadableFolder, path: "memos", "is \(other.description), not a folder"))
            return side
        }

        let indexProblemIDs = Set(side.problems.compactMap(\.id))
        var files: [(MemoID, String)] = []
        var fileByID: [MemoID: Int] = [:]
        for (name, kind) in listing {
            let path = "memos/" + name
            guard name.hasSuffix(".json") else {
                side.problems.append(Problem(.orphanFile, path: path, "not a memo file (no .json ending); left alone", severity: .warning))
                continue
            }
            guard let id = MemoID(name.dropLast(5)) else {
                side.problems.append(Problem(.invalidID, path: path, "the file name is not <uuid>.json; the file is not read"))
                continue
            }
            if let other = fileByID[id] {
                side.problems.append(Problem(.duplicateID, path: path, id: id, "another file, memos/\(files[other].1), holds the same id"))
                continue
            }
            switch kind {
            case .regularFile:
                fileByID[id] = files.count
                files.append((id, name))
            case .other(.link):
                side.problems.append(Problem(.link, path: path, id: id, "is a link; links are not followed"))
            case .other(let other):
                side.problems.append(Problem(.notRegularFile, path: path, id: id, "is \(other.description), not a regular file"))
            }
        }
        fileByID = [:]
        side.files = IDMap(firstOf: files)
        files = []

        let problemIDs = Set(side.problems.compactMap(\.id))
        for (id, entry) in side.entries.pairs where !rebuild {
            if let name = side.files[id] {
                if !entry.isSpelled(as: name.dropLast(5)) {
                    side.problems.append(Problem(.nameSpelling, path: "memos/" + name, id: id,
                                                 "the index spells this id \(entry.spelling)", severity: .warning))
                }
            } else if !entry.isDeleted && !problemIDs.contains(id) {
                side.problems.append(Problem(.danglingEntry, path: "memos/\(entry.spelling).json", id: id,
                                             "index.json lists this memo but its file is missing"))
            }
        }
        for (id, name) in side.files.pairs where !rebuild && side.entries[id] == nil && !indexProblemIDs.contains(id) {
            side.problems.append(Problem(.orphanFile, path: "memos/" + name, id: id, "this memo file has no entry in index.json"))
        }

        if deep || rebuild {
            var memos: [(MemoID, MemoSummary)] = []
            var rebuilt: [(MemoID, IndexEntry)] = []
            for (id, name, outcome) in readAll(Array(side.files.pairs), root: memosURL.deletingLastPathComponent()) {
                switch outcome {
                case .success(let memo):
                    memos.append((id, memo))
                    if rebuild {
                        rebuilt.append((id, IndexEntry(id: id, spelling: String(name.dropLast(5)), modifiedTime: memo.modifiedAt,
                                                       archivedAt: memo.archivedAt, deletedAt: memo.deletedAt, changeTag: memo.changeTag)))
                    }
                case .failure(let problem):
                    side.problems.append(problem)
                }
            }
            side.memos = IDMap(firstOf: memos)
            if rebuild { side.entries = IDMap(firstOf: rebuilt) }
        }
        return side
    }

    /// Reads memo files on every core, each file once; the results come back
    /// in the order given, so the outcome does not depend on the machine.
    /// Each memo is kept as its summary, so bodies are let go as soon as read.
    func readAll(_ files: [(MemoID, String)], root: URL) -> [(MemoID, String, Result<MemoSummary, Problem>)] {
        let chunkSize = 256
        let chunks = (files.count + chunkSize - 1) / chunkSize
        let done = Mutex([Int: [(MemoID, String, Result<MemoSummary, Problem>)]]())
        let folder = OpenFolder(root.path + "/memos")
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var results: [(MemoID, String, Result<MemoSummary, Problem>)] = []
            for (id, name) in files[(chunk * chunkSize)..<min(files.count, (chunk + 1) * chunkSize)] {
                results.append((id, name, readChecked(id, name, root: root, in: folder, as: MemoReader.readSummary)))
            }
            done.withLock { $0[chunk] = results }
        }
        return done.withLock { all in (0..<chunks).flatMap { all[$0] ?? [] } }
    }

    /// One memo file, or the problem that makes its id uncomparable.
    func readChecked(_ id: MemoID, _ name: String, root: URL) -> Result<Memo, Problem> {
        readChecked(id, name, root: root) { data, depthLimit throws(MemoReader.Failure) in
            let memo = try MemoReader.read(data, depthLimit: depthLimit)
            return (memo.id, memo)
        }
    }

    /// One memo file read by `parse` (which gives the id it holds and what
    /// is kept of it), or the problem that makes its id uncomparable.
    /// With `folder` (`memos/`, opened), the file is opened inside it.
    func readChecked<Kept>(_ id: MemoID, _ name: String, root: URL, in folder: OpenFolder? = nil,
                           as parse: (Data, Int) throws(MemoReader.Failure) -> (MemoID, Kept)) -> Result<Kept, Problem> {
        let path = "memos/" + name
        do {
            let data = folder == nil ? try readRegularFile(atPath: root.path + "/" + path, limit: memoSizeLimit)
                                     : try readRegularFile(atPath: name, in: folder, limit: memoSizeLimit)
            let (held, kept) = try parse(data, depthLimit)
            guard held == id else { return .failure(Problem(.idMismatch, path: path, id: id, "the file holds id \(held), not the one in its name")) }
            return .success(kept)
        } catch let failure as ReadFailure {
            return .failure(Problem(.unreadableFile, path: path, id: id, failure.message))
        } catch let failure as MemoReader.Failure {
            return .failure(Problem(.corruptMemo, path: path, id: id, failure.message))
        } catch {
            return .failure(Problem(.unreadableFile, path: path, id: id, String(describing: error)))
        }
    }
}
