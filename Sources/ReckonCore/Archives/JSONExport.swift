import Foundation

/// How a memo appears in `memos.json`, and the order memos are exported in.
public enum JSONExport {
    /// The memo as it is written in an export: known fields always present
    /// (null when absent), dates in UTC, unknown keys kept.
    public static func value(of memo: Memo) -> JSONValue {
        func date(_ t: Timestamp?) -> JSONValue { t.map { .string($0.iso8601) } ?? .null }
        var object = memo.otherFields
        object["id"] = .string(memo.id.value)
        object["title"] = memo.title.map(JSONValue.string) ?? .null
        object["body"] = memo.body.map(JSONValue.string) ?? .null
        object["createdAt"] = date(memo.createdAt)
        object["modifiedAt"] = date(memo.modifiedAt)
        object["archivedAt"] = date(memo.archivedAt)
        object["deletedAt"] = date(memo.deletedAt)
        object["tags"] = .array(memo.tags.sorted().map(JSONValue.string))
        object["pinned"] = memo.pinned.map(JSONValue.bool) ?? .null
        object["changeTag"] = memo.changeTag.map(JSONValue.string) ?? .null
        return .object(object)
    }

    /// The memo as `memos.json` holds it: `value(of:)` written as JSON with
    /// its keys sorted and indented by four more spaces. A memo without
    /// unknown keys (nearly every memo) is written field by field here, much
    /// faster; the tests hold both ways to the same bytes.
    static func entry(of memo: Memo) -> Data {
        guard memo.otherFields.isEmpty else {
            var out = Array("    ".utf8)
            value(of: memo).append(to: &out, indent: 4)
            return Data(out)
        }
        var out: [UInt8] = []
        out.reserveCapacity(256 + (memo.body?.utf8.count ?? 0) + (memo.title?.utf8.count ?? 0))
        func field(_ key: String, last: Bool = false, _ value: (inout [UInt8]) -> Void) {
            out += Array("      \"\(key)\" : ".utf8)
            value(&out)
            out += last ? [0x0A] : [0x2C, 0x0A]
        }
        func text(_ string: String?) -> (inout [UInt8]) -> Void {
            { out in if let string { JSONValue.appendQuoted(string, to: &out) } else { out += Array("null".utf8) } }
        }
        func date(_ t: Timestamp?) -> (inout [UInt8]) -> Void { text(t?.iso8601) }
        out += Array("    {\n".utf8)
        field("archivedAt", date(memo.archivedAt))
        field("body", text(memo.body))
        field("changeTag", text(memo.changeTag))
        field("createdAt", date(memo.createdAt))
        field("deletedAt", date(memo.deletedAt))
        field("id", text(memo.id.value))
        field("modifiedAt", date(memo.modifiedAt))
        field("pinned") { out in out += Array((memo.pinned.map { $0 ? "true" : "false" } ?? "null").utf8) }
        field("tags") { out in
            out += Array("[\n".utf8)
            let tags = memo.tags.sorted()
            if tags.isEmpty { out.append(0x0A) }
            for (position, tag) in tags.enumerated() {
                out += Array("        ".utf8)
                JSONValue.appendQuoted(tag, to: &out)
                out += position == tags.count - 1 ? [0x0A] : [0x2C, 0x0A]
            }
            out += Array("      ]".utf8)
        }
        field("title", last: true, text(memo.title))
        out += Array("    }".utf8)
        return Data(out)
    }

    /// The order memos are exported in: creation time (memos without one
    /// first), then id.
    public static func exportOrder(_ a: Memo, _ b: Memo) -> Bool {
        precedes(created: a.createdAt, a.id, created: b.createdAt, b.id)
    }

    /// The same order from a memo's creation time and id alone.
    static func precedes(created a: Timestamp?, _ idA: MemoID, created b: Timestamp?, _ idB: MemoID) -> Bool {
        switch (a, b) {
        case let (x?, y?) where x != y: return x < y
        case (nil, _?): return true
        case (_?, nil): return false
        default: return idA < idB
        }
    }
}
