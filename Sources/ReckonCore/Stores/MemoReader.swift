import Foundation

/// Reads one memo file, `memos/<uuid>.json`.
public enum MemoReader {
    public struct Failure: Error, Equatable {
        public var message: String
    }

    static let knownKeys: Set<String> = ["id", "title", "body", "createdAt", "modifiedAt", "archivedAt", "deletedAt", "tags", "pinned", "changeTag"]

    public static func read(_ data: Data, depthLimit: Int = 64) throws(Failure) -> Memo {
        guard !data.isEmpty else { throw Failure(message: "is empty (0 bytes)") }
        guard !jsonNestsDeeper(data, than: depthLimit) else { throw Failure(message: "nests JSON deeper than \(depthLimit) levels") }
        let root: JSONValue
        do {
            root = try JSONValue.parse(data)
        } catch {
            throw Failure(message: "not valid JSON (\(describe(error)))")
        }
        guard case .object(let object) = root else {
            throw Failure(message: "must be a JSON object, found \(root.typeName)")
        }
        let reader = FieldReader(object: object)
        do throws(FieldReader.Failure) {
            let spelling = try reader.requiredString("id")
            guard let id = MemoID(spelling) else { throw FieldReader.Failure(message: "id \(quoted(spelling)) is not a UUID") }
            return Memo(id: id,
                        title: try reader.string("title"),
                        body: try reader.string("body"),
                        createdAt: try reader.timestamp("createdAt"),
                        modifiedAt: try reader.requiredTimestamp("modifiedAt"),
                        archivedAt: try reader.timestamp("archivedAt"),
                        deletedAt: try reader.timestamp("deletedAt"),
                        tags: try reader.strings("tags") ?? [],
                        pinned: try reader.bool("pinned"),
                        changeTag: try reader.string("changeTag"),
                        otherFields: object.filter { !knownKeys.contains($0.key) })
        } catch {
            throw Failure(message: error.message)
        }
    }
}
