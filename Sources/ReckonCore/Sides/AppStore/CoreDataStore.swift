import CSimdJSON
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads one side stored as the app's SwiftData / Core Data SQLite store
/// (`default.store` with its `-wal`), or found in an iPhone backup.
///
/// SQLite never opens the user's files: the store and its `-wal` are copied
/// into a private folder first (`StoreSnapshot`), checked with `PRAGMA
/// quick_check`, and read as one consistent snapshot. A store that is not a
/// database or fails the check is handed to the quarantine whole, as it was
/// copied. A bad row is a problem for that row, as a bad index entry is.
package struct CoreDataStore: MemoStore {
    package let spec: SideSpec
    let source: AppStoreSide
    /// What this store found and opened, for its later reads: the load and
    /// the export, handed one store, read one snapshot and copy it once.
    let kept = OpenedStore.Kept()
    /// What the process decides for the store (private folders, workers,
    /// test checkpoints).
    let process: ProcessSettings

    package init(_ spec: SideSpec, process: ProcessSettings = ProcessSettings()) {
        self.spec = spec
        self.process = process
        guard let source = spec.kind as? AppStoreSide else { preconditionFailure("a store side is read from a store") }
        self.source = source
    }

    /// SQLite's header, the first 16 bytes of every database file.
    static let header = Array("SQLite format 3\0".utf8)

    /// Whether the file at `path` starts with SQLite's header.
    package static func isStoreFile(_ path: String) -> Bool {
        // Without blocking, and only a regular file: a FIFO put in its place must not hang the run.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        var bytes = [UInt8](repeating: 0, count: header.count)
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Glibc.read(fd, &bytes, bytes.count) == bytes.count else { return false }
        return bytes == header
    }

    /// Counts by the seed's rule from every usable row's entry, holding no entry.
    package func count() -> SideListing {
        let opened: OpenedStore
        switch OpenedStore.open(source, kept: kept, process: process) {
        case .success(let store): opened = store
        case .failure(let failed): return failed.listing(spec)
        }
        var counts = MemoCounts()
        do {
            let problems = try opened.list(inIDOrder: false) { entry in counts.count(entry) }
            return opened.damage()?.listing(spec) ?? SideListing(spec: spec, problems: problems, precounted: counts)
        } catch {
            return opened.failed(by: error).listing(spec)
        }
    }

    package func load(deep: Bool) -> SideListing {
        let opened: OpenedStore
        switch OpenedStore.open(source, kept: kept, process: process) {
        case .success(let store): opened = store
        case .failure(let failed): return failed.listing(spec)
        }
        var entries: [IndexEntry] = []
        var side = SideListing(spec: spec)
        if let seconds = kept.found.withLock({ $0?.unlockSeconds }) {
            side.stepTimings = [RunContext.Timing(stage: "load: backup key derivation", duration: .nanoseconds(Int64(seconds * 1e9)))]
        }
        do {
            side.problems = try opened.list { entries.append($0) }
        } catch {
            return opened.failed(by: error).listing(spec)
        }
        if let damaged = opened.damage() { return damaged.listing(spec) }
        let ids = entries.map(\.id)
        side.entries = IDMap(sortedKeys: ids, values: entries)
        side.files = IDMap(sortedKeys: ids, values: entries.map(\.spelledAs))
        guard deep else { return side }
        // The rest of each row, every core scanning its own stretch of rows;
        // an id held by several rows is already a problem, and none of them is read.
        var memos: [(MemoID, MemoSummary)] = []
        for (id, outcome) in opened.summaries() {
            switch outcome {
            case .success(let summary): memos.append((id, summary))
            case .failure(let problem): side.problems.append(problem)
            }
        }
        side.memos = IDMap(sortedKeys: memos.map(\.0), values: memos.map(\.1))
        return side
    }

    package func list(scratch: URL?, visit: (MemoID, IndexEntry?, IDSpelling?) throws -> Void) throws -> SideListing {
        switch OpenedStore.open(source, kept: kept, process: process) {
        case .success(let opened):
            if let damaged = opened.damage() {
                damaged.listing(spec)
            } else {
                SideListing(spec: spec, problems: try opened.list { entry in try visit(entry.id, entry, entry.spelledAs) })
            }
        case .failure(let failed): failed.listing(spec)
        }
    }

    package func read<Kept, Output: Sendable>(
        _ memos: [(MemoID, IDSpelling)], chunkSize: Int, as reading: MemoReading<Kept>,
        then work: @escaping @Sendable (Kept) -> Output
    ) -> [Result<Output, Problem>] {
        let opened: OpenedStore
        switch OpenedStore.open(source, kept: kept, process: process).flatMap({ store in store.damage().map(Result.failure) ?? .success(store) }) {
        case .success(let store): opened = store
        case .failure(let failed):
            return memos.map { .failure(Problem(failed.problem.kind, path: failed.problem.path, id: $0.0, failed.problem.message)) }
        }
        let rows = opened.rowNumbers()
        return Array(
            mapOnEveryCore(memos, chunkSize: chunkSize, on: process.threads) { chunk in
                // Each chunk has its own connection to the copy: a connection never crosses threads.
                let reader: OpenedStore.RowReader
                do { reader = try opened.rowReader(mapped: false) } catch {
                    let problem = OpenedStore.Failed(reading: opened.snapshot, error).problem
                    return chunk.map { .failure(Problem(problem.kind, path: problem.path, id: $0.0, problem.message)) }
                }
                return chunk.map { id, _ in
                    if let repeated = rows.repeated[id] { return .failure(repeated) }
                    guard let row = rows.numbers[id] else {
                        return .failure(Problem(.unreadableFile, path: opened.snapshot.name, id: id, "no row of the store holds this id"))
                    }
                    return reader.memo(row: row, id: id).map { reading.take($0) }.map(work)
                }
            }.joined())
    }
}

