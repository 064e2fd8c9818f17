import Foundation
import TestSupport
import Testing

@testable import ReckonCore

/// Byte splices into JSON text: every expected text is written by hand.
@Suite struct JSONEditTests {
    func set(_ fields: [(key: String, value: JSONValue)], in text: String) throws -> String {
        String(decoding: try JSONEdit.setting(fields, inObject: Data(text.utf8)), as: UTF8.self)
    }

    func failure(_ body: () throws -> Data) -> String? {
        do {
            _ = try body()
            return nil
        } catch let failure as JSONEdit.Failure {
            return failure.description
        } catch {
            return "unexpected \(error)"
        }
    }

    // MARK: - One object

    @Test func replacesOnlyTheValuesSetAndKeepsEscapesUnicodeAndUnknownKeys() throws {
        let memo = #"""
            {
              "body" : "Line\nnext \"quoted\" \u00e9 — 日本",
              "deletedAt" : null,
              "extra" : {"nested": [1, 2.50, {"a": null}], "z": "\/"},
              "id" : "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
              "title" : "Groceries"
            }
            """#
        let expected = #"""
            {
              "body" : "Line\nnext \"quoted\" \u00e9 — 日本",
              "deletedAt" : "2026-05-01T09:00:00Z",
              "extra" : {"nested": [1, 2.50, {"a": null}], "z": "\/"},
              "id" : "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
              "title" : "Groceries \"2\" (conflict copy)"
            }
            """#
        #expect(
            try set([("deletedAt", .string("2026-05-01T09:00:00Z")), ("title", .string(#"Groceries "2" (conflict copy)"#))], in: memo) == expected)
    }

    @Test func addsAMissingKeyOnALineOfItsOwnInAPrettyObject() throws {
        let memo = "{\n    \"id\": \"a\",\n    \"tags\": [\n        \"x\"\n    ]\n}\n"
        let expected =
            "{\n    \"id\": \"a\",\n    \"tags\": [\n        \"x\"\n    ],\n    \"deletedAt\": \"2026-05-01T09:00:00Z\",\n    \"pinned\": false\n}\n"
        #expect(try set([("deletedAt", .string("2026-05-01T09:00:00Z")), ("pinned", .bool(false))], in: memo) == expected)
    }

    @Test func editsAMinifiedObjectWithoutAddingSpace() throws {
        #expect(
            try set([("title", .string("b")), ("pinned", .bool(true))], in: #"{"id":"x","title":"a"}"#) == #"{"id":"x","title":"b","pinned":true}"#)
        #expect(try set([("n", .number("2"))], in: #"{ "id": "x", "n": 1 }"#) == #"{ "id": "x", "n": 2 }"#)
        #expect(try set([("m", .null)], in: #"{ "id": "x" }"#) == #"{ "id": "x", "m": null }"#)
    }

    @Test func keepsCRLFLineBreaks() throws {
        let memo = "{\r\n  \"a\": 1,\r\n  \"b\": {\"c\": 2}\r\n}\r\n"
        let expected = "{\r\n  \"a\": 1,\r\n  \"b\": {\"c\": 2},\r\n  \"d\": \"e\"\r\n}\r\n"
        #expect(try set([("d", .string("e"))], in: memo) == expected)
        // A nested value written on lines of its own uses the file's line breaks too.
        #expect(try set([("a", .array([.integer(1)]))], in: memo) == "{\r\n  \"a\": [\r\n    1\r\n  ],\r\n  \"b\": {\"c\": 2}\r\n}\r\n")
    }

    @Test func fillsAnEmptyObject() throws {
        #expect(try set([("a", .integer(1)), ("b", .string("c"))], in: "{}") == #"{"a":1,"b":"c"}"#)
        #expect(try set([("a", .integer(1))], in: " {\n} ") == " {\n  \"a\" : 1\n} ")
    }

    @Test func refusesWhatIsNotOneObjectOrIsAmbiguous() {
        #expect(failure { try JSONEdit.setting([("a", .null)], inObject: Data("[1]".utf8)) } == "it is an array, not one JSON object")
        #expect(
            failure { try JSONEdit.setting([("a", .null)], inObject: Data(#"{"a": 1,}"#.utf8)) } == "it is not JSON: a comma before '}' at byte 7")
        #expect(
            failure { try JSONEdit.setting([("a", .null)], inObject: Data(#"{"a": 1, "a": 2}"#.utf8)) }
                == #"the key "a" appears twice in the object; reckon does not pick one"#)
        #expect(
            failure { try JSONEdit.setting([("a", .null), ("a", .bool(true))], inObject: Data("{}".utf8)) }
                == #"the key "a" is set twice in one edit"#)
    }

    // MARK: - index.json

    static let idA = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    static let idB = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
    static let idC = "16FD2706-8BAF-433B-82EB-8C7FADA847DA"

    func index(_ text: String, changing changes: [MemoID: [(key: String, value: JSONValue)]] = [:], appending: [String] = []) throws -> String {
        String(decoding: try JSONEdit.index(Data(text.utf8), changing: changes, appending: appending.map { Data($0.utf8) }), as: UTF8.self)
    }

    @Test func changesOneEntryByItsIdInAnyCaseAndAppendsIndentedAsTheOthers() throws {
        let text = """
            {
              "schemaVersion" : 1,
              "entries" : [
                {
                  "id" : "\(Self.idA)",
                  "deletedAt" : null,
                  "modifiedTime" : "2026-04-19T14:32:00Z"
                },
                {
                  "id" : "\(Self.idB)",
                  "modifiedTime" : "2026-04-19T14:32:00Z",
                  "x-app" : {"sync": [1, 2]}
                }
              ],
              "app" : "60dMemo 3.2"
            }
            """
        let added = "{\n  \"id\" : \"\(Self.idC)\",\n  \"changeTag\" : \"t1\"\n}"
        let expected = """
            {
              "schemaVersion" : 1,
              "entries" : [
                {
                  "id" : "\(Self.idA)",
                  "deletedAt" : null,
                  "modifiedTime" : "2026-04-19T14:32:00Z"
                },
                {
                  "id" : "\(Self.idB)",
                  "modifiedTime" : "2026-04-20T08:00:00Z",
                  "x-app" : {"sync": [1, 2]},
                  "deletedAt" : "2026-04-21T10:00:00Z"
                },
                {
                  "id" : "\(Self.idC)",
                  "changeTag" : "t1"
                }
              ],
              "app" : "60dMemo 3.2"
            }
            """
        let id = MemoID(Self.idB.lowercased())!
        #expect(
            try index(
                text, changing: [id: [("modifiedTime", .string("2026-04-20T08:00:00Z")), ("deletedAt", .string("2026-04-21T10:00:00Z"))]],
                appending: [added]) == expected)
    }

    @Test func editsAMinifiedIndex() throws {
        let text = #"{"entries":[{"id":"\#(Self.idA)","deletedAt":null},{"id":"\#(Self.idB)"}],"schemaVersion":1}"#
        let expected =
            #"{"entries":[{"id":"\#(Self.idA)","deletedAt":"2026-05-01T00:00:00Z"},{"id":"\#(Self.idB)"},{"id":"\#(Self.idC)"}],"schemaVersion":1}"#
        #expect(
            try index(
                text, changing: [MemoID(Self.idA)!: [("deletedAt", .string("2026-05-01T00:00:00Z"))]],
                appending: [#"{"id":"\#(Self.idC)"}"#]) == expected)
    }

    @Test func appendsToAnEmptyEntriesArray() throws {
        // As JSONEncoder writes an empty array, and as most other writers do.
        let pretty = "{\n  \"entries\" : [\n\n  ],\n  \"schemaVersion\" : 1\n}"
        let entry = "{\n  \"id\" : \"\(Self.idC)\"\n}"
        #expect(
            try index(pretty, appending: [entry])
                == "{\n  \"entries\" : [\n    {\n      \"id\" : \"\(Self.idC)\"\n    }\n  ],\n  \"schemaVersion\" : 1\n}")
        let crlf = "{\r\n    \"schemaVersion\": 1,\r\n    \"entries\": []\r\n}\r\n"
        #expect(
            try index(crlf, appending: [entry, #"{"id": "\#(Self.idA)"}"#])
                == "{\r\n    \"schemaVersion\": 1,\r\n    \"entries\": [\r\n        {\r\n          \"id\" : \"\(Self.idC)\"\r\n        },\r\n        {\"id\": \"\(Self.idA)\"}\r\n    ]\r\n}\r\n"
        )
        #expect(
            try index(#"{"schemaVersion":1,"entries":[]}"#, appending: [" {\"id\":\"\(Self.idC)\"}\n"])
                == #"{"schemaVersion":1,"entries":[{"id":"\#(Self.idC)"}]}"#)
    }

    @Test func leavesTheTextAsItWasWhenNothingChanges() throws {
        let text = "{\"schemaVersion\": 1, \"entries\": [ {\"id\": \"\(Self.idA)\"} ] }\n"
        #expect(try index(text) == text)
    }

    @Test func refusesAnIndexItCannotEditSafely() {
        let a = MemoID(Self.idA)!
        func refusal(_ text: String, _ changes: [MemoID: [(key: String, value: JSONValue)]] = [:], appending: [String] = []) -> String? {
            failure { try JSONEdit.index(Data(text.utf8), changing: changes, appending: appending.map { Data($0.utf8) }) }
        }
        #expect(refusal(#"{"schemaVersion": 1}"#) == #"it has no "entries""#)
        #expect(refusal(#"{"entries": {}}"#) == #"its "entries" is an object, not an array"#)
        #expect(refusal(#"{"entries": []}"#, [a: [("deletedAt", .null)]]) == "it has no entry for memo \(a)")
        #expect(
            refusal(#"{"entries": [{"id": "\#(Self.idA)"}, {"id": "\#(Self.idA.lowercased())"}]}"#, [a: [("deletedAt", .null)]])
                == "it lists memo \(a) 2 times; reckon does not pick one")
        #expect(
            refusal(#"{"entries": [{"id": "\#(Self.idA)"}]}"#, appending: [#"{"id": "\#(Self.idA.lowercased())"}"#])
                == "it already has an entry for memo \(a)")
        #expect(refusal(#"{"entries": []}"#, appending: [#"{"id": "../x"}"#]) == #"an entry to add has no "id" that is a UUID"#)
        #expect(refusal(#"{"entries": []}"#, appending: ["[]"]) == "an entry to add is not one JSON object")
    }

    // MARK: - Random round trip

    /// Random objects in random layouts, random fields set: parsed back,
    /// every key untouched keeps its value and its place, the keys set have
    /// their new values, and new keys follow in the order given.
    @Test func randomEditsKeepEveryUntouchedKeyInOrder() throws {
        var random = TestSeed.generator()
        let seed = TestSeed.value
        let keyPool = ["id", "title", "body", "deletedAt", "é", "a\"b", "tab\there", "line\nbreak", "日本", "x/y", "\\", "emoji 😀", "z"]
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 2 ? 4 : 6), using: &random) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &random))
            case 2: return .number(["0", "-1.50", "1e10", "12345678901234567890"].randomElement(using: &random)!)
            case 3: return .string(keyPool.randomElement(using: &random)! + "\u{1}\u{7f}")
            case 4: return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth + 1) })
            default:
                var fields: [String: JSONValue] = [:]
                for key in keyPool.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)) { fields[key] = value(depth + 1) }
                return .object(fields)
            }
        }
        for round in 0..<300 {
            let keys = Array(keyPool.shuffled(using: &random).prefix(Int.random(in: 0...8, using: &random)))
            let original = keys.map { ($0, value(1)) }
            var writer = JSONWriter(pretty: Bool.random(using: &random))
            writer.beginObject()
            for (key, fieldValue) in original {
                writer.key(key)
                writer.value(fieldValue)
            }
            writer.endObject()
            var text = writer.take()
            if Bool.random(using: &random) { text = Data(String(decoding: text, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8) }
            let changed = keyPool.shuffled(using: &random).prefix(Int.random(in: 0...4, using: &random)).map { ($0, value(1)) }

            let edited = try JSONEdit.setting(changed.map { (key: $0.0, value: $0.1) }, inObject: text)
            let document = try JSONParser.parse(edited, spanDepth: 1)
            let order = document.span!.members.map { $0.key! }
            let added = changed.map(\.0).filter { !keys.contains($0) }
            #expect(order == keys + added, "round \(round), seed \(seed)")
            guard case .object(let fields) = document.value else {
                Issue.record("round \(round): not an object")
                continue
            }
            for (key, fieldValue) in original where !changed.contains(where: { $0.0 == key }) {
                #expect(fields[key] == fieldValue, "round \(round), seed \(seed): \(key) changed")
            }
            for (key, fieldValue) in changed {
                #expect(fields[key] == fieldValue, "round \(round), seed \(seed): \(key) not set")
            }
        }
    }
}
