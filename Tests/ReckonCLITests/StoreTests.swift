import Foundation
import ReckonCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The app's store read as a side: every encoding Core Data uses, on stores
/// built at test time with SQLite.
@Suite struct StoreEncodingTests {
    let folder = temporaryFolder()
    var path: String { folder.appendingPathComponent("default.store").path }
    let id = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"

    /// Loads a store made of `rows` deeply.
    func load(_ rows: [StoreBuilder.Row], builder: StoreBuilder = StoreBuilder(), model: StoreModel = StoreModel()) throws -> SideListing {
        try builder.make(at: path, rows: rows)
        return CoreDataStore(storeSide(path, model: model)).load(deep: true)
    }

    @Test func datesAreSecondsSince2001RoundedToTheMillisecond() throws {
        // 2026-04-10T21:05:30.123Z as a REAL gives back .123000026 or so.
        var row = StoreBuilder.memo(id, modified: "2026-04-10T21:05:30Z")
        row["ZMODIFIEDAT"] = .real(797_547_930.123000026)
        row["ZCREATEDAT"] = .integer(797_547_000)
        let side = try load([row])
        let entry = try #require(side.entries[MemoID(id)!])
        #expect(entry.modifiedTime == Timestamp(iso8601: "2026-04-10T21:05:30.123Z"))
        #expect(side.memos[MemoID(id)!]?.createdAt == Timestamp(iso8601: "2026-04-10T20:50:00Z"))
        #expect(side.problems.isEmpty)
    }

    @Test func aDateAbove1e11IsReadAsNanosecondsWithANote() throws {
        var row = StoreBuilder.memo(id, modified: "2026-04-10T21:05:30Z")
        row["ZMODIFIEDAT"] = .real(797_547_930_250_000_000)
        let side = try load([row])
        #expect(side.entries[MemoID(id)!]?.modifiedTime == Timestamp(iso8601: "2026-04-10T21:05:30.250Z"))
        #expect(side.status == .ok)
        let note = try #require(side.problems.first)
        #expect(note.severity == .warning)
        #expect(note.message.contains("1 row holds a date above 1e11 in magnitude, read as nanoseconds"))
    }

    @Test func idsAreA16ByteBlobOrText() throws {
        var text = StoreBuilder.memo("7C9E6679-7425-40DE-944B-E07FC1F90AE7", modified: "2026-04-19T14:32:00Z")
        text["ZID"] = .text("7c9e6679-7425-40de-944b-e07fc1f90ae7")
        let side = try load([StoreBuilder.memo(id, modified: "2026-04-18T09:15:00Z"), text])
        #expect(side.entries.keys == [MemoID(id)!, MemoID("7C9E6679-7425-40DE-944B-E07FC1F90AE7")!])
        #expect(side.problems.isEmpty)
    }

