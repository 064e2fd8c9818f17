import Foundation

/// When memos vanishing from one side sound the alarm (`alarm` in a
/// definition): more than `deletedPercent` of the baseline's Active and
/// Archived memos gone or soft-deleted, or more than `deletedCount`. A side
/// found empty after a baseline that held memos always sounds it.
package struct AlarmLimits: Sendable, Equatable {
    package var deletedPercent: Double = 20
    /// Off unless set.
    package var deletedCount: Int?

    package init() {}

    /// Whether `deleted` of the `had` memos a side (or an export) held
    /// being gone sounds the alarm: none left of some, or more gone than
    /// the limits allow. The one rule a run and a plain export share.
    package func sounds(deleted: Int, of had: Int, empty: Bool) -> Bool {
        let overPercent = Double(deleted) * 100 > deletedPercent * Double(had)
        let overCount = deletedCount.map { deleted > $0 } ?? false
        return empty || (deleted > 0 && (overPercent || overCount))
    }
}

/// More memos gone from a side since its baseline than the alarm allows
/// (`sides[].alarm` in `report.json`).
package struct DeletionAlarm: Sendable, Equatable, Codable {
    /// Memos gone or soft-deleted since the baseline.
    package var deleted: Int
    /// The baseline's Active plus Archived memos.
    package var of: Int
    /// Whether the side holds no memo at all now.
    package var empty: Bool
    /// Whether `--accept-deletions` was given: a person agreed, and the baseline moves on.
    package var accepted: Bool
    /// The first run that sounded this alarm (this one, or an earlier one
    /// while the baseline was held back): the newest export made before it
    /// is kept. Not in `report.json`, which names no run time.
    package var since: Timestamp?

    enum CodingKeys: String, CodingKey { case deleted, of, empty, accepted }

    package init(deleted: Int, of: Int, empty: Bool, accepted: Bool, since: Timestamp? = nil) {
        self.deleted = deleted
        self.of = of
        self.empty = empty
        self.accepted = accepted
        self.since = since
    }
}

