import Foundation
import Synchronization

/// Reads one side stored as the app's SwiftData / Core Data SQLite store
/// (`default.store` with its `-wal`), or found in an iPhone backup.
///
/// SQLite never opens the user's files: the store and its `-wal` are copied
/// into a private folder first (`StoreSnapshot`), checked with `PRAGMA
/// quick_check`, and read as one consistent snapshot. A store that is not a
/// database or fails the check is handed to the quarantine whole, as it was
/// copied. A bad row is a problem for that row, as a bad index entry is.
public struct CoreDataStore: MemoStore {
    public let spec: SideSpec
    let source: StoreSource

    public init(_ spec: SideSpec) {
        self.spec = spec
        guard case .store(let source) = spec.location else { preconditionFailure("a store side is read from a store") }
        self.source = source
    }

    /// SQLite's header, the first 16 bytes of every database file.
    static let header = Array("SQLite format 3\0".utf8)

    /// Whether the file at `path` starts with SQLite's header.
    public static func isStoreFile(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: header.count)).map { Array($0) == header } ?? false
    }

    public func count() -> SideListing { load(deep: false) }

    public func load(deep: Bool) -> SideListing {
        let opened: OpenedStore
        switch OpenedStore.open(source) {
        case .success(let store): opened = store
        case .failure(let failed): return failed.listing(spec)
        }
        var entries: [IndexEntry] = []
        var memos: [(MemoID, MemoSummary)] = []
        var side = SideListing(spec: spec)
        do {
            side.problems = try opened.list(deep: deep) { entry, memo in
                entries.append(entry)
                if let memo { memos.append((entry.id, MemoSummary(memo))) }
            }
        } catch {
            return OpenedStore.Failed(problem: Problem(.corruptStore, path: "", error.storeWords)).listing(spec)
        }
        side.entries = IDMap(sortedKeys: entries.map(\.id), values: entries)
        side.files = IDMap(sortedKeys: entries.map(\.id), values: entries.map(\.spelledAs))
        side.memos = IDMap(sortedKeys: memos.map(\.0), values: memos.map(\.1))
        return side
    }

    public func list(scratch: URL?, visit: (MemoID, IndexEntry?, IDSpelling?) throws -> Void) throws -> SideListing {
        switch OpenedStore.open(source) {
        case .success(let opened):
            SideListing(spec: spec, problems: try opened.list(deep: false) { entry, _ in try visit(entry.id, entry, entry.spelledAs) })
        case .failure(let failed): failed.listing(spec)
        }
    }

    public func read<Kept, Output: Sendable>(_ memos: [(MemoID, IDSpelling)], chunkSize: Int, as reading: MemoReading<Kept>,
                                             then work: @escaping @Sendable (Kept) -> Output) -> [Result<Output, Problem>] {
        let opened: OpenedStore
        switch OpenedStore.open(source) {
        case .success(let store): opened = store
        case .failure(let failed): return memos.map { .failure(Problem(failed.problem.kind, path: failed.problem.path, id: $0.0, failed.problem.message)) }
        }
        let rows = opened.rowNumbers()
        return Array(mapOnEveryCore(memos, chunkSize: chunkSize) { chunk in
            // Each chunk has its own connection to the copy: a connection never crosses threads.
            let reader: OpenedStore.RowReader
            do { reader = try opened.rowReader() } catch {
                return chunk.map { .failure(Problem(.corruptStore, path: "", id: $0.0, error.storeWords)) }
            }
            return chunk.map { id, _ in
                guard let row = rows[id] else {
                    return .failure(Problem(.unreadableFile, path: opened.rowPath(nil), id: id, "no row of the store holds this id"))
                }
                return reader.memo(row: row).map { reading.take($0) }.map(work)
            }
        }.joined())
    }
}

/// A store copied, checked and ready to read, shared by every use of the
/// same store in one run while its files stay unchanged, so that the load
/// and the export read one snapshot and copy it once.
final class OpenedStore: Sendable {
    let snapshot: StoreSnapshot
    let schema: StoreSchema
    /// `Z_PK` of each usable id, found by the first listing.
    private let rows = Mutex<[MemoID: Int64]?>(nil)

    private init(snapshot: StoreSnapshot, schema: StoreSchema) {
        self.snapshot = snapshot
        self.schema = schema
    }

