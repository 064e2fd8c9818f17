import Foundation
import Testing

@testable import ReckonCore

/// Every sigil, quick and deep, on memo folders built for each test.
@Suite struct ReconcileTests {
    let local = TempFolder()
    let remote = TempFolder()

    func differences(deep: Bool) -> [Difference] {
        let l = MemoFolder(local.spec(.local)).load(deep: deep)
        let r = MemoFolder(remote.spec(.remote)).load(deep: deep)
        return Reconciler.differences(local: l, remote: r, deep: deep)
    }

    func sigils(deep: Bool) -> [String: String] {
        Dictionary(uniqueKeysWithValues: differences(deep: deep).map { ($0.id.value, $0.sigil.rawValue) })
    }

    /// Writes a memo on a side: its index entry is passed separately.
    func put(
        _ folder: TempFolder, _ id: String, spelled: String? = nil, body: String = "Body", modified: String = "2026-04-19T14:32:00Z",
        archived: String? = nil
    ) {
        folder.write("memos/\(spelled ?? id).json", memo(id, body: body, modified: modified, archived: archived))
    }

    @Test func sameMemosSpelledDifferentlyAreEqual() {
        local.index([entry(idA), entry(idB, modified: "2026-04-19T14:32:00.000Z")])
        put(local, idA)
        put(local, idB)
        remote.index([entry(idA.lowercased(), modified: "2026-04-19T23:32:00+09:00"), entry(idB.lowercased())])
        put(remote, idA.lowercased(), modified: "2026-04-19T23:32:00+09:00")
        put(remote, idB.lowercased())
        #expect(differences(deep: true).isEmpty)
        #expect(differences(deep: false).isEmpty)
    }

    @Test func onlyOnOneSide() {
        local.index([entry(idA)])
        put(local, idA)
        remote.index([entry(idB)])
        put(remote, idB)
        for deep in [false, true] {
            #expect(sigils(deep: deep) == [idA.lowercased(): "+", idB.lowercased(): "-"])
        }
        #expect(differences(deep: false).map(\.kind) == [.onlyOnLocal, .onlyOnRemote])
    }

    @Test func deletedOnOneSideAndAbsentOnTheOtherIsTheSame() {
        local.index([entry(idA, deleted: "2026-04-20T00:00:00Z")])
        put(local, idA)
        remote.index([])
        #expect(differences(deep: true).isEmpty)
    }

    @Test func deletedOnOneSideAndPresentOnTheOtherDiffers() {
        local.index([entry(idA, deleted: "2026-04-20T00:00:00Z")])
        put(local, idA)
        remote.index([entry(idA)])
        put(remote, idA)
        let found = differences(deep: false)
        #expect(found.map(\.sigil) == [.differs])
        #expect(found.map(\.kind) == [.deletedOnOneSide])
    }

    @Test func archivedOnOneSideDiffers() {
        local.index([entry(idA, archived: "2026-04-20T00:00:00Z")])
        put(local, idA, archived: "2026-04-20T00:00:00Z")
        remote.index([entry(idA)])
        put(remote, idA)
        let found = differences(deep: true)
        #expect(found.map(\.sigil) == [.differs])
        #expect(found.first?.kind == .archivedOnOneSide)
        #expect(found.first?.fields == ["archived"])
    }

    @Test func modifiedAtDifferentInstantsDiffers() {
        local.index([entry(idA, modified: "2026-04-19T14:32:00Z")])
        put(local, idA)
        remote.index([entry(idA, modified: "2026-04-19T14:32:01Z")])
        put(remote, idA, modified: "2026-04-19T14:32:01Z")
        let found = differences(deep: false)
        #expect(found.map(\.kind) == [.changed])
        #expect(found.first?.fields == ["modifiedTime"])
    }

    @Test func differentChangeTagsDifferOnlyWhenBothHaveOne() {
        local.index([entry(idA, tag: "v1"), entry(idB, tag: "v1")])
        put(local, idA)
        put(local, idB)
        remote.index([entry(idA, tag: "v2"), entry(idB)])
        put(remote, idA)
        put(remote, idB)
        #expect(sigils(deep: false) == [idA.lowercased(): "*"])
    }

    @Test func aBodyChangedBehindTheIndexIsFoundOnlyByTheDeepCheck() {
        local.index([entry(idA)])
        put(local, idA, body: "one")
        remote.index([entry(idA)])
        put(remote, idA, body: "two")
        #expect(differences(deep: false).isEmpty)
        let found = differences(deep: true)
        #expect(found.map(\.sigil) == [.differs])
        #expect(found.first?.fields == ["body"])
    }

