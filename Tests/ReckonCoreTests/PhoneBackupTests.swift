import Foundation
import TestSupport
import Testing

@testable import ReckonCore

#if canImport(Glibc)
    import Glibc
#endif

/// An iPhone backup folder built at test time: `Manifest.db` made through
/// the SQLite wrapper with the `Files` table as iOS writes it, and each
/// listed file's bytes at `<xx>/<fileID>`.
final class BackupFolder {
    let url: URL
    private(set) var rows: [(fileID: String, domain: String, relativePath: String)] = []

    init() {
        url = scratchFolder("backup")
    }

    /// The id iOS would give a file: hex of a hash of its domain and path
    /// (iOS uses SHA-1; any 40 hex digits will do here).
    static func fileID(_ domain: String, _ relativePath: String) -> String {
        String(SHA256.hex(of: Data("\(domain)-\(relativePath)".utf8)).prefix(40))
    }

    /// Lists a file in the manifest and, unless `bytes` is nil, puts it where
    /// a backup keeps it. Returns its path on disk.
    @discardableResult
    func add(_ domain: String, _ relativePath: String, bytes: Data? = Data("SQLite format 3\0 a store".utf8), fileID: String? = nil) -> String {
        let id = fileID ?? Self.fileID(domain, relativePath)
        rows.append((id, domain, relativePath))
        let path = dataPath(id)
        if let bytes {
            try! FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try! bytes.write(to: URL(fileURLWithPath: path))
        }
        return path
    }

    /// Where the backup keeps the file `id`, as `PhoneBackup` builds it.
    func dataPath(_ id: String) -> String {
        url.appendingPathComponent(String(id.prefix(2))).path + "/" + id
    }

    /// A store in `domain` with its `-wal` when `wal`; returns what `stores` should find.
    @discardableResult
    func addStore(_ domain: String, wal: Bool = true) -> PhoneBackup.StoreFiles {
        let store = add(domain, PhoneBackup.storePath)
        let walPath = wal ? add(domain, PhoneBackup.storePath + "-wal", bytes: Data("a wal".utf8)) : store + "-wal"
        return PhoneBackup.StoreFiles(domain: domain, store: store, wal: walPath)
    }

    /// Writes `Manifest.db` from the rows added. With `wal`, the rows stay in
    /// a `-wal` beside it, as a manifest still being written would.
    func writeManifest(wal: Bool = false) throws {
        let target = url.appendingPathComponent("Manifest.db").path
        let build = wal ? scratchFolder("backup-build") : url
        defer { if wal { try? FileManager.default.removeItem(at: build) } }
        try writeManifest(in: build, wal: wal, copyingTo: wal ? target : nil)
    }

