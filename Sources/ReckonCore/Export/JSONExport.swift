import Foundation

/// How a memo appears in `memos.json`, and the order memos are exported in.
package enum JSONExport {
    /// The version of how an entry is written, raised whenever the bytes
    /// written for a memo change, so no later run takes an entry the
    /// previous run wrote another way.
    package static let version: UInt64 = 2

    /// The memo as it is written in an export: known fields always present
    /// (null when absent), dates in UTC, unknown keys kept.
    package static func value(of memo: Memo) -> JSONValue {
        func date(_ t: Timestamp?) -> JSONValue { t.map { .string($0.iso8601) } ?? .null }
        var object = memo.otherFields
        object["id"] = .string(memo.id.value)
        object["title"] = memo.title.map(JSONValue.string) ?? .null
        object["body"] = memo.body.map(JSONValue.string) ?? .null
        object["createdAt"] = date(memo.createdAt)
        object["modifiedAt"] = date(memo.modifiedAt)
        object["archivedAt"] = date(memo.archivedAt)
        object["deletedAt"] = date(memo.deletedAt)
        object["tags"] = .array(memo.tags.map(JSONValue.string))
        object["pinned"] = memo.pinned.map(JSONValue.bool) ?? .null
        object["changeTag"] = memo.changeTag.map(JSONValue.string) ?? .null
        return .object(object)
    }

    /// The memo as `memos.json` holds it: `value(of:)`, two levels deep in
    /// the file, for `JSONWriter.written(_:)`.
    package static func entry(of memo: Memo) -> Data {
        var entry = Data()
        write(memo, depth: 2) { entry.append($0) }
        return entry
    }

    /// How many bytes of a body are escaped at a time: a long body goes
    /// out in pieces, never held escaped whole.
    static let bodyPiece = 1 << 20

    /// Writes `value(of:)` as it stands `depth` levels deep in a file,
    /// handing the bytes to `out` in order: the body in pieces of
    /// `bodyPiece` bytes. A memo without unknown keys (nearly every memo)
    /// is written field by field, in sorted order, without building the
    /// value first; the tests hold both ways to the same bytes.
    package static func write(_ memo: Memo, depth: Int, to out: (Data) throws -> Void) rethrows {
        var writer = JSONWriter(depth: depth)
        guard memo.otherFields.isEmpty else {
            guard case .object(let fields) = value(of: memo) else { return }
            writer.beginObject()
            for name in fields.keys.sorted() {
                writer.key(name)
                if name == "body" { try writer.string(memo.body, inPiecesOf: bodyPiece, to: out) } else { writer.value(fields[name]!) }
            }
            writer.endObject()
            return try out(writer.take())
        }
        writer.beginObject()
        writer.key("archivedAt")
        writer.string(memo.archivedAt?.iso8601)
        writer.key("body")
        try writer.string(memo.body, inPiecesOf: bodyPiece, to: out)
        writer.key("changeTag")
        writer.string(memo.changeTag)
        writer.key("createdAt")
        writer.string(memo.createdAt?.iso8601)
        writer.key("deletedAt")
        writer.string(memo.deletedAt?.iso8601)
        writer.key("id")
        writer.string(memo.id.value)
        writer.key("modifiedAt")
        writer.string(memo.modifiedAt.iso8601)
        writer.key("pinned")
        writer.value(memo.pinned.map { .bool($0) } ?? .null)
        writer.key("tags")
        writer.beginArray()
        for tag in memo.tags { writer.string(tag) }
        writer.endArray()
        writer.key("title")
        writer.string(memo.title)
        writer.endObject()
        try out(writer.take())
    }

    /// The order memos are exported in: creation time (memos without one
    /// first), then id.
    package static func exportOrder(_ a: Memo, _ b: Memo) -> Bool {
        precedes(created: a.createdAt, a.id, created: b.createdAt, b.id)
    }

    /// The same order from a memo's creation time and id alone.
    static func precedes(created a: Timestamp?, _ idA: MemoID, created b: Timestamp?, _ idB: MemoID) -> Bool {
        switch (a, b) {
        case (let x?, let y?) where x != y: return x < y
        case (nil, _?): return true
        case (_?, nil): return false
        default: return idA < idB
        }
    }
}
