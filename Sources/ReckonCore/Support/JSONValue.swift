import Foundation

/// A parsed JSON value. Memo and index files are read into this first, so a
/// wrong type in one field becomes a problem for that field, and keys reckon
/// does not know are kept as they were.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses UTF-8 JSON, accepting a leading byte order mark.
    public static func parse(_ data: Data) throws -> JSONValue {
        try decodeJSON(JSONValue.self, from: data)
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

extension JSONValue: Codable {
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
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                        debugDescription: "a value that is not valid JSON, such as text that is not UTF-8"))
            }
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
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

/// The one JSON encoder configuration reckon writes with: sorted keys, pretty,
/// slashes left alone, so the same value always gives the same bytes.
public func makeJSONEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return encoder
}
