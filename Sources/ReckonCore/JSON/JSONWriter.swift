import Foundation

/// reckon's one JSON writer. Every JSON file reckon writes goes through it,
/// so the layout is decided in one place: JSONEncoder's pretty layout with
/// sorted keys (two spaces per level, `" : "` after a key, an empty
/// container as `[\n\n]`), or its compact one for lines of a log. It
/// writes as it goes, so a file of any size can be streamed: members are
/// added one at a time and `take()` hands over what is written so far.
/// Keys are written in the order given; `value(_:)` sorts an object's keys.
package struct JSONWriter {
    private var bytes: [UInt8] = []
    private let pretty: Bool
    /// How many members each open container has so far, outermost first.
    private var open: [Int] = []
    /// The level the writer starts at, for a value nested in a larger document.
    private let baseDepth: Int
    /// Whether a key was just written, so the next value is its member.
    private var afterKey = false

    /// - Parameters:
    ///   - pretty: JSONEncoder's `.prettyPrinted` layout, else its compact one.
    ///   - depth: how many levels deep the first value stands.
    package init(pretty: Bool = true, depth: Int = 0) {
        self.pretty = pretty
        baseDepth = depth
    }

    /// A whole value written alone.
    package static func data(_ value: JSONValue, pretty: Bool = true) -> Data {
        var writer = JSONWriter(pretty: pretty)
        writer.value(value)
        return writer.take()
    }

    /// What is written so far; the writer goes on from there.
    package mutating func take() -> Data {
        defer { bytes.removeAll(keepingCapacity: true) }
        return Data(bytes)
    }

    package mutating func beginObject() { begin(0x7B) }
    package mutating func endObject() { end(0x7D) }
    package mutating func beginArray() { begin(0x5B) }
    package mutating func endArray() { end(0x5D) }

    /// Starts a member of the open object.
    package mutating func key(_ key: String) {
        member()
        Self.appendQuoted(key, to: &bytes)
        bytes += pretty ? [0x20, 0x3A, 0x20] : [0x3A]
        afterKey = true
    }

    /// Writes a value, an object's keys sorted.
    package mutating func value(_ value: JSONValue) {
        switch value {
        case .null: scalar("null")
        case .bool(let flag): scalar(flag ? "true" : "false")
        case .number(let text): scalar(text)
        case .string(let text): string(text)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let fields):
            beginObject()
            for name in fields.keys.sorted() {
                key(name)
                self.value(fields[name]!)
            }
            endObject()
        }
    }

    /// A string, or null.
    package mutating func string(_ text: String?) {
        guard let text else { return scalar("null") }
        member()
        Self.appendQuoted(text, to: &bytes)
    }

    /// A string (or null) as `string(_:)` writes it, escaped `piece` bytes
    /// of its text at a time: after each piece what is written so far goes
    /// to `out`, so a long text is never held escaped whole.
    package mutating func string(_ text: String?, inPiecesOf piece: Int, to out: (Data) throws -> Void) rethrows {
        guard var text else { return scalar("null") }
        member()
        bytes.append(0x22)
        try text.withUTF8 { utf8 in
            var start = 0
            while start < utf8.count {
                let end = min(start + piece, utf8.count)
                Self.appendEscaped(UnsafeBufferPointer(rebasing: utf8[start..<end]), to: &bytes)
                try out(take())
                start = end
            }
        }
        bytes.append(0x22)
    }

    /// A value already written by a writer made with this one's layout at
    /// the depth this value stands at (work done on another core, say).
    package mutating func written(_ data: Data) {
        member()
        bytes += data
    }

    private mutating func scalar(_ text: String) {
        member()
        bytes += text.utf8
    }

    /// Before a value: a comma and a new line between array members, and
    /// the indent; nothing after a key, which did that already.
    private mutating func member() {
        if afterKey {
            afterKey = false
            return
        }
        guard !open.isEmpty else { return }
        if open[open.count - 1] > 0 { bytes.append(0x2C) }
        open[open.count - 1] += 1
        if pretty {
            bytes.append(0x0A)
            bytes += repeatElement(0x20, count: 2 * (baseDepth + open.count))
        }
    }

    private mutating func begin(_ bracket: UInt8) {
        member()
        bytes.append(bracket)
        open.append(0)
    }

    private mutating func end(_ bracket: UInt8) {
        let members = open.removeLast()
        if pretty {
            bytes += members == 0 ? [0x0A, 0x0A] : [0x0A]
            bytes += repeatElement(0x20, count: 2 * (baseDepth + open.count))
        }
        bytes.append(bracket)
    }

    /// A JSON string as JSONEncoder writes it without escaping slashes: a
    /// quote and a backslash escaped, control characters as `\b \t \n \f \r`
    /// or `\u00xx`, everything else as it is.
    package static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        var text = text
        out.append(0x22)
        text.withUTF8 { appendEscaped($0, to: &out) }
        out.append(0x22)
    }

    /// UTF-8 bytes as they stand between a JSON string's quotes. Only ASCII
    /// bytes are escaped, so a text may be escaped in pieces cut anywhere.
    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
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

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

