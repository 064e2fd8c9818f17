import Foundation
import ReckonCore

#if canImport(Glibc)
    import Glibc
#endif

/// Builds a store laid out as Core Data lays one out (`Z_PRIMARYKEY`,
/// `Z_METADATA`, `Z_MODELCACHE`, an entity table with `Z_PK`, `Z_ENT`,
/// `Z_OPT`), through reckon's SQLite wrapper over the C library.
struct StoreBuilder {
    /// Entities as `Z_PRIMARYKEY` lists them: number, name, super-entity (0 for none).
    var entities: [(Int64, String, Int64)] = [(1, "Memo", 0), (2, "Tag", 0)]
    /// The memo entity's table and its columns after `Z_PK`, `Z_ENT` and `Z_OPT`.
    var table = "ZMEMO"
    var columns = [
        "ZPINNED INTEGER", "ZARCHIVEDAT TIMESTAMP", "ZCREATEDAT TIMESTAMP", "ZDELETEDAT TIMESTAMP", "ZMODIFIEDAT TIMESTAMP",
        "ZBODY VARCHAR", "ZCHANGETAG VARCHAR", "ZTITLE VARCHAR", "ZID BLOB", "ZTAGS BLOB"
    ]
    /// How the store keeps text (`PRAGMA encoding`); Core Data keeps UTF-8.
    var encoding = "UTF-8"
    /// More statements run after the tables are made (join tables, tags).
    var extra: [String] = []

    /// One row: column name to value; `Z_ENT` is 1 and `Z_OPT` 1 unless given.
    typealias Row = [String: SQLite.Value]

    /// Writes the store at `path`, in WAL mode; with `walRows`, those rows
    /// are committed while the file is copied to `path` from a connection
    /// still open, so that they live only in the copy's `-wal`, as in a
    /// running app.
    func make(at path: String, rows: [Row], walRows: [Row] = []) throws {
        let work = temporaryFolder().appendingPathComponent("default.store").path
        let db = try SQLite(path: work, mode: .create)
        try db.execute("PRAGMA encoding = '\(encoding)'; PRAGMA journal_mode=WAL")
        try db.execute(
            """
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
            CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
            CREATE TABLE \(table) (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER\(columns.map { ", " + $0 }.joined()));
            INSERT INTO Z_METADATA VALUES (1, 'B5E1A7C2-0000-4000-8000-000000000001', NULL);
            """)
        for (number, name, parent) in entities {
            try db.rows("INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, 0)", [.integer(number), .text(name), .integer(parent)])
        }
        for statement in extra { try db.execute(statement) }
        func insert(_ rows: [Row]) throws {
            for row in rows {
                var row = row
                if row["Z_ENT"] == nil { row["Z_ENT"] = .integer(1) }
                if row["Z_OPT"] == nil { row["Z_OPT"] = .integer(1) }
                let names = row.keys.sorted()
                _ = try db.rows(
                    "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))",
                    names.map { row[$0]! })
            }
        }
        try insert(rows)
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try insert(walRows)
        let target = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: path + "-wal")
        try FileManager.default.copyItem(atPath: work, toPath: path)
        if !walRows.isEmpty { try FileManager.default.copyItem(atPath: work + "-wal", toPath: path + "-wal") }
        withExtendedLifetime(db) {}
    }

    /// A memo row with the usual columns: dates as REAL seconds since 2001,
    /// the id as a 16-byte BLOB, tags as a binary property list.
    static func memo(
        _ id: String, title: String? = nil, body: String? = nil, modified: String, created: String? = nil,
        archived: String? = nil, deleted: String? = nil, tags: [String] = [], pinned: Bool = false
    ) -> Row {
        var row: Row = ["ZID": uuid(id), "ZMODIFIEDAT": date(modified), "ZPINNED": .integer(pinned ? 1 : 0), "ZTAGS": plist(tags)]
        if let title { row["ZTITLE"] = .text(title) }
        if let body { row["ZBODY"] = .text(body) }
        if let created { row["ZCREATEDAT"] = date(created) }
        if let archived { row["ZARCHIVEDAT"] = date(archived) }
        if let deleted { row["ZDELETEDAT"] = date(deleted) }
        return row
    }

    static func uuid(_ text: String) -> SQLite.Value {
        .blob(data(hex: text.replacingOccurrences(of: "-", with: "")))
    }

    /// The bytes a string of hex digits spells.
    static func data(hex text: String) -> Data {
        let hex = Array(text.utf8)
        return Data(stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! })
    }

    /// An ISO 8601 instant as Core Data stores it: REAL seconds since 2001-01-01.
    static func date(_ text: String) -> SQLite.Value {
        let instant = Timestamp(iso8601: text)!
        return .real(Double(instant.seconds - 978_307_200) + Double(instant.nanoseconds) / 1e9)
    }

    static func plist(_ tags: [String]) -> SQLite.Value {
        .blob(try! PropertyListSerialization.data(fromPropertyList: tags, format: .binary, options: 0))
    }
}

