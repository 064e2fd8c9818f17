import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Pass 1 of an export: which memos, in which order.
extension Exporter.Run {
    /// What pass 1 found: which memos, and how many, with the newest
    /// modification time among them.
    struct Plan {
        /// The memos, read back in export order (creation time, then id).
        let memos: SpillSort<Planned>
        /// How many are exported, and the newest modification time among
        /// them; without the ids held twice.
        var count = 0
        var exportedAt: Timestamp?
        /// The ids held twice, left out whole: reckon never picks one of two.
        var heldTwice: [MemoID: Problem] = [:]

        /// Counts `memo` in.
        mutating func tally(_ memo: Planned) {
            count += 1
            exportedAt = max(exportedAt ?? memo.modified, memo.modified)
        }

        mutating func append(_ memo: Planned) throws {
            try memos.append(memo)
            tally(memo)
        }
    }

    /// The previous run's records in id order, read alongside the
    /// listing, when its memos may be taken unread.
    struct PreviousRecords {
        private var byID: MarkdownIndex.RecordsByID?
        private var next: MarkdownIndex.Entry?

        init(_ previous: MarkdownIndex.Previous?) {
            byID = previous.flatMap { $0.takesUnread ? $0 : nil }?.byID()
            next = byID?.next()
        }

        /// The previous run's record of `id`; ids must be asked for in order.
        mutating func record(of id: MemoID) -> MarkdownIndex.Entry? {
            while let record = next, record.id < id { next = byID!.next() }
            return next.flatMap { $0.id == id ? $0 : nil }
        }
    }

    /// Pass 1: which memos, in which order (creation time, then id);
    /// how many, and the newest modification time among them. The
    /// listing is planned `batchSize` memos at a time.
    mutating func plan(
        known: IDMap<MemoSummary>, listMemos: ((MemoID, IndexEntry, IDSpelling?) throws -> Void) throws -> [Problem]
    ) throws -> Plan {
        var batch: [(MemoID, IDSpelling)] = []
        var previous = PreviousRecords(exporter.previous)
        var plan = Plan(memos: SpillSort<Planned>(scratch: staging, runLength: exporter.sortRunLength))
        let problems = try listMemos { id, entry, file in
            guard !entry.isDeleted, includeArchived || !entry.isArchived else { return }
            batch.append((id, file ?? entry.spelledAs))
            if batch.count == exporter.batchSize { try planBatch(&batch, known: known, previous: &previous, into: &plan) }
        }
        try planBatch(&batch, known: known, previous: &previous, into: &plan)
        // An id held twice is left out whole: reckon never picks one of two.
        for problem in problems where problem.kind == .duplicateID {
            if let id = problem.id, plan.heldTwice[id] == nil { plan.heldTwice[id] = problem }
        }
        // Counted again without the ids held twice, when there are any.
        if !plan.heldTwice.isEmpty {
            plan.count = 0
            plan.exportedAt = nil
            let counting = try plan.memos.sorted()
            while let memo = try counting.next() {
                if plan.heldTwice[memo.id] == nil { plan.tally(memo) }
            }
        }
        return plan
    }

    /// Plans the memos in `batch` and empties it: a memo whose file is the
    /// one the previous run read is planned from that run's record,
    /// unread; the rest from their summaries, known or read now.
    mutating func planBatch(
        _ batch: inout [(MemoID, IDSpelling)], known: IDMap<MemoSummary>, previous: inout PreviousRecords, into plan: inout Plan
    ) throws {
        let identities = fingerprinted ? exporter.store.fileIdentities(batch) : batch.map { _ in nil }
        var unread: [(MemoID, IDSpelling)] = []
        var sources: [MemoID: FileIdentity] = [:]
        for (memo, identity) in zip(batch, identities) {
            guard let identity, let record = previous.record(of: memo.0), record.source == identity, !record.json.isEmpty else {
                unread.append(memo)
                sources[memo.0] = identity
                continue
            }
            guard includeArchived || !record.archived else { continue }
            try plan.append(
                Planned(
                    createdAt: record.createdAt, id: memo.0, spelledAs: memo.1, modified: record.modified,
                    source: identity, unchanged: true))
        }
        batch.removeAll(keepingCapacity: true)
        let summaries =
            unread.compactMap { memo in known[memo.0].map { (memo, $0) } }
            + read(unread.filter { known[$0.0] == nil }, chunkSize: exporter.chunkSize, as: .summary, then: { $0 })
        for ((id, spelledAs), memo) in summaries where memo.deletedAt == nil && (includeArchived || memo.archivedAt == nil) {
            try plan.append(
                Planned(
                    createdAt: memo.createdAt, id: id, spelledAs: spelledAs, modified: memo.modifiedAt,
                    source: sources[id], unchanged: false))
        }
    }
}
