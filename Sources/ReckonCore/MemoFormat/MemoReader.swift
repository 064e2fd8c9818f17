import CSimdJSON
import Foundation

/// Reads one memo file, `memos/<uuid>.json`, into typed values: with
/// simdjson when the file is clean, else with reckon's strict JSON parser.
/// Keys reckon does not know are kept as they were, numbers digit for digit.
package enum MemoReader {
    package struct Failure: Error, Equatable, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    static let knownKeys: Set<String> = ["id", "title", "body", "createdAt", "modifiedAt", "archivedAt", "deletedAt", "tags", "pinned", "changeTag"]

    /// A clean file is read with simdjson; anything else the careful way,
    /// which names the first problem. Makes a parser for this one file; a
    /// worker reading many passes its own (`read(_:depthLimit:parser:)`).
    package static func read(_ data: Data, depthLimit: Int = 64) throws(Failure) -> Memo {
        try read(data, depthLimit: depthLimit, parser: MemoParser())
    }

    /// `read(_:depthLimit:)` with the worker's own parser.
    package static func read(_ data: Data, depthLimit: Int = 64, parser: MemoParser) throws(Failure) -> Memo {
        if depthLimit >= 2, let memo = readClean(data, parser: parser) { return memo }
        return try readCarefully(data, depthLimit: depthLimit)
    }

    /// Reads any memo file with reckon's strict JSON parser, naming the
    /// first problem: a file that is not strict UTF-8 JSON, a key written
    /// twice, a wrong shape or type.
    package static func readCarefully(_ data: Data, depthLimit: Int = 64) throws(Failure) -> Memo {
        guard !data.isEmpty else { throw Failure(message: "is empty (0 bytes)") }
        let document: JSONDocument
        do {
            document = try JSONParser.parse(data, depthLimit: depthLimit)
        } catch {
            throw Failure(message: error.readerMessage)
        }
        guard case .object(let object) = document.value else {
            throw Failure(message: "must be a JSON object, found \(document.value.typeName)")
        }
        if let repeated = document.repeatedKeys.first { throw Failure(message: repeated.message()) }
        let fields = FieldReader(fields: object)
        do throws(FieldError) {
            let spelling = try fields.requiredString("id")
            guard let id = MemoID(spelling) else { throw FieldError(message: "id \(quoted(spelling)) is not a UUID") }
            return Memo(
                id: id,
                title: try fields.string("title"),
                body: try fields.string("body"),
                createdAt: try fields.timestamp("createdAt"),
                modifiedAt: try fields.requiredTimestamp("modifiedAt"),
                archivedAt: try fields.timestamp("archivedAt"),
                deletedAt: try fields.timestamp("deletedAt"),
                tags: try fields.strings("tags") ?? [],
                pinned: try fields.bool("pinned"),
                changeTag: try fields.string("changeTag"),
                otherFields: object.filter { !knownKeys.contains($0.key) })
        } catch {
            throw Failure(message: error.message)
        }
    }
}

extension MemoReader {
    /// What the deep check keeps of a memo file, with the id it holds. A
    /// clean file's body is hashed where simdjson left it, never made a string.
    package static func readSummary(_ data: Data, depthLimit: Int = 64) throws(Failure) -> (MemoID, MemoSummary) {
        try readSummary(data, depthLimit: depthLimit, parser: MemoParser())
    }

    /// `readSummary(_:depthLimit:)` with the worker's own parser.
    package static func readSummary(_ data: Data, depthLimit: Int = 64, parser: MemoParser) throws(Failure) -> (MemoID, MemoSummary) {
        let clean =
            depthLimit < 2
            ? nil
            : withCleanFields(data, parser: parser) { fields in
                (
                    fields.id,
                    MemoSummary(
                        title: fields.title, bodySHA256: fields.body.map(SHA256.digest), tags: fields.tags,
                        createdAt: fields.createdAt, modifiedAt: fields.modifiedAt, archivedAt: fields.archivedAt,
                        deletedAt: fields.deletedAt, pinned: fields.pinned, changeTag: fields.changeTag)
                )
            }
        if let clean { return clean }
        let memo = try readCarefully(data, depthLimit: depthLimit)
        return (memo.id, MemoSummary(memo))
    }

    /// Reads a clean memo file with simdjson: nil when anything is unusual
    /// (an unknown or repeated key, a wrong type, a date without a zone,
    /// bytes that are not UTF-8 …). For a clean file it gives what the
    /// careful reader gives.
    package static func readClean(_ data: Data, parser: MemoParser = MemoParser()) -> Memo? {
        withCleanFields(data, parser: parser) { fields in
            Memo(
                id: fields.id, title: fields.title, body: fields.body.map { String(decoding: $0, as: UTF8.self) },
                createdAt: fields.createdAt, modifiedAt: fields.modifiedAt, archivedAt: fields.archivedAt, deletedAt: fields.deletedAt,
                tags: fields.tags, pinned: fields.pinned, changeTag: fields.changeTag)
        }
    }

    /// A clean memo file's fields, the body still as bytes inside the parser.
    struct CleanFields {
        var id: MemoID
        var title: String?
        var body: UnsafeRawBufferPointer?
        var createdAt: Timestamp?
        var modifiedAt: Timestamp
        var archivedAt: Timestamp?
        var deletedAt: Timestamp?
        var tags: [String]
        var pinned: Bool?
        var changeTag: String?
    }

    /// Parses `data` with `parser` and hands its fields to `use` (the body
    /// is valid only inside); nil when the file is not clean.
    private static func withCleanFields<Result>(_ data: Data, parser: MemoParser, _ use: (CleanFields) -> Result) -> Result? {
        data.withUnsafeBytes { bytes -> Result? in
            var raw = reckon_memo_fields()
            guard reckon_memo_parse(parser.handle, bytes.baseAddress, bytes.count, &raw) == 0 else { return nil }
            func string(_ text: reckon_text) -> String? { text.bytes.map { String(decoding: $0, as: UTF8.self) } }
            guard let modified = raw.modified_at.date ?? nil, let created = raw.created_at.date,
                let archived = raw.archived_at.date, let deleted = raw.deleted_at.date
            else { return nil }
            return use(
                CleanFields(
                    id: MemoID(high: raw.id_high, low: raw.id_low), title: string(raw.title), body: raw.body.bytes,
                    createdAt: created, modifiedAt: modified, archivedAt: archived, deletedAt: deleted,
                    tags: (0..<raw.tag_count).map { string(reckon_memo_tag(parser.handle, $0)) ?? "" },
                    pinned: raw.pinned < 0 ? nil : raw.pinned == 1, changeTag: string(raw.change_tag)))
        }
    }
}