    @Test func tagsComeInFourForms() throws {
        let ids = (1...4).map { String(format: "00000000-0000-4000-8000-%012d", $0) }
        var plist = StoreBuilder.memo(ids[0], modified: "2026-04-01T00:00:00Z", tags: ["home", "work"])
        var archive = StoreBuilder.memo(ids[1], modified: "2026-04-01T00:00:00Z")
        archive["ZTAGS"] = .blob(try NSKeyedArchiver.archivedData(withRootObject: ["travel", "japan"] as NSArray, requiringSecureCoding: false))
        var json = StoreBuilder.memo(ids[2], modified: "2026-04-01T00:00:00Z")
        json["ZTAGS"] = .text(#"["reading"]"#)
        let side = try load([plist, archive, json])
        #expect(side.memos[MemoID(ids[0])!]?.tags == ["home", "work"])
        #expect(side.memos[MemoID(ids[1])!]?.tags == ["japan", "travel"])
        #expect(side.memos[MemoID(ids[2])!]?.tags == ["reading"])
        #expect(side.problems.isEmpty)

        // The fourth: a to-many relationship to Tag through a join table whose numbers are not Memo's 1 and Tag's 2.
        var builder = StoreBuilder()
        builder.entities = [(5, "Tag", 0), (7, "Memo", 0)]
        builder.columns.removeAll { $0.hasPrefix("ZTAGS") }
        builder.extra = [
            "CREATE TABLE ZTAG (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR)",
            "CREATE TABLE Z_7TAGS (Z_7MEMOS INTEGER, Z_5TAGS INTEGER, PRIMARY KEY (Z_7MEMOS, Z_5TAGS))",
            "INSERT INTO ZTAG VALUES (1, 5, 1, 'work'), (2, 5, 1, 'home'), (3, 5, 1, 'unused')",
            "INSERT INTO Z_7TAGS VALUES (1, 1), (1, 2)"
        ]
        plist = StoreBuilder.memo(ids[3], modified: "2026-04-01T00:00:00Z")
        plist["ZTAGS"] = nil
        plist["Z_ENT"] = .integer(7)
        plist["Z_PK"] = .integer(1)
        let related = try load([plist], builder: builder)
        #expect(related.memos[MemoID(ids[3])!]?.tags == ["home", "work"])
        #expect(related.problems.isEmpty)
    }

    @Test func tagsInAnyOtherEncodingAreAProblemForThatRow() throws {
        var row = StoreBuilder.memo(id, modified: "2026-04-01T00:00:00Z")
        row["ZTAGS"] = .blob(Data([0xde, 0xad, 0xbe, 0xef]))
        row["Z_PK"] = .integer(12)
        var dictionary = StoreBuilder.memo("16FD2706-8BAF-433B-82EB-8C7FADA847DA", modified: "2026-04-01T00:00:00Z")
        dictionary["ZTAGS"] = .blob(try PropertyListSerialization.data(fromPropertyList: ["home": 1], format: .binary, options: 0))
        dictionary["Z_PK"] = .integer(13)
        let side = try load([row, dictionary, StoreBuilder.memo("7C9E6679-7425-40DE-944B-E07FC1F90AE7", modified: "2026-04-19T14:32:00Z")])
        #expect(side.problems.map(\.path) == ["default.store#Z_PK=13", "default.store#Z_PK=12"])
        #expect(
            side.problems.map(\.message) == [
                "the memo's tags (column ZTAGS) are saved as an Apple property list that holds something other than a list of tags",
                "the memo's tags (column ZTAGS) are 4 bytes in no form the app saves tags in (a list saved as an Apple property list, an archive or JSON), so they cannot be read"
            ])
        #expect(side.problems.last?.id == MemoID(id))
        #expect(side.brokenIDs.keys.contains(MemoID(id)!))
        #expect(side.entries.count == 3, "the row is still counted from its entry")
    }