/// A store copied, checked and ready to read, kept by the `CoreDataStore`
/// that opened it for its later reads while its files stay unchanged.
final class OpenedStore: Sendable {
    let snapshot: StoreSnapshot
    let schema: StoreSchema
    /// Problems of the store as a whole that do not fail it (a `-wal` ending in a partial frame).
    let notes: [Problem]
    /// SQLite's check of the whole copy, run on another core while the rows
    /// are read: nil when it passes, else why the side failed.
    private let check: Pending<Failed?>
    /// The threads the store's rows are read on.
    let workers: Workers
    /// `Z_PK` of each usable id, and the problem of each id held by several rows, found by the first listing.
    private let rows = Mutex<(numbers: IDMap<Int64>, repeated: [MemoID: Problem])?>(nil)

    private init(snapshot: StoreSnapshot, schema: StoreSchema, notes: [Problem], on workers: Workers) {
        self.workers = workers
        self.snapshot = snapshot
        self.schema = schema
        self.notes = notes
        check = Pending(on: workers) {
            do {
                guard try snapshot.open().rows("PRAGMA quick_check(1)").compactMap(\.first?.text) == ["ok"] else {
                    return Failed(
                        problem: Problem(.corruptStore, path: snapshot.name, "the database is damaged: SQLite's own check of it (quick_check) fails"),
                        damaged: snapshot.damagedFiles())
                }
                return nil
            } catch {
                return Failed(reading: snapshot, error)
            }
        }
    }

    /// Why the side failed, when SQLite's check of the copy did not pass; waits for the check.
    func damage() -> Failed? { check.wait() }

    /// Why reading the rows failed: what SQLite's check found, else the error itself.
    func failed(by error: any Error) -> Failed { damage() ?? Failed(reading: snapshot, error) }

    /// Why a store side failed: the problem, and what the quarantine keeps.
    struct Failed: Error {
        var problem: Problem
        var damaged: [DamagedFile] = []

        init(problem: Problem, damaged: [DamagedFile] = []) {
            self.problem = problem
            self.damaged = damaged
        }

        /// SQLite failed reading the private copy: damage when SQLite says
        /// the database is damaged (its files are quarantined), else the
        /// copy's file trouble (a disk error, a full disk), which says
        /// nothing of the store and quarantines nothing.
        init(reading snapshot: StoreSnapshot, _ error: any Error) {
            if let failure = error as? SQLite.Failure, failure.isFileTrouble {
                self.init(problem: Problem(.diskTrouble, path: snapshot.name, snapshot.troubleWords(failure)))
            } else {
                self.init(
                    problem: Problem(.corruptStore, path: snapshot.name, "the database is damaged: SQLite cannot read it (\(error.storeWords))"),
                    damaged: snapshot.damagedFiles())
            }
        }

        func listing(_ spec: SideSpec) -> SideListing {
            var side = SideListing(spec: spec, status: .failed, problems: [problem])
            side.damaged = damaged
            return side
        }
    }

    /// What one `CoreDataStore` found and opened.
    final class Kept: Sendable {
        /// Where the store's files were found: an iPhone backup is searched once, not on every read.
        let found = Mutex<StoreFiles?>(nil)
        /// What was opened, with the stamps of the files it was copied from.
        let opened = Mutex<(stamps: [StoreSnapshot.Stamp?], store: OpenedStore)?>(nil)
    }

