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

    /// Parses UTF-8 JSON strictly (see `JSONParser`), accepting a leading
    /// byte order mark. A key written twice keeps its first value; ask
    /// `firstRepeatedKey(in:)` (or `JSONParser`) whether one was.
    public static func parse(_ data: Data) throws -> JSONValue {
        try JSONParser.parse(data).value
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

extension JSONValue {
    /// The value as reckon writes JSON, byte for byte what `makeJSONEncoder()`
    /// writes: keys sorted, two spaces per level, `" : "` after a key. A
    /// number is written as its text, which JSONEncoder cannot do.
    public var jsonData: Data {
        var out: [UInt8] = []
        append(to: &out, indent: 0)
        return Data(out)
    }

    func append(to out: inout [UInt8], indent: Int) {
        func container(_ open: UInt8, _ close: UInt8, count: Int, item: (Int, inout [UInt8]) -> Void) {
            out += [open, 0x0A]
            if count == 0 { out.append(0x0A) }
            for position in 0..<count {
                out += repeatElement(0x20, count: indent + 2)
                item(position, &out)
                out += position == count - 1 ? [0x0A] : [0x2C, 0x0A]
            }
            out += repeatElement(0x20, count: indent)
            out.append(close)
        }
        switch self {
        case .null: out += "null".utf8
        case .bool(let value): out += (value ? "true" : "false").utf8
        case .number(let text): out += text.utf8
        case .string(let text): Self.appendQuoted(text, to: &out)
        case .array(let items):
            container(0x5B, 0x5D, count: items.count) { position, out in items[position].append(to: &out, indent: indent + 2) }
        case .object(let fields):
            let keys = fields.keys.sorted()
            container(0x7B, 0x7D, count: keys.count) { position, out in
                Self.appendQuoted(keys[position], to: &out)
                out += " : ".utf8
                fields[keys[position]]!.append(to: &out, indent: indent + 2)
            }
        }
    }

    /// A JSON string as JSONEncoder writes it without escaping slashes: a
    /// quote and a backslash escaped, control characters as `\b \t \n \f \r`
    /// or `\u00xx`, everything else as it is.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        var text = text
        out.append(0x22)
        text.withUTF8 { bytes in
            var run = 0
            for (position, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<position]))
                run = position + 1
                switch byte {
                case 0x08: out += [0x5C, 0x62]
                case 0x09: out += [0x5C, 0x74]
                case 0x0A: out += [0x5C, 0x6E]
                case 0x0C: out += [0x5C, 0x66]
                case 0x0D: out += [0x5C, 0x72]
                case 0x22, 0x5C: out += [0x5C, byte]
                default: out += [0x5C, 0x75, 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        out.append(0x22)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

/// The one JSON encoder configuration reckon writes with: sorted keys, pretty,
/// slashes left alone, so the same value always gives the same bytes.
public func makeJSONEncoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return encoder
}
