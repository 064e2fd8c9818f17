import Foundation

/// One memo file, `memos/<uuid>.json`, with its body.
package struct Memo: Sendable, Equatable {
    package var id: MemoID
    package var title: String?
    package var body: String?
    package var createdAt: Timestamp?
    package var modifiedAt: Timestamp
    package var archivedAt: Timestamp?
    package var deletedAt: Timestamp?
    package var tags: [String]
    package var pinned: Bool?
    package var changeTag: String?
    /// Keys reckon does not know, kept as they were read.
    package var otherFields: [String: JSONValue]

    package init(
        id: MemoID, title: String? = nil, body: String? = nil, createdAt: Timestamp? = nil, modifiedAt: Timestamp,
        archivedAt: Timestamp? = nil, deletedAt: Timestamp? = nil, tags: [String] = [], pinned: Bool? = nil,
        changeTag: String? = nil, otherFields: [String: JSONValue] = [:]
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.archivedAt = archivedAt
        self.deletedAt = deletedAt
        self.tags = tags
        self.pinned = pinned
        self.changeTag = changeTag
        self.otherFields = otherFields
    }
}

/// What the deep check keeps of a memo: every field it compares, with the
/// body as its SHA-256, so a side's summaries stay small however long the
/// memos are.
package struct MemoSummary: Sendable, Equatable {
    package var title: String?
    package var bodySHA256: SHA256.Digest?
    package var tags: [String]
    package var createdAt: Timestamp?
    package var modifiedAt: Timestamp
    package var archivedAt: Timestamp?
    package var deletedAt: Timestamp?
    package var pinned: Bool
    package var changeTag: String?

    package init(_ memo: Memo) {
        self.init(
            title: memo.title,
            bodySHA256: memo.body.map { body in
                var text = body
                return text.withUTF8 { SHA256.digest(of: UnsafeRawBufferPointer($0)) }
            },
            tags: memo.tags, createdAt: memo.createdAt, modifiedAt: memo.modifiedAt, archivedAt: memo.archivedAt,
            deletedAt: memo.deletedAt, pinned: memo.pinned, changeTag: memo.changeTag)
    }

    init(
        title: String?, bodySHA256: SHA256.Digest?, tags: [String], createdAt: Timestamp?, modifiedAt: Timestamp,
        archivedAt: Timestamp?, deletedAt: Timestamp?, pinned: Bool?, changeTag: String?
    ) {
        self.title = title
        self.bodySHA256 = bodySHA256
        self.tags = tags.sorted()
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.archivedAt = archivedAt
        self.deletedAt = deletedAt
        self.pinned = pinned ?? false
        self.changeTag = changeTag
    }

    /// The names of the fields in which two memos differ, compared as parsed
    /// values (dates as instants, to the millisecond with `toMillisecond`;
    /// tags as a set); unknown keys are ignored.
    package func differingFields(from other: MemoSummary, toMillisecond: Bool = false) -> [String] {
        func same(_ a: Timestamp?, _ b: Timestamp?) -> Bool {
            toMillisecond ? a?.toMillisecond == b?.toMillisecond : a == b
        }
        var fields: [String] = []
        if title != other.title { fields.append("title") }
        if bodySHA256 != other.bodySHA256 { fields.append("body") }
        if tags != other.tags { fields.append("tags") }
        if !same(createdAt, other.createdAt) { fields.append("createdAt") }
        if !same(modifiedAt, other.modifiedAt) { fields.append("modifiedAt") }
        if !same(archivedAt, other.archivedAt) { fields.append("archivedAt") }
        if !same(deletedAt, other.deletedAt) { fields.append("deletedAt") }
        if pinned != other.pinned { fields.append("pinned") }
        if let a = changeTag, let b = other.changeTag, a != b { fields.append("changeTag") }
        return fields
    }
}
