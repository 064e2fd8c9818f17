import Foundation
import Testing

@testable import ReckonCore

@Suite struct ExportReaderTests {
    let text = """
        {
          "exportedAt" : "2026-04-19T14:32:00Z",
          "memos" : [
            {"id": "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "title": "a [ { \\" ] }", "modifiedAt": "2026-04-18T09:15:00Z", "n": 1.10},
            {"id": "7c9e6679-7425-40de-944b-e07fc1f90ae7", "title": 12, "modifiedAt": "2026-04-18T09:15:00Z"},
            {"id": "16fd2706-8baf-433b-82eb-8c7fada847da", "archivedAt": "2026-01-03T09:00:00Z", "modifiedAt": "2026-04-18T09:15:00Z"}
          ],
          "schemaVersion" : 1,
          "source" : {"label": "x", "name": "y", "path": "z"}
        }

        """

    /// Feeds `data` to a reader in chunks of `size` bytes.
    func read(_ data: Data, chunk size: Int) throws -> (MemosJSONReader.Facts, [Memo]) {
        var memos: [Memo] = []
        let reader = MemosJSONReader { memos.append($0) }
        var at = 0
        while at < data.count {
            try data[at..<min(data.count, at + size)].withUnsafeBytes { try reader.feed($0) }
            at += size
        }
        return (try reader.finish(), memos)
    }

    @Test(arguments: [1, 2, 7, 64, 1 << 20])
    func memosJSONIsReadTheSameInChunksOfAnySizeAndADamagedMemoSpoilsOnlyItself(_ size: Int) throws {
        let (facts, memos) = try read(Data(text.utf8), chunk: size)
        #expect(memos.map(\.id.value) == ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "16fd2706-8baf-433b-82eb-8c7fada847da"])
        #expect(memos.first?.title == "a [ { \" ] }", "brackets and quotes inside a string are text")
        #expect(memos.first?.otherFields["n"] == .number("1.10"), "an unknown number keeps its digits")
        #expect(facts.problems == ["memos[1] 'title' must be a string, found a number"])
        #expect(facts.counts == MemoCounts(active: 1, archived: 1))
        #expect(facts.exportedAt == "2026-04-19T14:32:00Z")
        #expect(facts.size == text.utf8.count)
        #expect(facts.sha256 == SHA256.hex(of: Data(text.utf8)))
    }