    /// Makes `Manifest.db` in `folder`; with `target`, copies it and its
    /// `-wal` there while the connection is still open.
    private func writeManifest(in folder: URL, wal: Bool, copyingTo target: String?) throws {
        let path = folder.appendingPathComponent("Manifest.db").path
        let database = try SQLite(path: path, mode: .create)
        if wal { try database.execute("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;") }
        try database.execute(
            """
            CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB);
            CREATE INDEX FilesDomainIdx ON Files(domain);
            CREATE INDEX FilesRelativePathIdx ON Files(relativePath);
            CREATE TABLE Properties (key TEXT PRIMARY KEY, value BLOB);
            """)
        let insert = try database.prepare("INSERT INTO Files VALUES (?, ?, ?, 1, NULL)")
        for row in rows {
            try insert.bind([.text(row.fileID), .text(row.domain), .text(row.relativePath)])
            _ = try insert.step()
            try insert.reset()
        }
        if let target {
            // Copied while the writer is open, so the rows are only in the -wal.
            try FileManager.default.copyItem(atPath: path, toPath: target)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: target + "-wal")
        }
    }

    /// Writes `Manifest.plist` with `IsEncrypted` as given.
    func writePlist(encrypted: Bool, format: PropertyListSerialization.PropertyListFormat = .xml) {
        let plist: [String: Any] = ["IsEncrypted": encrypted, "Version": "10.0"]
        let data = try! PropertyListSerialization.data(fromPropertyList: plist, format: format, options: 0)
        try! data.write(to: url.appendingPathComponent("Manifest.plist"))
    }

    func write(_ name: String, _ bytes: Data) {
        try! bytes.write(to: url.appendingPathComponent(name))
    }

    /// Every path under the folder with what stands there: a file's bytes
    /// (as a digest), a link's target, or a folder.
    func tree() -> [String: String] {
        var found: [String: String] = [:]
        func walk(_ relative: String) {
            let path = relative.isEmpty ? url.path : url.path + "/" + relative
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                let child = relative.isEmpty ? name : relative + "/" + name
                let full = url.path + "/" + child
                switch FileKind(path: full) {
                case .regular: found[child] = "file " + SHA256.hex(of: try! Data(contentsOf: URL(fileURLWithPath: full)))
                case .link: found[child] = "link " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: full)) ?? "?")
                case .directory:
                    found[child] = "folder"
                    walk(child)
                case let other: found[child] = other.description
                }
            }
        }
        walk("")
        return found
    }

    /// Calls `PhoneBackup.stores` and checks that the backup holds exactly
    /// the same files with the same bytes afterwards, and that SQLite left
    /// nothing beside `Manifest.db`.
    func stores(app: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> Result<[PhoneBackup.StoreFiles], PhoneBackup.Failure> {
        let before = tree()
        let result = Result { () throws(PhoneBackup.Failure) in try PhoneBackup.stores(in: url, app: app, password: nil, process: ProcessSettings()) }
        let after = tree()
        #expect(after == before, "the backup changed", sourceLocation: sourceLocation)
        for suffix in ["-shm", "-journal"] {
            #expect(after["Manifest.db" + suffix] == nil, "SQLite left Manifest.db\(suffix) in the backup", sourceLocation: sourceLocation)
        }
        return result
    }

    /// The failure's message, recording an issue when the call succeeded.
    func failure(app: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        switch stores(app: app, sourceLocation: sourceLocation) {
        case .success(let stores):
            Issue.record("expected a failure, found \(stores)", sourceLocation: sourceLocation)
            return ""
        case .failure(let failure): return failure.message
        }
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

@Suite struct PhoneBackupTests {
    static let group = "AppDomainGroup-group.com.example.memo"

    @Test func findsOneAppGroupStoreWithItsWal() throws {
        let backup = BackupFolder()
        let expected = backup.addStore(Self.group)
        backup.add("HomeDomain", PhoneBackup.storePath)  // not an app's domain
        backup.add(Self.group, "Library/Application Support/other.store")
        backup.add("AppDomain-com.example.memo", "Library/Preferences/com.example.memo.plist")
        backup.writePlist(encrypted: false)
        try backup.writeManifest()
        #expect(PhoneBackup.isBackup(backup.url))
        #expect(try backup.stores().get() == [expected])
        #expect(FileKind(path: expected.wal).isRegular)
    }

    @Test func aStoreWithoutAWalGivesAWalPathThatDoesNotExist() throws {
        let backup = BackupFolder()
        let expected = backup.addStore(Self.group, wal: false)
        try backup.writeManifest()
        let found = try backup.stores().get()
        #expect(found == [expected])
        #expect(FileKind(path: found[0].wal) == .missing)
    }

    @Test func twoAppsAreListedSortedAndAppPicksOne() throws {
        let backup = BackupFolder()
        let zeta = backup.addStore("AppDomainGroup-group.org.zeta.notes")
        let memo = backup.addStore(Self.group, wal: false)
        let alpha = backup.addStore("AppDomain-com.alpha.jot")
        try backup.writeManifest()
        #expect(try backup.stores().get() == [alpha, memo, zeta])
        #expect(try backup.stores(app: "group.com.example.memo").get() == [memo])
        #expect(try backup.stores(app: "com.alpha.jot").get() == [alpha])
        #expect(try backup.stores(app: "com.example.none").get() == [])
        // The app is matched whole, not as a prefix or a pattern.
        #expect(try backup.stores(app: "group.com.example").get() == [])
        #expect(try backup.stores(app: "group.com.example.m_mo").get() == [])
    }

    @Test func appMatchesTheAppDomainAndTheAppGroupDomain() throws {
        let backup = BackupFolder()
        let own = backup.addStore("AppDomain-com.example.memo")
        let group = backup.addStore("AppDomainGroup-com.example.memo")
        backup.addStore("AppDomainPlugin-com.example.memo.widget")
        backup.addStore("AppDomain-com.example.memo2")
        try backup.writeManifest()
        #expect(try backup.stores(app: "com.example.memo").get() == [own, group])
    }

    @Test func aBackupWithNoStoreGivesNone() throws {
        let backup = BackupFolder()
        backup.add("HomeDomain", "Library/SMS/sms.db")
        try backup.writeManifest()
        #expect(try backup.stores().get() == [])
    }

    @Test func rowsStillInTheManifestsWalAreRead() throws {
        let backup = BackupFolder()
        let expected = backup.addStore(Self.group)
        try backup.writeManifest(wal: true)
        #expect(FileKind(path: backup.url.appendingPathComponent("Manifest.db-wal").path).isRegular)
        #expect(try backup.stores().get() == [expected])
    }

    /// An encrypted backup read without any way to its password says the three ways to give one.
    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func anEncryptedBackupWithoutAPasswordSaysHowToGiveOne(format: PropertyListSerialization.PropertyListFormat) throws {
        let backup = BackupFolder()
        backup.addStore(Self.group)
        try backup.writeManifest()
        backup.writePlist(encrypted: true, format: format)
        let message = backup.failure()
        #expect(message == PasswordSources.noPasswordMessage)
        #expect(message.contains("RECKON_BACKUP_PASSWORD"))
        #expect(message.contains("--password-file"))
        #expect(message.contains("terminal"))
        #expect(!message.contains("\n"))
    }

    @Test func anUnencryptedBinaryPlistIsRead() throws {
        let backup = BackupFolder()
        let expected = backup.addStore(Self.group)
        try backup.writeManifest()
        backup.writePlist(encrypted: false, format: .binary)
        #expect(try backup.stores().get() == [expected])
    }

    @Test func aDamagedManifestPlistIsNamed() throws {
        let backup = BackupFolder()
        backup.addStore(Self.group)
        try backup.writeManifest()
        backup.write("Manifest.plist", Data("<?xml version=\"1.0\"?><plist><dict><key>IsEnc".utf8))
        let message = backup.failure()
        #expect(message.contains(backup.url.appendingPathComponent("Manifest.plist").path))
        #expect(message.contains("damaged"))
    }

    @Test(arguments: ["../x", "../../../../../../../../../../etc/passwd", String(repeating: "0", count: 39) + "/", ""])
    func aFileIDThatIsNot40HexDigitsIsRefused(fileID: String) throws {
        let backup = BackupFolder()
        backup.add(Self.group, PhoneBackup.storePath, bytes: nil, fileID: fileID)
        try backup.writeManifest()
        let message = backup.failure()
        #expect(message.contains("Manifest.db"))
        #expect(message.contains("not 40 hex digits"))
        #expect(message.contains(Self.group))
    }

    @Test func aFileIDWithControlCharactersIsShownEscaped() throws {
        let backup = BackupFolder()
        backup.add(Self.group + "\u{202E}", PhoneBackup.storePath, bytes: nil, fileID: "\u{1B}[2J\n" + String(repeating: "a", count: 200))
        try backup.writeManifest()
        let message = backup.failure()
        #expect(message.contains(#"file id "\u{1B}[2J\u{A}aaa"#))
        #expect(message.contains(#"\u{202E}""#))
        #expect(message.contains("a…\""))
        #expect(!message.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format })
    }

    @Test func aHostileFileIDOfAnotherAppIsNotLookedAtWhenAppIsGiven() throws {
        let backup = BackupFolder()
        backup.add("AppDomain-com.other", PhoneBackup.storePath, bytes: nil, fileID: "../x")
        let expected = backup.addStore(Self.group)
        try backup.writeManifest()
        #expect(try backup.stores(app: "group.com.example.memo").get() == [expected])
        #expect(backup.failure().contains(#"file id "../x""#))
    }

    @Test func aStoreListedTwiceIsRefused() throws {
        let backup = BackupFolder()
        backup.addStore(Self.group, wal: false)
        backup.add(Self.group, PhoneBackup.storePath, fileID: String(repeating: "ab", count: 20))
        try backup.writeManifest()
        #expect(backup.failure().contains(#"lists default.store of "\#(Self.group)" twice"#))
    }

    @Test func aDataFileThatIsALinkIsRefused() throws {
        let backup = BackupFolder()
        let expected = backup.addStore(Self.group, wal: false)
        let outside = backup.url.appendingPathComponent("outside.store").path
        try Data("elsewhere".utf8).write(to: URL(fileURLWithPath: outside))
        try FileManager.default.removeItem(atPath: expected.store)
        try FileManager.default.createSymbolicLink(atPath: expected.store, withDestinationPath: outside)
        try backup.writeManifest()
        let message = backup.failure()
        #expect(message.contains(expected.store))
        #expect(message.contains("a link, not a file"))
    }

    @Test func aWalThatIsALinkIsRefused() throws {
        let backup = BackupFolder()
        let expected = backup.addStore(Self.group)
        try FileManager.default.removeItem(atPath: expected.wal)
        try FileManager.default.createSymbolicLink(atPath: expected.wal, withDestinationPath: "/etc/passwd")
        try backup.writeManifest()
        let message = backup.failure()
        #expect(message.contains(expected.wal))
        #expect(message.contains("a link"))
    }

    @Test func aSubfolderThatIsALinkIsRefused() throws {
        let backup = BackupFolder()
        let id = BackupFolder.fileID(Self.group, PhoneBackup.storePath)
        let elsewhere = scratchFolder("backup-elsewhere")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        try Data("elsewhere".utf8).write(to: elsewhere.appendingPathComponent(id))
        try FileManager.default.createSymbolicLink(
            atPath: backup.url.appendingPathComponent(String(id.prefix(2))).path, withDestinationPath: elsewhere.path)
        backup.add(Self.group, PhoneBackup.storePath, bytes: nil)
        try backup.writeManifest()
        let message = backup.failure()
        #expect(message.contains("a link, not a folder"))
    }

    @Test func aListedStoreMissingFromTheBackupIsRefused() throws {
        let backup = BackupFolder()
        let path = backup.add(Self.group, PhoneBackup.storePath, bytes: nil)
        try backup.writeManifest()
        let message = backup.failure()
        #expect(message.contains("missing"))
        #expect(message.contains((path as NSString).deletingLastPathComponent))
    }

    @Test func aManifestThatIsNotADatabaseIsNamed() throws {
        let backup = BackupFolder()
        backup.write("Manifest.db", Data(repeating: UInt8(ascii: "x"), count: 4096))
        #expect(PhoneBackup.isBackup(backup.url))
        let message = backup.failure()
        #expect(message.contains(backup.url.appendingPathComponent("Manifest.db").path))
        #expect(message.contains("not a readable database"))
        #expect(!message.contains("SQLITE_"))
    }

    @Test func aManifestWithoutAFilesTableIsNamed() throws {
        let backup = BackupFolder()
        let database = try SQLite(path: backup.url.appendingPathComponent("Manifest.db").path, mode: .create)
        try database.execute("CREATE TABLE Properties (key TEXT PRIMARY KEY, value BLOB)")
        _ = consume database
        let message = backup.failure()
        #expect(message.contains("Manifest.db has no Files table"))
    }

    @Test func aFolderWithoutAManifestIsNotABackup() throws {
        let backup = BackupFolder()
        #expect(!PhoneBackup.isBackup(backup.url))
        let message = backup.failure()
        #expect(message.contains("holds no Manifest.db"))
        try FileManager.default.createDirectory(at: backup.url.appendingPathComponent("Manifest.db"), withIntermediateDirectories: false)
        #expect(PhoneBackup.isBackup(backup.url), "a Manifest.db that is not a file is named, not passed over")
        #expect(backup.failure().contains("a folder, not a file"))
    }
}
