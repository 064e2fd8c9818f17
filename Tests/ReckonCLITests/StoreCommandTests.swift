import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `reckon` on the app's store and on an iPhone backup holding it:
/// counted, compared, exported and quarantined like a folder, never written.
@Suite struct StoreCommandTests {
    let folder = temporaryFolder()
    var device: URL { folder.appendingPathComponent("device") }
    var store: String { device.appendingPathComponent("default.store").path }

    /// The drift samples' device side as a store, its newest memo only in the `-wal`.
    func makeDriftStore() throws {
        try StoreBuilder().make(at: store, rows: Array(driftDeviceRows.dropFirst()), walRows: [driftDeviceRows[0]])
    }

    /// A memo folder holding the same memos as `makeDriftStore`.
    func copyOfDeviceFolder() throws -> URL {
        let copy = folder.appendingPathComponent("folder")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Samples/drift/device"), to: copy)
        return copy
    }

    @Test func deepReconcileOfAStoreAgainstAFolderWithTheSameMemosFindsThemAllEqual() throws {
        try makeDriftStore()
        let other = try copyOfDeviceFolder()
        let out = folder.appendingPathComponent("out")
        let result = try runArray(["reconcile", "--local", store, "--remote", other.path, "--out", out.path])
        #expect(result.code == 0, "\(result.stderr)")
        #expect(result.stdout.contains("every memo is the same on each side"))
        #expect(
            try read(out.appendingPathComponent("combined.txt")) == """
                = 16fd2706-8baf-433b-82eb-8c7fada847da
                = 3f2504e0-4f89-11d3-9a0c-0305e82c3301
                = 7c9e6679-7425-40de-944b-e07fc1f90ae7
                = 886313e1-3b8a-5372-9b90-0c9aee199e5d
                = a3bb189e-8bf9-3888-9912-ace4e6543002
                = c56a4180-65aa-42ec-a945-5fd21dec0538

                """)
        let report = try json(read(out.appendingPathComponent("report.json")))
        let sides = report["sides"] as! [[String: Any]]
        #expect(sides.map { $0["countsFrom"] as? String } == ["store", "index"])
    }

    @Test func aMemoEditedOnOneSideIsFoundDifferentToTheMillisecond() throws {
        var rows = driftDeviceRows
        rows[2]["ZMODIFIEDAT"] = StoreBuilder.date("2026-04-10T21:05:30.251Z")
        rows[3]["ZBODY"] = .text("Agreed: export screen shows counts on one side.")
        try StoreBuilder().make(at: store, rows: rows)
        let result = try runArray(["reconcile", "--local", store, "--remote", try copyOfDeviceFolder().path, "--json"])
        #expect(result.code == 1)
        let differences = try json(result.stdout)["differences"] as! [[String: Any]]
        #expect(differences.map { $0["id"] as? String } == ["16fd2706-8baf-433b-82eb-8c7fada847da", "886313e1-3b8a-5372-9b90-0c9aee199e5d"])
        #expect(differences.map { $0["fields"] as? [String] } == [["modifiedTime", "modifiedAt"], ["body"]])
    }

    @Test func aBadRowIsCalledARowOfTheStoreAndItsTagsSaidInPlainWords() throws {
        var rows = driftDeviceRows
        rows[0]["ZTAGS"] = .blob(Data([0xde, 0xad, 0xbe, 0xef]))
        rows[0]["Z_PK"] = .integer(12)
        try StoreBuilder().make(at: store, rows: rows)
        let out = folder.appendingPathComponent("out")
        let result = try runArray(["reconcile", "--local", store, "--remote", try copyOfDeviceFolder().path, "--out", out.path])
        #expect(result.code == 2)
        #expect(result.stdout.contains("because a row of the app's store or a file is damaged, missing or duplicated."), "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "error: \(store)#Z_PK=12: the memo's tags (column ZTAGS) are 4 bytes in no form the app saves tags in"),
            "\(result.stdout)")
        #expect(try read(out.appendingPathComponent("report.md")).contains("a row of the app's store or a file is damaged or missing"))
    }

    @Test func exportFromAStoreGivesTheSameMemosAsFromTheFolder() throws {
        try makeDriftStore()
        let other = try copyOfDeviceFolder()
        for (source, name) in [(store, "from-store"), (other.path, "from-folder")] {
            let result = try runArray(["export", source, "--out", folder.appendingPathComponent(name).path, "--include-archived"])
            #expect(result.code == 0, "\(result.stderr)")
        }
        let fromStore =
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("from-store/memos.json"))) as! [String: Any]
        let fromFolder =
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("from-folder/memos.json"))) as! [String: Any]
        let memos = try #require(fromStore["memos"] as? [[String: Any]])
        #expect(memos.count == 5)
        #expect(NSArray(array: memos).isEqual(to: fromFolder["memos"] as! [Any]))
        // The bytes of every memo are the same too: only the source's name differs.
        let storeText = try read(folder.appendingPathComponent("from-store/memos.json"))
        let folderText = try read(folder.appendingPathComponent("from-folder/memos.json"))
        #expect(storeText.replacingOccurrences(of: store, with: "SOURCE") == folderText.replacingOccurrences(of: other.path, with: "SOURCE"))
    }

    @Test func theStoresFolderHoldsTheSameFilesWithTheSameBytesAfterEveryCommand() throws {
        try makeDriftStore()
        let tmp = folder.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        let before = try fingerprint(device)
        let pipeline = folder.appendingPathComponent("pipeline.json")
        try Data(
            """
            {"name": "t", "local": {"name": "device", "kind": "store", "path": "device/default.store"},
             "remotes": [{"name": "drive", "path": "\(packageRoot.path)/Samples/drift/drive"}],
             "reports": {"dir": "reports"}, "export": {"dir": "exports"}}
            """.utf8
        ).write(to: pipeline)
        for arguments in [
            ["counts", store], ["counts", "--json", store], ["reconcile", "--local", store, "--remote", device.path + "-none"],
            ["reconcile", "--quick", "--local", store, "--remote", packageRoot.path + "/Samples/drift/drive"],
            ["export", store, "--out", folder.appendingPathComponent("e").path], ["run", pipeline.path]
        ] {
            let result = try runArray(arguments, environment: ["TMPDIR": tmp.path])
            #expect([0, 1, 2].contains(result.code), "\(arguments): \(result.stderr)")
            #expect(try fingerprint(device) == before, "\(arguments) changed the store's folder")
            #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == [], "\(arguments) left its private copy")
        }
    }

    @Test func aPrivateCopyIsRemovedOnSIGTERMAndSweptAfterSIGKILL() throws {
        try makeDriftStore()
        let tmp = folder.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        let terminated = try runArray(["counts", store], environment: ["TMPDIR": tmp.path, "RECKON_TEST_STOP_AT": "store-copied:TERM"])
        #expect(terminated.code == SIGTERM)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == [])

        let killed = try runArray(["counts", store], environment: ["TMPDIR": tmp.path, "RECKON_TEST_STOP_AT": "store-copied"])
        #expect(killed.code == SIGKILL)
        let left = try FileManager.default.contentsOfDirectory(atPath: tmp.path)
        #expect(left.count == 1 && left[0].hasPrefix("reckon-store-"))
        let next = try runArray(["counts", store], environment: ["TMPDIR": tmp.path])
        #expect(next.stdout.contains("Active    4"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == [])
    }

    /// A full disk under `$TMPDIR`, made as a small tmpfs; mounting needs root.
    @Test(.needs(.root)) func aFullDiskForThePrivateCopyFailsTheSideNamingTheFolder() throws {
        var rows = driftDeviceRows
        rows[0]["ZBODY"] = .text(String(repeating: "a long memo ", count: 20_000))
        try StoreBuilder().make(at: store, rows: rows)
        let tmp = folder.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        try #require(mount("tmpfs", tmp.path, "tmpfs", 0, "size=64k") == 0, "mount: \(String(cString: strerror(errno)))")
        defer { umount(tmp.path) }
        let result = try runArray(["counts", store], environment: ["TMPDIR": tmp.path])
        #expect(result.code == 2)
        #expect(
            result.stderr.contains("error: \(store): cannot copy the store into the private folder \(tmp.path)/reckon-store-"), "\(result.stderr)")
        #expect(result.stderr.contains("No space left on device"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp.path) == [], "the partial copy is removed")
    }

    @Test(.needs(.tool("python3"))) func aStoreBeingWrittenFailsUnquarantinedAndAfterItsWriterCrashesOnlySavedRowsAreRead() throws {
        try StoreBuilder().make(at: store, rows: StoreBuilder.manyRows(200))
        let healthy = folder.appendingPathComponent("healthy/default.store").path
        try FileManager.default.createDirectory(atPath: (healthy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: store, toPath: healthy)
        let writer = try RollbackJournalWriter(store: store)
        try #require(try StoreBuilder.unsavedTitlesWithoutJournal(store) != [[.integer(0)]], "the store file alone is torn")
        let drive = packageRoot.path + "/Samples/drift/drive"
        let out = folder.appendingPathComponent("out")
        let busy = try runArray(["reconcile", "--local", store, "--remote", drive, "--out", out.path])
        #expect(busy.code == 2)
        #expect(
            busy.stdout.contains(
                "\(store): the store was being written while reckon read it, on each of 3 tries a second apart; close the app and run again"),
            "\(busy.stdout)")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("quarantine").path))

        writer.kill()
        try #require(FileManager.default.fileExists(atPath: store + "-journal"), "the crashed writer left its journal")
        let before = try fingerprint(device)
        let expected = try runArray(["reconcile", "--local", healthy, "--remote", drive, "--out", folder.appendingPathComponent("expected").path])
        let crashed = try runArray(["reconcile", "--local", store, "--remote", drive, "--out", out.path])
        #expect(crashed.code == expected.code, "\(crashed.stdout)")
        #expect(
            try read(out.appendingPathComponent("combined.txt")) == read(folder.appendingPathComponent("expected/combined.txt")),
            "only the saved rows are read")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("quarantine").path))
        #expect(try fingerprint(device) == before, "the journal is rolled back in the private copy only")
    }

    @Test func aDamagedStoreIsQuarantinedByteForByteAndTheSideFails() throws {
        try StoreBuilder().make(at: store, rows: driftDeviceRows)
        // Page 2 onward overwritten: the header still says SQLite, the b-trees are gone.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        bytes.replaceSubrange(4096..<bytes.count, with: Data(repeating: 0x5a, count: bytes.count - 4096))
        try bytes.write(to: URL(fileURLWithPath: store))
        let out = folder.appendingPathComponent("out")
        let result = try runArray(["reconcile", "--local", store, "--remote", packageRoot.path + "/Samples/drift/drive", "--out", out.path])
        #expect(result.code == 2)
        #expect(result.stdout.contains("error: \(store): the database is damaged: SQLite"), "\(result.stdout)")
        #expect(result.stdout.contains("\(store) → "), "the quarantined file is named as it is: \(result.stdout)")
        let report = try json(read(out.appendingPathComponent("report.json")))
        let local = (report["sides"] as! [[String: Any]])[0]
        #expect(local["status"] as? String == "failed")
        let problem = (local["problems"] as! [[String: Any]])[0]
        #expect(problem["kind"] as? String == "corrupt-store")
        let quarantined = try FileManager.default.subpathsOfDirectory(atPath: out.appendingPathComponent("quarantine").path)
        let copy = try #require(quarantined.first { $0.hasSuffix("default.store") })
        #expect(try Data(contentsOf: out.appendingPathComponent("quarantine/" + copy)) == bytes)
    }

    @Test func aFileThatIsNotADatabaseGivenAsAStoreIsQuarantinedAndNamed() throws {
        try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
        let bytes = Data("{\"this is\": \"not SQLite\"}".utf8)
        try bytes.write(to: URL(fileURLWithPath: store))
        let pipeline = folder.appendingPathComponent("pipeline.json")
        try Data(
            """
            {"name": "t", "local": {"name": "device", "kind": "store", "path": "device/default.store"},
             "remotes": [{"name": "drive", "path": "\(packageRoot.path)/Samples/drift/drive"}], "reports": {"dir": "reports"}}
            """.utf8
        ).write(to: pipeline)
        let result = try runArray(["run", pipeline.path])
        #expect(result.code == 2)
        #expect(result.stdout.contains("device/default.store: is not a SQLite database (it does not start with SQLite's header)"), "\(result.stdout)")
        let quarantine = folder.appendingPathComponent("reports/quarantine")
        let copies = try FileManager.default.subpathsOfDirectory(atPath: quarantine.path).filter { $0.hasSuffix("default.store") }
        #expect(copies.count == 1)
        #expect(try Data(contentsOf: quarantine.appendingPathComponent(copies[0])) == bytes)
    }

    @Test func theSampleBackupIsReadAsTheDeviceAndNeverWritten() throws {
        let backup = packageRoot.appendingPathComponent("Samples/backup/iphone")
        let before = try fingerprint(backup)
        let result = try runArray(["reconcile", "--local", backup.path, "--remote", packageRoot.path + "/Samples/drift/drive"])
        #expect(result.code == 1)
        #expect(result.stdout.contains("Active    5 (local 4)"))
        let chosen = try runArray(["counts", "--app", "group.com.example.sixtydmemo", backup.path])
        #expect(chosen.stdout == "Memos in \(backup.path)\n  Active    4\n  Archived  1\n")
        #expect(try fingerprint(backup) == before)
    }

    @Test func appOutsideABackupOrNamingNoAppInItIsAUsageErrorListingTheAppsFound() throws {
        let backup = packageRoot.appendingPathComponent("Samples/backup/iphone").path
        let wrongApp = try runArray(["counts", "--app", "com.example.sixtydmemo", backup])
        #expect(wrongApp.code == 64)
        #expect(
            wrongApp.stderr.hasPrefix(
                "Error: \(backup): this iPhone backup holds no store of com.example.sixtydmemo (AppDomain-com.example.sixtydmemo or AppDomainGroup-com.example.sixtydmemo) at Library/Application Support/default.store; it holds the stores of group.com.example.sixtydmemo: choose one with --app ID or \"app\" in the definition\n"
            ), "\(wrongApp.stderr)")
        try makeDriftStore()
        let onStore = try runArray(["counts", "--app", "group.com.example.sixtydmemo", store])
        #expect(onStore.code == 64)
        #expect(
            onStore.stderr.hasPrefix(
                "Error: \(store): '--app' picks an app's store in an iPhone backup, and this is the app's store file itself; leave '--app' out\n"),
            "\(onStore.stderr)")
        let onFolder = try runArray(["counts", "--app", "group.com.example.sixtydmemo", packageRoot.path + "/Samples/drift/drive"])
        #expect(onFolder.code == 64)
        #expect(onFolder.stderr.contains("'--app' picks an app's store in an iPhone backup, and this is a memo folder"), "\(onFolder.stderr)")
    }

    /// A copy of the sample backup that a test may change.
    func copyOfSampleBackup() throws -> URL {
        let copy = folder.appendingPathComponent("iphone")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Samples/backup/iphone"), to: copy)
        return copy
    }

    @Test func aBackupWithoutManifestDBIsCalledABackupMissingItNotAFolderWithoutIndexJSON() throws {
        let backup = try copyOfSampleBackup()
        try FileManager.default.removeItem(at: backup.appendingPathComponent("Manifest.db"))
        let result = try runArray(["counts", backup.path])
        #expect(result.code == 2)
        #expect(
            result.stderr
                == "error: \(backup.path): is an iPhone backup (it holds Manifest.plist) without Manifest.db, the backup's list of its files, so it cannot be read: the backup is unfinished, or was made before iOS 10, which reckon does not read; make a new backup\n"
        )
    }

    /// Without a password and without a terminal, an encrypted backup says in one sentence how to give one.
    @Test func anEncryptedBackupWithoutAPasswordSaysHowToGiveOne() throws {
        let backup = try copyOfSampleBackup()
        let plist = try PropertyListSerialization.data(fromPropertyList: ["IsEncrypted": true, "Version": "10.0"], format: .xml, options: 0)
        try plist.write(to: backup.appendingPathComponent("Manifest.plist"))
        let result = try runArray(["counts", backup.path])
        #expect(result.code == 2)
        #expect(result.stderr == "error: \(backup.path): \(PasswordSources.noPasswordMessage)\n", "\(result.stderr)")
    }

    @Test func aBackupWithSeveralAppsStoresIsAUsageErrorListingThemUntilAppChooses() throws {
        let backup = try copyOfSampleBackup()
        // A second app with a store of memos: the same file under another domain.
        let manifest = try SQLite(path: backup.appendingPathComponent("Manifest.db").path, mode: .create)
        let rows = try manifest.rows("SELECT fileID FROM Files WHERE relativePath = 'Library/Application Support/default.store'")
        guard case .text(let original) = rows[0][0] else {
            Issue.record("no store in the sample backup")
            return
        }
        let second = "ab" + String(repeating: "0", count: 38)
        try manifest.rows(
            "INSERT INTO Files (fileID, domain, relativePath, flags) VALUES (?, 'AppDomain-com.example.memo2', 'Library/Application Support/default.store', 1)",
            [.text(second)])
        try FileManager.default.createDirectory(at: backup.appendingPathComponent("ab"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: backup.appendingPathComponent(String(original.prefix(2)) + "/" + original),
            to: backup.appendingPathComponent("ab/" + second))
        let result = try runArray(["counts", backup.path])
        #expect(result.code == 64)
        #expect(
            result.stderr.contains("several stores with memos, of com.example.memo2, group.com.example.sixtydmemo; choose one with --app ID"),
            "\(result.stderr)")
        let chosen = try runArray(["counts", "--app", "com.example.memo2", backup.path])
        #expect(chosen.code == 0, "\(chosen.stderr)")
        #expect(chosen.stdout.contains("Active    3"))
    }

    @Test func aDefinitionMapsTheModelAndRefusesStoreKeysOnAFolder() throws {
        var builder = StoreBuilder()
        builder.entities = [(1, "Note", 0)]
        builder.table = "ZNOTE"
        builder.columns = builder.columns.map { $0.replacingOccurrences(of: "ZMODIFIEDAT ", with: "ZUPDATEDAT ") }
        try builder.make(
            at: store,
            rows: driftDeviceRows.map { row in
                var row = row
                row["ZUPDATEDAT"] = row.removeValue(forKey: "ZMODIFIEDAT")
                return row
            })
        let pipeline = folder.appendingPathComponent("pipeline.json")
        func write(_ local: String) throws {
            try Data(
                """
                {"name": "t", "local": \(local),
                 "remotes": [{"name": "drive", "path": "\(packageRoot.path)/Samples/drift/drive"}], "reports": {"dir": "reports"}}
                """.utf8
            ).write(to: pipeline)
        }
        try write(
            #"{"name": "device", "kind": "store", "path": "device/default.store", "model": {"entity": "Note", "attributes": {"modifiedAt": "updatedAt"}}}"#
        )
        let mapped = try runArray(["run", pipeline.path])
        #expect(mapped.code == 0, "\(mapped.stdout)\(mapped.stderr)")
        #expect(mapped.stdout.contains("Active    5 (local 4)"))

        try write(
            #"{"name": "device", "kind": "store", "path": "device/default.store", "model": {"entity": "Note", "attributes": {"modified": "updatedAt"}}}"#
        )
        let unknown = try runArray(["validate", pipeline.path])
        #expect(unknown.code == 64)
        #expect(unknown.stderr.contains("'local.model.attributes.modified' is not a known key"), "\(unknown.stderr)")

        try write(#"{"name": "device", "path": "device", "app": "com.example.memo"}"#)
        let onFolder = try runArray(["validate", pipeline.path])
        #expect(onFolder.code == 64)
        #expect(onFolder.stderr.contains("'local.app' is read only for a side of kind \"store\""), "\(onFolder.stderr)")
    }
}