    /// The store for `source`: the one opened earlier (`kept`) when its
    /// files have not changed since, else a new copy, made in the process
    /// `process` describes.
    static func open(_ source: AppStoreSide, kept: Kept, process: ProcessSettings) -> Result<OpenedStore, Failed> {
        let files: StoreFiles
        if let known = kept.found.withLock({ $0 }) {
            files = known
        } else {
            switch StoreFiles.find(source, process: process) {
            case .success(let located):
                files = located
                kept.found.withLock { $0 = located }
            case .failure(let failed): return .failure(failed)
            }
        }
        let stamps = [files.store, files.wal, files.journal].map { StoreSnapshot.Stamp(path: $0) }
        if let cached = kept.opened.withLock({ $0 }), cached.stamps == stamps { return .success(cached.store) }
        let result = make(files, model: source.model, process: process)
        if case .success(let store) = result { kept.opened.withLock { $0 = (stamps, store) } }
        return result
    }

    /// Copies, checks and reads the model of one store.
    static func make(_ files: StoreFiles, model: StoreModel, process: ProcessSettings) -> Result<OpenedStore, Failed> {
        func failed(_ kind: Problem.Kind, _ message: String) -> Result<OpenedStore, Failed> {
            .failure(Failed(problem: Problem(kind, path: files.name, message)))
        }
        switch FileKind(path: files.store) {
        case .regular: break
        case .missing: return failed(.unreadableFile, "the store file does not exist")
        case .link: return failed(.link, "is a link; links are not followed")
        case let other: return failed(.notRegularFile, "is \(other.description), not a store file")
        }
        let snapshot: StoreSnapshot
        do {
            snapshot = try StoreSnapshot.take(
                store: files.store, wal: files.wal, journal: files.journal, named: files.name, walNamed: files.walName, keys: files.keys,
                process: process)
        } catch {
            // Never quarantined: a store being written or that cannot be copied is not damaged.
            return failed(.unreadableFile, error.message)
        }
        process.checkpoints.at("store-copied")
        func damaged(_ message: String) -> Result<OpenedStore, Failed> {
            .failure(Failed(problem: Problem(.corruptStore, path: files.name, message), damaged: snapshot.damagedFiles()))
        }
        guard CoreDataStore.isStoreFile(snapshot.database.path) else {
            return damaged("is not a SQLite database (it does not start with SQLite's header)")
        }
        var notes: [Problem] = []
        switch snapshot.walState() {
        case .none, .whole: break
        case .notAWAL:
            return damaged(
                "its write-ahead log, \(files.walName), is damaged (it does not start as SQLite's log does), so the newest changes cannot be read")
        case .brokenFrame:
            return damaged(
                "its write-ahead log, \(files.walName), is damaged (a change in it fails its checksum, and changes were saved after it), so the newest changes cannot be read"
            )
        case .partialFrame:
            notes.append(
                Problem(
                    .corruptStore, path: files.walName,
                    "ends in a partial change, as after a crash; SQLite reads the log up to the last whole change", severity: .warning))
        }
        do {
            let schema = try StoreSchema.read(try snapshot.open(), model: model)
            return .success(OpenedStore(snapshot: snapshot, schema: schema, notes: notes, on: process.threads))
        } catch let failure as StoreSchema.Failure {
            return .failure(Failed(problem: Problem(.storeModel, path: files.name, failure.message)))
        } catch let failure as SQLite.Failure where failure.isDamage || failure.isFileTrouble {
            return .failure(Failed(reading: snapshot, failure))
        } catch let failure as SQLite.Failure where failure.isLock {
            return damaged("the database is locked in a way a copy cannot get past (SQLite: \(failure.message))")
        } catch {
            return damaged("the database cannot be read (SQLite: \(error.storeWords))")
        }
    }

    /// Where a row is, as problems name it: `default.store#Z_PK=12`.
    func rowPath(_ row: Int64) -> String { "\(snapshot.name)#Z_PK=\(row)" }

