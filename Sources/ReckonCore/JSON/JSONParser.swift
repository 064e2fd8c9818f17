import Foundation

/// Why bytes are not one strict JSON text: what is wrong, in plain words,
/// with the byte offset (from 0, the start of the file) where it is.
package struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    package enum Kind: Sendable {
        /// Not JSON by RFC 8259's grammar (a trailing comma, a cut-off file …).
        case syntax
        /// Not UTF-8: UTF-16 or UTF-32, or bytes that are no UTF-8 sequence.
        case encoding
        /// Arrays and objects nested deeper than the limit.
        case tooDeep
    }

    package var kind: Kind
    package var reason: String
    package var description: String { reason }
}

/// A key written more than once in one object. The parser keeps the first
/// value; the reader decides what the repetition damages.
package struct RepeatedKey: Sendable, Equatable {
    /// One step from the document's root to the object holding the key.
    package enum Step: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    /// Where the object is, from the root (empty for the root object).
    package var path: [Step]
    package var key: String

    /// `the key "title" appears twice`, and where the object is when it is
    /// not the root, the path counted from `depth` steps down.
    package func message(from depth: Int = 0) -> String {
        var text = "the key \"\(Self.shown(key))\" appears twice"
        let place = Self.text(of: path.dropFirst(depth))
        if !place.isEmpty { text += " in '\(place)'" }
        return text
    }

    /// The path of the repeated key itself, as `export.keep` or `remotes[1].path`.
    package var keyPath: String { Self.text(of: path[...] + [.key(key)]) }

    private static func text(of steps: ArraySlice<Step>) -> String {
        var text = ""
        for step in steps {
            switch step {
            case .key(let key): text += (text.isEmpty ? "" : ".") + shown(key)
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// A key with control characters made visible.
    private static func shown(_ key: String) -> String {
        String(
            key.unicodeScalars.map { scalar in
                scalar.properties.generalCategory == .control ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }.joined())
    }
}

/// A JSON text read strictly: its value (a repeated key keeps its first
/// value) and every key written twice in one object, in file order.
package struct JSONDocument: Sendable {
    package var value: JSONValue
    package var repeatedKeys: [RepeatedKey]
    /// Where the root value stands in the text, with its members' places
    /// down to the depth asked for (`spanDepth`); nil when none was asked.
    package var span: JSONSpan?
}

/// Where one value stands in a JSON text, as byte offsets from the start of
/// the text: what an edit needs to replace it and keep every other byte.
package struct JSONSpan: Sendable, Equatable {
    /// The member's key, for a member of an object.
    package var key: String?
    /// Where the member's key starts (its opening quote), for a member of an object.
    package var keyStart: Int?
    /// The value's bytes, from its first to just after its last.
    package var value: Range<Int>
    /// The spans of an array's items or an object's members, in text order,
    /// when the value stands above the depth asked for; else empty.
    package var members: [JSONSpan] = []
}

/// reckon's one JSON reader. It reads RFC 8259 JSON and nothing else: UTF-8
/// only (a leading UTF-8 byte order mark is skipped), every byte validated,
/// no trailing comma, no comment, whitespace only where the grammar allows
/// it, a `\u` surrogate only as half of a pair. Numbers keep the text they
/// were written with. Keys written twice are reported, never resolved.
package enum JSONParser {
    /// Parses `data` as one JSON value, arrays and objects nested at most
    /// `depthLimit` deep. With `spanDepth` above 0 it also records where the
    /// root value stands and, that many levels down, where each member does.
    package static func parse(_ data: Data, depthLimit: Int = 64, spanDepth: Int = 0) throws(JSONSyntaxError) -> JSONDocument {
        if let encoding = otherEncoding(data) {
            throw JSONSyntaxError(kind: .encoding, reason: "the file is \(encoding), not UTF-8")
        }
        let result: Result<JSONDocument, JSONSyntaxError> = data.withUnsafeBytes { bytes in
            var reader = StrictReader(bytes: bytes, depthLimit: depthLimit, spanDepth: spanDepth)
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.at = 3 }
            do throws(JSONSyntaxError) {
                reader.skipSpace()
                let (value, span) = try reader.value()
                reader.skipSpace()
                if reader.at < bytes.count { throw reader.unexpected("after the end of the JSON value") }
                return .success(JSONDocument(value: value, repeatedKeys: reader.repeats, span: spanDepth > 0 ? span : nil))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// "UTF-16" or "UTF-32" when the text is in one of them (by its byte
    /// order mark, or by the zero bytes RFC 4627 tells them by), else nil.
    static func otherEncoding(_ data: Data) -> String? {
        let head = Array(data.prefix(4)) + [UInt8](repeating: 0xAA, count: max(0, 4 - data.count))
        switch (head[0], head[1], head[2], head[3]) {
        case (0x00, 0x00, 0xFE, 0xFF), (0xFF, 0xFE, 0x00, 0x00), (0x00, 0x00, 0x00, 1...), (1..., 0x00, 0x00, 0x00): return "UTF-32"
        case (0xFE, 0xFF, _, _), (0xFF, 0xFE, _, _), (0x00, 1..., _, _), (1..., 0x00, _, _): return data.count >= 2 ? "UTF-16" : nil
        default: return nil
        }
    }
}

extension JSONValue {
    /// The members of a JSON object read strictly (`JSONParser`), every
    /// number's text kept as written; nil when `data` is not one JSON object
    /// (after an optional byte order mark) or nests deeper than
    /// `depthLimit`. A key written twice keeps its first value.
    package static func exactObject(in data: Data, depthLimit: Int = 64) -> [String: JSONValue]? {
        guard case .object(let fields)? = try? JSONParser.parse(data, depthLimit: depthLimit).value else { return nil }
        return fields
    }

    /// Where a JSON object first writes one key twice in one object, as a
    /// path such as `export.keep` or `remotes[1].path`; nil when no key is
    /// repeated or `data` is not what `exactObject(in:)` reads.
    package static func firstRepeatedKey(in data: Data) -> String? {
        guard let document = try? JSONParser.parse(data), case .object = document.value else { return nil }
        return document.repeatedKeys.first?.keyPath
    }
}

/// The parser's state over one text's bytes.
private struct StrictReader {
    let bytes: UnsafeRawBufferPointer
    let depthLimit: Int
    /// How many levels of containers record their members' spans.
    let spanDepth: Int
    var at = 0
    var path: [RepeatedKey.Step] = []
    var repeats: [RepeatedKey] = []

    init(bytes: UnsafeRawBufferPointer, depthLimit: Int, spanDepth: Int) {
        self.bytes = bytes
        self.depthLimit = depthLimit
        self.spanDepth = spanDepth
    }

    mutating func skipSpace() {
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x09, 0x0A, 0x0D: at += 1
            default: return
            }
        }
    }

    /// An error for the byte at `at` (or the end of the text).
    func unexpected(_ context: String) -> JSONSyntaxError {
        guard at < bytes.count else { return JSONSyntaxError(kind: .syntax, reason: "the text ends before the JSON does") }
        let byte = bytes[at]
        if byte >= 0x80 && utf8Length(at) == nil { return notUTF8(at) }
        let shown: String
        switch byte {
        case 0x21...0x7E: shown = "'\(Character(Unicode.Scalar(byte)))'"
        case 0x80...: shown = "a non-ASCII character"
        default: shown = String(format: "the control character U+%04X", byte)
        }
        return JSONSyntaxError(kind: .syntax, reason: "unexpected \(shown) \(context) at byte \(at)")
    }

    func notUTF8(_ offset: Int) -> JSONSyntaxError {
        JSONSyntaxError(kind: .encoding, reason: "bytes that are not UTF-8 at byte \(offset)")
    }

    /// An array or object being read: its items or fields so far, and the
    /// offset of the comma read last; where it starts, where its item being
    /// read starts (an object member's key), and its members' spans when recorded.
    struct Open {
        var isObject: Bool
        var start: Int
        var items: [JSONValue] = []
        var fields: [String: JSONValue] = [:]
        var comma: Int?
        var itemStart = 0
        var spans: [JSONSpan] = []
    }

    /// One value and everything inside it, read without recursion (a file
    /// may nest as deep as the limit allows, up to 10,000 levels), so no
    /// thread's stack bounds what can be read.
    mutating func value() throws(JSONSyntaxError) -> (JSONValue, JSONSpan) {
        var open: [Open] = []
        while true {
            // A value starts here: a scalar is read whole; an array or
            // object is opened, and its first item or field read next.
            guard at < bytes.count else { throw unexpected("") }
            var value: JSONValue
            let start = at
            var members: [JSONSpan] = []
            switch bytes[at] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = bytes[at] == UInt8(ascii: "{")
                guard open.count < depthLimit else {
                    throw JSONSyntaxError(kind: .tooDeep, reason: "nests JSON deeper than \(depthLimit) levels")
                }
                at += 1
                skipSpace()
                if at < bytes.count && bytes[at] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    at += 1
                    value = isObject ? .object([:]) : .array([])
                } else {
                    open.append(Open(isObject: isObject, start: start))
                    try startItem(of: &open[open.count - 1])
                    continue
                }
            case UInt8(ascii: "\""): value = .string(try string())
            case UInt8(ascii: "t"): value = try literal("true", .bool(true))
            case UInt8(ascii: "f"): value = try literal("false", .bool(false))
            case UInt8(ascii: "n"): value = try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = try number()
            default: throw unexpected("where a value should be")
            }
            // The value is whole: it goes into the container around it,
            // which then either goes on after a comma or closes.
            var valueStart = start
            while var container = open.popLast() {
                let step = path.removeLast()
                if open.count < spanDepth {
                    let key: String? = if case .key(let key) = step { key } else { nil }
                    container.spans.append(
                        JSONSpan(
                            key: key, keyStart: key == nil ? nil : container.itemStart,
                            value: valueStart..<at, members: members))
                }
                if container.isObject, case .key(let key) = step {
                    if container.fields[key] == nil {
                        container.fields[key] = value
                    } else {
                        repeats.append(RepeatedKey(path: path, key: key))
                    }
                } else {
                    container.items.append(value)
                }
                skipSpace()
                guard at < bytes.count else { throw unexpected("") }
                let close = container.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if bytes[at] == UInt8(ascii: ",") {
                    container.comma = at
                    at += 1
                    skipSpace()
                    try startItem(of: &container)
                    open.append(container)
                    break
                }
                guard bytes[at] == close else { throw unexpected(container.isObject ? "where ',' or '}' should be" : "where ',' or ']' should be") }
                at += 1
                value = container.isObject ? .object(container.fields) : .array(container.items)
                valueStart = container.start
                members = container.spans
            }
            if open.isEmpty { return (value, JSONSpan(value: valueStart..<at, members: members)) }
        }
    }

    /// Reads up to where the next item of `container` starts: for an object
    /// its key and ':', onto `path`; for an array, its place onto `path`.
    /// The text is at a non-space byte after '{', '[' or ','.
    mutating func startItem(of container: inout Open) throws(JSONSyntaxError) {
        container.itemStart = at
        let close = container.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
        if let comma = container.comma, at < bytes.count, bytes[at] == close {
            throw JSONSyntaxError(kind: .syntax, reason: "a comma before '\(Character(Unicode.Scalar(close)))' at byte \(comma)")
        }
        guard container.isObject else {
            path.append(.index(container.items.count))
            return
        }
        guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw unexpected("where a key in quotes should be") }
        let key = try string()
        skipSpace()
        guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw unexpected("where ':' should be") }
        at += 1
        skipSpace()
        path.append(.key(key))
    }

    mutating func literal(_ word: StaticString, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard at + count <= bytes.count,
            UnsafeRawBufferPointer(rebasing: bytes[at..<at + count]).elementsEqual(UnsafeRawBufferPointer(start: word.utf8Start, count: count))
        else { throw unexpected("where a value should be") }
        at += count
        return value
    }

    /// RFC 8259's number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept as written.
    mutating func number() throws(JSONSyntaxError) -> JSONValue {
        let start = at
        if bytes[at] == UInt8(ascii: "-") { at += 1 }
        if at < bytes.count && bytes[at] == UInt8(ascii: "0") { at += 1 } else { try digits() }
        if at < bytes.count && bytes[at] == UInt8(ascii: ".") {
            at += 1
            try digits()
        }
        if at < bytes.count && (bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E")) {
            at += 1
            if at < bytes.count && (bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-")) { at += 1 }
            try digits()
        }
        return .number(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self))
    }

    /// One or more digits of a number.
    mutating func digits() throws(JSONSyntaxError) {
        func isDigit() -> Bool { at < bytes.count && bytes[at] >= 0x30 && bytes[at] <= 0x39 }
        guard isDigit() else { throw unexpected("in a number") }
        while isDigit() { at += 1 }
    }

    func utf8Length(_ position: Int) -> Int? { utf8SequenceLength(bytes, at: position) }

    /// A string from its opening quote: UTF-8 checked, escapes undone.
    mutating func string() throws(JSONSyntaxError) -> String {
        at += 1
        let start = at
        var unescaped: [UInt8]?
        var run = start
        while at < bytes.count {
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""):
                let tail = UnsafeRawBufferPointer(rebasing: bytes[run..<at])
                at += 1
                guard var text = unescaped else { return String(decoding: tail, as: UTF8.self) }
                text.append(contentsOf: tail)
                return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                if unescaped == nil { unescaped = [] }
                unescaped!.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[run..<at]))
                try escape(into: &unescaped!)
                run = at
            case 0x00..<0x20:
                throw JSONSyntaxError(
                    kind: .syntax, reason: String(format: "a control character (U+%04X) inside a string at byte %d; it must be escaped", byte, at))
            case 0x80...:
                guard let length = utf8Length(at) else { throw notUTF8(at) }
                at += length
            default:
                at += 1
            }
        }
        throw JSONSyntaxError(kind: .syntax, reason: "the text ends inside a string")
    }

    /// One escape from its backslash, appended as UTF-8.
    mutating func escape(into out: inout [UInt8]) throws(JSONSyntaxError) {
        let start = at
        at += 1
        guard at < bytes.count else { throw JSONSyntaxError(kind: .syntax, reason: "the text ends inside a string") }
        let byte = bytes[at]
        at += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4(escapeAt: start)
            if (0xD800...0xDBFF).contains(scalar) {
                guard at + 1 < bytes.count, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else { throw halfPair(start) }
                let low = try hex4(escapeAt: at, skip: 2)
                guard (0xDC00...0xDFFF).contains(low) else { throw halfPair(start) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw halfPair(start)
            }
            out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            at = start
            throw JSONSyntaxError(kind: .syntax, reason: "an escape that JSON does not have at byte \(start)")
        }
    }

    func halfPair(_ offset: Int) -> JSONSyntaxError {
        JSONSyntaxError(kind: .syntax, reason: "a \\u escape that is half of a surrogate pair at byte \(offset)")
    }

    /// Four hex digits at `at` (after skipping `skip` bytes), as a number.
    mutating func hex4(escapeAt start: Int, skip: Int = 0) throws(JSONSyntaxError) -> UInt32 {
        at += skip
        guard at + 4 <= bytes.count else { throw JSONSyntaxError(kind: .syntax, reason: "a \\u escape without four hex digits at byte \(start)") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[at]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONSyntaxError(kind: .syntax, reason: "a \\u escape without four hex digits at byte \(start)")
            }
            value = value << 4 | UInt32(digit)
            at += 1
        }
        return value
    }
}

/// How many bytes the UTF-8 sequence at `position` takes; nil when it is not
/// one (an overlong form, a surrogate, past U+10FFFF, cut short). The one
/// UTF-8 check: the strict parser and the display of file names use it.
package func utf8SequenceLength(_ bytes: UnsafeRawBufferPointer, at position: Int) -> Int? {
    let lead = bytes[position]
    func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
        position + offset < bytes.count && range.contains(bytes[position + offset])
    }
    switch lead {
    case 0x00...0x7F: return 1
    case 0xC2...0xDF: return continuation(1) ? 2 : nil
    case 0xE0: return continuation(1, 0xA0...0xBF) && continuation(2) ? 3 : nil
    case 0xE1...0xEC, 0xEE...0xEF: return continuation(1) && continuation(2) ? 3 : nil
    case 0xED: return continuation(1, 0x80...0x9F) && continuation(2) ? 3 : nil
    case 0xF0: return continuation(1, 0x90...0xBF) && continuation(2) && continuation(3) ? 4 : nil
    case 0xF1...0xF3: return continuation(1) && continuation(2) && continuation(3) ? 4 : nil
    case 0xF4: return continuation(1, 0x80...0x8F) && continuation(2) && continuation(3) ? 4 : nil
    default: return nil
    }
}