    /// Why a store side failed: the problem, and what the quarantine keeps.
    struct Failed: Error {
        var problem: Problem
        var damaged: [DamagedFile] = []

        func listing(_ spec: SideSpec) -> SideListing {
            var side = SideListing(spec: spec, status: .failed, problems: [problem])
            side.damaged = damaged
            return side
        }
    }

    /// What was opened, by source, with the stamps of the files it was copied from.
    private static let opened = Mutex<[StoreSource: (stamps: [StoreSnapshot.Stamp?], store: OpenedStore)]>([:])

    /// The store for `source`: the one opened earlier in this run when its
    /// files have not changed since, else a new copy.
    static func open(_ source: StoreSource) -> Result<OpenedStore, Failed> {
        let files: StoreFiles
        switch StoreFiles.find(source) {
        case .success(let found): files = found
        case .failure(let failed): return .failure(failed)
        }
        let stamps = [StoreSnapshot.Stamp(path: files.store), StoreSnapshot.Stamp(path: files.wal)]
        if let cached = opened.withLock({ $0[source] }), cached.stamps == stamps { return .success(cached.store) }
        let result = make(files, model: source.model)
        if case .success(let store) = result { opened.withLock { $0[source] = (stamps, store) } }
        return result
    }

    /// Copies, checks and reads the model of one store.
    static func make(_ files: StoreFiles, model: StoreModel) -> Result<OpenedStore, Failed> {
        switch FileKind(path: files.store) {
        case .regular: break
        case .missing: return .failure(Failed(problem: Problem(.unreadableFile, path: "", "the store file does not exist")))
        case let other: return .failure(Failed(problem: Problem(.notRegularFile, path: "", "is \(other.description), not a store file")))
        }
        let snapshot: StoreSnapshot
        do { snapshot = try StoreSnapshot.take(store: files.store, wal: files.wal, named: files.name) } catch {
            return .failure(Failed(problem: Problem(.unreadableFile, path: "", error.message)))
        }
        TestStop.at("store-copied")
        func damaged(_ message: String) -> Result<OpenedStore, Failed> {
            .failure(Failed(problem: Problem(.corruptStore, path: "", message), damaged: snapshot.damagedFiles { $0 }))
        }
        guard CoreDataStore.isStoreFile(snapshot.database.path) else {
            return damaged("is not a SQLite database (it does not start with SQLite's header)")
        }
        do {
            let db = try snapshot.open()
            let check = try db.rows("PRAGMA quick_check").compactMap(\.first?.text)
            guard check == ["ok"] else {
                return damaged("the database is damaged (SQLite's quick_check: \(check.prefix(3).joined(separator: "; ")))")
            }
            let schema = try StoreSchema.read(db, model: model)
            return .success(OpenedStore(snapshot: snapshot, schema: schema))
        } catch let failure as StoreSchema.Failure {
            return .failure(Failed(problem: Problem(.storeModel, path: "", failure.message)))
        } catch let failure as SQLite.Failure where failure.isDamage {
            return damaged("the database is damaged (SQLite: \(failure.message))")
        } catch let failure as SQLite.Failure where failure.isLock {
            return damaged("the database is locked in a way a copy cannot get past (SQLite: \(failure.message))")
        } catch {
            return damaged("the database cannot be read (SQLite: \(error.storeWords))")
        }
    }

    /// Where a row is, as problems name it: `default.store#Z_PK=12`.
    func rowPath(_ row: Int64?) -> String {
        row.map { "\(snapshot.name)#Z_PK=\($0)" } ?? snapshot.name
    }

