import CSimdJSON
import Foundation

/// Reads `index.json` (schema version 1).
package enum IndexReader {
    /// Why a whole index could not be used.
    package struct Failure: Error, Equatable, CustomStringConvertible {
        package var kind: Problem.Kind
        package var message: String
        package var description: String { message }

        package init(kind: Problem.Kind, message: String) {
            self.kind = kind
            self.message = message
        }
    }

    /// Parses an index with reckon's strict JSON parser. A bad entry (a
    /// wrong type, a key written twice in it …) is a problem for that entry
    /// only; the file as a whole fails when it is not strict UTF-8 JSON,
    /// has the wrong shape, writes a top-level key twice, or has a schema
    /// version this reckon does not know.
    package static func read(_ data: Data, path: String = "index.json", depthLimit: Int = 64) throws(Failure) -> MemoIndex {
        guard !data.isEmpty else { throw Failure(kind: .corruptIndex, message: "is empty (0 bytes)") }
        let document: JSONDocument
        do {
            document = try JSONParser.parse(data, depthLimit: depthLimit)
        } catch {
            throw Failure(kind: .corruptIndex, message: error.readerMessage)
        }
        guard case .object(let root) = document.value else {
            throw Failure(kind: .corruptIndex, message: "must be a JSON object, found \(document.value.typeName)")
        }
        // A key repeated inside entries[n] damages that entry; anywhere else, the index.
        var entryRepeats: [Int: RepeatedKey] = [:]
        for repeated in document.repeatedKeys {
            guard repeated.path.count >= 2, repeated.path[0] == .key("entries"), case .index(let position) = repeated.path[1] else {
                throw Failure(kind: .corruptIndex, message: repeated.message())
            }
            if entryRepeats[position] == nil { entryRepeats[position] = repeated }
        }
        guard let versionValue = root["schemaVersion"] else { throw Failure(kind: .corruptIndex, message: "has no 'schemaVersion'") }
        // Judged by its text, so that no rounding turns 0.99999999999999999999
        // into 1 or a version too large for a Double into a damaged index.
        guard case .number(let text) = versionValue, !text.isEmpty, text.allSatisfy(\.isASCIIDigit), text.first != "0" else {
            throw Failure(kind: .corruptIndex, message: "'schemaVersion' must be a whole number from 1, found \(versionValue.typeName)")
        }
        guard text == String(MemoIndex.supportedSchemaVersion) else {
            throw Failure(
                kind: .unsupportedSchema,
                message:
                    "has schemaVersion \(text), newer than the version \(MemoIndex.supportedSchemaVersion) this reckon reads; use a newer reckon (nothing was guessed)"
            )
        }
        guard case .array(let items)? = root["entries"] else {
            throw Failure(kind: .corruptIndex, message: "'entries' must be an array, found \(root["entries"]?.typeName ?? "nothing")")
        }
        var entries: [IndexEntry] = []
        var seen: [MemoID: Int] = [:]
        var problems: [Problem] = []
        for (position, item) in items.enumerated() {
            let place = "entries[\(position)]"
            switch entry(item, repeated: entryRepeats[position]) {
            case .bad(let kind, let id, let message):
                let subject = id.map { "\(place) (id \($0))" } ?? place
                problems.append(Problem(kind, path: path, id: id, "\(subject)\(message)"))
            case .entry(let entry):
                if let first = seen[entry.id] {
                    problems.append(repeated(entry.id, at: position, first: first, path: path))
                    continue
                }
                seen[entry.id] = position
                entries.append(entry)
            }
        }
        return MemoIndex(entries: entries, problems: problems)
    }

    /// One index entry, or why it cannot be used; never fails the whole file.
    enum EntryOutcome {
        case entry(IndexEntry)
        /// The message follows the entry's place ("entries[3]") directly.
        case bad(Problem.Kind, MemoID?, String)
    }

    /// Reads one entry; `repeated` is the first key it writes twice, if any.
    static func entry(_ item: JSONValue, repeated: RepeatedKey?) -> EntryOutcome {
        guard case .object(let object) = item else { return .bad(.badEntry, nil, " must be an object, found \(item.typeName)") }
        let idValue = object["id"]
        if let repeated {
            let id: MemoID? = if case .string(let spelling)? = idValue { MemoID(spelling) } else { nil }
            return .bad(.badEntry, id, ": \(repeated.message(from: 2)); the entry is not counted")
        }
        guard case .string(let spelling)? = idValue else {
            return .bad(.badEntry, nil, ": 'id' \(idValue.map { "must be a string, found \($0.typeName)" } ?? "is missing")")
        }
        guard let id = MemoID(spelling) else { return .bad(.invalidID, nil, ": id \(quoted(spelling)) is not a UUID; the entry is not counted") }
        let fields = FieldReader(fields: object)
        do throws(FieldError) {
            return .entry(
                IndexEntry(
                    id: id, spelling: spelling,
                    modifiedTime: try fields.requiredTimestamp("modifiedTime"),
                    archivedAt: try fields.timestamp("archivedAt"),
                    deletedAt: try fields.timestamp("deletedAt"),
                    changeTag: try fields.string("changeTag")))
        } catch {
            return .bad(.badEntry, id, ": \(error.message); the entry is not counted")
        }
    }

    /// The problem of an entry whose id an earlier entry already has.
    static func repeated(_ id: MemoID, at position: Int, first: Int, path: String = "index.json") -> Problem {
        Problem(.duplicateID, path: path, id: id, "entries[\(position)]: id \(id) appears again (first at entries[\(first)]); counted once")
    }
}