/// One side's baseline in a run: what was found in the state folder, the
/// side's fingerprints now, what moved since, and the alarm.
package struct SideBaseline: Sendable {
    /// What became of the side's baseline file (`sides[].baseline` in `report.json`).
    package enum Use: String, Sendable, Codable, CaseIterable {
        /// Found, of this side, and compared with.
        case used
        /// None yet (the first run, or no state folder).
        case none
        /// One of another side (its kind and path differ): not used.
        case anotherSide = "another-side"
        /// A file that cannot be read as a baseline: not used.
        case unreadable
    }

    package var use: Use
    /// For `anotherSide`, how that side was named; for `unreadable`, the
    /// file (under the state folder as the user spelled it) and why.
    package var note: String?
    /// The baseline compared with.
    var previous: Baseline?
    /// This run's fingerprints, without the memos that could not be read.
    var current = IDMap<Fingerprint>()
    /// Ids that could not be read this run, sorted: they keep their previous fingerprints.
    var unread: [MemoID] = []
    /// The file the baseline is kept in; nil without a state folder.
    var url: URL?
    /// What moved since the baseline; nil without one, or when the side failed.
    package var since: SinceLastRun?
    package var alarm: DeletionAlarm?
    /// Whether the side could be read at all.
    var failed = false
    /// Whether the disk failed to give some of the side's memos: its
    /// baseline is kept as it was, as for a side that failed, since what
    /// the run saw of it is not what it holds.
    var diskTrouble = false

    /// The baseline's time, when one was used.
    package var time: Timestamp? { previous?.time }

    /// Whether an alarm holds the run (and the baseline) back.
    package var alarmHolds: Bool { alarm.map { !$0.accepted } ?? false }

    /// Reads `side`'s baseline from `stateDir` (spelled `statePath`) and compares the side with it.
    init(_ side: SideListing, stateDir: URL?, statePath: String?, limits: AlarmLimits, acceptDeletions: Bool, startedAt: Timestamp) {
        url = stateDir.map { Baseline.url(in: $0, side: side.spec.name) }
        switch url.map(Baseline.read) ?? .none {
        case .none:
            use = .none
        case .unreadable(let reason):
            use = .unreadable
            note = "\(joinPath(statePath ?? stateDir?.path ?? "", url!.lastPathComponent)): \(reason)"
        case .found(let found):
            if found.side.isSameSide(as: SideIdentity(side.spec)) {
                use = .used
                previous = found
            } else {
                use = .anotherSide
                note = found.side.shown
            }
        }
        failed = side.status == .failed
        diskTrouble = side.problems.contains { $0.kind == .diskTrouble }
        // Without a state folder there is nothing to compare with or to save.
        guard !failed, url != nil else { return }
        unread = side.brokenIDs.keys.sorted()
        current = Self.fingerprints(side, leavingOut: unread)
        guard let previous else { return }
        var since = SinceLastRun()
        var i = 0
        var j = 0
        var u = 0
        let before = previous.memos
        let now = current
        while i < before.count || j < now.count {
            let id = j == now.count || (i < before.count && before.keys[i] <= now.keys[j]) ? before.keys[i] : now.keys[j]
            let old = i < before.count && before.keys[i] == id ? before.values[i] : nil
            let new = j < now.count && now.keys[j] == id ? now.values[j] : nil
            if old != nil { i += 1 }
            if new != nil { j += 1 }
            while u < unread.count && unread[u] < id { u += 1 }
            if u < unread.count && unread[u] == id { continue }
            if let change = Fingerprint.change(from: old, to: new) { since.count(change) }
        }
        self.since = since
        let had = before.values.lazy.filter(\.isLive).count
        let empty = had > 0 && side.counts?.total == 0
        if limits.sounds(deleted: since.deleted, of: had, empty: empty) {
            alarm = DeletionAlarm(deleted: since.deleted, of: had, empty: empty, accepted: acceptDeletions, since: previous.alarmSince ?? startedAt)
        }
    }

    /// The fingerprint of every memo with an index entry that could be read,
    /// walking the side's sorted entries and summaries together (by index,
    /// so that no entry or summary is copied).
    static func fingerprints(_ side: SideListing, leavingOut unread: [MemoID]) -> IDMap<Fingerprint> {
        let entries = side.entries
        let memos = side.memos
        var ids: [MemoID] = []
        var prints: [Fingerprint] = []
        ids.reserveCapacity(entries.count)
        prints.reserveCapacity(entries.count)
        var m = 0
        var u = 0
        for i in entries.keys.indices {
            let id = entries.keys[i]
            while u < unread.count && unread[u] < id { u += 1 }
            if u < unread.count && unread[u] == id { continue }
            while m < memos.count && memos.keys[m] < id { m += 1 }
            let digest = m < memos.count && memos.keys[m] == id ? Fingerprint.digest(memos.values[m]) : nil
            ids.append(id)
            prints.append(Fingerprint(entries.values[i], digest: digest))
        }
        return IDMap(sortedKeys: ids, values: prints)
    }

    /// What to write to the side's baseline file after this run, if anything.
    /// A deep run saves the side's listing, each memo that could not be read
    /// keeping its previous fingerprint, unless the side failed, the disk
    /// failed to give some of it, or an alarm holds it back. An alarm only marks the kept baseline with the time
    /// it first sounded. A quick run saves nothing else.
    func toSave(deep: Bool, side: SideSpec, startedAt: Timestamp) -> Baseline? {
        guard url != nil, !failed, !diskTrouble else { return nil }
        if alarmHolds {
            guard var kept = previous, kept.alarmSince == nil else { return nil }
            kept.alarmSince = alarm?.since
            return kept
        }
        guard deep else { return nil }
        var memos = current
        if !unread.isEmpty, let previous {
            let kept = unread.compactMap { id in previous.memos[id].map { (id, $0) } }
            if !kept.isEmpty { memos = Self.merged(current, kept) }
        }
        return Baseline(side: SideIdentity(side), time: startedAt, alarmSince: nil, memos: memos)
    }

    /// `map` with `more` (sorted, ids not in `map`) added in id order.
    static func merged(_ map: IDMap<Fingerprint>, _ more: [(MemoID, Fingerprint)]) -> IDMap<Fingerprint> {
        var ids: [MemoID] = []
        var prints: [Fingerprint] = []
        ids.reserveCapacity(map.count + more.count)
        prints.reserveCapacity(map.count + more.count)
        var k = 0
        for (id, print) in map.pairs {
            while k < more.count && more[k].0 < id {
                ids.append(more[k].0)
                prints.append(more[k].1)
                k += 1
            }
            ids.append(id)
            prints.append(print)
        }
        for (id, print) in more[k...] {
            ids.append(id)
            prints.append(print)
        }
        return IDMap(sortedKeys: ids, values: prints)
    }
}
