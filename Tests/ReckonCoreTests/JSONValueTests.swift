import Foundation
import Testing

@testable import ReckonCore

/// JSONEncoder as the oracle for reckon's own JSON writer: the same value
/// must give the same bytes. Numbers go through Double, so the values
/// compared hold only numbers a Double writes back as they are.
extension JSONValue: Encodable {
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let text): try container.encode(Double(text)!)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

@Suite struct JSONValueTests {
    @Test func writesWhatJSONEncoderWrites() throws {
        let values: [JSONValue] = [
            .null, .bool(true), .integer(-3), .number("1.5"), .string("a/b \\ \"q\" \u{1}\n\t é 😀"),
            .array([]), .object([:]), .array([.array([]), .object([:]), .integer(0)]),
            .object([
                "b": .object(["z": .null, "a": .array([.string("x"), .bool(false)])]), "B": .integer(2), "10": .integer(1), "9": .integer(1),
                "é": .string(""), "_": .array([.object(["k\"ey\n": .number("0.25")])])
            ])
        ]
        for value in values {
            #expect(value.jsonData == (try makeJSONEncoder().encode(value)), "\(value)")
        }
    }

    @Test func keepsEveryNumberAsWritten() throws {
        let text = #"""
            {"big": 12345678901234567890, "past53": 9007199254740993, "huge": 1e400, "tiny": -1E-400,
             "kept": [1.10, -0, 2.5e-3, 0], "nested": {"deep": [[{"n": 123456789012345678901234567890123456789012}]]},
             "text": "\u00e9\n\ud83d\ude00", "flags": [true, false, null], "twice": 1, "twice": 2}
            """#
        let object = try #require(JSONValue.exactObject(in: Data(text.utf8)))
        #expect(object["big"] == .number("12345678901234567890"))
        #expect(object["past53"] == .number("9007199254740993"))
        #expect(object["huge"] == .number("1e400"))
        #expect(object["tiny"] == .number("-1E-400"))
        #expect(object["kept"] == .array([.number("1.10"), .number("-0"), .number("2.5e-3"), .number("0")]))
        #expect(object["nested"] == .object(["deep": .array([.array([.object(["n": .number("123456789012345678901234567890123456789012")])])])]))
        #expect(object["text"] == .string("é\n😀"))
        #expect(object["flags"] == .array([.bool(true), .bool(false), .null]))
        #expect(object["twice"] == .integer(1), "the first value; JSONParser reports the repeat")
        #expect(JSONValue.object(object).jsonData.count > 0)
        #expect(String(decoding: JSONValue.object(["n": object["big"]!]).jsonData, as: UTF8.self) == "{\n  \"n\" : 12345678901234567890\n}")
    }

    @Test(arguments: [
        "", "[1]", "\"text\"", "{", "{\"a\": 01}", "{\"a\": 1.}", "{\"a\": +1}", "{\"a\": .5}", "{\"a\": 1e}",
        "{\"a\": tru}", "{\"a\": \"\\x\"}", "{\"a\": [1,]}", "{\"a\": \"\u{1}\"}"
    ])
    func refusesWhatIsNotOneJSONObject(_ text: String) {
        #expect(JSONValue.exactObject(in: Data(text.utf8)) == nil, "\(text)")
    }

    @Test func refusesTooDeepAndBadUTF8AndAcceptsAByteOrderMark() {
        let deep = "{\"a\": " + String(repeating: "[", count: 10) + String(repeating: "]", count: 10) + "}"
        #expect(JSONValue.exactObject(in: Data(deep.utf8), depthLimit: 10) == nil)
        #expect(JSONValue.exactObject(in: Data(deep.utf8), depthLimit: 11) != nil)
        #expect(JSONValue.exactObject(in: Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D])) == nil)
        #expect(JSONValue.exactObject(in: Data([0xEF, 0xBB, 0xBF] + Array("{\"a\": 1}".utf8))) == ["a": .integer(1)])
    }

    @Test func aMemosUnknownKeysKeepTheirDigits() throws {
        let text = #"{"id": "\#(idA)", "modifiedAt": "2026-04-01T00:00:00Z", "seq": 9007199254740993, "far": 1e400, "f": [1.10]}"#
        let memo = try MemoReader.read(Data(text.utf8))
        #expect(memo.otherFields == ["seq": .number("9007199254740993"), "far": .number("1e400"), "f": .array([.number("1.10")])])
        let entry = String(decoding: JSONExport.entry(of: memo), as: UTF8.self)
        #expect(entry.contains("\"seq\" : 9007199254740993,\n"), "\(entry)")
        #expect(entry.contains("\"far\" : 1e400,\n"), "\(entry)")
    }

    @Test func anUnknownKeyThatIsNotUTF8IsFoundWhereItIs() {
        let prefix = Array(#"{"id": "\#(idA)", "modifiedAt": "2026-04-01T00:00:00Z", "odd": ""#.utf8)
        #expect(throws: MemoReader.Failure(message: "bytes that are not UTF-8 at byte \(prefix.count)")) {
            try MemoReader.read(Data(prefix + [0xFF] + Array("\"}".utf8)))
        }
    }
}

@Suite struct JSONWriterTests {
    /// The layout every JSON file reckon writes has, pinned byte for byte.
    @Test func writesTheOneLayout() throws {
        let value: JSONValue = .object(["b": .array([.integer(1), .string("x/\"y\"\n")]), "a": .object([:]), "c": .array([]), "d": .null])
        #expect(
            String(decoding: JSONWriter.data(value), as: UTF8.self) == """
                {
                  "a" : {

                  },
                  "b" : [
                    1,
                    "x/\\"y\\"\\n"
                  ],
                  "c" : [

                  ],
                  "d" : null
                }
                """)
        #expect(String(decoding: JSONWriter.data(value, pretty: false), as: UTF8.self) == #"{"a":{},"b":[1,"x/\"y\"\n"],"c":[],"d":null}"#)
    }

    /// Streamed member by member, taken in pieces, the bytes are the same.
    @Test func streamingGivesTheSameBytes() throws {
        let items: [JSONValue] = [.object(["k": .integer(1)]), .string("é"), .array([.bool(true)])]
        var writer = JSONWriter()
        var streamed = Data()
        writer.beginObject()
        writer.key("items")
        writer.beginArray()
        for item in items {
            var nested = JSONWriter(depth: 2)
            nested.value(item)
            writer.written(nested.take())
            streamed += writer.take()
        }
        writer.endArray()
        writer.endObject()
        streamed += writer.take()
        #expect(streamed == JSONWriter.data(.object(["items": .array(items)])))
    }

    /// A Codable model goes through the same writer, as JSONEncoder would write it.
    @Test func aModelIsWrittenAsTheEncoderWouldWriteIt() throws {
        let entry = HistoryEntry(
            time: Timestamp(iso8601: "2026-04-19T14:32:00Z")!,
            sides: [
                .init(name: "device", label: "this device", counts: MemoCounts(active: 4, archived: 1)),
                .init(name: "drive", label: "Google Drive", counts: nil)
            ],
            differences: 2, exitCode: 1)
        #expect(JSONWriter.data(try JSONValue(encoding: entry)) == (try makeJSONEncoder().encode(entry)))
    }
}