    /// Reads every row of the memo entity and hands each usable one to
    /// `visit` in id order, with the whole memo when `deep`. The listing
    /// problems are returned: bad rows, repeated ids, the model's notes.
    func list(deep: Bool, visit: (IndexEntry, Memo?) throws -> Void) throws -> [Problem] {
        var problems = schema.notes.map { Problem(.storeModel, path: "", $0, severity: .warning) }
        let reader = try rowReader()
        var kept: [(entry: IndexEntry, memo: Memo?, row: Int64)] = []
        var badRows: [Problem] = []
        let statement = try reader.db.prepare(schema.select(deep ? StoreSchema.Field.allCases : RowReader.listed) + " ORDER BY Z_PK")
        while let row = try statement.step() {
            switch reader.decode(row, tags: deep) {
            case .success(let read): kept.append((read.entry, deep ? read.memo : nil, read.row))
            case .failure(let problem): badRows.append(problem)
            }
        }
        // In id order; of two rows with one id the first (lowest Z_PK) is kept, as in an index.
        kept.sort { ($0.entry.id, $0.row) < ($1.entry.id, $1.row) }
        var numbers: [MemoID: Int64] = [:]
        var previous: (id: MemoID, row: Int64)?
        for item in kept {
            if let previous, previous.id == item.entry.id {
                badRows.append(Problem(.duplicateID, path: rowPath(item.row), id: item.entry.id, "another row, Z_PK=\(previous.row), holds the same id"))
                numbers[item.entry.id] = nil
                continue
            }
            previous = (item.entry.id, item.row)
            numbers[item.entry.id] = item.row
            try visit(item.entry, item.memo)
        }
        rows.withLock { $0 = numbers }
        problems += badRows.sorted { ($0.path.count, $0.path) < ($1.path.count, $1.path) }
        if reader.nanosecondRows > 0 {
            let rows = reader.nanosecondRows == 1 ? "1 row holds a date" : "\(reader.nanosecondRows) rows hold dates"
            problems.append(Problem(.storeModel, path: "", "\(rows) above 1e11 in magnitude, read as nanoseconds since 2001 rather than seconds",
                                         severity: .warning))
        }
        return problems
    }

    /// `Z_PK` of each usable id, listing the store first if it has not been.
    func rowNumbers() -> [MemoID: Int64] {
        if let known = rows.withLock({ $0 }) { return known }
        _ = try? list(deep: false) { _, _ in }
        return rows.withLock { $0 } ?? [:]
    }

    func rowReader() throws -> RowReader { try RowReader(self) }

    /// One connection to the copy, with its statements; used on one thread.
    final class RowReader {
        /// The fields a listing reads; the rest come as NULL.
        static let listed: [StoreSchema.Field] = [.id, .modifiedAt, .archivedAt, .deletedAt, .changeTag]

        let db: SQLite
        let store: OpenedStore
        private let byRow: SQLite.Statement
        private let tagsByRow: SQLite.Statement?
        /// How many rows had a date read as nanoseconds.
        private(set) var nanosecondRows = 0

        init(_ store: OpenedStore) throws {
            self.store = store
            let db = try store.snapshot.open()
            self.db = db
            byRow = try db.prepare(store.schema.select(StoreSchema.Field.allCases, where: " AND Z_PK = ?"))
            tagsByRow = try store.schema.tagQuery.map { try db.prepare($0) }
        }

        /// The whole memo in one row, or the problem that makes it unusable.
        func memo(row number: Int64) -> Result<Memo, Problem> {
            do {
                try byRow.reset()
                try byRow.bind([.integer(number)])
                guard let row = try byRow.step() else {
                    return .failure(Problem(.unreadableFile, path: store.rowPath(number), "the row is gone from the store"))
                }
                return decode(row, tags: true).map(\.memo)
            } catch {
                return .failure(Problem(.corruptStore, path: store.rowPath(number), error.storeWords))
            }
        }

        /// One row of `schema.select`: fields in `Field.allCases` order, then `Z_PK` and `Z_OPT`.
        func decode(_ row: SQLite.Row, tags: Bool) -> Result<(entry: IndexEntry, memo: Memo, row: Int64), Problem> {
            let fields = StoreSchema.Field.allCases
            let number = row[fields.count].integer ?? 0
            func value(_ field: StoreSchema.Field) -> SQLite.Value { row[fields.firstIndex(of: field)!] }
            func column(_ field: StoreSchema.Field) -> String { store.schema.columns[field] ?? field.rawValue }
            var id: MemoID?
            do throws(StoreRow.Failure) {
                id = try StoreRow.id(value(.id), column: column(.id))
                var nanoseconds = false
                func date(_ field: StoreSchema.Field) throws(StoreRow.Failure) -> Timestamp? {
                    guard let read = try StoreRow.date(value(field), column: column(field)) else { return nil }
                    nanoseconds = nanoseconds || read.nanoseconds
                    return read.0
                }
                guard let modifiedAt = try date(.modifiedAt) else {
                    throw StoreRow.Failure(message: "\(column(.modifiedAt)) is empty (NULL), so the row has no modification time")
                }
                var memo = Memo(id: id!, title: try StoreRow.text(value(.title), column: column(.title)),
                                body: try StoreRow.text(value(.body), column: column(.body)),
                                createdAt: try date(.createdAt), modifiedAt: modifiedAt, archivedAt: try date(.archivedAt),
                                deletedAt: try date(.deletedAt), pinned: try StoreRow.bool(value(.pinned), column: column(.pinned)),
                                changeTag: try StoreRow.text(value(.changeTag), column: column(.changeTag)))
                if tags { memo.tags = try readTags(value(.tags), row: number) }
                if nanoseconds { nanosecondRows += 1 }
                let entry = IndexEntry(id: memo.id, spelledAs: .small, modifiedTime: memo.modifiedAt, archivedAt: memo.archivedAt,
                                       deletedAt: memo.deletedAt, changeTag: memo.changeTag, rowVersion: row[fields.count + 1].integer)
                return .success((entry, memo, number))
            } catch {
                return .failure(Problem(error.kind, path: store.rowPath(number), id: id, error.message))
            }
        }

