import Foundation

/// An unencrypted iOS backup folder (Finder, iTunes, `idevicebackup2 backup
/// --full DIR`), read only to find where an app's SwiftData store is.
///
/// A backup keeps every file under a name made from its SHA-1
/// (`<first two hex digits>/<fileID>`); `Manifest.db`'s `Files` table says
/// which `fileID` holds which `relativePath` of which `domain`. The backup is
/// never written: SQLite opens only a private copy of `Manifest.db` (and its
/// `-wal`), and every path built from the manifest is checked before it is
/// handed on, so a hostile manifest cannot point reckon outside the backup.
package enum PhoneBackup {
    /// Where an app keeps its SwiftData store, relative to its domain.
    package static let storePath = "Library/Application Support/default.store"
    /// The domains apps own: the app's container and its app groups.
    static let appDomainPrefixes = ["AppDomain-", "AppDomainGroup-"]

    /// Whether `folder` is an iPhone backup: it holds `Manifest.db`, whatever
    /// that is, or, holding neither `index.json` nor `60dMemo`, a file only a
    /// backup holds (`backupMark`), so a backup without its manifest is
    /// called one rather than a memo folder without `index.json`.
    package static func isBackup(_ folder: URL) -> Bool {
        if FileKind(path: manifest(folder)) != .missing { return true }
        guard ["index.json", "60dMemo"].allSatisfy({ FileKind(path: folder.appendingPathComponent($0).path) == .missing }) else { return false }
        return backupMark(folder) != nil
    }

    /// The first file beside `Manifest.db` that only an iPhone backup holds, if the folder has one.
    static func backupMark(_ folder: URL) -> String? {
        ["Manifest.plist", "Status.plist", "Manifest.mbdb"].first { FileKind(path: folder.appendingPathComponent($0).path) != .missing }
    }

    /// One app's store found in a backup: where its files are on disk.
    package struct StoreFiles: Sendable, Equatable {
        /// The domain that holds it: `AppDomainGroup-group.com.example.memo`.
        package var domain: String
        /// The path on disk of its `default.store` (`<backup>/<xx>/<fileID>`).
        package var store: String
        /// The path on disk of its `default.store-wal`, or, when the backup
        /// has none, `<store>-wal`, which was checked not to exist.
        package var wal: String
        /// In an encrypted backup, the keys the store and its `-wal` are
        /// decrypted with, by the names of their copies (`StoreSnapshot.storeName`).
        package var keys: [String: EncryptedBackup.FileKey] = [:]
        /// How long the backup's key derivation took (whenever in the run it was made); nil for an unencrypted backup.
        package var unlockSeconds: Double?

        package init(domain: String, store: String, wal: String) {
            self.domain = domain
            self.store = store
            self.wal = wal
        }

        package static func == (a: StoreFiles, b: StoreFiles) -> Bool {
            (a.domain, a.store, a.wal) == (b.domain, b.store, b.wal) && a.keys.keys.sorted() == b.keys.keys.sorted()
        }
    }

    /// Why a backup cannot be read, in one sentence a person understands.
    package struct Failure: Error, CustomStringConvertible {
        package var message: String
        /// A password file that cannot be used: a usage error.
        package var isUsage = false
        package var description: String { message }
    }

    /// The stores at `Library/Application Support/default.store` in app
    /// domains, sorted by domain; with `app`, only `AppDomain-<app>` and
    /// `AppDomainGroup-<app>`. No store found is an empty array. An
    /// encrypted backup is unlocked with `password` (its keys derived once
    /// per run), and each store comes with the keys its files decrypt with.
    /// With a password (every backup side the command line makes), what was
    /// found is kept for the run: the `--app` check and the load read the
    /// manifest once, and a failure of it is the same failure for both.
    /// `process` says where the manifest's private copy goes.
    package static func stores(in folder: URL, app: String?, password: BackupPassword?, process: ProcessSettings) throws(Failure) -> [StoreFiles] {
        guard let password else { return try findStores(in: folder, app: app, password: nil, process: process) }
        let key = folder.path + "\u{0}" + (app ?? "")
        if let known = password.found.withLock({ $0[key] }) { return try known.get() }
        let result = Result { () throws(Failure) in try findStores(in: folder, app: app, password: password, process: process) }
        password.found.withLock { $0[key] = result }
        return try result.get()
    }

    private static func findStores(in folder: URL, app: String?, password: BackupPassword?, process: ProcessSettings) throws(Failure) -> [StoreFiles]
    {
        var keys: EncryptedBackup.ClassKeys?
        var manifestKey: EncryptedBackup.FileKey?
        if let encryption = try encryption(folder) {
            guard let password else { throw Failure(message: PasswordSources.noPasswordMessage) }
            // The password is asked first: a damaged keybag is said once it is.
            let unlocked = try password.classKeys(for: encryption.keybag ?? Data()) { secret throws(Failure) in
                guard let keybag = encryption.keybag else {
                    throw Failure(
                        message: "Manifest.plist says the backup is encrypted but holds no BackupKeyBag, so the backup is damaged; make a new backup")
                }
                return try EncryptedBackup.unlock(try EncryptedBackup.keybag(keybag), password: secret)
            }
            guard let wrapped = encryption.manifestKey, let key = unlocked.unwrap(wrapped) else {
                throw Failure(
                    message:
                        "its ManifestKey in Manifest.plist is missing or does not unwrap with the backup's keys, so the backup is damaged; make a new backup"
                )
            }
            (keys, manifestKey) = (unlocked, EncryptedBackup.FileKey(key: key, size: nil))
        }
        let rows = try manifestRows(folder, app: app, key: manifestKey, process: process)
        var found: [String: (store: String?, wal: String?)] = [:]
        var fileKeys: [String: EncryptedBackup.FileKey] = [:]
        for row in rows {
            guard appDomainPrefixes.contains(where: { row.domain.hasPrefix($0) }) else { continue }
            if let app, !appDomainPrefixes.contains(where: { row.domain == $0 + app }) { continue }
            let isStore = row.relativePath == storePath
            let kind = isStore ? "default.store" : "default.store-wal"
            let path = try dataFile(folder, fileID: row.fileID, listing: "\(kind) of \(shown(row.domain))")
            var files = found[row.domain] ?? (nil, nil)
            guard (isStore ? files.store : files.wal) == nil else {
                throw Failure(message: "\(manifest(folder)) lists \(kind) of \(shown(row.domain)) twice, so the backup is damaged; make a new backup")
            }
            if isStore { files.store = path } else { files.wal = path }
            found[row.domain] = files
            if let keys {
                guard let record = row.record, let key = EncryptedBackup.fileKey(record, with: keys) else {
                    throw Failure(
                        message:
                            "\(manifest(folder)) holds no key that opens \(kind) of \(shown(row.domain)) (its file record is damaged), so the backup is damaged; make a new backup"
                    )
                }
                fileKeys[path] = key
            }
        }
        var stores: [StoreFiles] = []
        for (domain, files) in found.sorted(by: { $0.key < $1.key }) {
            guard let store = files.store else { continue }
            let wal: String
            if let listed = files.wal {
                wal = listed
            } else {
                wal = store + "-wal"
                let kind = FileKind(path: wal)
                guard kind == .missing else {
                    throw Failure(
                        message:
                            "\(wal) is \(kind.description) that the backup's Manifest.db does not list, so the backup is damaged; make a new backup")
                }
            }
            var files = StoreFiles(domain: domain, store: store, wal: wal)
            files.keys[StoreSnapshot.storeName] = fileKeys[store]
            files.keys[StoreSnapshot.storeName + "-wal"] = fileKeys[wal]
            files.unlockSeconds = keys?.seconds
            stores.append(files)
        }
        return stores
    }

    // MARK: - Manifest.plist

    /// What `Manifest.plist` says of the backup's encryption: nil for an
    /// unencrypted backup (or one without the file), else its keybag and
    /// manifest key; fails when the file cannot be read or is damaged.
    static func encryption(_ folder: URL) throws(Failure) -> (keybag: Data?, manifestKey: Data?)? {
        let path = folder.appendingPathComponent("Manifest.plist").path
        let kind = FileKind(path: path)
        if kind == .missing { return nil }
        guard kind.isRegular else {
            throw Failure(message: "\(path) is \(kind.description), not a file, so reckon cannot tell whether the backup is encrypted")
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw Failure(message: "\(path) cannot be read, so reckon cannot tell whether the backup is encrypted: \(errorWords(error))")
        }
        let plist: Any
        do { plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil) } catch {
            throw Failure(
                message: "\(path) is damaged (it is not a property list), so reckon cannot tell whether the backup is encrypted; make a new backup")
        }
        guard let dictionary = plist as? [String: Any] else {
            throw Failure(
                message: "\(path) is damaged (it holds no dictionary), so reckon cannot tell whether the backup is encrypted; make a new backup")
        }
        guard let flag = dictionary["IsEncrypted"] else { return nil }
        let encrypted: Bool
        if let bool = flag as? Bool {
            encrypted = bool
        } else if let number = flag as? NSNumber {
            encrypted = number.boolValue
        } else {
            throw Failure(
                message:
                    "\(path) is damaged (its IsEncrypted is not true or false), so reckon cannot tell whether the backup is encrypted; make a new backup"
            )
        }
        guard encrypted else { return nil }
        return (dictionary["BackupKeyBag"] as? Data, dictionary["ManifestKey"] as? Data)
    }

    // MARK: - Manifest.db

    /// One row of `Files` that names a store or its `-wal`.
    struct Row {
        var fileID: String
        var domain: String
        var relativePath: String
        /// The file's record (`Files.file`), read only from an encrypted backup, whose keys it holds.
        var record: Data?
    }

    static func manifest(_ folder: URL) -> String {
        folder.appendingPathComponent("Manifest.db").path
    }

    /// The `Files` rows for `default.store` and its `-wal`, read from a
    /// private copy of `Manifest.db` (in a folder `process` names),
    /// decrypted with `key` in an encrypted backup.
    static func manifestRows(_ folder: URL, app: String?, key: EncryptedBackup.FileKey?, process: ProcessSettings) throws(Failure) -> [Row] {
        let path = manifest(folder)
        let kind = FileKind(path: path)
        guard kind.isRegular else {
            if kind == .missing, let mark = backupMark(folder) {
                throw Failure(
                    message:
                        "is an iPhone backup (it holds \(mark)) without Manifest.db, the backup's list of its files, so it cannot be read: the backup is unfinished, or was made before iOS 10, which reckon does not read; make a new backup"
                )
            }
            if kind == .missing {
                throw Failure(
                    message:
                        "holds no Manifest.db, so it is not an iPhone backup that reckon can read (backups from before iOS 10 are not read)"
                )
            }
            throw Failure(message: "\(path) is \(kind.description), not a file, so the backup cannot be read")
        }
        let walKind = FileKind(path: path + "-wal")
        guard walKind == .missing || walKind.isRegular else {
            throw Failure(message: "\(path)-wal is \(walKind.description), not a file, so the backup cannot be read")
        }
        let snapshot: StoreSnapshot
        do {
            snapshot = try StoreSnapshot.take(
                store: path, wal: path + "-wal", named: "Manifest.db", keys: key.map { [StoreSnapshot.storeName: $0] } ?? [:], process: process)
        } catch {
            if error.beingWritten {
                throw Failure(message: "\(path) was being written while reckon read it; wait until the backup has finished, then try again")
            }
            throw Failure(message: "\(path) could not be copied to be read: \(error.message)")
        }
        // The connection is closed when `query` returns, before the copy goes.
        defer { withExtendedLifetime(snapshot) {} }
        return try query(snapshot, path: path, app: app, records: key != nil)
    }

    private static func query(_ snapshot: StoreSnapshot, path: String, app: String?, records: Bool) throws(Failure) -> [Row] {
        func failure(_ error: SQLite.Failure) -> Failure {
            if error.isDamage {
                return Failure(
                    message:
                        records
                        ? "\(path) is not a readable database once decrypted (SQLite says: \(error.message)), so the backup is damaged; make a new backup"
                        : "\(path) is not a readable database (SQLite says: \(error.message)), so the backup is damaged or encrypted; make a new, unencrypted backup"
                )
            }
            if error.isLock {
                return Failure(message: "\(path) could not be read because its copy was locked (SQLite says: \(error.message))")
            }
            return Failure(message: "\(path) could not be read (SQLite says: \(error.message))")
        }
        do {
            let database = try snapshot.open()
            let columns = try database.rows("PRAGMA table_info(Files)").compactMap { row -> String? in
                guard row.count > 1, case .text(let name) = row[1] else { return nil }
                return name
            }
            guard !columns.isEmpty else {
                throw Failure(message: "\(path) has no Files table, so it is not an iPhone backup's manifest")
            }
            for needed in ["fileID", "domain", "relativePath"] + (records ? ["file"] : []) where !columns.contains(needed) {
                throw Failure(
                    message: "\(path) has a Files table without the column \(needed), so it is not an iPhone backup's manifest that reckon can read")
            }
            var sql = "SELECT fileID, domain, relativePath\(records ? ", file" : "") FROM Files WHERE relativePath IN (?, ?)"
            var values: [SQLite.Value] = [.text(storePath), .text(storePath + "-wal")]
            if let app {
                sql += " AND domain IN (?, ?)"
                values += appDomainPrefixes.map { .text($0 + app) }
            }
            var rows: [Row] = []
            for row in try database.rows(sql, values) {
                // A domain that is not text is no app's domain; an id that is
                // not text cannot name a file.
                guard case .text(let domain) = row[1], case .text(let relativePath) = row[2] else { continue }
                let fileID: String
                switch row[0] {
                case .text(let text): fileID = text
                case .blob(let data): fileID = String(decoding: data, as: UTF8.self)
                default: fileID = ""
                }
                var record: Data?
                if records, case .blob(let data) = row[3] { record = data }
                rows.append(Row(fileID: fileID, domain: domain, relativePath: relativePath, record: record))
            }
            return rows
        } catch let error as SQLite.Failure {
            throw failure(error)
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(message: "\(path) could not be read: \(error)")
        }
    }

    // MARK: - Data files

    /// Text from the manifest as a message shows it: quoted, cut short, and
    /// with control and format characters escaped, so a hostile manifest
    /// cannot write to the terminal.
    static func shown(_ text: String) -> String {
        var result = "\""
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            if offset == 80 {
                result += "…"
                break
            }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate, .privateUse:
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                if scalar == "\"" || scalar == "\\" { result += "\\" }
                result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Whether `id` is a backup file id: 40 hex digits (a SHA-1).
    static func isFileID(_ id: String) -> Bool {
        id.utf8.count == 40
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
            }
    }

    /// The path on disk of the file the manifest lists under `fileID`,
    /// checked to be a regular file in a real folder of the backup.
    static func dataFile(_ folder: URL, fileID: String, listing what: String) throws(Failure) -> String {
        guard isFileID(fileID) else {
            throw Failure(
                message:
                    "\(manifest(folder)) lists \(what) under the file id \(shown(fileID)), which is not 40 hex digits, so the backup is damaged or was altered; reckon reads nothing it names"
            )
        }
        let subfolder = folder.appendingPathComponent(String(fileID.prefix(2))).path
        let subfolderKind = FileKind(path: subfolder)
        guard subfolderKind == .directory else {
            let found = subfolderKind == .missing ? "missing" : "\(subfolderKind.description), not a folder"
            throw Failure(message: "\(subfolder), which should hold \(what), is \(found), so the backup is incomplete or damaged; make a new backup")
        }
        let path = subfolder + "/" + fileID
        let kind = FileKind(path: path)
        guard kind.isRegular else {
            let found = kind == .missing ? "missing" : "\(kind.description), not a file"
            throw Failure(message: "\(path), which should hold \(what), is \(found), so the backup is incomplete or damaged; make a new backup")
        }
        return path
    }
}
