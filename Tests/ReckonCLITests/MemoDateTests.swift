import Foundation
import Testing

/// Dates as RFC 3339 spells them are read, and written back as reckon
/// writes them; a date reckon could not keep is a problem of its memo, in words.
@Suite struct MemoDateTests {
    /// A memo folder with one memo per pair: the date in its index entry,
    /// and the one in its file. Returns the folder and the memos' ids.
    func folder(_ dates: [(index: String, file: String)]) throws -> (URL, [String]) {
        let root = temporaryFolder()
        try FileManager.default.createDirectory(at: root.appendingPathComponent("memos"), withIntermediateDirectories: true)
        var entries: [String] = []
        var ids: [String] = []
        for (n, date) in dates.enumerated() {
            let id = String(format: "%08X-0000-4000-8000-%012X", n + 1, n + 1)
            ids.append(id)
            entries.append(#"{"id": "\#(id)", "modifiedTime": "\#(date.index)", "archivedAt": null, "deletedAt": null}"#)
            let memo =
                #"{"id": "\#(id)", "title": "Memo \#(n)", "body": "Text \#(n)", "modifiedAt": "\#(date.file)", "archivedAt": null, "deletedAt": null}"#
            try Data(memo.utf8).write(to: root.appendingPathComponent("memos/\(id).json"))
        }
        try Data(#"{"schemaVersion": 1, "entries": [\#(entries.joined(separator: ", "))]}"#.utf8)
            .write(to: root.appendingPathComponent("index.json"))
        return (root, ids)
    }

    @Test func rfc3339SpellingsAreReadAndExportedAsReckonWritesThem() throws {
        let dates = ["2026-04-19t14:32:00z", "2026-04-19 14:33:00Z", "2026-04-19t23:34:00.5+09:00"]
        let (source, _) = try folder(dates.map { ($0, $0) })
        let out = temporaryFolder().appendingPathComponent("export")
        let exported = try runArray(["export", source.path, "--out", out.path])
        #expect(exported.code == 0, "\(exported.stderr)")
        let memos = try json(read(out.appendingPathComponent("memos.json")))["memos"] as? [[String: Any]] ?? []
        #expect(
            Set(memos.compactMap { $0["modifiedAt"] as? String }) == ["2026-04-19T14:32:00Z", "2026-04-19T14:33:00Z", "2026-04-19T14:34:00.500Z"])
        let verified = try runArray(["verify", out.path])
        #expect(verified.code == 0, "\(verified.stdout)\(verified.stderr)")
    }

    @Test(arguments: [
        ("0000-01-01T00:30:00+01:00", "falls in year -1 in UTC; reckon keeps dates from year 1 to 9999 only, the years it can write back"),
        ("0000-06-01T00:00:00Z", "falls in year 0 in UTC; reckon keeps dates from year 1 to 9999 only"),
        ("9999-12-31T23:30:00-01:00", "falls in year 10000 in UTC; reckon keeps dates from year 1 to 9999 only"),
        ("2016-12-31T23:59:60Z", "names second 60, a leap second, which reckon cannot keep")
    ])
    func aDateReckonCannotKeepIsAProblemOfItsMemoInWords(date: String, words: String) throws {
        let good = "2026-04-19T14:32:00Z"
        // In the memo's file: the memo is not exported, and the export reads back whole.
        let (source, ids) = try folder([(good, date), (good, good)])
        let out = temporaryFolder().appendingPathComponent("export")
        let exported = try runArray(["export", source.path, "--out", out.path])
        #expect(exported.code == 2)
        #expect(
            exported.stderr.contains("memos/\(ids[0]).json: not exported: 'modifiedAt' \(words)"), "\(exported.stderr)")
        let memos = try json(read(out.appendingPathComponent("memos.json")))["memos"] as? [[String: Any]] ?? []
        #expect(memos.compactMap { $0["modifiedAt"] as? String } == [good])
        let verified = try runArray(["verify", out.path])
        #expect(verified.code == 0, "\(verified.stdout)\(verified.stderr)")
        // In its index entry: the entry is not counted.
        let (indexed, _) = try folder([(date, date), (good, good)])
        let counts = try runArray(["counts", indexed.path])
        #expect(counts.code == 2)
        #expect(counts.stderr.contains("index.json: entries[0] (id \(ids[0])): 'modifiedTime' \(words)"), "\(counts.stderr)")
        #expect(counts.stdout.contains("Active    1"))
    }

    @Test func aStoreDateReckonCannotKeepIsAProblemOfItsRowInWords() throws {
        var rows = driftDeviceRows
        // About 2,000 years before 2001: in year -2.
        rows[1]["ZMODIFIEDAT"] = .real(-63_200_000_000)
        let store = temporaryFolder().appendingPathComponent("default.store").path
        try StoreBuilder().make(at: store, rows: rows)
        let out = temporaryFolder().appendingPathComponent("export")
        let exported = try runArray(["export", store, "--out", out.path])
        #expect(exported.code == 2)
        #expect(
            exported.stderr.contains(
                "ZMODIFIEDAT holds the integer -63200000000, a date in year -2; reckon keeps dates from year 1 to 9999 only, the years it can write back"
            ), "\(exported.stderr)")
        let verified = try runArray(["verify", out.path])
        #expect(verified.code == 0, "\(verified.stdout)\(verified.stderr)")
    }
}
