import Foundation
import ReckonCore

#if canImport(Glibc)
    import Glibc
#endif

/// Writes generated memos as the app keeps them: a SwiftData / Core Data
/// SQLite store laid out as `Samples/store/make-store.sql` describes
/// (`Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`, `ZMEMO` with `Z_PK`,
/// `Z_ENT`, `Z_OPT`; ids as 16-byte BLOBs, dates as REAL seconds since
/// 2001, tags as a binary property list), in WAL mode like the app.
enum StoreWriter {
    /// Seconds between 1970-01-01 and Core Data's reference date, 2001-01-01 UTC.
    static let referenceDate: Int64 = 978_307_200

    static let schema = """
        CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
        CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
        CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
        CREATE TABLE ZMEMO ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPINNED INTEGER, ZARCHIVEDAT TIMESTAMP, ZCREATEDAT TIMESTAMP, ZDELETEDAT TIMESTAMP, ZMODIFIEDAT TIMESTAMP, ZBODY VARCHAR, ZCHANGETAG VARCHAR, ZTITLE VARCHAR, ZID BLOB, ZTAGS BLOB );
        CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
        """

    /// Writes `count` memos, `memo(n)` for n in 0..<count, as `path`,
    /// replacing any store (and its `-wal`, `-shm`) there.
    ///
    /// All rows go in one transaction through one prepared INSERT, with no
    /// rollback journal and no syncing: the file is generated, so a crash
    /// means generating it again, and the rows are written once instead of
    /// once to the WAL and again by the checkpoint. The store is switched to
    /// WAL at the end, which is how the app's store is found, and closing
    /// the last connection leaves no `-wal`.
    static func write(to path: String, count: Int, memo: (Int) -> Generator.Memo) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
        let db = try SQLite(path: path, mode: .create)
        try db.execute(
            "PRAGMA page_size = 4096; PRAGMA auto_vacuum = 2; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -65536;")
        try db.execute(schema)
        try db.execute("BEGIN")
        let uuid = "B0D1E5A2-6C1F-4E39-9A77-3E5C2F8D1A40"
        let header = try db.prepare("INSERT INTO Z_PRIMARYKEY VALUES (1, 'Memo', 0, ?), (2, 'Tag', 0, 0)")
        try header.bind([.integer(Int64(count))])
        _ = try header.step()
        let metadata = try db.prepare("INSERT INTO Z_METADATA VALUES (1, ?, ?)")
        try metadata.bind([.text(uuid), .blob(try Self.metadata(uuid: uuid))])
        _ = try metadata.step()
        try db.execute("INSERT INTO Z_MODELCACHE VALUES (NULL)")

        let tags = try PropertyListSerialization.data(fromPropertyList: ["bench"], format: .binary, options: 0)
        let insert = try db.prepare(
            "INSERT INTO ZMEMO (Z_PK, Z_ENT, Z_OPT, ZPINNED, ZARCHIVEDAT, ZCREATEDAT, ZDELETEDAT, ZMODIFIEDAT, ZBODY, ZCHANGETAG, ZTITLE, ZID, ZTAGS) VALUES (?, 1, 1, 0, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"
        )
        func date(_ seconds: Int64?) -> SQLite.Value { seconds.map { .real(Double($0 - referenceDate)) } ?? .null }
        for n in 0..<count {
            let memo = memo(n)
            try insert.reset()
            try insert.bind([
                .integer(Int64(n + 1)), date(memo.archived), date(memo.created), date(memo.deleted), date(memo.modified),
                .text(memo.body), .text(memo.title), .blob(idBytes(memo.id)), .blob(tags)
            ])
            _ = try insert.step()
        }
        try db.execute("COMMIT")
        // The header now says WAL, as the app's store does; the checkpoint
        // leaves every row in the store file itself.
        try db.execute("PRAGMA journal_mode = WAL; PRAGMA wal_checkpoint(TRUNCATE);")
    }

    /// A UUID's 16 bytes, as Core Data keeps a UUID attribute.
    static func idBytes(_ id: String) -> Data {
        let hex = Array(id.utf8.filter { $0 != UInt8(ascii: "-") })
        func nibble(_ c: UInt8) -> UInt8 { c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : (c | 0x20) - UInt8(ascii: "a") + 10 }
        return Data((0..<16).map { nibble(hex[2 * $0]) << 4 | nibble(hex[2 * $0 + 1]) })
    }

    /// The store metadata Core Data writes in `Z_METADATA.Z_PLIST`, with
    /// made-up model hashes.
    static func metadata(uuid: String) throws -> Data {
        let plist: [String: Any] = [
            "NSStoreType": "SQLite",
            "NSStoreUUID": uuid,
            "NSPersistenceFrameworkVersion": 1414,
            "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionIdentifiers": [""],
            "NSStoreModelVersionHashes": ["Memo": Data(repeating: 0x4D, count: 32), "Tag": Data(repeating: 0x54, count: 32)],
            "_NSAutoVacuumLevel": "2"
        ]
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }
}
