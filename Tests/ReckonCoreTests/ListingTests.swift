import Foundation
import Testing

@testable import ReckonCore

/// The listing walk that `load` and the export share, on a folder with one of each problem.
@Suite struct ListingTests {
    let side = TempFolder()
    let idE = "E0000000-0000-4000-8000-00000000000E"
    let idF = "F0000000-0000-4000-8000-00000000000F"

    init() throws {
        side.index([
            entry(idA), entry(idA, modified: "2026-05-01T00:00:00Z"), entry(idB), entry(idC),
            entry(idD, deleted: "2026-04-21T00:00:00Z"), entry(idF)
        ])
        side.write("memos/\(idA).json", memo(idA))
        side.write("memos/\(idB.lowercased()).json", memo(idB))
        side.write("memos/\(idE).json", memo(idE))
        side.write("memos/\(idE.lowercased()).json", memo(idE))
        side.write("memos/notes.txt", "not a memo")
        side.write("memos/bad.json", "{}")
        try FileManager.default.createSymbolicLink(
            atPath: side.url.appendingPathComponent("memos/\(idF).json").path, withDestinationPath: "/etc/hostname")
    }

    struct Visit: Equatable {
        var id: MemoID
        var entry: IndexEntry?
        var file: IDSpelling?
    }

    func walk(spilling: Bool) throws -> ([Visit], SideListing) {
        var folder = MemoFolder(side.spec())
        folder.sortRunLength = spilling ? 1 : 1 << 20
        var visits: [Visit] = []
        let listing = try folder.list(scratch: spilling ? TempFolder().url : nil) { visits.append(Visit(id: $0, entry: $1, file: $2)) }
        return (visits, listing)
    }

    @Test func findsEachProblemOnceInAFixedOrder() throws {
        let (visits, listing) = try walk(spilling: false)
        #expect(visits.map(\.id) == [idA, idB, idC, idD, idE, idF].map { MemoID($0)! }.sorted())
        #expect(visits.first { $0.id == MemoID(idA)! }?.entry?.modifiedTime == Timestamp(iso8601: "2026-04-19T14:32:00Z"), "the first entry is kept")
        #expect(
            listing.problems.map(\.kind) == [
                .duplicateID,  // index.json: idA again
                .link, .invalidID, .duplicateID, .orphanFile,  // memos/ in name order: F… link, bad.json, e… after E…, notes.txt
                .danglingEntry, .nameSpelling,  // entries in id order: idC (16fd…) has no file, idB (7c9e…) is spelled small
                .orphanFile  // idE has no entry
            ])
        #expect(listing.problems[0].message == "entries[1]: id \(idA.lowercased()) appears again (first at entries[0]); counted once")
        #expect(listing.problems[3].path == "memos/\(idE.lowercased()).json")
        #expect(listing.problems[3].message == "another file, memos/\(idE).json, holds the same id")
    }

    @Test func spillingToDiskChangesNothing() throws {
        let (visits, listing) = try walk(spilling: false)
        let (spilledVisits, spilled) = try walk(spilling: true)
        #expect(spilledVisits == visits)
        #expect(spilled.problems == listing.problems)
        #expect(spilled.status == listing.status)
    }

    @Test func aRepeatedIdIsWordedAsTheCarefulReaderWordsIt() throws {
        let careful = try IndexReader.read(Data(contentsOf: side.url.appendingPathComponent("index.json")))
        #expect(IndexReader.readClean(atPath: side.url.appendingPathComponent("index.json").path) == nil)
        #expect(MemoFolder(side.spec()).readIndex().problems == careful.problems)
        #expect(MemoFolder(side.spec()).readIndex().entries.values == careful.entries.sorted { $0.id < $1.id })
    }
}