        private func readTags(_ value: SQLite.Value, row: Int64) throws(StoreRow.Failure) -> [String] {
            guard let tagsByRow else { return try StoreRow.tags(value, column: store.schema.columns[.tags] ?? "tags") }
            do {
                try tagsByRow.reset()
                try tagsByRow.bind([.integer(row)])
                var names: [String] = []
                while let tag = try tagsByRow.step() {
                    guard case .text(let name) = tag[0] else {
                        throw StoreRow.Failure(message: "a tag of this memo in \(store.schema.tagJoin!.tagTable) holds \(StoreRow.found(tag[0])), not text")
                    }
                    names.append(name)
                }
                return names
            } catch let failure as StoreRow.Failure {
                throw failure
            } catch {
                throw StoreRow.Failure(message: "its tags cannot be read (SQLite: \(error.storeWords))")
            }
        }
    }
}

/// The files of one store on disk: the store and where its `-wal` would be.
struct StoreFiles {
    var store: String
    var wal: String
    /// The store's name as problems show it.
    var name: String

    /// The store a source names: the file itself, or the app's store found in an iPhone backup.
    static func find(_ source: StoreSource) -> Result<StoreFiles, OpenedStore.Failed> {
        guard source.isBackup else {
            let path = source.url.path
            return .success(StoreFiles(store: path, wal: path + "-wal", name: source.url.lastPathComponent))
        }
        do {
            let found = try PhoneBackup.appStores(in: source.url, app: source.app, entity: source.model.entity)
            guard found.count == 1 else {
                return .failure(OpenedStore.Failed(problem: Problem(.unreadableFolder, path: "", PhoneBackup.notOne(found, app: source.app))))
            }
            return .success(StoreFiles(store: found[0].store, wal: found[0].wal, name: "default.store"))
        } catch {
            return .failure(OpenedStore.Failed(problem: Problem(.unreadableFolder, path: "", error.message)))
        }
    }
}

extension PhoneBackup {
    /// The app stores in a backup that hold the memo entity; with `app`,
    /// those of that app (its own domain or its group's).
    package static func appStores(in backup: URL, app: String?, entity: String) throws(Failure) -> [StoreFiles] {
        let found = try stores(in: backup, app: app)
        guard found.count > 1 else { return found }
        return found.filter { candidate in
            guard let snapshot = try? StoreSnapshot.take(store: candidate.store, wal: candidate.wal, named: "default.store"),
                  let db = try? snapshot.open(),
                  let rows = try? db.rows("SELECT 1 FROM Z_PRIMARYKEY WHERE Z_NAME = ?", [.text(entity)])
            else { return false }
            return !rows.isEmpty
        }
    }

    /// Why a backup gave no store, or several: one sentence.
    package static func notOne(_ found: [StoreFiles], app: String?) -> String {
        guard !found.isEmpty else {
            let whose = app.map { "of \($0) (AppDomain-\($0) or AppDomainGroup-\($0))" } ?? "of any app"
            return "this iPhone backup holds no store \(whose) at Library/Application Support/default.store"
        }
        return "this iPhone backup holds several stores with memos (\(found.map(\.domain).joined(separator: ", "))); choose one with --app ID or \"app\" in the definition"
    }
}

extension Error {
    /// SQLite's own message for its failures, else the usual words.
    var storeWords: String {
        (self as? SQLite.Failure)?.message ?? errorWords(self)
    }
}