extension IndexReader {
    /// Hands each entry of a clean index.json to `body` in file order, read
    /// with simdjson `batchBytes` of entries at a time, so memory does not
    /// follow the file. False when anything is unusual (a damaged entry, an
    /// unknown key …); the careful reader then names every problem. Repeated
    /// ids are left to the caller.
    static func forEachClean(
        atPath path: String, batchBytes: Int = Int(RECKON_CLEAN_INDEX_BATCH_BYTES),
        _ body: (IndexEntry) throws -> Void
    ) rethrows -> Bool {
        guard let index = reckon_clean_index_open(path, batchBytes) else { return false }
        defer { reckon_clean_index_close(index) }
        func string(_ text: reckon_text) -> String? {
            guard let bytes = text.bytes else { return nil }
            return bytes.contains { $0 < 0x20 } ? "\u{0}" : String(decoding: bytes, as: UTF8.self)
        }
        var raw = reckon_index_entry()
        while true {
            switch reckon_clean_index_next(index, &raw) {
            case 0: return true
            case 1: break
            default: return false
            }
            guard let spelling = raw.id.bytes, let modified = raw.modified_time.date ?? nil,
                let archived = raw.archived_at.date, let deleted = raw.deleted_at.date
            else { return false }
            let tag = string(raw.change_tag)
            guard tag != "\u{0}" else { return false }
            try body(
                IndexEntry(
                    id: MemoID(high: raw.id_high, low: raw.id_low), spelledAs: IDSpelling(spelling), modifiedTime: modified,
                    archivedAt: archived, deletedAt: deleted, changeTag: tag))
        }
    }

    /// A clean index.json read whole with simdjson (see `forEachClean`); nil
    /// when anything is unusual, an id given twice included. For a clean
    /// file it gives the same entries as the careful reader.
    package static func readClean(atPath path: String, batchBytes: Int = Int(RECKON_CLEAN_INDEX_BATCH_BYTES)) -> MemoIndex? {
        var entries: [IndexEntry] = []
        var seen = Set<MemoID>()
        var repeated = false
        let clean = forEachClean(atPath: path, batchBytes: batchBytes) { entry in
            repeated = repeated || !seen.insert(entry.id).inserted
            entries.append(entry)
        }
        return clean && !repeated ? MemoIndex(entries: entries) : nil
    }
}

/// A short, single-line reason from a parsing error (`JSONSyntaxError` says it plainly).
func describe(_ error: any Error) -> String {
    String(describing: error)
}

/// A string for a message, cut short and with control characters made visible.
func quoted(_ text: String, limit: Int = 80) -> String {
    var shown = String(
        text.unicodeScalars.prefix(limit).map { scalar in
            scalar.properties.generalCategory == .control ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined())
    if text.unicodeScalars.count > limit { shown += "…" }
    return "'\(shown)'"
}

extension reckon_text {
    /// The text's bytes; nil for null or absent.
    var bytes: UnsafeRawBufferPointer? { data.map { UnsafeRawBufferPointer(start: $0, count: length) } }

    /// A date field: `.some(nil)` for null or absent, nil when it is not an
    /// ISO 8601 instant with a zone.
    var date: Timestamp?? {
        guard let bytes else { return .some(nil) }
        return Timestamp(iso8601Bytes: bytes).map { .some($0) }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