/// The device side of `Samples/drift` as store rows.
let driftDeviceRows: [StoreBuilder.Row] = [
    StoreBuilder.memo(
        "3F2504E0-4F89-11D3-9A0C-0305E82C3301", title: "Groceries", body: "Milk, eggs, miso, green onions.",
        modified: "2026-04-18T09:15:00Z", created: "2026-04-01T08:00:00Z", tags: ["home"], pinned: true),
    StoreBuilder.memo(
        "7C9E6679-7425-40DE-944B-E07FC1F90AE7", title: "京都旅行",
        body: "Day 1: Fushimi Inari early, before the crowds.\nDay 2: Arashiyama.",
        modified: "2026-04-19T14:32:00Z", created: "2026-04-02T10:30:00Z", tags: ["travel", "japan"]),
    StoreBuilder.memo(
        "16FD2706-8BAF-433B-82EB-8C7FADA847DA", title: "Book list",
        body: "- The Pragmatic Programmer\n- A Philosophy of Software Design",
        modified: "2026-04-10T21:05:30.250Z", created: "2026-04-03T21:00:00Z", tags: ["reading"]),
    StoreBuilder.memo(
        "886313E1-3B8A-5372-9B90-0C9AEE199E5D", title: "Meeting notes", body: "Agreed: export screen shows counts on both sides.",
        modified: "2026-04-05T14:00:00Z", created: "2026-04-05T13:00:00Z", tags: ["work"]),
    StoreBuilder.memo(
        "A3BB189E-8BF9-3888-9912-ACE4E6543002", title: "Old recipes", body: "Grandmother's curry: start with the onions, slowly.",
        modified: "2026-01-03T09:00:00Z", created: "2025-11-20T18:00:00Z", archived: "2026-01-03T09:00:00Z", tags: ["food"]),
    StoreBuilder.memo(
        "C56A4180-65AA-42EC-A945-5FD21DEC0538", title: "Draft I threw away", body: "never mind",
        modified: "2026-04-07T07:00:00Z", created: "2026-04-06T07:00:00Z", deleted: "2026-04-07T07:00:00Z")
]

/// A side spec for a store file.
func storeSide(_ path: String, model: StoreModel = StoreModel(), role: SideRole = .local) -> SideSpec {
    SideSpec(
        role: role, name: role == .local ? "device" : "drive", label: "this device", path: path,
        kind: .store(AppStoreSide(url: URL(fileURLWithPath: path), isBackup: false, model: model)))
}

extension StoreBuilder {
    /// Rows that fill many pages: the drift rows and `count` more saved memos with long bodies.
    static func manyRows(_ count: Int) -> [Row] {
        driftDeviceRows
            + (1...count).map {
                memo(
                    String(format: "00000000-0000-4000-8000-%012d", $0), title: "saved", body: String(repeating: "x", count: 2000),
                    modified: "2026-04-01T00:00:00Z")
            }
    }

    /// Makes at `path` what a writer in rollback-journal mode leaves when it
    /// crashes mid-transaction: `rows` saved, then every title changed to
    /// "never saved", part of that written into the store file itself (a page
    /// cache of one page spills), and the `-journal` that undoes it beside it.
    /// Both files are copied while the transaction is open, then it is undone.
    func makeCrashedWriter(at path: String, rows: [Row]) throws {
        let work = temporaryFolder().appendingPathComponent("default.store").path
        try make(at: work, rows: rows)
        let writer = try SQLite(path: work, mode: .create)
        try writer.execute("PRAGMA journal_mode=DELETE")
        try writer.execute("PRAGMA cache_size=1")
        try writer.execute("BEGIN")
        try writer.execute("UPDATE \(table) SET ZTITLE = 'never saved'")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        for suffix in ["", "-journal"] { try FileManager.default.copyItem(atPath: work + suffix, toPath: path + suffix) }
        try writer.execute("ROLLBACK")
    }

    /// How many rows of the store file at `path`, read alone (its journal
    /// not beside it), hold a title that was never saved.
    static func unsavedTitlesWithoutJournal(_ path: String) throws -> [[SQLite.Value]] {
        let alone = temporaryFolder().appendingPathComponent("default.store").path
        try FileManager.default.copyItem(atPath: path, toPath: alone)
        return try SQLite(path: alone).rows("SELECT count(*) FROM ZMEMO WHERE ZTITLE = 'never saved'")
    }
}

/// Another process writing a store in rollback-journal mode, as an app
/// would: python3's sqlite3 begins a transaction, changes every title to
/// "never saved" with a page cache of one page (so the changes spill into
/// the store file, under SQLite's exclusive lock, the `-journal` beside it),
/// and waits, holding the lock, until it is killed: then it is a crashed writer.
final class RollbackJournalWriter {
    let process = Process()

    /// Starts the writer on the store at `path` and returns once its changes are on disk.
    init(store path: String) throws {
        let script = """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("PRAGMA journal_mode=DELETE")
            db.execute("PRAGMA cache_size=1")
            db.execute("BEGIN")
            db.execute("UPDATE ZMEMO SET ZTITLE = 'never saved'")
            print("ready", flush=True)
            time.sleep(600)
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let said = output.fileHandleForReading.readData(ofLength: 6)
        guard said == Data("ready\n".utf8) else {
            kill()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the writer did not start: \(said)"])
        }
    }

    /// Kills the writer with SIGKILL, as a crash would, and waits for it to end.
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { if process.isRunning { kill() } }
}
