import Foundation
import ReckonCore
import Testing

/// A memo folder holding `memos` (each a memo file's keys), with an index
/// entry for each.
func memoFolder(_ memos: [[String: Any]]) throws -> URL {
    let root = temporaryFolder()
    try FileManager.default.createDirectory(at: root.appendingPathComponent("memos"), withIntermediateDirectories: true)
    var entries: [[String: Any]] = []
    for memo in memos {
        let id = memo["id"] as! String
        entries.append(["id": id, "modifiedTime": memo["modifiedAt"]!, "archivedAt": memo["archivedAt"] ?? NSNull(), "deletedAt": NSNull()])
        try JSONSerialization.data(withJSONObject: memo, options: [.sortedKeys]).write(to: root.appendingPathComponent("memos/\(id).json"))
    }
    try JSONSerialization.data(withJSONObject: ["schemaVersion": 1, "entries": entries]).write(to: root.appendingPathComponent("index.json"))
    return root
}

/// A memo file's keys: the fields every memo has, then `extra` laid over them.
func memo(_ id: String, _ title: String, modified: String = "2026-04-18T09:15:00Z", _ extra: [String: Any] = [:]) -> [String: Any] {
    var memo: [String: Any] = [
        "id": id, "title": title, "body": "Body of \(title)", "createdAt": "2026-04-01T08:00:00Z",
        "modifiedAt": modified, "archivedAt": NSNull(), "deletedAt": NSNull(), "tags": ["home"], "pinned": false
    ]
    memo.merge(extra) { _, new in new }
    return memo
}

@Suite struct DiffCommandTests {
    let groceries = "3F2504E0-4F89-11D3-9A0C-0305E82C3301", recipes = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
    let books = "16FD2706-8BAF-433B-82EB-8C7FADA847DA", meeting = "886313E1-3B8A-5372-9B90-0C9AEE199E5D"
    let idea = "E4EAAAF2-D142-11E1-B3E4-080027620CDD", trip = "A3BB189E-8BF9-3888-9912-ACE4E6543002"
    let quiet = "00000000-0000-4000-8000-000000000001"

    /// Two exports of one side a night apart: one memo edited in title and
    /// body, one unarchived, one archived, one deleted, one added, one
    /// changed only in a key reckon does not know, one left alone.
    func twoExports() throws -> (URL, URL) {
        let before = try memoFolder([
            memo(groceries, "Groceries"),
            memo(recipes, "Old recipes", ["archivedAt": "2026-01-03T09:00:00Z"]),
            memo(books, "Book list"),
            memo(meeting, "Meeting notes"),
            memo(trip, "Trip", ["serverSeq": 9_007_199_254_740_993]),
            memo(quiet, "Unchanged")
        ])
        let after = try memoFolder([
            memo(groceries, "Groceries list", modified: "2026-04-19T10:00:00Z", ["body": "Milk, eggs"]),
            memo(recipes, "Old recipes", modified: "2026-04-19T10:00:00Z"),
            memo(books, "Book list", modified: "2026-04-19T10:00:00Z", ["archivedAt": "2026-04-19T10:00:00Z"]),
            memo(meeting, "Meeting notes", ["deletedAt": "2026-04-19T10:00:00Z"]),
            memo(idea, "Idea from the train"),
            memo(trip, "Trip", ["serverSeq": 9_007_199_254_740_994]),
            memo(quiet, "Unchanged")
        ])
        return (try exportFolder(before.path), try exportFolder(after.path))
    }

    let expectedLines = """
        archived              16fd2706-8baf-433b-82eb-8c7fada847da  'Book list'
        edited (title, body)  3f2504e0-4f89-11d3-9a0c-0305e82c3301  'Groceries list'
        unarchived            7c9e6679-7425-40de-944b-e07fc1f90ae7  'Old recipes'
        removed               886313e1-3b8a-5372-9b90-0c9aee199e5d  'Meeting notes'
        edited (serverSeq)    a3bb189e-8bf9-3888-9912-ace4e6543002  'Trip'
        added                 e4eaaaf2-d142-11e1-b3e4-080027620cdd  'Idea from the train'

        1 added, 1 removed, 2 edited, 1 archived, 1 unarchived (6 memos before, 6 after).

        """

    @Test func twoExportsWithKnownChangesListExactlyThemInWords() throws {
        let (old, new) = try twoExports()
        let result = try runArray(["diff", old.path, new.path])
        #expect(result.code == 1)
        #expect(result.stdout == expectedLines)
        #expect(result.stderr.isEmpty)
        let zips = try runArray(["diff", old.appendingPathComponent("memos.zip").path, new.appendingPathComponent("memos.zip").path])
        #expect(zips.code == 1)
        #expect(zips.stdout == expectedLines, "a zip on its own says the same")
    }

    @Test func theJSONListsTheChangesAndTheirTotals() throws {
        let (old, new) = try twoExports()
        let result = try runArray(["diff", old.path, new.path, "--json"])
        #expect(result.code == 1)
        let report = try json(result.stdout)
        #expect(report["schemaVersion"] as? Int == 1)
        let changes = report["changes"] as? [[String: Any]] ?? []
        #expect(
            changes.map { "\($0["change"]!) \($0["id"]!) \(($0["fields"] as? [String]) ?? [])" } == [
                "archived \(books.lowercased()) []", "edited \(groceries.lowercased()) [\"title\", \"body\"]",
                "unarchived \(recipes.lowercased()) []", "removed \(meeting.lowercased()) []",
                "edited \(trip.lowercased()) [\"serverSeq\"]", "added \(idea.lowercased()) []"
            ])
        #expect(report["totals"] as? [String: Int] == ["added": 1, "removed": 1, "edited": 2, "archived": 1, "unarchived": 1])
        #expect((report["old"] as? [String: Any])?["export"] as? String == old.path)
        #expect((report["new"] as? [String: Any])?["counts"] as? [String: Int] == ["active": 5, "archived": 1])
    }

    @Test func theSameExportTwiceIsExitZero() throws {
        let (old, _) = try twoExports()
        let result = try runArray(["diff", old.path, old.appendingPathComponent("memos.zip").path])
        #expect(result.code == 0)
        #expect(result.stdout == "No memo changed: 6 memos in both.\n")
    }

    @Test func aDamagedOrUnreadableExportIsTrouble() throws {
        let (old, new) = try twoExports()
        try flipByte(new.appendingPathComponent("memos.json"), at: 100)
        let damaged = try runArray(["diff", old.path, new.path])
        #expect(damaged.code == 2)
        #expect(damaged.stdout.isEmpty)
        #expect(
            damaged.stderr
                == "Error: \(new.path)/memos.json: is not what manifest.json lists (its size or SHA-256 differs): the export is damaged; 'reckon verify' says more\n"
        )
        let markdownOnly = try exportFolder("Samples/drift/device", extra: ["--format", "markdown"])
        let noJSON = try runArray(["diff", old.path, markdownOnly.path])
        #expect(noJSON.code == 2)
        #expect(noJSON.stderr.contains("holds no memos.json, beside its manifest or in memos.zip (it was exported as Markdown alone)"))
        let usage = try runArray(["diff", old.path])
        #expect(usage.code == 64)
        #expect(usage.stderr.hasPrefix("Error: Missing expected argument '<new>'"))
    }
}
