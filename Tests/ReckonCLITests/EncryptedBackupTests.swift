import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An encrypted iPhone backup read through the binary: the same memos as its
/// plain twin, the wrong password said once, damage said in words, and no
/// decrypted byte left anywhere but the run's private folder while it runs.
@Suite struct EncryptedBackupTests {
    static let samples = packageRoot.appendingPathComponent("Samples/backup")
    static let password = "reckon sample"
    let folder = temporaryFolder()

    /// A copy of the encrypted sample backup in the test's folder, named `name`, to damage.
    func copy(as name: String) throws -> URL {
        let copy = folder.appendingPathComponent(name)
        try FileManager.default.copyItem(at: Self.samples.appendingPathComponent("iphone-encrypted"), to: copy)
        return copy
    }

    /// Runs reckon with the password in its environment and a private folder of its own for TMPDIR.
    func reckon(_ arguments: [String], password: String? = password, environment: [String: String] = [:]) throws -> RunResult {
        var environment = environment
        environment["TMPDIR"] = tmp.path
        if let password { environment["RECKON_BACKUP_PASSWORD"] = password }
        return try runArray(arguments, environment: environment, in: folder)
    }

    var tmp: URL {
        let url = folder.appendingPathComponent("tmp")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The private folders a run left in its TMPDIR: none, once it has ended.
    func leftBehind() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: tmp.path).filter { $0.hasPrefix("reckon-store") }
    }

    /// The data file of the store in an encrypted sample (its fileID as the plain sample's manifest names it).
    func storeFile(in backup: URL) throws -> URL {
        let plain = Self.samples.appendingPathComponent("iphone")
        let db = try SQLite(path: plain.appendingPathComponent("Manifest.db").path, mode: .readOnly)
        let rows = try db.rows("SELECT fileID FROM Files WHERE relativePath = ?", [.text(PhoneBackup.storePath)])
        guard case .text(let id)? = rows.first?.first else { throw CocoaError(.fileNoSuchFile) }
        return backup.appendingPathComponent("\(id.prefix(2))/\(id)")
    }

    /// counts, reconcile --json and a pipeline run of each encrypted sample
    /// (the iOS 10.2 keybag and the older one) equal the plain backup's.
    @Test(arguments: ["iphone-encrypted", "iphone-encrypted-old"])
    func anEncryptedBackupReadsAsItsPlainTwin(sample: String) throws {
        let encrypted = Self.samples.appendingPathComponent(sample).path
        let plain = Self.samples.appendingPathComponent("iphone").path
        let counts = try reckon(["counts", encrypted, "--json"])
        #expect(counts.code == 0, "\(counts.stderr)")
        #expect(counts.stdout == (try reckon(["counts", plain, "--json"])).stdout.replacingOccurrences(of: plain, with: encrypted))
        let remote = packageRoot.appendingPathComponent("Samples/drift/drive").path
        let reconciled = try reckon(["reconcile", "--local", encrypted, "--remote", remote, "--json"])
        #expect(reconciled.code == 1)
        let plainReport = try reckon(["reconcile", "--local", plain, "--remote", remote, "--json"]).stdout
        #expect(reconciled.stdout == plainReport.replacingOccurrences(of: plain, with: encrypted), "the same report but for the side's path")
        #expect(try leftBehind().isEmpty, "no decrypted copy stays")

        let passwordFile = folder.appendingPathComponent("password")
        try Data(Self.password.utf8).write(to: passwordFile)
        chmod(passwordFile.path, 0o600)
        for (name, path) in [("e", encrypted), ("p", plain)] {
            let definition = #"""
                {"name": "backup", "local": {"name": "device", "kind": "store", "path": "\#(path)", "passwordFile": "password"},
                 "remotes": [{"name": "drive", "label": "Google Drive", "path": "\#(remote)"}], "reports": {"dir": "out-\#(name)"}}
                """#
            try Data(definition.utf8).write(to: folder.appendingPathComponent("\(name).json"))
            let run = try reckon(["run", "\(name).json"], password: nil, environment: ["SOURCE_DATE_EPOCH": "1764547200"])
            #expect(run.code == 0, "\(run.stdout)\(run.stderr)")
        }
        let reports = try ["e", "p"].map { try read(folder.appendingPathComponent("out-\($0)/report.json")) }
        #expect(reports[0] == reports[1].replacingOccurrences(of: plain, with: encrypted))
        let markdown = try read(folder.appendingPathComponent("out-e/report.md"))
        #expect(markdown.contains("load: backup key derivation"), "the key derivation is timed beside the stages")
    }

    /// The wrong password: exit 2, one sentence, after one key derivation; no manifest was decrypted.
    @Test func theWrongPasswordIsSaidOnceAndNothingElseIsRead() throws {
        let backup = Self.samples.appendingPathComponent("iphone-encrypted").path
        let remote = packageRoot.appendingPathComponent("Samples/drift/drive").path
        let result = try reckon(["reconcile", "--local", backup, "--remote", remote], password: "not it")
        #expect(result.code == 2)
        #expect(result.stdout.contains("error: \(backup): the backup's password is wrong"), "\(result.stdout)\(result.stderr)")
        #expect(!result.stdout.contains("not it") && !result.stderr.contains("not it"))
        #expect(try leftBehind().isEmpty)
    }

    /// A damaged encrypted store or Manifest.db is trouble in words, and the
    /// quarantine keeps the file as the backup holds it, never its plain bytes.
    @Test func damageInAnEncryptedBackupIsSaidInWords() throws {
        let remote = packageRoot.appendingPathComponent("Samples/drift/drive").path
        let cut = try copy(as: "store-damaged")
        let store = try storeFile(in: cut)
        let bytes = try Data(contentsOf: store)
        try bytes.prefix(bytes.count - 5).write(to: store)
        let short = try reckon(["counts", cut.path])
        #expect(short.code == 2)
        #expect(short.stderr.contains("cannot be decrypted whole, so the backup is damaged"), "\(short.stderr)")

        // The last block's padding no longer says its length.
        var lastFlipped = bytes
        lastFlipped[lastFlipped.count - 1] ^= 0x5A
        try lastFlipped.write(to: store)
        let padding = try reckon(["counts", cut.path])
        #expect(padding.code == 2)
        #expect(padding.stderr.contains("cannot be decrypted whole, so the backup is damaged"), "\(padding.stderr)")

        var flipped = bytes
        for offset in stride(from: 0, to: min(flipped.count, 4096), by: 16) { flipped[offset] ^= 0xFF }
        try flipped.write(to: store)
        let out = folder.appendingPathComponent("out")
        let garbled = try reckon(["reconcile", "--local", cut.path, "--remote", remote, "--out", out.path])
        #expect(garbled.code == 2)
        #expect(garbled.stdout.contains("is not a SQLite database"), "\(garbled.stdout)\(garbled.stderr)")
        let quarantined = try FileManager.default.subpathsOfDirectory(atPath: out.appendingPathComponent("quarantine").path)
            .map { out.appendingPathComponent("quarantine/\($0)") }.filter { FileKind(path: $0.path).isRegular }
        #expect(!quarantined.isEmpty)
        let quarantinedStore = try #require(quarantined.first { $0.lastPathComponent == store.lastPathComponent })
        #expect(try Data(contentsOf: quarantinedStore) == flipped, "the store is quarantined encrypted, as the backup holds it")

        let manifest = try copy(as: "manifest-damaged")
        let db = manifest.appendingPathComponent("Manifest.db")
        let manifestBytes = try Data(contentsOf: db)
        try manifestBytes.prefix(manifestBytes.count - 3).write(to: db)
        let damaged = try reckon(["counts", manifest.path])
        #expect(damaged.code == 2)
        #expect(damaged.stderr.contains("Manifest.db cannot be decrypted whole, so the backup is damaged"), "\(damaged.stderr)")
        #expect(try leftBehind().isEmpty)
    }

    /// A change in the store's log damaged in the middle (a byte flipped in
    /// the plain store's `-wal`, or in the encrypted backup's, which CBC spreads
    /// over two blocks): SQLite would stop at it and drop every later change in
    /// silence, so a memo saved after it would read as deleted. It is damage, in words.
    @Test func aLogDamagedBeforeALaterChangeIsDamageNotADeletion() throws {
        let store = folder.appendingPathComponent("store")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Samples/store"), to: store)
        let encrypted = try copy(as: "wal-damaged")
        let plainWAL = store.appendingPathComponent("default.store-wal")
        let backupWAL = try storeFile(in: encrypted).path + "-wal"
        let db = try SQLite(path: Self.samples.appendingPathComponent("iphone/Manifest.db").path, mode: .readOnly)
        let rows = try db.rows("SELECT fileID FROM Files WHERE relativePath = ?", [.text(PhoneBackup.storePath + "-wal")])
        guard case .text(let walID)? = rows.first?.first else { throw CocoaError(.fileNoSuchFile) }
        let encryptedWAL = encrypted.appendingPathComponent("\(walID.prefix(2))/\(walID)")
        #expect(FileKind(path: backupWAL) == .missing, "the backup names its log by its own id")
        for (side, wal) in [(store.appendingPathComponent("default.store").path, plainWAL), (encrypted.path, encryptedWAL)] {
            var bytes = try Data(contentsOf: wal)
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: wal)
            let result = try reckon(["counts", side])
            #expect(result.code == 2, "\(side)")
            #expect(result.stderr.contains("is damaged (a change in it fails its checksum, and changes were saved after it)"), "\(result.stderr)")
        }
    }

    /// SIGTERM or SIGINT at a random moment of a run, or SIGKILL and the next
    /// run: no decrypted file is left in the private folders' parent.
    @Test func aRunStoppedByASignalLeavesNoDecryptedFile() throws {
        var random = TestSeed.generator()
        let backup = Self.samples.appendingPathComponent("iphone-encrypted").path
        let remote = packageRoot.appendingPathComponent("Samples/drift/drive").path
        for signal in [SIGTERM, SIGINT, SIGKILL, SIGTERM, SIGINT, SIGKILL] {
            var environment = childEnvironment(["RECKON_BACKUP_PASSWORD": Self.password, "TMPDIR": tmp.path])
            environment["RECKON_TEST_WORKERS"] = "1"
            let process = Process()
            process.executableURL = reckonBinary
            process.arguments = ["reconcile", "--local", backup, "--remote", remote, "--out", folder.appendingPathComponent("out").path]
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32.random(in: 0...30_000, using: &random))
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            if signal == SIGKILL {
                // A SIGKILL leaves its folder; the next run's sweep removes it.
                #expect(try reckon(["counts", backup]).code == 0)
            }
            #expect(try leftBehind().isEmpty, "after signal \(signal)")
        }
    }

    /// A backup made at the real iteration counts of recent iOS (10,000,000
    /// rounds of PBKDF2-HMAC-SHA256, 10,000 of SHA-1) reads as its plain twin,
    /// and the run's timings show the key derivation.
    @Test(.needs(.python3, .pythonCryptography)) func aBackupAtTheRealIterationCountsIsRead() throws {
        let backup = folder.appendingPathComponent("real")
        try generateEncryptedBackup(into: backup, ["--seed", "4911", "--dpic", "10000000", "--iter", "10000"])
        let counts = try reckon(["counts", backup.path, "--json"])
        #expect(counts.code == 0, "\(counts.stderr)")
        let plain = Self.samples.appendingPathComponent("iphone").path
        #expect(counts.stdout == (try reckon(["counts", plain, "--json"])).stdout.replacingOccurrences(of: plain, with: backup.path))
        let out = folder.appendingPathComponent("out")
        let remote = packageRoot.appendingPathComponent("Samples/drift/drive").path
        #expect(try reckon(["reconcile", "--local", backup.path, "--remote", remote, "--out", out.path]).code == 1)
        #expect(try read(out.appendingPathComponent("report.md")).contains("| load: backup key derivation |"))
    }

    /// The password is in no file a run writes: reports, history, exports.
    @Test func thePasswordIsInNoOutputFile() throws {
        let backup = Self.samples.appendingPathComponent("iphone-encrypted").path
        let out = folder.appendingPathComponent("out")
        #expect(try reckon(["export", backup, "--out", out.appendingPathComponent("export").path]).code == 0)
        let remote = packageRoot.appendingPathComponent("Samples/drift/drive").path
        #expect(try reckon(["reconcile", "--local", backup, "--remote", remote, "--out", out.path]).code == 1)
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path).map { folder.appendingPathComponent($0) }
            .filter { FileKind(path: $0.path).isRegular }
        #expect(files.count > 5)
        for file in files {
            let bytes = try Data(contentsOf: file)
            #expect(bytes.range(of: Data(Self.password.utf8)) == nil, "\(file.path)")
        }
    }
}