    @Test func badRowsAreProblemsOfTheirOwnAndDuplicatesAsInAnIndex() throws {
        var noID = StoreBuilder.memo(id, modified: "2026-04-01T00:00:00Z")
        noID["ZID"] = .null
        noID["Z_PK"] = .integer(3)
        var notUUID = StoreBuilder.memo(id, modified: "2026-04-01T00:00:00Z")
        notUUID["ZID"] = .text("not-a-uuid")
        notUUID["Z_PK"] = .integer(4)
        var textDate = StoreBuilder.memo("16FD2706-8BAF-433B-82EB-8C7FADA847DA", modified: "2026-04-01T00:00:00Z")
        textDate["ZMODIFIEDAT"] = .text("yesterday")
        textDate["Z_PK"] = .integer(5)
        var first = StoreBuilder.memo(id, modified: "2026-04-01T00:00:00Z")
        first["Z_PK"] = .integer(1)
        var again = StoreBuilder.memo(id, modified: "2026-04-02T00:00:00Z")
        again["Z_PK"] = .integer(2)
        let side = try load([first, again, noID, notUUID, textDate])
        #expect(
            side.problems.map { "\($0.kind.rawValue) \($0.path): \($0.message)" } == [
                "duplicate-id default.store#Z_PK=2: another row, Z_PK=1, holds the same id",
                "invalid-id default.store#Z_PK=3: ZID is empty (NULL), so the row has no id",
                "invalid-id default.store#Z_PK=4: ZID holds 'not-a-uuid', which is not a UUID",
                "bad-entry default.store#Z_PK=5: ZMODIFIEDAT holds the text 'yesterday', not a date (a number of seconds since 2001)"
            ])
        #expect(side.entries[MemoID(id)!]?.modifiedTime == Timestamp(iso8601: "2026-04-01T00:00:00Z"))
    }

    @Test func subEntitiesShareTheRootTableAndOtherEntitiesAreLeftOut() throws {
        var builder = StoreBuilder()
        builder.entities = [(1, "Item", 0), (2, "Memo", 1), (3, "ChecklistMemo", 2), (4, "Folder", 1)]
        builder.table = "ZITEM"
        var sub = StoreBuilder.memo("7C9E6679-7425-40DE-944B-E07FC1F90AE7", modified: "2026-04-19T14:32:00Z")
        sub["Z_ENT"] = .integer(3)
        var plain = StoreBuilder.memo(id, modified: "2026-04-18T09:15:00Z")
        plain["Z_ENT"] = .integer(2)
        var folderRow = StoreBuilder.memo("16FD2706-8BAF-433B-82EB-8C7FADA847DA", modified: "2026-04-18T09:15:00Z")
        folderRow["Z_ENT"] = .integer(4)
        let side = try load([sub, plain, folderRow], builder: builder)
        #expect(side.entries.keys == [MemoID(id)!, MemoID("7C9E6679-7425-40DE-944B-E07FC1F90AE7")!])
        #expect(side.counts == MemoCounts(active: 2, archived: 0))
    }

    @Test func renamedAttributesAreMappedAndCollidingNamesCarryANumber() throws {
        var builder = StoreBuilder()
        builder.entities = [(1, "Note", 0)]
        builder.table = "ZNOTE"
        builder.columns = builder.columns.map {
            $0.replacingOccurrences(of: "ZMODIFIEDAT ", with: "ZUPDATEDAT ").replacingOccurrences(of: "ZTITLE ", with: "ZTITLE1 ")
        }
        var row = StoreBuilder.memo(id, title: "Groceries", modified: "2026-04-18T09:15:00Z")
        row["ZUPDATEDAT"] = row.removeValue(forKey: "ZMODIFIEDAT")
        row["ZTITLE1"] = row.removeValue(forKey: "ZTITLE")
        var model = StoreModel()
        model.entity = "Note"
        model.attributes = ["modifiedAt": "updatedAt"]
        let side = try load([row], builder: builder, model: model)
        #expect(side.entries[MemoID(id)!]?.modifiedTime == Timestamp(iso8601: "2026-04-18T09:15:00Z"))
        #expect(side.memos[MemoID(id)!]?.title == "Groceries")
        #expect(side.problems.isEmpty)
    }

    @Test func aMissingRequiredColumnFailsTheSideNamingEntityAndColumn() throws {
        var builder = StoreBuilder()
        builder.columns.removeAll { $0.hasPrefix("ZDELETEDAT") }
        var row = StoreBuilder.memo(id, modified: "2026-04-18T09:15:00Z")
        row["ZDELETEDAT"] = nil
        let side = try load([row], builder: builder)
        #expect(side.status == .failed)
        #expect(
            side.problems.map(\.message) == [
                "the entity Memo (table ZMEMO) has no column ZDELETEDAT for deletedAt; if the app renamed it, map it in the definition's \"model\": {\"attributes\": …}"
            ])
    }

    @Test func aMissingOptionalColumnIsNotedAndReadAsAbsent() throws {
        var builder = StoreBuilder()
        builder.columns.removeAll { $0.hasPrefix("ZPINNED") || $0.hasPrefix("ZTAGS") }
        var row = StoreBuilder.memo(id, modified: "2026-04-18T09:15:00Z")
        row["ZPINNED"] = nil
        row["ZTAGS"] = nil
        let side = try load([row], builder: builder)
        #expect(side.status == .ok)
        #expect(side.problems.map(\.severity) == [.warning, .warning])
        #expect(
            side.problems.map(\.message) == [
                "the entity Memo has no column ZTAGS and no to-many relationship to Tag; its memos are read without tags",
                "the entity Memo has no column ZPINNED for pinned; it is read as absent"
            ])
        #expect(side.memos[MemoID(id)!]?.pinned == false)
    }

    @Test func theRowVersionIsKeptInTheSidesOwnFingerprint() throws {
        var row = StoreBuilder.memo(id, modified: "2026-04-18T09:15:00Z")
        row["Z_OPT"] = .integer(7)
        let side = try load([row])
        #expect(side.entries[MemoID(id)!]?.rowVersion == 7)
    }

    @Test func aWrongEntityNameSaysWhichEntitiesThereAre() throws {
        var model = StoreModel()
        model.entity = "Note"
        let side = try load([StoreBuilder.memo(id, modified: "2026-04-18T09:15:00Z")], model: model)
        #expect(side.status == .failed)
        #expect(side.problems.first?.message.hasPrefix("has no entity named Note (it has Memo, Tag)") == true)
    }
}

/// The user's store is copied before SQLite opens anything, and is never written.
@Suite struct StoreSnapshotTests {
    let folder = temporaryFolder()
    var path: String { folder.appendingPathComponent("default.store").path }

