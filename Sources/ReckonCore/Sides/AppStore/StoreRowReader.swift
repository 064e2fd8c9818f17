import CSimdJSON
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension OpenedStore {
    /// One connection to the copy, with its statements; used on one thread.
    final class RowReader {
        /// The fields a listing reads; the rest come as NULL.
        static let listed: [StoreSchema.Field] = [.id, .modifiedAt, .archivedAt, .deletedAt, .changeTag]

        let db: SQLite
        let store: OpenedStore
        private let byRow: SQLite.Statement
        /// Whether `byRow` gives the body's type and the rowid, the body then read
        /// in pieces; not for a table without rowids or with a column named
        /// `_rowid_`, nor for a store whose text is not kept as UTF-8 (pieces are its stored bytes).
        private let bodyInPieces: Bool
        private let tagsByRow: SQLite.Statement?
        /// Each field's column name, for messages, by the field's place in `Field.allCases`.
        private let columns: [String]
        /// Tags already read, by the bytes that held them: most memos share a few sets.
        private var tagsByBytes: [Data: [String]] = [:]
        /// How many rows had a date read as nanoseconds.
        private(set) var nanosecondRows = 0

        init(_ store: OpenedStore, mapped: Bool = true) throws {
            self.store = store
            let db = try store.snapshot.open(mapped: mapped)
            self.db = db
            let schema = store.schema
            let inPieces =
                try db.rows("PRAGMA encoding").first?.first == .text("UTF-8")
                && StoreSchema.columnNames(of: schema.table, in: db).allSatisfy { $0.lowercased() != "_rowid_" }
                ? try? db.prepare(schema.select(StoreSchema.Field.allCases, where: " AND Z_PK = ?", bodyType: true)) : nil
            byRow = try inPieces ?? db.prepare(schema.select(StoreSchema.Field.allCases, where: " AND Z_PK = ?"))
            bodyInPieces = inPieces != nil
            tagsByRow = try store.schema.tagQuery.map { try db.prepare($0) }
            columns = StoreSchema.Field.allCases.map { store.schema.columns[$0] ?? $0.rawValue }
        }

        /// The whole memo in one row, or the problem that makes it unusable.
        func memo(row number: Int64, id: MemoID) -> Result<Memo, Problem> {
            do {
                try byRow.reset()
                try byRow.bind([.integer(number)])
                guard let row = try byRow.step() else {
                    return .failure(Problem(.unreadableFile, path: store.rowPath(number), id: id, "the row is gone from the store"))
                }
                switch entry(row) {
                case .failure(let problem): return .failure(problem)
                case .success(let (entry, _)): return memo(row, entry: entry, body: try body(row))
                }
            } catch {
                return .failure(Problem(.corruptStore, path: store.rowPath(number), id: id, error.storeWords))
            }
        }

        private func value(_ row: SQLite.Row, _ field: StoreSchema.Field) -> SQLite.Value { row[field.place] }

        /// The body of a row of `byRow`: as selected, or, when `byRow` gave
        /// its type, text read in pieces by the rowid and anything else read whole.
        private func body(_ row: SQLite.Row) throws -> SQLite.Value {
            guard bodyInPieces, case .text(let type) = value(row, .body), let column = store.schema.columns[.body],
                let rowid = row[StoreSchema.Field.allCases.count + 2].integer
            else { return value(row, .body) }
            if type == "null" { return .null }
            if type == "text" { return try db.text(table: store.schema.table, column: column, rowid: rowid) }
            let select = "SELECT \(StoreSchema.quoted(column)) FROM \(StoreSchema.quoted(store.schema.table)) WHERE _rowid_ = ?"
            return try db.rows(select, [.integer(rowid)]).first?.first ?? .null
        }

        private func column(_ field: StoreSchema.Field) -> String { columns[field.place] }

        /// The id: straight from a 16-byte blob, the common case, else as `StoreRow.id` reads it.
        private func id(_ row: SQLite.Row) throws(StoreRow.Failure) -> MemoID {
            let fast = row.withBlob(StoreSchema.Field.id.place) { bytes in
                bytes.count == 16
                    ? MemoID(
                        high: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                        low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))) : nil
            }
            if let fast = fast ?? nil { return fast }
            return try StoreRow.id(value(row, .id), column: column(.id))
        }

        private func date(_ row: SQLite.Row, _ field: StoreSchema.Field, nanoseconds: inout Bool) throws(StoreRow.Failure) -> Timestamp? {
            guard let read = try StoreRow.date(value(row, field), column: column(field)) else { return nil }
            nanoseconds = nanoseconds || read.nanoseconds
            return read.0
        }

        /// The listed fields of one row of `schema.select` (fields in
        /// `Field.allCases` order, then `Z_PK` and `Z_OPT`): its entry and
        /// `Z_PK`, or the problem that makes the row unusable.
        func entry(_ row: SQLite.Row) -> Result<(IndexEntry, Int64), Problem> {
            let count = StoreSchema.Field.allCases.count
            let number = row[count].integer ?? 0
            var id: MemoID?
            do throws(StoreRow.Failure) {
                id = try self.id(row)
                var nanoseconds = false
                guard let modifiedAt = try date(row, .modifiedAt, nanoseconds: &nanoseconds) else {
                    throw StoreRow.Failure(message: "\(column(.modifiedAt)) is empty (NULL), so the row has no modification time")
                }
                let entry = IndexEntry(
                    id: id!, spelledAs: .small, modifiedTime: modifiedAt,
                    archivedAt: try date(row, .archivedAt, nanoseconds: &nanoseconds),
                    deletedAt: try date(row, .deletedAt, nanoseconds: &nanoseconds),
                    changeTag: try StoreRow.text(value(row, .changeTag), column: column(.changeTag)),
                    rowVersion: row[count + 1].integer)
                if nanoseconds { nanosecondRows += 1 }
                return .success((entry, number))
            } catch {
                return .failure(Problem(error.kind, path: store.rowPath(number), id: id, error.message))
            }
        }

        /// What the deep check keeps of the memo in `row`: the body as the
        /// SHA-256 of its bytes, which are checked to be UTF-8 but never made into a string.
        func summary(_ row: SQLite.Row, entry: IndexEntry) -> Result<MemoSummary, Problem> {
            let number = row[StoreSchema.Field.allCases.count].integer ?? 0
            do throws(StoreRow.Failure) {
                var nanoseconds = false
                let body = row.withText(StoreSchema.Field.body.place) { bytes in
                    reckon_valid_utf8(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count) == 1 ? SHA256.digest(of: bytes) : nil
                }
                var digest: SHA256.Digest?
                if case let found?? = body {
                    digest = found
                } else {
                    let other = value(row, .body)
                    if other != .null { throw StoreRow.Failure(message: "\(column(.body)) holds \(StoreRow.found(other)), not text") }
                }
                return .success(
                    MemoSummary(
                        title: try StoreRow.text(value(row, .title), column: column(.title)), bodySHA256: digest,
                        tags: try readTags(value(row, .tags), row: number),
                        createdAt: try date(row, .createdAt, nanoseconds: &nanoseconds), modifiedAt: entry.modifiedTime,
                        archivedAt: entry.archivedAt, deletedAt: entry.deletedAt,
                        pinned: try StoreRow.bool(value(row, .pinned), column: column(.pinned)), changeTag: entry.changeTag))
            } catch {
                return .failure(Problem(error.kind, path: store.rowPath(number), id: entry.id, error.message))
            }
        }

        /// The rest of a memo whose entry was read from `row`, with its `body`.
        func memo(_ row: SQLite.Row, entry: IndexEntry, body: SQLite.Value) -> Result<Memo, Problem> {
            let number = row[StoreSchema.Field.allCases.count].integer ?? 0
            do throws(StoreRow.Failure) {
                var nanoseconds = false
                return .success(
                    Memo(
                        id: entry.id, title: try StoreRow.text(value(row, .title), column: column(.title)),
                        body: try StoreRow.text(body, column: column(.body)),
                        createdAt: try date(row, .createdAt, nanoseconds: &nanoseconds), modifiedAt: entry.modifiedTime,
                        archivedAt: entry.archivedAt, deletedAt: entry.deletedAt,
                        tags: try readTags(value(row, .tags), row: number),
                        pinned: try StoreRow.bool(value(row, .pinned), column: column(.pinned)), changeTag: entry.changeTag))
            } catch {
                return .failure(Problem(error.kind, path: store.rowPath(number), id: entry.id, error.message))
            }
        }

        private func readTags(_ value: SQLite.Value, row: Int64) throws(StoreRow.Failure) -> [String] {
            guard let tagsByRow, let join = store.schema.tagJoin else {
                guard case .blob(let bytes) = value else { return try StoreRow.tags(value, column: column(.tags)) }
                if let known = tagsByBytes[bytes] { return known }
                let tags = try StoreRow.tags(value, column: column(.tags))
                tagsByBytes[bytes] = tags
                return tags
            }
            do {
                try tagsByRow.reset()
                try tagsByRow.bind([.integer(row)])
                var names: [String] = []
                while let tag = try tagsByRow.step() {
                    switch tag[0] {
                    case .text(let name): names.append(name)
                    case .null:
                        throw StoreRow.Failure(
                            message:
                                "a tag of this memo in \(join.table) names a row of \(join.tagTable) that is missing or has no \(join.nameColumn)")
                    case let other: throw StoreRow.Failure(message: "a tag of this memo in \(join.tagTable) holds \(StoreRow.found(other)), not text")
                    }
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
