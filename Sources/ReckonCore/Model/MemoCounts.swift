/// Active and Archived memos on one side, by the seed's rule: soft-deleted
/// memos are not counted; otherwise an archived date means Archived.
public struct MemoCounts: Sendable, Equatable, Codable {
    public var active: Int
    public var archived: Int

    public init(active: Int = 0, archived: Int = 0) {
        self.active = active
        self.archived = archived
    }

    /// Counts index entries; each id should appear once (the index reader
    /// keeps the first of duplicates).
    public static func aggregate(_ entries: [IndexEntry]) -> MemoCounts {
        var counts = MemoCounts()
        for entry in entries where !entry.isDeleted {
            if entry.isArchived { counts.archived += 1 } else { counts.active += 1 }
        }
        return counts
    }

    public var total: Int { active + archived }
}
