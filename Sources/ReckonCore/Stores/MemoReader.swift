import CSimdJSON
import Foundation

/// Reads one memo file, `memos/<uuid>.json`, decoding its fields straight
/// into typed values; keys reckon does not know are kept as they were.
public enum MemoReader {
    public struct Failure: Error, Equatable {
        public var message: String
    }

    static let knownKeys: Set<String> = ["id", "title", "body", "createdAt", "modifiedAt", "archivedAt", "deletedAt", "tags", "pinned", "changeTag"]

    /// A clean file is read with simdjson; anything else the careful way,
    /// which names the first problem.
    public static func read(_ data: Data, depthLimit: Int = 64) throws(Failure) -> Memo {
        if let memo = readClean(data) { return memo }
        return try readCarefully(data, depthLimit: depthLimit)
    }

    /// Reads any memo file with Foundation's decoder, naming the first problem.
    static func readCarefully(_ data: Data, depthLimit: Int = 64) throws(Failure) -> Memo {
        guard !data.isEmpty else { throw Failure(message: "is empty (0 bytes)") }
        guard !jsonNestsDeeper(data, than: depthLimit) else { throw Failure(message: "nests JSON deeper than \(depthLimit) levels") }
        var file: MemoFile
        do {
            file = try decodeJSON(MemoFile.self, from: data)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(message: "not valid JSON (\(describe(error)))")
        }
        guard !file.otherKeys.isEmpty else { return file.memo }
        if let exact = JSONValue.exactObject(in: data, depthLimit: depthLimit) {
            file.memo.otherFields = exact.filter { !knownKeys.contains($0.key) }
            return file.memo
        }
        // Foundation also reads what the exact reader refuses (a trailing
        // comma); then its values are kept, numbers rounded to Doubles.
        for (key, value) in file.otherKeys {
            guard let value else { throw Failure(message: "'\(key)' holds text that is not valid JSON (not UTF-8, or a raw control character)") }
            file.memo.otherFields[key] = value
        }
        return file.memo
    }
}

extension MemoReader {
    /// What the deep check keeps of a memo file, with the id it holds. A
    /// clean file's body is hashed where simdjson left it, never made a string.
    static func readSummary(_ data: Data, depthLimit: Int = 64) throws(Failure) -> (MemoID, MemoSummary) {
        let clean = withCleanFields(data) { fields in
            (fields.id, MemoSummary(title: fields.title, bodySHA256: fields.body.map(SHA256.digest), tags: fields.tags,
                                    createdAt: fields.createdAt, modifiedAt: fields.modifiedAt, archivedAt: fields.archivedAt,
                                    deletedAt: fields.deletedAt, pinned: fields.pinned, changeTag: fields.changeTag))
        }
        if let clean { return clean }
        let memo = try readCarefully(data, depthLimit: depthLimit)
        return (memo.id, MemoSummary(memo))
    }

    /// Reads a clean memo file with simdjson: nil when anything is unusual
    /// (an unknown or repeated key, a wrong type, a date without a zone …).
    /// For a clean file it gives what the careful reader gives.
    static func readClean(_ data: Data) -> Memo? {
        withCleanFields(data) { fields in
            Memo(id: fields.id, title: fields.title, body: fields.body.map { String(decoding: $0, as: UTF8.self) },
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

    /// Parses `data` with simdjson and hands its fields to `use` (the body
    /// is valid only inside); nil when the file is not clean.
    private static func withCleanFields<Result>(_ data: Data, _ use: (CleanFields) -> Result) -> Result? {
        data.withUnsafeBytes { bytes -> Result? in
            var raw = reckon_memo_fields()
            guard reckon_memo_parse(bytes.baseAddress, bytes.count, &raw) == 0 else { return nil }
            func string(_ text: reckon_text) -> String? { text.bytes.map { String(decoding: $0, as: UTF8.self) } }
            guard let modified = raw.modified_at.date ?? nil, let created = raw.created_at.date,
                  let archived = raw.archived_at.date, let deleted = raw.deleted_at.date else { return nil }
            return use(CleanFields(id: MemoID(high: raw.id_high, low: raw.id_low), title: string(raw.title), body: raw.body.bytes,
                                   createdAt: created, modifiedAt: modified, archivedAt: archived, deletedAt: deleted,
                                   tags: (0..<raw.tag_count).map { string(reckon_memo_tag($0)) ?? "" },
                                   pinned: raw.pinned < 0 ? nil : raw.pinned == 1, changeTag: string(raw.change_tag)))
        }
    }
}

/// A memo file's object, or the first reason it cannot be used. Unknown
/// keys are listed with Foundation's reading of their values (nil where it
/// has none); the caller reads them again keeping every number's digits.
private struct MemoFile: Decodable {
    var memo: Memo
    var otherKeys: [(String, JSONValue?)] = []

    init(from decoder: Decoder) throws {
        guard let fields = try? decoder.container(keyedBy: AnyKey.self) else {
            throw MemoReader.Failure(message: "must be a JSON object, found \(typeName(in: decoder))")
        }
        do throws(FieldError) {
            let spelling = try fields.requiredString("id")
            guard let id = MemoID(spelling) else { throw FieldError(message: "id \(quoted(spelling)) is not a UUID") }
            otherKeys = fields.allKeys.filter { !MemoReader.knownKeys.contains($0.stringValue) }
                .map { ($0.stringValue, try? fields.decode(JSONValue.self, forKey: $0)) }
            memo = Memo(id: id,
                        title: try fields.string("title"),
                        body: try fields.string("body"),
                        createdAt: try fields.timestamp("createdAt"),
                        modifiedAt: try fields.requiredTimestamp("modifiedAt"),
                        archivedAt: try fields.timestamp("archivedAt"),
                        deletedAt: try fields.timestamp("deletedAt"),
                        tags: try fields.strings("tags") ?? [],
                        pinned: try fields.bool("pinned"),
                        changeTag: try fields.string("changeTag"))
        } catch {
            throw MemoReader.Failure(message: error.message)
        }
    }
}