    @Test func aMemoCommittedOnlyToTheWALIsCountedAndTheFolderIsUntouched() throws {
        try StoreBuilder().make(at: path, rows: Array(driftDeviceRows.dropFirst()), walRows: [driftDeviceRows[0]])
        let before = try fingerprint(folder)
        #expect(before.keys.sorted() == ["/default.store", "/default.store-wal"])
        let side = CoreDataStore(storeSide(path)).count()
        #expect(side.counts == MemoCounts(active: 4, archived: 1))
        _ = CoreDataStore(storeSide(path)).load(deep: true)
        #expect(try fingerprint(folder) == before)
    }

    @Test func aStoreInAReadOnlyFolderWorks() throws {
        try StoreBuilder().make(at: path, rows: driftDeviceRows, walRows: [])
        chmod(folder.path, 0o555)
        defer { chmod(folder.path, 0o755) }
        let side = CoreDataStore(storeSide(path)).load(deep: true)
        #expect(side.status == .ok)
        #expect(side.counts == MemoCounts(active: 4, archived: 1))
    }

    @Test func aStoreThatKeepsChangingIsTriedThreeTimesThenFails() throws {
        try StoreBuilder().make(at: path, rows: driftDeviceRows)
        var tries = 0
        do {
            _ = try StoreSnapshot.take(store: path, wal: path + "-wal", named: "default.store", process: testSettings) { _ in
                tries += 1
                let handle = FileHandle(forWritingAtPath: path)!
                handle.seekToEndOfFile()
                handle.write(Data([0]))
                handle.closeFile()
            }
            Issue.record("a store that changes on every copy was taken")
        } catch {
            #expect(error.beingWritten)
            #expect(
                error.message
                    == "the store was being written while reckon read it, on each of 3 tries a second apart; close the app and run again")
        }
        #expect(tries == 3)
    }

    @Test func aStoreThatChangedOnceIsCopiedAgainAndRead() throws {
        try StoreBuilder().make(at: path, rows: driftDeviceRows)
        var tries = 0
        let snapshot = try StoreSnapshot.take(store: path, wal: path + "-wal", named: "default.store", process: testSettings) { _ in
            tries += 1
            if tries == 1 { utime(path, nil) }
        }
        #expect(tries == 2)
        #expect(try snapshot.open().rows("SELECT count(*) FROM ZMEMO") == [[.integer(6)]])
        let copy = snapshot.folder
        var info = stat()
        #expect(stat(copy.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    /// A writer holding the store's lock in another process: SQLite's locks
    /// belong to a process, and any descriptor of the file it closes drops them.
    @Test(.needs(.tool("python3"))) func aStoreAWriterHoldsLockedIsTriedThreeTimesThenFailsUnquarantined() throws {
        try StoreBuilder().make(at: path, rows: StoreBuilder.manyRows(200))
        let writer = try RollbackJournalWriter(store: path)
        var tries = 0
        #expect(throws: StoreSnapshot.Failure.self) {
            _ = try StoreSnapshot.take(store: path, wal: path + "-wal", named: "default.store", process: testSettings) { _ in tries += 1 }
        }
        #expect(tries == 3)
        let side = CoreDataStore(storeSide(path)).count()
        #expect(side.status == .failed)
        #expect(side.problems.map(\.message).first?.hasPrefix("the store was being written while reckon read it") == true)
        #expect(side.damaged.isEmpty, "a store being written is not damaged")
        writer.kill()
        #expect(CoreDataStore(storeSide(path)).count().counts == MemoCounts(active: 204, archived: 1))
    }

    @Test func aCopyLeftByAKilledRunIsSweptAndOneOfARunningProcessIsNot() throws {
        let root = temporaryFolder()
        let gone = root.appendingPathComponent("reckon-store-999999999-abcdef")
        let alive = root.appendingPathComponent("reckon-store-1-abcdef")
        for folder in [gone, alive] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            chmod(folder.path, 0o700)
            try Data().write(to: folder.appendingPathComponent("default.store"))
        }
        PrivateFolder.sweep(prefix: "reckon-store", in: root.path)
        #expect(!FileManager.default.fileExists(atPath: gone.path))
        #expect(FileManager.default.fileExists(atPath: alive.path))
    }
}

