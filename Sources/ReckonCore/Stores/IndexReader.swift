import Foundation

/// Reads `index.json` (schema version 1).
public enum IndexReader {
    /// Why a whole index could not be used.
    public struct Failure: Error, Equatable {
        public var kind: Problem.Kind
        public var message: String
    }

    /// Parses an index. A bad entry is a problem for that entry only; the
    /// file as a whole fails only when it is not JSON, has the wrong shape or
    /// a schema version this reckon does not know.
    public static func read(_ data: Data, path: String = "index.json") throws(Failure) -> MemoIndex {
        let root: JSONValue
        do {
            root = try JSONValue.parse(data)
        } catch {
            throw Failure(kind: .corruptIndex, message: "not valid JSON (\(describe(error)))")
        }
        guard case .object(let object) = root else {
            throw Failure(kind: .corruptIndex, message: "must be a JSON object, found \(root.typeName)")
        }
        guard let versionValue = object["schemaVersion"] else {
            throw Failure(kind: .corruptIndex, message: "has no 'schemaVersion'")
        }
        guard case .number(let number) = versionValue, number == number.rounded(), number >= 1, number < 1e9 else {
            throw Failure(kind: .corruptIndex, message: "'schemaVersion' must be a whole number from 1, found \(versionValue.typeName)")
        }
        let version = Int(number)
        guard version <= MemoIndex.supportedSchemaVersion else {
            throw Failure(kind: .unsupportedSchema,
                          message: "has schemaVersion \(version), newer than the version \(MemoIndex.supportedSchemaVersion) this reckon reads; use a newer reckon (nothing was guessed)")
        }
        guard case .array(let items)? = object["entries"] else {
            throw Failure(kind: .corruptIndex, message: "'entries' must be an array, found \(object["entries"]?.typeName ?? "nothing")")
        }

        var entries: [IndexEntry] = []
        var seen: [MemoID: Int] = [:]
        var problems: [Problem] = []
        for (position, item) in items.enumerated() {
            let place = "entries[\(position)]"
            guard case .object(let fields) = item else {
                problems.append(Problem(.badEntry, path: path, "\(place) must be an object, found \(item.typeName)"))
                continue
            }
            let reader = FieldReader(object: fields)
            let spelling: String
            do {
                spelling = try reader.requiredString("id")
            } catch {
                problems.append(Problem(.badEntry, path: path, "\(place): \(error.message)"))
                continue
            }
            guard let id = MemoID(spelling) else {
                problems.append(Problem(.invalidID, path: path, "\(place): id \(quoted(spelling)) is not a UUID; the entry is not counted"))
                continue
            }
            do {
                let entry = IndexEntry(id: id, spelling: spelling,
                                       modifiedTime: try reader.requiredTimestamp("modifiedTime"),
                                       archivedAt: try reader.timestamp("archivedAt"),
                                       deletedAt: try reader.timestamp("deletedAt"),
                                       changeTag: try reader.string("changeTag"))
                if let first = seen[id] {
                    problems.append(Problem(.duplicateID, path: path, id: id,
                                            "\(place): id \(id) appears again (first at entries[\(first)]); counted once"))
                    continue
                }
                seen[id] = position
                entries.append(entry)
            } catch {
                problems.append(Problem(.badEntry, path: path, id: id, "\(place) (id \(id)): \(error.message); the entry is not counted"))
            }
        }
        return MemoIndex(entries: entries, problems: problems)
    }
}

/// A short, single-line reason from a decoding error.
func describe(_ error: any Error) -> String {
    if let decoding = error as? DecodingError {
        switch decoding {
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context):
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            let place = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            let reason = underlying ?? context.debugDescription
            return place.isEmpty ? reason : "at \(place.drop { $0 == "." }): \(reason)"
        @unknown default:
            return String(describing: decoding)
        }
    }
    return String(describing: error)
}

/// A string for a message, cut short and with control characters made visible.
func quoted(_ text: String, limit: Int = 80) -> String {
    var shown = String(text.unicodeScalars.prefix(limit).map { scalar in
        scalar.properties.generalCategory == .control ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
    }.joined())
    if text.unicodeScalars.count > limit { shown += "…" }
    return "'\(shown)'"
}