    /// Reads the listed fields of every row of the memo entity and hands
    /// each usable entry to `visit`: in id order, or, when `inIDOrder` is
    /// false, as the rows come, holding no entry. The problems are returned:
    /// bad rows, repeated ids, rows of no entity, the model's notes. Of two
    /// rows with one id the first (lowest `Z_PK`) is kept, as in an index. A
    /// row whose entry is usable is listed and counted even when the rest of
    /// it cannot be read, as a damaged memo file is counted from its index entry.
    func list(inIDOrder: Bool = true, visit: (IndexEntry) throws -> Void) throws -> [Problem] {
        var problems = notes + schema.notes.map { Problem(.storeModel, path: snapshot.name, $0, severity: .warning) }
        let reader = try rowReader()
        var firstRow: [MemoID: Int64] = [:]
        var entries: [IndexEntry] = []
        var repeated: [MemoID: Problem] = [:]
        var badRows: [Problem] = []
        let statement = try reader.db.prepare(schema.select(RowReader.listed) + " ORDER BY Z_PK")
        while let row = try statement.step() {
            switch reader.entry(row) {
            case .success(let (entry, number)):
                if let first = firstRow[entry.id] {
                    let problem = Problem(.duplicateID, path: rowPath(number), id: entry.id, "another row, Z_PK=\(first), holds the same id")
                    badRows.append(problem)
                    repeated[entry.id] = problem
                    continue
                }
                firstRow[entry.id] = number
                if inIDOrder { entries.append(entry) } else { try visit(entry) }
            case .failure(let problem): badRows.append(problem)
            }
        }
        for row in try reader.db.rows(schema.strayRowsQuery) {
            guard case .integer(let number) = row[0] else { continue }
            let entity = row[1].integer.map { "\($0), which names no entity kept in \(schema.table)" } ?? "empty (NULL)"
            badRows.append(Problem(.badEntry, path: rowPath(number), "Z_ENT is \(entity), so the row is not read"))
        }
        entries.sort { $0.id < $1.id }
        for entry in entries { try visit(entry) }
        if inIDOrder {
            let ids = entries.map(\.id)
            rows.withLock { $0 = (IDMap(sortedKeys: ids, values: ids.map { firstRow[$0]! }), repeated) }
        }
        problems += badRows.sorted { ($0.path.count, $0.path) < ($1.path.count, $1.path) }
        if reader.nanosecondRows > 0 {
            let rows = reader.nanosecondRows == 1 ? "1 row holds a date" : "\(reader.nanosecondRows) rows hold dates"
            problems.append(
                Problem(
                    .storeModel, path: snapshot.name, "\(rows) above 1e11 in magnitude, read as nanoseconds since 2001 rather than seconds",
                    severity: .warning))
        }
        return problems
    }

    /// `Z_PK` of each usable id and the problem of each repeated one, listing the store first if it has not been.
    func rowNumbers() -> (numbers: IDMap<Int64>, repeated: [MemoID: Problem]) {
        if let known = rows.withLock({ $0 }) { return known }
        _ = try? list { _ in }
        return rows.withLock { $0 } ?? (IDMap(), [:])
    }

    func rowReader(mapped: Bool = true) throws -> RowReader { try RowReader(self, mapped: mapped) }

    /// The summary of each listed id's row, in id order: the rows are read
    /// in stretches of `Z_PK`, one stretch per task, on every core, as
    /// sequential reads rather than a seek per memo.
    func summaries() -> [(MemoID, Result<MemoSummary, Problem>)] {
        let rows = rowNumbers()
        guard let last = rows.numbers.values.max() else { return [] }
        let stretch = max(1024, (last + 63) / 64)
        let starts = Array(stride(from: Int64(0), through: last, by: Int(stretch)))
        // Why a stretch could not be read: its rows are said to have failed for that.
        let failure = Mutex<Problem?>(nil)
        let found = mapOnEveryCore(starts, chunkSize: 1, on: workers) { chunk in
            chunk.flatMap { start -> [(MemoID, Result<MemoSummary, Problem>)] in
                do {
                    let reader = try rowReader()
                    let statement = try reader.db.prepare(
                        schema.select(StoreSchema.Field.allCases, where: " AND Z_PK BETWEEN ? AND ?") + " ORDER BY Z_PK")
                    try statement.bind([.integer(start), .integer(start + stretch - 1)])
                    var read: [(MemoID, Result<MemoSummary, Problem>)] = []
                    while let row = try statement.step() {
                        guard case .success(let (entry, number)) = reader.entry(row), rows.numbers[entry.id] == number,
                            rows.repeated[entry.id] == nil
                        else { continue }
                        read.append((entry.id, reader.summary(row, entry: entry)))
                    }
                    return read
                } catch {
                    failure.withLock { $0 = $0 ?? Failed(reading: snapshot, error).problem }
                    return []
                }
            }
        }.joined()
        var byID = Dictionary(found.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
        let why = failure.withLock { $0 }
        return rows.numbers.keys.filter { rows.repeated[$0] == nil }.map { id in
            (
                id,
                byID.removeValue(forKey: id)
                    ?? .failure(
                        Problem(
                            why?.kind ?? .corruptStore, path: rowPath(rows.numbers[id]!), id: id,
                            why.map { "the row could not be read again: \($0.message)" } ?? "the row could not be read again"))
            )
        }
    }
}

/// The files of one store on disk: the store and where its `-wal` and `-journal` would be.
struct StoreFiles {
    var store: String
    var wal: String
    /// Beside the store, where SQLite looks for it: an iPhone backup lists none.
    var journal: String { store + "-journal" }
    /// The store and its `-wal` as problems name them, inside the side's path:
    /// the file's own name, or, in an iPhone backup, `<xx>/<fileID>`.
    var name: String
    var walName: String
    /// In an encrypted backup, the keys its copies are decrypted with, and how long their derivation took.
    var keys: [String: EncryptedBackup.FileKey] = [:]
    var unlockSeconds: Double?