extension JSONValue {
    /// A `Codable` model as a JSON value, so that it is written by the one
    /// writer: what its `encode(to:)` says, numbers as their text.
    package init(encoding model: some Encodable) throws {
        let box = ValueBox()
        try box.encode(model)
        self = box.resolved
    }
}

/// One value being built by `ValueEncoder`: a scalar, or the members of an
/// object or an array, each a box of its own.
private final class ValueBox {
    var scalar: JSONValue = .null
    var object: [String: ValueBox]?
    var array: [ValueBox]?

    var resolved: JSONValue {
        if let object { return .object(object.mapValues(\.resolved)) }
        if let array { return .array(array.map(\.resolved)) }
        return scalar
    }

    func encode(_ model: some Encodable) throws {
        switch model {
        case let text as String: scalar = .string(text)
        case let flag as Bool: scalar = .bool(flag)
        case let number as any BinaryInteger: scalar = .number(String(describing: number))
        case let number as Double:
            scalar = .number(number == number.rounded() && abs(number) < 0x1p53 ? String(Int64(number)) : String(describing: number))
        default: try model.encode(to: ValueEncoder(box: self, codingPath: []))
        }
    }

    func member(_ key: String) -> ValueBox {
        if object == nil { object = [:] }
        let box = ValueBox()
        object![key] = box
        return box
    }

    func element() -> ValueBox {
        if array == nil { array = [] }
        let box = ValueBox()
        array!.append(box)
        return box
    }
}

private struct ValueEncoder: Encoder {
    let box: ValueBox
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if box.object == nil { box.object = [:] }
        return KeyedEncodingContainer(KeyedValues(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if box.array == nil { box.array = [] }
        return UnkeyedValues(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValue(box: box, codingPath: codingPath) }
}

private struct KeyedValues<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: ValueBox
    var codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { box.member(key.stringValue).scalar = .null }
    mutating func encode(_ value: some Encodable, forKey key: Key) throws { try box.member(key.stringValue).encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(box: box.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ValueEncoder(box: box.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ValueEncoder(box: box.member("super"), codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { ValueEncoder(box: box.member(key.stringValue), codingPath: codingPath + [key]) }
}

private struct UnkeyedValues: UnkeyedEncodingContainer {
    let box: ValueBox
    var codingPath: [any CodingKey]
    var count: Int { box.array?.count ?? 0 }

    mutating func encodeNil() throws { box.element().scalar = .null }
    mutating func encode(_ value: some Encodable) throws { try box.element().encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(box: box.element(), codingPath: codingPath).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueEncoder(box: box.element(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ValueEncoder(box: box.element(), codingPath: codingPath) }
}

private struct SingleValue: SingleValueEncodingContainer {
    let box: ValueBox
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { box.scalar = .null }
    mutating func encode(_ value: some Encodable) throws { try box.encode(value) }
}
