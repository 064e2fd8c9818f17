import CSimdJSON
import Foundation

/// A parsed JSON value. Memo and index files are read into this first, so a
/// wrong type in one field becomes a problem for that field, and keys reckon
/// does not know are kept as they were.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number as JSON text. Read from a memo's unknown key it is the text
    /// the file holds, so no digit is rounded away (`exactObject(in:)`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses UTF-8 JSON, accepting a leading byte order mark.
    public static func parse(_ data: Data) throws -> JSONValue {
        try decodeJSON(JSONValue.self, from: data)
    }

    /// A whole number.
    public static func integer(_ value: Int) -> JSONValue { .number(String(value)) }

    /// A number's value, rounded to a Double; nil for anything else.
    public var double: Double? {
        if case .number(let text) = self { Double(text) } else { nil }
    }

    /// The name of this value's JSON type, for messages.
    public var typeName: String {
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

extension JSONValue: Decodable {
    /// Decodes through Foundation, which rounds a number to a Double; memo
    /// files' unknown keys are read again with `exactObject(in:)`.
    public init(from decoder: Decoder) throws {
        if var items = try? decoder.unkeyedContainer() {
            var array: [JSONValue] = []
            while !items.isAtEnd { array.append(try items.decode(JSONValue.self)) }
            self = .array(array)
        } else if let fields = try? decoder.container(keyedBy: AnyKey.self) {
            var object: [String: JSONValue] = [:]
            for key in fields.allKeys { object[key.stringValue] = try fields.decode(JSONValue.self, forKey: key) }
            self = .object(object)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value == value.rounded() && abs(value) < 0x1p53 ? String(Int64(value)) : "\(value)")
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                        debugDescription: "a value that is not valid JSON, such as text that is not UTF-8"))
            }
        }
    }

}

extension JSONValue {
    /// The value as reckon writes JSON (`JSONWriter`'s layout).
    public var jsonData: Data { JSONWriter.data(self) }

    /// The members of a JSON object read with every number's text kept as
    /// written; nil when `data` is not one JSON object (after an optional
    /// byte order mark) or nests deeper than `depthLimit`. A key written
    /// twice keeps its first value, as Foundation's decoder does.
    public static func exactObject(in data: Data, depthLimit: Int = 64) -> [String: JSONValue]? {
        guard case .object(let fields)? = readExactly(data, depthLimit: depthLimit)?.value else { return nil }
        return fields
    }

    /// Where a JSON object first writes one key twice in one object, as a
    /// path such as `export.keep` or `remotes[1].path`; nil when no key is
    /// repeated or `data` is not what `exactObject(in:)` reads.
    public static func firstRepeatedKey(in data: Data) -> String? {
        readExactly(data, depthLimit: 64)?.repeatedKey
    }

    /// Builds the value from the tokens simdjson's walk recorded, noting the
    /// first repeated key.
    private static func readExactly(_ data: Data, depthLimit: Int) -> (value: JSONValue, repeatedKey: String?)? {
        let bytes = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        let count = bytes.withUnsafeBytes { reckon_json_walk_object($0.baseAddress, $0.count, depthLimit) }
        guard count > 0 else { return nil }
        var position = 0
        var repeatedKey: String?
        func text(_ token: reckon_json_token) -> String {
            String(decoding: UnsafeRawBufferPointer(start: token.text.data, count: token.text.length), as: UTF8.self)
        }
        func value(at path: String) -> JSONValue {
            let token = reckon_json_token_at(position)
            position += 1
            switch token.kind {
            case RECKON_JSON_NULL: return .null
            case RECKON_JSON_FALSE: return .bool(false)
            case RECKON_JSON_TRUE: return .bool(true)
            case RECKON_JSON_NUMBER: return .number(text(token))
            case RECKON_JSON_STRING: return .string(text(token))
            case RECKON_JSON_ARRAY_START:
                var items: [JSONValue] = []
                while reckon_json_token_at(position).kind != RECKON_JSON_ARRAY_END { items.append(value(at: "\(path)[\(items.count)]")) }
                position += 1
                return .array(items)
            default:
                var fields: [String: JSONValue] = [:]
                while reckon_json_token_at(position).kind == RECKON_JSON_KEY {
                    let key = text(reckon_json_token_at(position))
                    position += 1
                    let keyPath = path.isEmpty ? key : "\(path).\(key)"
                    let member = value(at: keyPath)
                    if fields[key] == nil { fields[key] = member } else if repeatedKey == nil { repeatedKey = keyPath }
                }
                position += 1
                return .object(fields)
            }
        }
        return (value(at: ""), repeatedKey)
    }
}

/// Decodes UTF-8 JSON, accepting a leading byte order mark.
func decodeJSON<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    let bytes = data.starts(with: [0xEF, 0xBB, 0xBF]) ? Data(data.dropFirst(3)) : data
    return try JSONDecoder().decode(type, from: bytes)
}

/// Whether JSON text nests arrays and objects deeper than `limit`, found
/// by one pass over the bytes before any parser recurses into it.
public func jsonNestsDeeper(_ data: Data, than limit: Int) -> Bool {
    data.withUnsafeBytes { bytes in
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return true }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return false
    }
}

/// A coding key for any string, for reading objects whose keys are data.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
