import Foundation

/// Edits JSON text by replacing only the bytes of the values it changes, so
/// that every other byte — unknown keys, their order, the spacing, the line
/// breaks — stays as the file had it. Where the text stands is learnt from
/// `JSONParser`'s spans; new values are written by `JSONWriter`.
package enum JSONEdit {
    /// Why a text cannot be edited, in words that follow "cannot edit <file>: ".
    package struct Failure: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// A JSON object's text with top-level `fields` set: an existing key's
    /// value bytes replaced by the new value's JSON text, a missing key added
    /// at the end of the object (matching the object's indentation style if
    /// it is one key per line); every other byte kept. Throws when `data` is
    /// not one JSON object.
    package static func setting(_ fields: [(key: String, value: JSONValue)], inObject data: Data) throws(Failure) -> Data {
        let document = try parsed(data, spanDepth: 1)
        guard case .object = document.value, let span = document.span else {
            throw Failure(description: "it is \(document.value.typeName), not one JSON object")
        }
        try checkOnce(fields.map(\.key), repeatedIn: document.repeatedKeys.filter { $0.path.isEmpty }.map(\.key), where: "the object")
        let bytes = [UInt8](data)
        return splice(bytes, try setting(fields, in: span, of: bytes, depth: 1))
    }

    /// index.json's text with, for each id in `changes`, that entry's fields
    /// set as `setting` does (ids compared as MemoIDs, case-insensitively),
    /// and `appending` (each one entry object's JSON text) added after the
    /// last entry, in order. Every other byte, entry and key stays as it was.
    /// Throws when `entries` is missing or not an array, or when an id to
    /// change is not there.
    package static func index(
        _ data: Data, changing changes: [MemoID: [(key: String, value: JSONValue)]],
        appending: [Data]
    ) throws(Failure) -> Data {
        let document = try parsed(data, spanDepth: 3)
        guard case .object(let root) = document.value, let rootSpan = document.span else {
            throw Failure(description: "it is \(document.value.typeName), not one JSON object")
        }
        guard case .array(let items)? = root["entries"] else {
            throw Failure(description: root["entries"].map { "its \"entries\" is \($0.typeName), not an array" } ?? "it has no \"entries\"")
        }
        if document.repeatedKeys.contains(where: { $0.path.isEmpty && $0.key == "entries" }) {
            throw Failure(description: "the key \"entries\" appears twice; reckon does not pick one")
        }
        let entriesSpan = rootSpan.members.first { $0.key == "entries" }!

        // Each entry's id, by its place in the array.
        var places: [MemoID: [Int]] = [:]
        for (place, item) in items.enumerated() {
            if case .object(let fields) = item, case .string(let text)? = fields["id"], let id = MemoID(text) {
                places[id, default: []].append(place)
            }
        }
        let bytes = [UInt8](data)
        var edits: [Edit] = []
        for (id, fields) in changes.sorted(by: { $0.key < $1.key }) {
            guard let found = places[id] else { throw Failure(description: "it has no entry for memo \(id)") }
            guard found.count == 1 else { throw Failure(description: "it lists memo \(id) \(found.count) times; reckon does not pick one") }
            let entry = entriesSpan.members[found[0]]
            let repeated = document.repeatedKeys.filter { $0.path == [.key("entries"), .index(found[0])] }.map(\.key)
            try checkOnce(fields.map(\.key), repeatedIn: repeated, where: "the entry of memo \(id)")
            edits += try setting(fields, in: entry, of: bytes, depth: 3)
        }
        var added = Set(places.keys)
        for text in appending {
            guard case .object(let fields)? = try? JSONParser.parse(text).value else {
                throw Failure(description: "an entry to add is not one JSON object")
            }
            guard case .string(let spelled)? = fields["id"], let id = MemoID(spelled) else {
                throw Failure(description: "an entry to add has no \"id\" that is a UUID")
            }
            guard added.insert(id).inserted else { throw Failure(description: "it already has an entry for memo \(id)") }
        }
        if !appending.isEmpty { edits.append(appendingEdit(appending, to: entriesSpan, in: bytes)) }
        return splice(bytes, edits)
    }

    // MARK: - Edits

    /// Bytes to put in place of a range of the text (an empty range inserts).
    private struct Edit {
        var range: Range<Int>
        var bytes: [UInt8]
    }

    private static func parsed(_ data: Data, spanDepth: Int) throws(Failure) -> JSONDocument {
        do {
            return try JSONParser.parse(data, depthLimit: 10_000, spanDepth: spanDepth)
        } catch {
            throw Failure(description: "it is not JSON: \(error.reason)")
        }
    }

    /// Refuses a key set twice, or set where the text writes it twice.
    private static func checkOnce(_ keys: [String], repeatedIn repeated: [String], where place: String) throws(Failure) {
        var seen = Set<String>()
        for key in keys {
            guard seen.insert(key).inserted else { throw Failure(description: "the key \"\(key)\" is set twice in one edit") }
            if repeated.contains(key) { throw Failure(description: "the key \"\(key)\" appears twice in \(place); reckon does not pick one") }
        }
    }

    /// The edits that set `fields` in the object at `span`, whose members
    /// stand `depth` levels deep.
    private static func setting(
        _ fields: [(key: String, value: JSONValue)], in span: JSONSpan, of bytes: [UInt8],
        depth: Int
    ) throws(Failure) -> [Edit] {
        // Members on lines of their own (or the object on several lines when empty) get JSONWriter's pretty layout.
        let spacing = span.members.last.map { memberSpacing($0, in: bytes, object: span) } ?? []
        let pretty = span.members.isEmpty ? bytes[span.value].contains(0x0A) : spacing.contains(0x0A)
        var edits: [Edit] = []
        var missing: [(key: String, value: JSONValue)] = []
        for field in fields {
            if let member = span.members.first(where: { $0.key == field.key }) {
                edits.append(Edit(range: member.value, bytes: written(field.value, pretty: pretty, depth: depth, like: bytes)))
            } else {
                missing.append(field)
            }
        }
        guard !missing.isEmpty else { return edits }
        guard let last = span.members.last else {
            // An empty object: written whole, in the file's layout.
            var writer = JSONWriter(pretty: pretty, depth: depth - 1)
            writer.beginObject()
            for field in missing {
                writer.key(field.key)
                writer.value(field.value)
            }
            writer.endObject()
            return edits + [Edit(range: span.value, bytes: lineBreaks([UInt8](writer.take()), like: bytes))]
        }
        // After the last member: a comma, the spacing before its key, and its key's colon and spacing.
        let colon = Array(bytes[keyEnd(before: last.value.lowerBound, in: bytes)..<last.value.lowerBound])
        var text: [UInt8] = []
        for field in missing {
            text.append(UInt8(ascii: ","))
            text += spacing
            JSONWriter.appendQuoted(field.key, to: &text)
            text += colon
            text += written(field.value, pretty: pretty, depth: depth, like: bytes)
        }
        return edits + [Edit(range: last.value.upperBound..<last.value.upperBound, bytes: text)]
    }

    /// The bytes between a member's comma (or the object's opening brace)
    /// and its key: its line break and indent, or the spacing on one line.
    private static func memberSpacing(_ member: JSONSpan, in bytes: [UInt8], object: JSONSpan) -> [UInt8] {
        let start = member.keyStart ?? member.value.lowerBound
        var at = start
        while at > object.value.lowerBound + 1, isSpace(bytes[at - 1]) { at -= 1 }
        return Array(bytes[at..<start])
    }

    /// Where the key before a value ends: back over the spacing and the colon.
    private static func keyEnd(before value: Int, in bytes: [UInt8]) -> Int {
        var at = value
        while at > 0, isSpace(bytes[at - 1]) || bytes[at - 1] == UInt8(ascii: ":") { at -= 1 }
        return at
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// A value's JSON text as it stands `depth` levels deep in `bytes`.
    private static func written(_ value: JSONValue, pretty: Bool, depth: Int, like bytes: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty, depth: depth)
        writer.value(value)
        return lineBreaks([UInt8](writer.take()), like: bytes)
    }

    /// The edit that adds `entries` (each an object's text) after the last
    /// item of the array at `span`: each on a line of its own, indented as
    /// the items are (its own lines indented to match), when the items are
    /// one per line; else after a comma and the items' spacing.
    private static func appendingEdit(_ entries: [Data], to span: JSONSpan, in bytes: [UInt8]) -> Edit {
        var spacing: [UInt8]
        let closing: [UInt8]
        if let last = span.members.last {
            spacing = memberSpacing(last, in: bytes, object: span)
            closing = []
        } else {
            // No entry to copy: one level further in than the "entries" key when the file is on several lines.
            var at = span.keyStart!
            while at > 0, bytes[at - 1] == 0x20 || bytes[at - 1] == 0x09 { at -= 1 }
            let indent = Array(bytes[at..<span.keyStart!])
            let lineBreak: [UInt8] = at > 1 && bytes[at - 2] == 0x0D ? [0x0D, 0x0A] : [0x0A]
            let onLines = at > 0 && bytes[at - 1] == 0x0A
            spacing = onLines ? lineBreak + indent + (indent.isEmpty ? [0x20, 0x20] : indent) : []
            closing = onLines ? lineBreak + indent : []
        }
        let lineBreak = spacing.firstIndex(of: 0x0A).map { Array(spacing[...$0]) }
        let indent = lineBreak.map { Array(spacing[$0.count...]) } ?? []
        var text: [UInt8] = []
        for (place, entry) in entries.enumerated() {
            if place > 0 || !span.members.isEmpty { text.append(UInt8(ascii: ",")) }
            text += spacing
            // The entry's own text without the spacing around it.
            let bytes = [UInt8](entry)
            let first = bytes.firstIndex { !isSpace($0) } ?? 0
            let last = bytes.lastIndex { !isSpace($0) } ?? -1
            for byte in bytes[first..<last + 1] {
                if byte == 0x0A, let lineBreak {
                    if text.last == 0x0D { text.removeLast() }
                    text += lineBreak + indent
                } else {
                    text.append(byte)
                }
            }
        }
        if span.members.isEmpty {
            // Between the brackets: the new entries alone, in place of the spacing there was.
            return Edit(range: span.value.lowerBound + 1..<span.value.upperBound - 1, bytes: text + closing)
        }
        let end = span.members.last!.value.upperBound
        return Edit(range: end..<end, bytes: text)
    }

    /// JSONWriter's line breaks as the text writes its own (CRLF or LF).
    private static func lineBreaks(_ written: [UInt8], like bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.firstIndex(of: 0x0A), first > 0, bytes[first - 1] == 0x0D else { return written }
        return written.flatMap { $0 == 0x0A ? [0x0D, 0x0A] : [$0] }
    }

    /// The text with each edit made; edits never overlap.
    private static func splice(_ bytes: [UInt8], _ edits: [Edit]) -> Data {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + edits.reduce(0) { $0 + $1.bytes.count })
        var at = 0
        for edit in edits.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            result += bytes[at..<edit.range.lowerBound]
            result += edit.bytes
            at = edit.range.upperBound
        }
        result += bytes[at...]
        return Data(result)
    }
}
