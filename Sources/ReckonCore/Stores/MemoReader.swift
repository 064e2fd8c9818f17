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
        let file: MemoFile
        do {
            file = try decodeJSON(MemoFile.self, from: data)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(message: "not valid JSON (\(describe(error)))")
        }
        return file.memo
    }
}

extension MemoReader {
    /// Reads a clean memo file with simdjson: nil when anything is unusual
    /// (an unknown or repeated key, a wrong type, a date without a zone …).
    /// For a clean file it gives what the careful reader gives.
    static func readClean(_ data: Data) -> Memo? {
        data.withUnsafeBytes { bytes -> Memo? in
            var fields = reckon_memo_fields()
            guard reckon_memo_parse(bytes.baseAddress, bytes.count, &fields) == 0 else { return nil }
            func string(_ text: reckon_text) -> String? {
                text.data.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: text.length), as: UTF8.self) }
            }
            func date(_ text: reckon_text) -> Timestamp?? {
                guard let value = string(text) else { return .some(nil) }
                return Timestamp(iso8601: value).map { .some($0) }
            }
            guard let modified = date(fields.modified_at) ?? nil, let created = date(fields.created_at),
                  let archived = date(fields.archived_at), let deleted = date(fields.deleted_at) else { return nil }
            return Memo(id: MemoID(high: fields.id_high, low: fields.id_low), title: string(fields.title), body: string(fields.body),
                        createdAt: created, modifiedAt: modified, archivedAt: archived, deletedAt: deleted,
                        tags: (0..<fields.tag_count).map { string(reckon_memo_tag($0)) ?? "" },
                        pinned: fields.pinned < 0 ? nil : fields.pinned == 1, changeTag: string(fields.change_tag))
        }
    }
}

/// A memo file's object, or the first reason it cannot be used.
private struct MemoFile: Decodable {
    var memo: Memo

    init(from decoder: Decoder) throws {
        guard let fields = try? decoder.container(keyedBy: AnyKey.self) else {
            throw MemoReader.Failure(message: "must be a JSON object, found \(typeName(in: decoder))")
        }
        do throws(FieldError) {
            let spelling = try fields.requiredString("id")
            guard let id = MemoID(spelling) else { throw FieldError(message: "id \(quoted(spelling)) is not a UUID") }
            var others: [String: JSONValue] = [:]
            for key in fields.allKeys where !MemoReader.knownKeys.contains(key.stringValue) {
                guard let value = try? fields.decode(JSONValue.self, forKey: key) else {
                    throw FieldError(message: "'\(key.stringValue)' holds text that is not valid JSON (not UTF-8, or a raw control character)")
                }
                others[key.stringValue] = value
            }
            memo = Memo(id: id,
                        title: try fields.string("title"),
                        body: try fields.string("body"),
                        createdAt: try fields.timestamp("createdAt"),
                        modifiedAt: try fields.requiredTimestamp("modifiedAt"),
                        archivedAt: try fields.timestamp("archivedAt"),
                        deletedAt: try fields.timestamp("deletedAt"),
                        tags: try fields.strings("tags") ?? [],
                        pinned: try fields.bool("pinned"),
                        changeTag: try fields.string("changeTag"),
                        otherFields: others)
        } catch {
            throw MemoReader.Failure(message: error.message)
        }
    }
}