/// A store keeps instants to the millisecond, so they are compared so across kinds of side, and exactly between folders.
@Suite struct MillisecondComparisonTests {
    @Test func aStoreAndAFolderAgreeToTheMillisecondAndTwoFoldersExactly() {
        let id = MemoID("3F2504E0-4F89-11D3-9A0C-0305E82C3301")!
        func side(_ kind: any SideKind, _ role: SideRole, _ modified: String) -> SideListing {
            let entry = IndexEntry(id: id, modifiedTime: Timestamp(iso8601: modified)!)
            return SideListing(
                spec: SideSpec(role: role, name: role.rawValue, label: role.rawValue, path: "x", kind: kind),
                entries: IDMap(sortedKeys: [id], values: [entry]))
        }
        let store = AppStoreSide(url: URL(fileURLWithPath: "/x/default.store"), isBackup: false)
        let folder = MemoFolderSide(URL(fileURLWithPath: "/x"))
        let fromStore = side(store, .local, "2026-04-10T21:05:30.250Z")
        #expect(Reconciler.differences(local: fromStore, remote: side(folder, .remote, "2026-04-10T21:05:30.250300Z"), deep: false).isEmpty)
        #expect(Reconciler.differences(local: fromStore, remote: side(folder, .remote, "2026-04-10T21:05:30.251Z"), deep: false).count == 1)
        let fromFolder = side(folder, .local, "2026-04-10T21:05:30.250Z")
        #expect(Reconciler.differences(local: fromFolder, remote: side(folder, .remote, "2026-04-10T21:05:30.250300Z"), deep: false).count == 1)
    }
}

/// What a hostile store did to the first build, one test per class.
@Suite struct HostileStoreTests {
    let folder = temporaryFolder()
    var path: String { folder.appendingPathComponent("default.store").path }
    let id = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"

