/// Active and Archived memos on one side, by the seed's rule: soft-deleted
/// memos are not counted; otherwise an archived date means Archived.
package struct MemoCounts: Sendable, Equatable, Codable {
    package var active: Int
    package var archived: Int

    package init(active: Int = 0, archived: Int = 0) {
        self.active = active
        self.archived = archived
    }

    /// Counts index entries; each id should appear once (the index reader
    /// keeps the first of duplicates).
    package static func aggregate(_ entries: [IndexEntry]) -> MemoCounts {
        var counts = MemoCounts()
        for entry in entries { counts.count(entry) }
        return counts
    }

    /// Counts one entry by the seed's rule: a soft-deleted memo is never
    /// counted; otherwise archived or active.
    package mutating func count(_ entry: IndexEntry) {
        guard !entry.isDeleted else { return }
        if entry.isArchived { archived += 1 } else { active += 1 }
    }

    package var total: Int { active + archived }

    /// `4 memos (3 active, 1 archived)`, as messages say it.
    package var inWords: String {
        "\(total) memo\(total == 1 ? "" : "s") (\(active) active, \(archived) archived)"
    }
}
