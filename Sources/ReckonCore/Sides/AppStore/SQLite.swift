import CSQLite
import CSimdJSON
import Foundation

/// One connection to a SQLite database through libsqlite3, in the manner of
/// SwiftPM's `Basics/SQLite.swift`: it owns the handle, every return code that
/// is not success becomes a thrown `SQLite.Failure` carrying SQLite's own
/// message, and it is not `Sendable`, so a handle never crosses threads.
package final class SQLite {
    /// What SQLite said when a call failed: its message and primary result code.
    package struct Failure: Error, CustomStringConvertible {
        package var message: String
        package var code: Int32
        /// The operating system's error behind it (`sqlite3_system_errno`), or 0.
        package var systemError: Int32 = 0

        package var description: String { message }

        /// The file is not a database, or is damaged (`SQLITE_NOTADB`, `SQLITE_CORRUPT`).
        package var isDamage: Bool { code == SQLITE_NOTADB || code == SQLITE_CORRUPT }
        /// Another connection holds a lock (`SQLITE_BUSY`, `SQLITE_LOCKED`).
        package var isLock: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }
        /// The disk or the database is full.
        package var isFull: Bool { code == SQLITE_FULL }
        /// A file could not be read, written or opened (`SQLITE_IOERR`,
        /// `SQLITE_FULL`, `SQLITE_CANTOPEN`, `SQLITE_READONLY`): the disk's
        /// trouble, not the database's damage.
        package var isFileTrouble: Bool { [SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_READONLY].contains(code) }
        /// What failed, in the system's words when it said why ("Input/output error").
        package var words: String { systemError != 0 ? String(cString: strerror(systemError)) : message }
    }

    /// How a database is opened.
    package enum Mode {
        /// Reading only; the file must exist.
        case readOnly
        /// Reading and writing, making the file when it is missing (tests and
        /// the benchmark build stores this way; reckon never writes a user's).
        case create
    }

    private let handle: OpaquePointer

    package init(path: String, mode: Mode = .readOnly) throws(Failure) {
        var opened: OpaquePointer?
        let flags = (mode == .readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            let systemError = opened.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close(opened)
            throw Failure(message: message, code: code & 0xff, systemError: systemError)
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 0)
        // Connections of one process to one copy wait for each other's brief
        // locks (the first to open a WAL store rebuilds its -shm) rather than fail.
        sqlite3_busy_timeout(handle, 10_000)
    }

    /// The blob handle `text` reads through, moved from row to row with
    /// `sqlite3_blob_reopen`, so a memo costs no newly compiled program.
    private var textBlob: (table: String, column: String, handle: OpaquePointer)?

    deinit {
        if let textBlob { sqlite3_blob_close(textBlob.handle) }
        sqlite3_close_v2(handle)
    }

    /// Runs statements that return no rows.
    package func execute(_ sql: String) throws(Failure) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil))
    }

    /// Prepares one statement.
    package func prepare(_ sql: String) throws(Failure) -> Statement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil))
        guard let statement else { throw Failure(message: "the statement is empty: \(sql)", code: SQLITE_MISUSE) }
        return Statement(statement, in: self)
    }

    /// Every row of a query, each as its values.
    @discardableResult
    package func rows(_ sql: String, _ values: [Value] = []) throws(Failure) -> [[Value]] {
        let statement = try prepare(sql)
        try statement.bind(values)
        var rows: [[Value]] = []
        while let row = try statement.step() { rows.append((0..<row.count).map { row[$0] }) }
        return rows
    }

    /// The text in one column of the row with `rowid`, read in pieces
    /// straight into the string (`sqlite3_blob_read`), so the text is held
    /// once, not also as SQLite's copy of the column; `.notUTF8` for bytes
    /// that are not UTF-8. `table` and `column` are names, not quoted.
    package func text(table: String, column: String, rowid: Int64) throws(Failure) -> Value {
        let blob = try textBlob(table: table, column: column, rowid: rowid)
        let count = Int(sqlite3_blob_bytes(blob))
        func read(into buffer: UnsafeMutableRawBufferPointer) -> Int32 {
            var done = 0
            while done < count {
                let piece = min(count - done, 1 << 20)
                let code = sqlite3_blob_read(blob, buffer.baseAddress! + done, Int32(piece), Int32(done))
                guard code == SQLITE_OK else { return code }
                done += piece
            }
            return SQLITE_OK
        }
        guard count > 0 else { return .text("") }
        var code = SQLITE_OK
        var valid = false
        let text = String(unsafeUninitializedCapacity: count) { buffer in
            code = read(into: UnsafeMutableRawBufferPointer(buffer))
            valid = code == SQLITE_OK && reckon_valid_utf8(UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self), count) == 1
            return valid ? count : 0
        }
        try check(code)
        if valid { return .text(text) }
        var bytes = Data(count: count)
        try check(bytes.withUnsafeMutableBytes { read(into: $0) })
        return .notUTF8(bytes)
    }

    /// The blob handle on `column` of the row `rowid`: the one kept, moved
    /// to that row, or a new one. A handle that failed to move is spent,
    /// and closed.
    private func textBlob(table: String, column: String, rowid: Int64) throws(Failure) -> OpaquePointer {
        if let kept = textBlob, kept.table == table, kept.column == column {
            let code = sqlite3_blob_reopen(kept.handle, rowid)
            if code == SQLITE_OK { return kept.handle }
            sqlite3_blob_close(kept.handle)
            textBlob = nil
            try check(code)
        }
        if let kept = textBlob {
            sqlite3_blob_close(kept.handle)
            textBlob = nil
        }
        var opened: OpaquePointer?
        let code = sqlite3_blob_open(handle, "main", table, column, rowid, 0, &opened)
        guard code == SQLITE_OK, let opened else {
            sqlite3_blob_close(opened)
            try check(code == SQLITE_OK ? SQLITE_ERROR : code)
            throw Failure(message: "the row's text could not be opened", code: SQLITE_ERROR)
        }
        textBlob = (table, column, opened)
        return opened
    }

    fileprivate func check(_ code: Int32) throws(Failure) {
        guard code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE else {
            throw Failure(message: String(cString: sqlite3_errmsg(handle)), code: code & 0xff, systemError: sqlite3_system_errno(handle))
        }
    }

    /// One value of a row, as SQLite stores it.
    package enum Value: Equatable, Sendable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob(Data)
        /// Text whose bytes are not UTF-8: never repaired into other text.
        case notUTF8(Data)
    }

    /// A prepared statement; finalised when released.
    package final class Statement {
        private let statement: OpaquePointer
        private let connection: SQLite

        fileprivate init(_ statement: OpaquePointer, in connection: SQLite) {
            self.statement = statement
            self.connection = connection
        }

        deinit { sqlite3_finalize(statement) }

        /// Binds values to the statement's parameters, first to last.
        package func bind(_ values: [Value]) throws(Failure) {
            for (offset, value) in values.enumerated() {
                let index = Int32(offset + 1)
                switch value {
                case .null: try connection.check(sqlite3_bind_null(statement, index))
                case .integer(let number): try connection.check(sqlite3_bind_int64(statement, index, number))
                case .real(let number): try connection.check(sqlite3_bind_double(statement, index, number))
                case .text(let text): try connection.check(sqlite3_bind_text(statement, index, text, -1, Self.transient))
                case .blob(let data), .notUTF8(let data):
                    let code = data.withUnsafeBytes { bytes in
                        sqlite3_bind_blob(statement, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
                    }
                    try connection.check(code)
                }
            }
        }

        /// The next row, or nil when there is none.
        package func step() throws(Failure) -> Row? {
            let code = sqlite3_step(statement)
            try connection.check(code)
            return code == SQLITE_ROW ? Row(statement: statement) : nil
        }

        /// Makes the statement ready to run again, its bindings cleared.
        package func reset() throws(Failure) {
            try connection.check(sqlite3_reset(statement))
            try connection.check(sqlite3_clear_bindings(statement))
        }

        /// Tells SQLite to copy bound text and blobs.
        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }

    /// The current row of a statement; valid until the next step.
    package struct Row {
        fileprivate let statement: OpaquePointer

        package var count: Int { Int(sqlite3_column_count(statement)) }

        package subscript(column: Int) -> Value {
            let index = Int32(column)
            switch sqlite3_column_type(statement, index) {
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
            case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
            case SQLITE_TEXT:
                let count = Int(sqlite3_column_bytes(statement, index))
                guard let bytes = sqlite3_column_text(statement, index) else { return .text("") }
                let buffer = UnsafeBufferPointer(start: bytes, count: count)
                return String(validating: buffer, as: UTF8.self).map(Value.text) ?? .notUTF8(Data(buffer))
            case SQLITE_BLOB:
                let count = Int(sqlite3_column_bytes(statement, index))
                guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return .blob(Data()) }
                return .blob(Data(bytes: bytes, count: count))
            default: return .null
            }
        }

        /// A text column's raw bytes, without making a `String` (nil when it is not text).
        package func withText<T>(_ column: Int, _ body: (UnsafeRawBufferPointer) -> T) -> T? {
            let index = Int32(column)
            guard sqlite3_column_type(statement, index) == SQLITE_TEXT else { return nil }
            let count = Int(sqlite3_column_bytes(statement, index))
            return body(UnsafeRawBufferPointer(start: sqlite3_column_text(statement, index), count: count))
        }

        /// A blob column's bytes, without copying them (nil when it is not a blob).
        package func withBlob<T>(_ column: Int, _ body: (UnsafeRawBufferPointer) -> T) -> T? {
            let index = Int32(column)
            guard sqlite3_column_type(statement, index) == SQLITE_BLOB else { return nil }
            let count = Int(sqlite3_column_bytes(statement, index))
            return body(UnsafeRawBufferPointer(start: sqlite3_column_blob(statement, index), count: count))
        }
    }
}
