import Foundation
import Testing

@testable import ReckonCore

@Suite struct IndexReaderTests {
    func read(_ text: String) throws(IndexReader.Failure) -> MemoIndex {
        try IndexReader.read(Data(text.utf8))
    }

    @Test func acceptsAByteOrderMark() throws {
        let index = try IndexReader.read(Data([0xEF, 0xBB, 0xBF]) + Data(#"{"schemaVersion": 1, "entries": [\#(entry(idA))]}"#.utf8))
        #expect(index.entries.map(\.id.value) == [idA.lowercased()])
        #expect(index.problems.isEmpty)
    }

    @Test func aWrongTypeIsAProblemForThatEntryOnly() throws {
        let bad = #"{"id": "\#(idB)", "modifiedTime": "2026-04-19T14:32:00Z", "archivedAt": 12345, "deletedAt": null}"#
        let index = try read(#"{"schemaVersion": 1, "entries": [\#(entry(idA)), \#(bad), \#(entry(idC))]}"#)
        #expect(index.entries.count == 2)
        #expect(index.problems.count == 1)
        let problem = try #require(index.problems.first)
        #expect(problem.kind == .badEntry)
        #expect(problem.id == MemoID(idB))
        #expect(problem.message.contains("entries[1]"))
        #expect(problem.message.contains("'archivedAt' must be an ISO 8601 date or null, found a number"))
    }

    @Test func anInvalidIdIsRejectedAndNotCounted() throws {
        let index = try read(#"{"schemaVersion": 1, "entries": [\#(entry("../../etc/passwd")), \#(entry(idA))]}"#)
        #expect(index.entries.count == 1)
        #expect(index.problems.map(\.kind) == [.invalidID])
        #expect(index.problems[0].id == nil)
        #expect(index.problems[0].message.contains("'../../etc/passwd' is not a UUID"))
    }

    @Test func aDuplicateIdCountsOnceAndIsAProblem() throws {
        let index = try read(#"{"schemaVersion": 1, "entries": [\#(entry(idA)), \#(entry(idA.lowercased(), archived: "2026-01-01T00:00:00Z"))]}"#)
        #expect(index.entries.count == 1)
        #expect(index.entries[0].archivedAt == nil)
        #expect(MemoCounts.aggregate(index.entries) == MemoCounts(active: 1, archived: 0))
        #expect(index.problems.map(\.kind) == [.duplicateID])
        #expect(index.problems[0].message.contains("first at entries[0]"))
    }

    @Test func aNewerSchemaFailsNamingTheVersion() {
        #expect(throws: IndexReader.Failure.self) { try read(#"{"schemaVersion": 2, "entries": []}"#) }
        do {
            _ = try read(#"{"schemaVersion": 2, "entries": []}"#)
        } catch {
            #expect(error.kind == .unsupportedSchema)
            #expect(error.message.contains("schemaVersion 2"))
        }
    }

    /// A version too large for a Double is still a newer version, not damage.
    @Test func aHugeVersionIsNewerNotDamaged() {
        do {
            _ = try read(#"{"schemaVersion": 99999999999999999999, "entries": []}"#)
            Issue.record("expected a failure")
        } catch {
            #expect(error.kind == .unsupportedSchema)
            #expect(error.message.contains("schemaVersion 99999999999999999999"))
        }
    }

    /// Versions that only round to 1 are not 1.
    @Test(arguments: [
        #"{"schemaVersion": 1, "entries": [tru"#, "null", "[]", #"{"entries": []}"#, #"{"schemaVersion": 1}"#,
        #"{"schemaVersion": "1", "entries": []}"#, "", #"{"schemaVersion": 0.99999999999999999999, "entries": []}"#,
        #"{"schemaVersion": 1.0, "entries": []}"#, #"{"schemaVersion": 1e0, "entries": []}"#, #"{"schemaVersion": 0, "entries": []}"#
    ])
    func aBrokenFileIsCorrupt(_ text: String) {
        do {
            _ = try read(text)
            Issue.record("expected a failure for \(text)")
        } catch {
            #expect(error.kind == .corruptIndex)
        }
    }

    @Test func invalidUTF8InOneEntryDamagesTheWholeIndex() throws {
        let prefix = Data(#"{"schemaVersion": 1, "entries": [{"id": "a"#.utf8)
        let data = prefix + Data([0xFF]) + Data(#"", "modifiedTime": "x"}, \#(entry(idA))]}"#.utf8)
        #expect(throws: IndexReader.Failure(kind: .corruptIndex, message: "bytes that are not UTF-8 at byte \(prefix.count)")) {
            try IndexReader.read(data)
        }
    }

    @Test func keepsChangeTagsAndDates() throws {
        let index = try read(
            #"{"schemaVersion": 1, "entries": [\#(entry(idA, modified: "2026-04-19T23:32:00+09:00", deleted: "2026-04-20T00:00:00Z", tag: "v7"))], "future": true}"#
        )
        let first = try #require(index.entries.first)
        #expect(first.changeTag == "v7")
        #expect(first.spelling == idA)
        #expect(first.modifiedTime == Timestamp(iso8601: "2026-04-19T14:32:00Z"))
        #expect(first.isDeleted)
    }
}

@Suite struct MemoReaderTests {
    @Test func readsEveryFieldAndKeepsUnknownKeys() throws {
        let text =
            #"{"id": "\#(idA)", "title": "T", "body": "B", "createdAt": "2026-04-01T00:00:00Z", "modifiedAt": "2026-04-02T00:00:00+09:00", "archivedAt": null, "deletedAt": null, "tags": ["b", "a"], "pinned": true, "color": "red"}"#
        let memo = try MemoReader.read(Data(text.utf8))
        #expect(memo.title == "T")
        #expect(memo.tags == ["b", "a"])
        #expect(memo.pinned == true)
        #expect(memo.modifiedAt.iso8601 == "2026-04-01T15:00:00Z")
        #expect(memo.otherFields == ["color": .string("red")])
    }

    @Test(arguments: [
        (#"{"id": "x", "modifiedAt": "2026-04-01T00:00:00Z"}"#, "not a UUID"),
        (#"{"id": "\#(idA)", "title": 5, "modifiedAt": "2026-04-01T00:00:00Z"}"#, "'title' must be a string, found a number"),
        (#"{"id": "\#(idA)", "tags": "a", "modifiedAt": "2026-04-01T00:00:00Z"}"#, "'tags' must be an array of strings"),
        (#"{"id": "\#(idA)"}"#, "'modifiedAt' is missing"),
        ("[1]", "must be a JSON object, found an array"),
        (#"{"id": "#, "not valid JSON")
    ])
    func namesWhatIsWrong(_ text: String, _ expected: String) {
        do {
            _ = try MemoReader.read(Data(text.utf8))
            Issue.record("expected a failure")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }
}

/// The simdjson path must give exactly what the careful reader gives, or step aside.
@Suite struct CleanIndexTests {
    func both(_ text: String) throws -> (MemoIndex?, MemoIndex) {
        let folder = TempFolder()
        folder.write("index.json", text)
        let path = folder.url.appendingPathComponent("index.json").path
        return (IndexReader.readClean(atPath: path), try IndexReader.read(Data(text.utf8)))
    }

    @Test func aCleanIndexGivesTheSameEntriesBothWays() throws {
        let text =
            #"{"schemaVersion": 1, "entries": [\#(entry(idA, modified: "2026-04-19T23:32:00.5+09:00", tag: #"v\"1"#)), \#(entry(idB.lowercased(), archived: "2026-04-20T00:00:00Z")), \#(entry(idC, deleted: "2026-04-21T00:00:00Z"))]}"#
        let (fast, careful) = try both(text)
        #expect(fast != nil)
        #expect(fast == careful)
        #expect(fast?.entries.first?.changeTag == "v\"1")
    }

    @Test(arguments: [
        #"{"schemaVersion": 1, "entries": [{"id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "modifiedTime": "2026-04-19T14:32:00Z", "color": 1}]}"#,
        #"{"schemaVersion": 1, "entries": [{"id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "modifiedTime": "2026-04-19T14:32:00"}]}"#,
        #"{"schemaVersion": 1, "entries": [{"id": "not-a-uuid", "modifiedTime": "2026-04-19T14:32:00Z"}]}"#,
        #"{"schemaVersion": 1, "entries": [{"id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "modifiedTime": "2026-04-19T14:32:00Z", "archivedAt": 5}]}"#,
        #"{"schemaVersion": 1, "entries": [{"id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "modifiedTime": "2026-04-19T14:32:00Z"}, {"id": "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "modifiedTime": "2026-04-19T14:32:00Z"}]}"#,
        #"{"schemaVersion": 1, "entries": [{"id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "id": "7C9E6679-7425-40DE-944B-E07FC1F90AE7", "modifiedTime": "2026-04-19T14:32:00Z"}]}"#,
        #"{"schemaVersion": 2, "entries": []}"#,
        #"{"schemaVersion": 1, "entries": [], "future": true}"#,
        #"{"schemaVersion": 1, "entries": [] } trailing"#,
        #"[]"#
    ])
    func anythingUnusualStepsAside(_ text: String) throws {
        let folder = TempFolder()
        folder.write("index.json", text)
        #expect(IndexReader.readClean(atPath: folder.url.appendingPathComponent("index.json").path) == nil)
    }

    /// Entries whose change tags hold the very text batches are cut at.
    func awkwardEntries(_ count: Int) -> [String] {
        let tags = [#"},{"#, #"}, ["#, #"\\"#, #"\"},{\""#, "[[{", nil]
        return (0..<count).map { n in
            entry(
                String(format: "%08X-0000-4000-8000-%012X", n, n), archived: n % 5 == 0 ? "2026-04-20T00:00:00Z" : nil,
                deleted: n % 7 == 0 ? "2026-04-21T00:00:00Z" : nil, tag: tags[n % tags.count])
        }
    }

    @Test(arguments: [1, 7, 150, 100_000])
    func batchesCutAnywhereGiveTheSameEntries(_ batchBytes: Int) throws {
        let folder = TempFolder()
        for (name, text) in [
            ("pretty", #"{"schemaVersion": 1, "entries": [\#n  \#(awkwardEntries(40).joined(separator: ",\n  "))\#n]}\#n"#),
            ("tight", #"{"entries":[\#(awkwardEntries(40).joined(separator: ","))],"schemaVersion":1}"#),
            ("empty", #"{ "schemaVersion" : 1 , "entries" : [ ] }"#)
        ] {
            folder.write("\(name).json", text)
            let fast = IndexReader.readClean(atPath: folder.url.appendingPathComponent("\(name).json").path, batchBytes: batchBytes)
            #expect(fast != nil, "\(name)")
            #expect(fast == (try IndexReader.read(Data(text.utf8))), "\(name)")
        }
    }

    @Test(arguments: [1, 150, 100_000])
    func aBadSeparatorOrEndStepsAside(_ batchBytes: Int) throws {
        let (a, b) = (entry(idA), entry(idB))
        let folder = TempFolder()
        for text in [
            #"{"schemaVersion": 1, "entries": [\#(a), \#(b), ]}"#, #"{"schemaVersion": 1, "entries": [, \#(a)]}"#,
            #"{"schemaVersion": 1, "entries": [\#(a),, \#(b)]}"#, #"{"schemaVersion": 1, "entries": [\#(a), \#(b)"#,
            #"{"schemaVersion": 1, "entries": [\#(a) \#(b)]}"#, #"{"schemaVersion": 1, "entries": [\#(a)], "entries": []}"#,
            #"{"schemaVersion": 1, "entries": [\#(a), "\#(b)]}"#
        ] {
            folder.write("index.json", text)
            #expect(IndexReader.readClean(atPath: folder.url.appendingPathComponent("index.json").path, batchBytes: batchBytes) == nil, "\(text)")
        }
    }

    /// Change tags so long that every guessed cut lands inside one: the
    /// batches cannot parse, and counting goes entry by entry instead.
    @Test func countingSurvivesEveryGuessedCutBeingWrong() throws {
        let folder = TempFolder()
        let tag = String(repeating: "},", count: 10_000)
        let entries = (0..<120).map { n in
            entry(String(format: "%08X-0000-4000-8000-%012X", n, n), archived: n % 3 == 0 ? "2026-04-20T00:00:00Z" : nil, tag: tag)
        }
        folder.index(entries)
        let careful = try IndexReader.read(Data(#"{"schemaVersion": 1, "entries": [\#(entries.joined(separator: ","))]}"#.utf8))
        let side = MemoFolder(folder.spec()).count()
        #expect(side.precounted == MemoCounts(active: 80, archived: 40))
        #expect(side.counts == MemoCounts.aggregate(careful.entries))
    }

    /// Large enough for several batches, with cut-like text inside strings.
    @Test func countingAManyBatchIndexAgreesWithTheCarefulReader() throws {
        let folder = TempFolder()
        let entries = awkwardEntries(12_000)
        folder.index(entries)
        let careful = try IndexReader.read(Data(#"{"schemaVersion": 1, "entries": [\#(entries.joined(separator: ","))]}"#.utf8))
        let side = MemoFolder(folder.spec()).count()
        #expect(side.precounted != nil)
        #expect(side.counts == MemoCounts.aggregate(careful.entries))

        folder.index(entries + [entries[11_000]])
        let twice = MemoFolder(folder.spec()).count()
        #expect(twice.precounted == nil)
        #expect(twice.counts == MemoCounts.aggregate(careful.entries))
    }
}

/// The simdjson memo path must give exactly what the careful reader gives, or step aside.
@Suite struct CleanMemoTests {
    @Test(arguments: [
        memo(idA, title: "京都旅行 \\\"quoted\\\" \\u0001", body: "line\\nline 🙂", tags: ["b", "a", ""]),
        memo(idB.lowercased(), archived: "2026-04-20T09:00:00.125+09:00"),
        #"{"id": "\#(idC)", "modifiedAt": "2026-04-19T14:32:00Z"}"#,
        #"{"id": "\#(idC)", "modifiedAt": "2026-04-19T14:32:00-0130", "title": null, "body": null, "tags": null, "pinned": true, "changeTag": "v2", "createdAt": null}"#,
        "\n  " + memo(idD) + "\n"
    ])
    func aCleanMemoReadsTheSameBothWays(_ text: String) throws {
        let fast = MemoReader.readClean(Data(text.utf8))
        #expect(fast != nil)
        let careful = try MemoReader.readCarefully(Data(text.utf8))
        #expect(fast == careful)
        let summary = try MemoReader.readSummary(Data(text.utf8))
        #expect(summary.0 == careful.id)
        #expect(summary.1 == MemoSummary(careful))
    }

    @Test(arguments: [
        #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z", "color": "red"}"#,
        #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z", "title": "a", "title": "b"}"#,
        #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00"}"#,
        #"{"id": "\#(idA)", "modifiedAt": "2026-02-30T14:32:00Z"}"#,
        #"{"id": "\#(idA)", "modifiedAt": null}"#,
        #"{"id": "\#(idA)"}"#,
        #"{"id": "not-a-uuid", "modifiedAt": "2026-04-19T14:32:00Z"}"#,
        #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z", "tags": ["a", 1]}"#,
        #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z", "pinned": "yes"}"#,
        #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z", "title": 5}"#,
        "\u{FEFF}" + #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z"}"#,
        #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z"} {}"#,
        #"[{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z"}]"#,
        ""
    ])
    func anythingUnusualStepsAside(_ text: String) {
        #expect(MemoReader.readClean(Data(text.utf8)) == nil)
    }
}

/// JSON is read strictly and in one way: a key written twice, a trailing
/// comma, UTF-16 and bytes that are not UTF-8 are damage, found by the
/// careful reader and never taken by the simdjson paths.
@Suite struct StrictJSONTests {
    /// The careful reader's verdict on an index, after checking that the
    /// fast paths (entries and count) step aside.
    func readIndex(_ data: Data) throws(IndexReader.Failure) -> MemoIndex {
        let folder = TempFolder()
        try! data.write(to: folder.url.appendingPathComponent("index.json"))
        #expect(IndexReader.readClean(atPath: folder.url.appendingPathComponent("index.json").path) == nil, "the simdjson path steps aside")
        #expect(MemoFolder(folder.spec()).count().precounted == nil, "the fast count steps aside")
        return try IndexReader.read(data)
    }

    /// The careful reader's failure for a memo file, after checking that the fast path steps aside.
    func memoFailure(_ data: Data) -> String? {
        #expect(MemoReader.readClean(data) == nil, "the simdjson path steps aside")
        do {
            _ = try MemoReader.read(data)
            return nil
        } catch {
            return error.message
        }
    }

    func utf16(_ text: String, byteOrderMark: Bool) -> Data {
        // Little-endian after a byte order mark, big-endian without one.
        Data(
            (byteOrderMark ? [0xFF, 0xFE] : [])
                + text.utf16.flatMap { unit in
                    byteOrderMark ? [UInt8(unit & 0xFF), UInt8(unit >> 8)] : [UInt8(unit >> 8), UInt8(unit & 0xFF)]
                })
    }

    @Test func aKeyRepeatedInOneEntryIsAProblemForThatEntryOnly() throws {
        let twice = #"{"id": "\#(idA)", "modifiedTime": "2026-04-19T14:32:00Z", "archivedAt": null, "archivedAt": "2026-04-20T00:00:00Z"}"#
        let index = try readIndex(Data(#"{"schemaVersion": 1, "entries": [\#(twice), \#(entry(idB))]}"#.utf8))
        #expect(index.entries.map(\.id) == [MemoID(idB)!])
        #expect(
            index.problems == [
                Problem(
                    .badEntry, path: "index.json", id: MemoID(idA),
                    #"entries[0] (id \#(idA.lowercased())): the key "archivedAt" appears twice; the entry is not counted"#)
            ])
    }

    @Test func aKeyRepeatedAtTheTopLevelDamagesTheIndex() {
        let text = #"{"schemaVersion": 1, "entries": [\#(entry(idA))], "entries": []}"#
        #expect(throws: IndexReader.Failure(kind: .corruptIndex, message: #"the key "entries" appears twice"#)) { try readIndex(Data(text.utf8)) }
    }

    @Test func aKeyRepeatedInAMemoFileDamagesIt() {
        let text = #"{"id": "\#(idA)", "title": "a", "title": "b", "modifiedAt": "2026-04-19T14:32:00Z"}"#
        #expect(memoFailure(Data(text.utf8)) == #"the key "title" appears twice"#)
        let nested = #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z", "extra": {"list": [{"k": 1, "k": 2}]}}"#
        #expect(memoFailure(Data(nested.utf8)) == #"the key "k" appears twice in 'extra.list[0]'"#)
    }

    @Test func aTrailingCommaDamagesTheFile() throws {
        let index = #"{"schemaVersion": 1, "entries": [\#(entry(idA)), ]}"#
        #expect(throws: IndexReader.Failure(kind: .corruptIndex, message: "not valid JSON (a comma before ']' at byte \(index.utf8.count - 4))")) {
            try readIndex(Data(index.utf8))
        }
        let memo = #"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z",}"#
        #expect(memoFailure(Data(memo.utf8)) == "not valid JSON (a comma before '}' at byte \(memo.utf8.count - 2))")
    }

    @Test(arguments: [true, false])
    func aUTF16FileIsDamaged(byteOrderMark: Bool) throws {
        let index = #"{"schemaVersion": 1, "entries": [\#(entry(idA))]}"#
        #expect(throws: IndexReader.Failure(kind: .corruptIndex, message: "the file is UTF-16, not UTF-8")) {
            try readIndex(utf16(index, byteOrderMark: byteOrderMark))
        }
        #expect(memoFailure(utf16(memo(idA), byteOrderMark: byteOrderMark)) == "the file is UTF-16, not UTF-8")
    }

    @Test func bytesThatAreNotUTF8InAnUnknownKeyDamageTheFile() throws {
        let before = Data(#"{"schemaVersion": 1, "entries": [{"id": "\#(idA)", "modifiedTime": "2026-04-19T14:32:00Z", "color": "re"#.utf8)
        let index = before + Data([0xC3, 0x28]) + Data(#"d"}]}"#.utf8)
        #expect(throws: IndexReader.Failure(kind: .corruptIndex, message: "bytes that are not UTF-8 at byte \(before.count)")) {
            try readIndex(index)
        }
        let start = Data(#"{"id": "\#(idA)", "modifiedAt": "2026-04-19T14:32:00Z", "future": {"note": ["ok", "#.utf8)
        let memo = start + Data([0x22, 0xED, 0xA0, 0x80, 0x22]) + Data("]}}".utf8)
        #expect(memoFailure(memo) == "bytes that are not UTF-8 at byte \(start.count + 1)", "a surrogate written in UTF-8 is not UTF-8")
    }
}

/// What reckon's own parser refuses, and how it says so.
@Suite struct JSONParserTests {
    @Test(arguments: [
        (#"{"a": 1,}"#, "a comma before '}' at byte 7"),
        (#"[1, 2, ]"#, "a comma before ']' at byte 5"),
        (#"{"a": "\ud800"}"#, #"a \u escape that is half of a surrogate pair at byte 7"#),
        (#"{"a": "\udc00\ud800"}"#, #"a \u escape that is half of a surrogate pair at byte 7"#),
        ("{\"a\": \"x\u{1}\"}", "a control character (U+0001) inside a string at byte 8; it must be escaped"),
        (#"{"a": 01}"#, "unexpected '1' where ',' or '}' should be at byte 7"),
        (#"{"a": 1} x"#, "unexpected 'x' after the end of the JSON value at byte 9"),
        ("{\"a\": 1}\u{C}", "unexpected the control character U+000C after the end of the JSON value at byte 8"),
        (#"{'a': 1}"#, "unexpected ''' where a key in quotes should be at byte 1"),
        (#"{"a": "x"#, "the text ends inside a string"),
        (#"{"a": [1"#, "the text ends before the JSON does")
    ])
    func refusesWhatRFC8259Refuses(_ text: String, _ reason: String) {
        #expect(throws: JSONSyntaxError(kind: .syntax, reason: reason)) { try JSONParser.parse(Data(text.utf8)) }
    }

    @Test func readsEscapesAndKeepsNumbersAndReportsEveryRepeat() throws {
        let text = #"{"s": "\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", "n": [-0.5e+10, 9007199254740993], "r": {"x": 1, "x": 2}, "x": 3, "x": 4}"#
        let document = try JSONParser.parse(Data(text.utf8))
        #expect(
            document.value
                == .object([
                    "s": .string("\"\\/\u{8}\u{C}\n\r\té😀"), "n": .array([.number("-0.5e+10"), .number("9007199254740993")]),
                    "r": .object(["x": .integer(1)]), "x": .integer(3)
                ]))
        #expect(document.repeatedKeys == [RepeatedKey(path: [.key("r")], key: "x"), RepeatedKey(path: [], key: "x")])
    }

    @Test func readsAsDeepAsTheLimitAllowsWithoutRecursing() throws {
        let deep = Data((String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)).utf8)
        #expect(try JSONParser.parse(deep, depthLimit: 10_000).value != .null)
        #expect(throws: JSONSyntaxError(kind: .tooDeep, reason: "nests JSON deeper than 9999 levels")) {
            try JSONParser.parse(deep, depthLimit: 9_999)
        }
    }

    @Test func tellsUTF16AndUTF32ByTheirZeroBytes() {
        for (bytes, name) in [
            ([0x00, 0x7B, 0x00, 0x7D], "UTF-16"), ([0x7B, 0x00, 0x7D, 0x00], "UTF-16"), ([0xFE, 0xFF, 0x00, 0x7B], "UTF-16"),
            ([0x00, 0x00, 0x00, 0x7B], "UTF-32"), ([0xFF, 0xFE, 0x00, 0x00], "UTF-32")
        ] as [([UInt8], String)] {
            #expect(throws: JSONSyntaxError(kind: .encoding, reason: "the file is \(name), not UTF-8")) { try JSONParser.parse(Data(bytes)) }
        }
    }
}

@Suite struct NestingLimitTests {
    /// The fast paths do not count levels, so a limit below an index's own
    /// depth goes to the careful reader, which holds to it.
    @Test func aLimitBelowTheIndexsDepthIsHeldByCountAndLoad() {
        let folder = TempFolder()
        folder.index([entry(idA)])
        folder.write("memos/\(idA).json", memo(idA))
        var limits = ReadLimits()
        limits.depthLimit = 2
        let store = MemoFolder(folder.spec(), limits: limits)
        for side in [store.count(), store.load(deep: false)] {
            #expect(side.precounted == nil)
            #expect(side.problems.contains { $0.path == "index.json" && $0.message.contains("deeper than 2 levels") }, "\(side.problems)")
        }
    }
}