    @Test func aKeyedArchiveThatHoldsItselfIsAProblemForItsRowNotACrash() throws {
        // An NSKeyedArchiver archive whose array's one member is the array itself
        // (Foundation's unarchiver recursed on it until the stack ran out).
        let data = StoreBuilder.data(
            hex:
                "62706c6973743030d401020304050614175924617263686976657258246f626a656374735424746f70582476657273696f6e5f100f4e534b657965644172636869766572a307080e55246e756c6cd2090a0b0c5624636c6173735a4e532e6f626a656374738002a10d8001d20f1011125824636c61737365735a24636c6173736e616d65a21213574e534172726179584e534f626a656374d1151654726f6f74800112000186a008111b24293244484e535a6567696b707984878f989ba0a200000000000001010000000000000018000000000000000000000000000000a7"
        )
        var row = StoreBuilder.memo(id, modified: "2026-04-01T00:00:00Z")
        row["ZTAGS"] = .blob(data)
        row["Z_PK"] = .integer(2)
        try StoreBuilder().make(at: path, rows: [row])
        let side = CoreDataStore(storeSide(path)).load(deep: true)
        #expect(
            side.problems.map(\.message) == [
                "the memo's tags (column ZTAGS) are saved as an archive (NSKeyedArchiver) that holds something other than a list of tags"
            ])
        #expect(side.problems.map(\.path) == ["default.store#Z_PK=2"])
        #expect(side.counts == MemoCounts(active: 1, archived: 0), "the row is still counted from its entry, as a damaged memo file is")
    }

    @Test func aRowThatCannotBeReadWholeIsCountedByEveryCheckAlike() throws {
        var row = StoreBuilder.memo(id, modified: "2026-04-01T00:00:00Z")
        row["ZTAGS"] = .blob(Data("bogus".utf8))
        try StoreBuilder().make(at: path, rows: [row, StoreBuilder.memo("7C9E6679-7425-40DE-944B-E07FC1F90AE7", modified: "2026-04-19T14:32:00Z")])
        let quick = CoreDataStore(storeSide(path)).count()
        let deep = CoreDataStore(storeSide(path)).load(deep: true)
        #expect(quick.counts == MemoCounts(active: 2, archived: 0))
        #expect(deep.counts == quick.counts)
        #expect(deep.brokenIDs.keys.contains(MemoID(id)!))
    }

    @Test func rowsOfNoEntityAreNamedNotDropped() throws {
        var builder = StoreBuilder()
        builder.entities = [(1, "Memo", 0), (2, "Tag", 0)]
        var none = StoreBuilder.memo("16FD2706-8BAF-433B-82EB-8C7FADA847DA", modified: "2026-04-01T00:00:00Z")
        none["Z_ENT"] = .null
        none["Z_PK"] = .integer(7)
        var other = StoreBuilder.memo("886313E1-3B8A-5372-9B90-0C9AEE199E5D", modified: "2026-04-01T00:00:00Z")
        other["Z_ENT"] = .integer(2)
        other["Z_PK"] = .integer(8)
        try builder.make(at: path, rows: [StoreBuilder.memo(id, modified: "2026-04-01T00:00:00Z"), none, other])
        let side = CoreDataStore(storeSide(path)).count()
        #expect(
            side.problems.map { "\($0.path): \($0.message)" } == [
                "default.store#Z_PK=7: Z_ENT is empty (NULL), so the row is not read",
                "default.store#Z_PK=8: Z_ENT is 2, which names no entity kept in ZMEMO, so the row is not read"
            ])
    }

    @Test func manyEntitiesAreReadInOnePass() throws {
        var builder = StoreBuilder()
        builder.entities = [(1, "Memo", 0)] + (2...20_000).map { (Int64($0), "Sub\($0)", 1) }
        var row = StoreBuilder.memo(id, modified: "2026-04-01T00:00:00Z")
        row["Z_ENT"] = .integer(19_999)
        try builder.make(at: path, rows: [row])
        #expect(CoreDataStore(storeSide(path)).count().counts == MemoCounts(active: 1, archived: 0))
    }

    @Test func textThatIsNotUTF8IsAProblemNotRepaired() throws {
        var row = StoreBuilder.memo(id, title: "x", modified: "2026-04-01T00:00:00Z")
        row["Z_PK"] = .integer(3)
        try StoreBuilder().make(at: path, rows: [row])
        let db = try SQLite(path: path, mode: .create)
        try db.execute("UPDATE ZMEMO SET ZTITLE = CAST(X'47726F6365FF726965' AS TEXT)")
        try db.execute("PRAGMA journal_mode=DELETE")
        let side = CoreDataStore(storeSide(path)).load(deep: true)
        #expect(side.problems.map(\.message) == ["ZTITLE holds 9 bytes of text that is not UTF-8, not text"])
    }

    /// Every body a row can hold, read whole as an export reads it: text in
    /// pieces straight into the string where the store keeps UTF-8 and has
    /// rowids, else as selected (a store keeping UTF-16, a table with a column named `_rowid_`).
    @Test(arguments: ["UTF-8", "UTF-16le", "_rowid_"]) func aBodyIsReadWholeWhateverTheRowHolds(layout: String) throws {
        // Over 300 KB, so the text spans many overflow pages and several pieces.
        let long = String(repeating: "Line with \"quotes\", a\ttab and 京都 text.\n", count: 6_000)
        let bodies: [SQLite.Value] = [.text(long), .text(""), .null, .blob(Data([1, 2, 3])), .text("not UTF-8")]
        let ids = bodies.indices.map { MemoID(String(format: "00000000-0000-4000-8000-%012d", $0))! }
        var builder = StoreBuilder()
        if layout == "_rowid_" { builder.columns.append("_rowid_ INTEGER") } else { builder.encoding = layout }
        try builder.make(
            at: path,
            rows: zip(ids, bodies).enumerated().map { number, memo in
                var row = StoreBuilder.memo(memo.0.description, modified: "2026-04-01T00:00:00Z")
                row["ZBODY"] = memo.1
                row["Z_PK"] = .integer(Int64(number + 1))
                if layout == "_rowid_" { row["_rowid_"] = .integer(Int64(100 + number)) }
                return row
            })
        let expected: [String] = ["(the long text)", "", "(no body)", "ZBODY holds 3 bytes, not text"]
        var last = "not UTF-8"
        if layout != "UTF-16le" {
            // Bytes that are not UTF-8 cannot be text of a UTF-16 store.
            let db = try SQLite(path: path, mode: .create)
            try db.execute("UPDATE ZMEMO SET ZBODY = CAST(X'47726F6365FF' AS TEXT) WHERE Z_PK = 5; PRAGMA journal_mode=DELETE")
            last = "ZBODY holds 6 bytes of text that is not UTF-8, not text"
        }
        let read = CoreDataStore(storeSide(path)).read(ids.map { ($0, .small) }, chunkSize: 2, as: .memo) { $0 }
        let found = read.map { result in
            switch result {
            case .success(let memo): memo.body == long ? "(the long text)" : memo.body.map { String($0.prefix(80)) } ?? "(no body)"
            case .failure(let problem): problem.message
            }
        }
        #expect(found == expected + [last])
    }

    @Test func aWALThatIsNotSQLitesLogFailsTheSideAndIsQuarantined() throws {
        try StoreBuilder().make(at: path, rows: Array(driftDeviceRows.dropFirst()), walRows: [driftDeviceRows[0]])
        var wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        wal.replaceSubrange(0..<8, with: Data(repeating: 0x5a, count: 8))
        try wal.write(to: URL(fileURLWithPath: path + "-wal"))
        let side = CoreDataStore(storeSide(path)).count()
        #expect(side.status == .failed)
        #expect(
            side.problems.map(\.message) == [
                "its write-ahead log, default.store-wal, is damaged (it does not start as SQLite's log does), so the newest changes cannot be read"
            ])
        #expect(side.damaged.map(\.path) == ["default.store", "default.store-wal"])
        #expect(side.damaged.last?.bytes == wal)
    }

    @Test func aWALEndingInAPartialChangeIsNoted() throws {
        try StoreBuilder().make(at: path, rows: Array(driftDeviceRows.dropFirst()), walRows: [driftDeviceRows[0]])
        let wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        try wal.prefix(wal.count - 100).write(to: URL(fileURLWithPath: path + "-wal"))
        let side = CoreDataStore(storeSide(path)).count()
        #expect(side.status == .ok)
        #expect(side.problems.map(\.severity) == [.warning])
        #expect(side.problems.first?.path == "default.store-wal")
    }

    @Test func aWALThatIsNotAFileFailsTheSide() throws {
        try StoreBuilder().make(at: path, rows: driftDeviceRows)
        try FileManager.default.createDirectory(atPath: path + "-wal", withIntermediateDirectories: false)
        let side = CoreDataStore(storeSide(path)).count()
        #expect(side.status == .failed)
        #expect(
            side.problems.first?.message == "default.store-wal, the store's write-ahead log, is not a regular file, so the store cannot be read whole"
        )
    }

    @Test func aCrashedWritersJournalIsRolledBackInTheCopySoOnlySavedRowsAreRead() throws {
        try StoreBuilder().makeCrashedWriter(at: path, rows: StoreBuilder.manyRows(200))
        try #require(try StoreBuilder.unsavedTitlesWithoutJournal(path) != [[.integer(0)]], "the store file alone is torn")
        let before = try fingerprint(folder)
        let side = CoreDataStore(storeSide(path)).load(deep: true)
        #expect(side.status == .ok)
        #expect(side.problems.isEmpty)
        #expect(side.counts == MemoCounts(active: 204, archived: 1))
        #expect(side.memos.values.filter { $0.title == "never saved" }.isEmpty)
        #expect(try fingerprint(folder) == before, "the journal is rolled back in the copy only")
    }

    @Test func aJournalNamingAFileAsItsSuperJournalNeverReachesThatFile() throws {
        try StoreBuilder().makeCrashedWriter(at: path, rows: StoreBuilder.manyRows(200))
        // SQLite would read this file as a super-journal's list of journals, find none, and delete it.
        let victim = folder.appendingPathComponent("notes.txt")
        try Data("keep me\n".utf8).write(to: victim)
        // SQLite's record at a journal's end: the name, its length, its checksum (the sum of its bytes), the journal's magic number.
        let name = Array(victim.path.utf8)
        func bigEndian(_ value: UInt32) -> Data { withUnsafeBytes(of: value.bigEndian) { Data($0) } }
        let record =
            Data(name) + bigEndian(UInt32(name.count)) + bigEndian(name.reduce(0) { $0 &+ UInt32($1) })
            + Data([0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7])
        let journal = try #require(FileHandle(forWritingAtPath: path + "-journal"))
        journal.seekToEndOfFile()
        journal.write(record)
        journal.closeFile()
        let side = CoreDataStore(storeSide(path)).load(deep: true)
        #expect(try Data(contentsOf: victim) == Data("keep me\n".utf8))
        #expect(side.status == .ok)
        #expect(side.memos.values.filter { $0.title == "never saved" }.isEmpty, "the transaction is undone while its super-journal exists")
    }

    @Test func aWALOrJournalThatIsALinkIsNotFollowedAsTheStoreItselfIsNot() throws {
        try StoreBuilder().make(at: path, rows: Array(driftDeviceRows.dropFirst()), walRows: [driftDeviceRows[0]])
        let elsewhere = temporaryFolder().appendingPathComponent("elsewhere")
        try FileManager.default.moveItem(atPath: path + "-wal", toPath: elsewhere.path)
        try FileManager.default.createSymbolicLink(atPath: path + "-wal", withDestinationPath: elsewhere.path)
        let linkedWAL = CoreDataStore(storeSide(path)).count()
        #expect(
            linkedWAL.problems.map(\.message) == [
                "default.store-wal, the store's write-ahead log, is a link; links are not followed, so the store cannot be read whole"
            ])
        #expect(linkedWAL.status == .failed)
        #expect(linkedWAL.damaged.isEmpty)

        try FileManager.default.removeItem(atPath: path + "-wal")
        try FileManager.default.createSymbolicLink(atPath: path + "-journal", withDestinationPath: elsewhere.path)
        let linkedJournal = CoreDataStore(storeSide(path)).count()
        #expect(
            linkedJournal.problems.map(\.message) == [
                "default.store-journal, the store's rollback journal, is a link; links are not followed, so the store cannot be read whole"
            ])
        try FileManager.default.removeItem(atPath: path + "-journal")

        let link = folder.appendingPathComponent("link.store").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect(CoreDataStore(storeSide(link)).count().problems.map(\.message) == ["is a link; links are not followed"])
        #expect(CoreDataStore(storeSide(path)).count().status == .ok)
    }

    @Test func theSweepLeavesEveryFolderThatIsNotSurelyReckons() throws {
        let root = temporaryFolder()
        func folder(_ name: String, mode: mode_t = 0o700, files: [String] = ["default.store"]) throws -> String {
            let path = root.appendingPathComponent(name).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for file in files {
                try FileManager.default.createDirectory(
                    atPath: (path + "/" + file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Data("x".utf8).write(to: URL(fileURLWithPath: path + "/" + file))
            }
            chmod(path, mode)
            return path
        }
        let reckons = try folder("reckon-store-999999001-a", files: ["default.store", "default.store-wal"])
        let kept = [
            try folder("reckon-store-999999002-a", files: ["notes.txt"]),
            try folder("reckon-store-999999003-a", files: ["photos/2026/a.jpg"]),
            try folder("reckon-store-999999004-a", mode: 0o755),
            try folder("reckon-store-+999999005-a"),
            try folder("reckon-store-0999999006-a")
        ]
        PrivateFolder.sweep(prefix: "reckon-store", in: root.path)
        #expect(!FileManager.default.fileExists(atPath: reckons))
        for path in kept { #expect(FileManager.default.fileExists(atPath: path), "\(path) was removed") }
    }
}

@Suite struct HostileStoreCommandTests {
    let folder = temporaryFolder()
    var store: String { folder.appendingPathComponent("AppSupport/default.store").path }

    @Test func anOutputInTheStoresFolderIsRefused() throws {
        try StoreBuilder().make(at: store, rows: driftDeviceRows)
        let support = folder.appendingPathComponent("AppSupport")
        let before = try fingerprint(support)
        let reconcile = try runArray(["reconcile", "--local", store, "--remote", packageRoot.path + "/Samples/drift/drive", "--out", support.path])
        #expect(reconcile.code == 64, "\(reconcile.stderr)")
        #expect(reconcile.stderr.contains("inside the folder of the store \(store)"), "\(reconcile.stderr)")
        let export = try runArray(["export", store, "--out", support.appendingPathComponent("export").path])
        #expect(export.code == 64, "\(export.stderr)")
        #expect(try fingerprint(support) == before)
    }

    @Test func aFileThatIsNotAStoreSaysSoOnTheCommandLine() throws {
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("AppSupport"), withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: store))
        let result = try runArray(["counts", store])
        #expect(result.code == 2)
        #expect(result.stderr == "error: \(store): is a file, but neither a memo folder nor the app's store (a store starts with SQLite's header)\n")
    }

    @Test func anIDHeldByTwoRowsIsLeftOutOfTheExportNamingTheOtherRow() throws {
        var again = StoreBuilder.memo("3F2504E0-4F89-11D3-9A0C-0305E82C3301", title: "Copy", modified: "2026-04-18T09:15:00Z")
        again["Z_PK"] = .integer(9)
        try StoreBuilder().make(at: store, rows: driftDeviceRows + [again])
        let out = folder.appendingPathComponent("export")
        let result = try runArray(["export", store, "--out", out.path])
        #expect(result.code == 2)
        let manifest = try json(read(out.appendingPathComponent("manifest.json")))
        let missing = try #require(manifest["missing"] as? [[String: Any]])
        #expect(missing.map { $0["reason"] as? String } == ["another row, Z_PK=1, holds the same id"])
        #expect(missing.map { $0["path"] as? String } == ["default.store#Z_PK=9"])
    }

    @Test func aMappedAttributeMustBeAnAttributesName() throws {
        let pipeline = folder.appendingPathComponent("pipeline.json")
        try Data(
            """
            {"name": "t", "local": {"name": "device", "kind": "store", "path": "s.store", "model": {"attributes": {"deletedAt": "_OPT"}}},
             "remotes": [{"name": "drive", "path": "drive"}]}
            """.utf8
        ).write(to: pipeline)
        let result = try runArray(["validate", pipeline.path])
        #expect(result.code == 64)
        #expect(result.stderr.contains("'local.model.attributes.deletedAt' must be an attribute's name"), "\(result.stderr)")
    }
}