    /// Long text is skipped 32 bytes at a time to its next quote or
    /// backslash: an escaped quote or backslash at any place in a long
    /// title, and a chunk ending anywhere, still give the title whole.
    @Test(arguments: [1, 31, 32, 33, 100, 1 << 20])
    func longTextWithEscapesAtEveryPlaceIsReadWhole(_ size: Int) throws {
        var titles: [String] = []
        for place in [0, 1, 30, 31, 32, 33, 63, 64, 65, 95] {
            for escape in ["\\\"", "\\\\"] {
                titles.append(String(repeating: "a", count: place) + escape + String(repeating: "b", count: 70 - place % 7))
            }
        }
        let ids = titles.indices.map { String(format: "3f2504e0-4f89-11d3-9a0c-%012x", $0) }
        let memos = zip(ids, titles).map { id, title in
            #"{"id": "\#(id)", "title": "\#(title)", "modifiedAt": "2026-04-18T09:15:00Z"}"#
        }
        let data = Data(#"{"memos": [\#(memos.joined(separator: ",\n"))], "schemaVersion": 1}"#.utf8)
        let (facts, read) = try read(data, chunk: size)
        #expect(facts.problems.isEmpty, "\(facts.problems)")
        #expect(read.map(\.id.value) == ids)
        #expect(read.map(\.title) == titles.map { $0.replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\\\", with: "\\") })
    }

    @Test(arguments: [
        (
            #"{"memos": [{"id": "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "modifiedAt": "2026-04-18T09:15:00Z"}"#,
            "is cut short (a string or bracket is never closed)"
        ),
        (#"{"memos": [], "schemaVersion": 1} ]"#, "not valid JSON (a closing bracket too many at byte 34)"),
        (#"{"schemaVersion": 1}"#, "has no \"memos\" array"),
        (#"{"memos": [], "schemaVersion": 2}"#, "has schemaVersion 2, newer than the version 1 this reckon reads"),
        (#"{"memos": [,], "schemaVersion": 1}"#, "memos[0] is empty (a comma too many)")
    ])
    func aBrokenFileIsNamedInWords(_ input: String, _ message: String) throws {
        let (facts, _) = try read(Data(input.utf8), chunk: 5)
        #expect(facts.problems.contains(message), "\(facts.problems)")
    }

    @Test func aManifestIsReadFieldByFieldAndAWrongKeyIsNamed() throws {
        let good = #"""
            {"counts": {"active": 1, "archived": 0}, "exportedAt": null, "files": [{"path": "memos.json", "sha256": "ab", "size": 3}],
             "formats": ["json"], "generator": "reckon", "includeArchived": false, "missing": [], "reckonVersion": "0.1",
             "schemaVersion": 1, "source": {"label": "l", "name": "n", "path": "p"}}
            """#
        let manifest = try ExportManifest.read(Data(good.utf8), shown: "m.json")
        #expect(
            manifest.files == [ExportManifest.File(place: .folder, path: "memos.json", size: 3, sha256: "ab")],
            "schema 1 files are beside the manifest")
        #expect(manifest.counts == MemoCounts(active: 1, archived: 0))
        let wrong = good.replacingOccurrences(of: #""size": 3"#, with: #""size": "3""#)
        #expect(throws: ExportReadError.self) { try ExportManifest.read(Data(wrong.utf8), shown: "m.json") }
        do {
            _ = try ExportManifest.read(Data(wrong.utf8), shown: "m.json")
        } catch {
            #expect(error.description == "m.json: the key files[0].size is missing or has a value reckon never writes there")
        }
        let newer = good.replacingOccurrences(of: #""schemaVersion": 1"#, with: #""schemaVersion": 3"#)
        #expect(throws: ExportReadError.self) { try ExportManifest.read(Data(newer.utf8), shown: "m.json") }
    }

    /// A pipeline's run names its pipeline; `reckon export` and older runs name none.
    @Test func aManifestNamesItsPipelineOrNone() throws {
        let none = #"""
            {"counts": {"active": 0, "archived": 0}, "files": [], "formats": ["json"], "generator": "reckon", "includeArchived": false,
             "missing": [], "reckonVersion": "0.1", "schemaVersion": 2, "source": {"label": "l", "name": "n", "path": "p"}}
            """#
        #expect(try ExportManifest.read(Data(none.utf8), shown: "m.json").pipeline == nil)
        let named = none.replacingOccurrences(of: #""missing""#, with: #""pipeline": "nightly", "missing""#)
        #expect(try ExportManifest.read(Data(named.utf8), shown: "m.json").pipeline == "nightly")
        let wrong = none.replacingOccurrences(of: #""missing""#, with: #""pipeline": 3, "missing""#)
        #expect {
            try ExportManifest.read(Data(wrong.utf8), shown: "m.json")
        } throws: { error in
            "\(error)" == "m.json: the key pipeline is missing or has a value reckon never writes there"
        }
    }

    @Test func markdownFrontMatterGivesTheIDAndTheArchivedState() {
        let memo = Memo(
            id: MemoID("3F2504E0-4F89-11D3-9A0C-0305E82C3301")!, title: "id: not this one\n---", body: "id: 16fd2706-8baf-433b-82eb-8c7fada847da\n",
            modifiedAt: Timestamp(iso8601: "2026-04-18T09:15:00Z")!, archivedAt: Timestamp(iso8601: "2026-04-19T09:15:00Z")!)
        let found = MarkdownExport.frontMatter(of: Data(MarkdownExport.render(memo).utf8))
        #expect(found?.id == memo.id)
        #expect(found?.archived == true)
        #expect(MarkdownExport.frontMatter(of: Data("no front matter\n".utf8)) == nil)
        #expect(MarkdownExport.frontMatter(of: Data("---\nid: 3f2504e0-4f89-11d3-9a0c-0305e82c3301\n".utf8)) == nil, "never closed")
    }
}