    @Test func aCorruptMemoFileIsUncomparableInTheDeepCheckOnly() {
        local.index([entry(idA)])
        local.write("memos/\(idA).json", #"{"id": "\#(idA)", "title": "#)
        remote.index([entry(idA)])
        put(remote, idA)
        #expect(differences(deep: false).isEmpty)
        let found = differences(deep: true)
        #expect(found.map(\.sigil) == [.cannotCompare])
        #expect(found.first?.local.problem?.contains("not valid JSON") == true)
    }

    @Test func danglingEntriesAndOrphanFilesAreFoundEvenQuick() {
        local.index([entry(idA)])  // no file: dangling
        put(local, idB)  // no entry: orphan
        remote.index([entry(idA), entry(idB)])
        put(remote, idA)
        put(remote, idB)
        #expect(sigils(deep: false) == [idA.lowercased(): "!", idB.lowercased(): "!"])
        let side = MemoFolder(local.spec()).load(deep: false)
        #expect(Set(side.problems.map(\.kind)) == [.danglingEntry, .orphanFile])
        #expect(side.hasTrouble)
        #expect(side.counts == MemoCounts(active: 1, archived: 0))
    }

    @Test func aSoftDeletedEntryWithoutItsFileIsNotDangling() {
        local.index([entry(idA, deleted: "2026-04-20T00:00:00Z")])
        let side = MemoFolder(local.spec()).load(deep: true)
        #expect(side.problems.isEmpty)
    }

    @Test func aDuplicateIdIsUncomparable() {
        local.index([entry(idA), entry(idA.lowercased())])
        put(local, idA)
        remote.index([entry(idA)])
        put(remote, idA)
        #expect(sigils(deep: false) == [idA.lowercased(): "!"])
    }

    @Test func aBadEntryIsUncomparableAndItsFileIsNoOrphan() {
        local.index([#"{"id": "\#(idA)", "modifiedTime": 7}"#])
        put(local, idA)
        remote.index([entry(idA)])
        put(remote, idA)
        #expect(sigils(deep: true) == [idA.lowercased(): "!"])
        let side = MemoFolder(local.spec()).load(deep: true)
        #expect(side.problems.map(\.kind) == [.badEntry])
    }

    @Test func aLinkIsReportedNotFollowed() throws {
        let outside = TempFolder()
        outside.write("secret.json", memo(idA))
        local.index([entry(idA)])
        try FileManager.default.createSymbolicLink(
            atPath: local.url.appendingPathComponent("memos/\(idA).json").path,
            withDestinationPath: outside.url.appendingPathComponent("secret.json").path)
        remote.index([entry(idA)])
        put(remote, idA)
        let side = MemoFolder(local.spec()).load(deep: true)
        #expect(side.problems.map(\.kind) == [.link])
        #expect(side.memos.isEmpty)
        #expect(sigils(deep: false) == [idA.lowercased(): "!"])
    }

    @Test func aFileWhoseIdDiffersFromItsNameIsUncomparable() {
        local.index([entry(idA)])
        local.write("memos/\(idA).json", memo(idB))
        remote.index([entry(idA)])
        put(remote, idA)
        #expect(sigils(deep: true) == [idA.lowercased(): "!"])
    }

    @Test func aFailedRemoteIsNotCompared() {
        local.index([entry(idA)])
        put(local, idA)
        let missing = SideSpec(
            role: .remote, name: "remote", label: "Google Drive", path: "nowhere",
            kind: .folder(remote.url.appendingPathComponent("nowhere")))
        let r = MemoFolder(missing).load(deep: true)
        #expect(r.status == .failed)
        #expect(r.counts == nil)
        #expect(r.problems.first?.message == "the folder does not exist")
        #expect(Reconciler.differences(local: MemoFolder(local.spec()).load(deep: true), remote: r, deep: true).isEmpty)
    }

    @Test func theFolderAbove60dMemoIsAccepted() {
        let parent = TempFolder()
        parent.write("60dMemo/index.json", #"{"schemaVersion": 1, "entries": [\#(entry(idA))]}"#)
        parent.write("60dMemo/memos/\(idA).json", memo(idA))
        try? FileManager.default.removeItem(at: parent.url.appendingPathComponent("memos"))
        let side = MemoFolder(parent.spec()).load(deep: true)
        #expect(side.counts == MemoCounts(active: 1, archived: 0))
        #expect(side.problems.isEmpty)
    }
}

@Suite struct SpecialFileTests {
    @Test func aFIFOWhereAMemoShouldBeIsReportedAndNeverOpened() throws {
        let folder = TempFolder()
        folder.index([entry(idA)])
        let path = folder.url.appendingPathComponent("memos/\(idA).json").path
        #expect(mkfifo(path, 0o644) == 0)
        let side = MemoFolder(folder.spec()).load(deep: true)
        #expect(side.problems.map(\.kind) == [.notRegularFile])
        #expect(side.problems.first?.message == "is a FIFO, not a regular file")
        #expect(side.brokenIDs[MemoID(idA)!] != nil)
    }

    @Test func readingRefusesAFIFOWithoutBlocking() throws {
        let folder = TempFolder()
        let path = folder.url.appendingPathComponent("fifo").path
        #expect(mkfifo(path, 0o644) == 0)
        #expect(throws: ReadFailure(message: "is not a regular file")) { try readRegularFile(atPath: path, limit: 100) }
    }
}
