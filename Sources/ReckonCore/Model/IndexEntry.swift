/// One entry of `index.json`: a memo's metadata, without its body.
package struct IndexEntry: Sendable, Equatable {
    package var id: MemoID
    package var modifiedTime: Timestamp
    package var archivedAt: Timestamp?
    package var deletedAt: Timestamp?
    package var changeTag: String?
    /// Core Data's row version (`Z_OPT`) for a store's row: part of the
    /// side's own fingerprint, never compared across sides.
    package var rowVersion: Int64?
    /// How the index writes the id; the memo's file name should match.
    package var spelledAs: IDSpelling

    package init(
        id: MemoID, spelling: String? = nil, modifiedTime: Timestamp, archivedAt: Timestamp? = nil, deletedAt: Timestamp? = nil,
        changeTag: String? = nil
    ) {
        var spelledAs = IDSpelling.small
        if let spelling {
            spelledAs = MemoID(spelling) == id ? IDSpelling(spelling) : IDSpelling.mixed(spelling)
        }
        self.init(id: id, spelledAs: spelledAs, modifiedTime: modifiedTime, archivedAt: archivedAt, deletedAt: deletedAt, changeTag: changeTag)
    }

    init(
        id: MemoID, spelledAs: IDSpelling, modifiedTime: Timestamp, archivedAt: Timestamp?, deletedAt: Timestamp?, changeTag: String?,
        rowVersion: Int64? = nil
    ) {
        self.id = id
        self.rowVersion = rowVersion
        self.spelledAs = spelledAs
        self.modifiedTime = modifiedTime
        self.archivedAt = archivedAt
        self.deletedAt = deletedAt
        self.changeTag = changeTag
    }

    /// The id as the index spells it; the memo's file name uses this spelling.
    package var spelling: String { spelledAs.text(of: id) }

    package var isDeleted: Bool { deletedAt != nil }
    package var isArchived: Bool { archivedAt != nil }
}

/// The readable part of one `index.json`: the entries that could be used
/// (first of each id) and the problems met on the way.
package struct MemoIndex: Sendable, Equatable {
    package static let supportedSchemaVersion = 1

    package var entries: [IndexEntry]
    package var problems: [Problem]

    package init(entries: [IndexEntry], problems: [Problem] = []) {
        self.entries = entries
        self.problems = problems
    }
}

extension IndexEntry {
    /// Adds everything but the id to a record for sorting.
    func add(to record: inout Record) {
        spelledAs.write(to: &record)
        record.add(modifiedTime)
        record.add(archivedAt)
        record.add(deletedAt)
        record.add(changeTag)
        record.add(rowVersion.map(String.init))
    }

    /// The entry `add(to:)` wrote, with its id.
    init(id: MemoID, from reader: inout RecordReader) {
        self.init(
            id: id, spelledAs: IDSpelling(from: &reader), modifiedTime: reader.timestamp()!, archivedAt: reader.timestamp(),
            deletedAt: reader.timestamp(), changeTag: reader.text(), rowVersion: reader.text().flatMap { Int64($0) })
    }
}

extension MemoIndex {
    /// Each id's first entry (a repeated id's later entries are problems, not memos).
    var firstEntries: [MemoID: IndexEntry] {
        var entries: [MemoID: IndexEntry] = [:]
        for entry in self.entries where entries[entry.id] == nil { entries[entry.id] = entry }
        return entries
    }
}