    /// The store a source names: the file itself, or the app's store found in an iPhone backup.
    static func find(_ source: AppStoreSide, process: ProcessSettings) -> Result<StoreFiles, OpenedStore.Failed> {
        guard source.isBackup else {
            let path = source.url.path
            let name = source.url.lastPathComponent
            return .success(StoreFiles(store: path, wal: path + "-wal", name: name, walName: name + "-wal"))
        }
        // Files inside the backup are named from its folder, so a report does not depend on where the backup is.
        let folder = source.url.path + "/"
        func inside(_ path: String) -> String { path.hasPrefix(folder) ? String(path.dropFirst(folder.count)) : path }
        do {
            let found = try PhoneBackup.appStores(
                in: source.url, app: source.app, entity: source.model.entity, password: source.password, process: process)
            guard found.count == 1 else {
                let all =
                    found.isEmpty && source.app != nil
                    ? (try? PhoneBackup.appStores(in: source.url, app: nil, entity: source.model.entity, password: source.password, process: process))
                    : nil
                return .failure(
                    OpenedStore.Failed(problem: Problem(.unreadableFolder, path: "", PhoneBackup.notOne(found, app: source.app, all: all ?? []))))
            }
            return .success(
                StoreFiles(
                    store: found[0].store, wal: found[0].wal, name: inside(found[0].store), walName: inside(found[0].wal), keys: found[0].keys,
                    unlockSeconds: found[0].unlockSeconds))
        } catch {
            return .failure(
                OpenedStore.Failed(problem: Problem(.unreadableFolder, path: "", error.message.replacingOccurrences(of: folder, with: ""))))
        }
    }
}

extension PhoneBackup {
    /// The app stores in a backup that hold the memo entity; with `app`,
    /// those of that app (its own domain or its group's).
    package static func appStores(
        in backup: URL, app: String?, entity: String, password: BackupPassword?, process: ProcessSettings
    ) throws(Failure) -> [StoreFiles] {
        let found = try stores(in: backup, app: app, password: password, process: process)
        guard found.count > 1 else { return found }
        return found.filter { candidate in
            guard
                let snapshot = try? StoreSnapshot.take(
                    store: candidate.store, wal: candidate.wal, named: "default.store", keys: candidate.keys, process: process),
                let db = try? snapshot.open(),
                let rows = try? db.rows("SELECT 1 FROM Z_PRIMARYKEY WHERE Z_NAME = ?", [.text(entity)])
            else { return false }
            return !rows.isEmpty
        }
    }

    /// Why a backup gave no store, or several: one sentence, naming the
    /// apps whose stores it holds (`all`, found without `--app`) by the ids `--app` takes.
    package static func notOne(_ found: [StoreFiles], app: String?, all: [StoreFiles] = []) -> String {
        func ids(_ stores: [StoreFiles]) -> String { stores.map { appID($0.domain) }.joined(separator: ", ") }
        let choose = "choose one with --app ID or \"app\" in the definition"
        guard !found.isEmpty else {
            let whose = app.map { "of \($0) (AppDomain-\($0) or AppDomainGroup-\($0))" } ?? "of any app"
            let others = all.isEmpty ? "" : "; it holds the stores of \(ids(all)): \(choose)"
            return "this iPhone backup holds no store \(whose) at Library/Application Support/default.store" + others
        }
        return "this iPhone backup holds several stores with memos, of \(ids(found)); \(choose)"
    }

    /// The bundle or group id a domain belongs to, as `--app` takes it.
    static func appID(_ domain: String) -> String {
        appDomainPrefixes.first { domain.hasPrefix($0) }.map { String(domain.dropFirst($0.count)) } ?? domain
    }
}

extension Error {
    /// SQLite's own message for its failures, else the usual words.
    var storeWords: String {
        (self as? SQLite.Failure)?.message ?? errorWords(self)
    }
}
