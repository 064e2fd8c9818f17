import Foundation

/// A parsed JSON value. Memo and index files are read into this first, so a
/// wrong type in one field becomes a problem for that field, and keys reckon
/// does not know are kept as they were.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number as JSON text. Read from a memo's unknown key it is the text
    /// the file holds, so no digit is rounded away (`exactObject(in:)`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses UTF-8 JSON strictly (see `JSONParser`), accepting a leading
    /// byte order mark. A key written twice keeps its first value; ask
    /// `firstRepeatedKey(in:)` (or `JSONParser`) whether one was.
    package static func parse(_ data: Data) throws -> JSONValue {
        try JSONParser.parse(data).value
    }

    /// A whole number.
    package static func integer(_ value: Int) -> JSONValue { .number(String(value)) }

    /// A number's value, rounded to a Double; nil for anything else.
    package var double: Double? {
        if case .number(let text) = self { Double(text) } else { nil }
    }

    /// The name of this value's JSON type, for messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue {
    /// The value as reckon writes JSON (`JSONWriter`'s layout).
    package var jsonData: Data { JSONWriter.data(self) }
}
