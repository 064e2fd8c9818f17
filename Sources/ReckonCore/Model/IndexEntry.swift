/// One entry of `index.json`: a memo's metadata, without its body.
public struct IndexEntry: Sendable, Equatable {
    public var id: MemoID
    /// The id as the index spells it; the memo's file name uses this spelling.
    public var spelling: String
    public var modifiedTime: Timestamp
    public var archivedAt: Timestamp?
    public var deletedAt: Timestamp?
    public var changeTag: String?

    public init(id: MemoID, spelling: String? = nil, modifiedTime: Timestamp, archivedAt: Timestamp? = nil, deletedAt: Timestamp? = nil, changeTag: String? = nil) {
        self.id = id
        self.spelling = spelling ?? id.value
        self.modifiedTime = modifiedTime
        self.archivedAt = archivedAt
        self.deletedAt = deletedAt
        self.changeTag = changeTag
    }

    public var isDeleted: Bool { deletedAt != nil }
    public var isArchived: Bool { archivedAt != nil }
}

/// The readable part of one `index.json`: the entries that could be used
/// (first of each id) and the problems met on the way.
public struct MemoIndex: Sendable, Equatable {
    public static let supportedSchemaVersion = 1

    public var entries: [IndexEntry]
    public var problems: [Problem]

    public init(entries: [IndexEntry], problems: [Problem] = []) {
        self.entries = entries
        self.problems = problems
    }
}
