import Foundation

/// Reads one memo file, `memos/<uuid>.json`, decoding its fields straight
/// into typed values; keys reckon does not know are kept as they were.
public enum MemoReader {
    public struct Failure: Error, Equatable {
        public var message: String
    }

    static let knownKeys: Set<String> = ["id", "title", "body", "createdAt", "modifiedAt", "archivedAt", "deletedAt", "tags", "pinned", "changeTag"]

    public static func read(_ data: Data, depthLimit: Int = 64) throws(Failure) -> Memo {
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
