import Foundation

/// What every rendering of a report shares: the sentences, the count rows,
/// the run's time, a difference in words.
extension Report {
    /// Whether a side is the app's store, whose memos are rows rather than files.
    package var readsStore: Bool { sides.contains { $0.countsFrom == .store } }

    /// One line per remote read through a cache: how many memo files were
    /// downloaded and how many came from the cache.
    package func cacheLines(_ s: Strings) -> [String] {
        sides.compactMap { side in side.cacheUse.map { s.cacheUse(side.label, $0.fetched, $0.fromCache, $0.temporary) } }
    }

    /// The alarm of every side that lost more memos than allowed since its
    /// baseline, and no person accepted it: the first sentences of every
    /// report, shown in red.
    package func alarms(_ s: Strings) -> [String] {
        sides.compactMap { side in
            guard let alarm = side.alarm, !alarm.accepted else { return nil }
            return s.deletionAlarm(side.label, alarm.deleted, alarm.of, alarm.empty, side.since.map(display) ?? "", !exports.isEmpty)
        }
    }

    /// A side's changes since its baseline in one line (`Since the last run
    /// (2026-04-19 12:00 UTC): 1 added, …`); nil without a baseline.
    package func sinceLine(_ side: SideReport, _ s: Strings) -> String? {
        guard let since = side.since, let changes = side.sinceLastRun else { return nil }
        return "\(s.sinceLastRun(display(since))): \(s.changeCounts(changes))"
    }

    /// The sentences that say what the drift means and what to do, one per
    /// kind of drift, in the order a person should act on them.
    package func hints(_ s: Strings) -> [String] {
        var lines: [String] = []
        let localLabel = local.label
        for side in sides where side.status == .failed {
            lines.append(s.sideFailed(side.label, side.problems.first?.message ?? "unknown reason"))
        }
        for side in sides {
            if let alarm = side.alarm, alarm.accepted {
                lines.append(s.deletionsAccepted(side.label, alarm.deleted, alarm.of, side.since.map(display) ?? ""))
            }
            switch side.baseline {
            case .anotherSide: lines.append(s.baselineOfAnotherSide(side.label, side.baselineNote ?? ""))
            case .unreadable: lines.append(s.baselineUnreadable(side.label, side.baselineNote ?? ""))
            case .used, .none: break
            }
            switch side.agreement {
            case .anotherPair?: lines.append(s.agreementOfOtherSides(localLabel, side.label, side.agreementNote ?? ""))
            case .unreadable?: lines.append(s.agreementUnreadable(localLabel, side.label, side.agreementNote ?? ""))
            default: break
            }
        }
        for side in sides where side.countsFrom == .memoFiles {
            lines.append(s.rebuiltFromMemoFiles(side.label, side.problems.first(where: \.isAboutIndex)?.message ?? "damaged"))
        }
        for remote in remotes where remote.status != .failed && local.status != .failed {
            let mine = differences.filter { $0.remote == remote.name }
            // In the order of `driftSentence`: conflicts first, for only a person can settle them.
            let sentences: [Strings.Drift] = [
                s.conflict, s.remoteGained, s.localLost, s.onlyOnRemote, s.localGained, s.remoteLost, s.onlyOnLocal,
                s.archivedOnOneSide, s.deletedOnOneSide, s.changed
            ]
            var counts = [Int](repeating: 0, count: sentences.count)
            for difference in mine where difference.kind != .cannotCompare { counts[Self.driftSentence(difference)] += 1 }
            for (sentence, count) in zip(sentences, counts) where count > 0 {
                lines.append(sentence(count, localLabel, remote.label))
            }
            let uncomparable = mine.filter { $0.kind == .cannotCompare }.count
            if uncomparable > 0 { lines.append(s.cannotCompare(uncomparable, remote.label, readsStore)) }
        }
        if !quarantined.isEmpty { lines.append(s.quarantined(quarantined.count)) }
        let notCopied = sides.flatMap(\.problems).filter { $0.kind == .quarantineFailed }.count
        if notCopied > 0 { lines.append(s.quarantineFailed(notCopied)) }
        for side in sides where side.status != .failed && side.problems.contains(where: { $0.severity == .error }) {
            // The count is of every problem listed below for the side.
            lines.append(s.sideHasProblems(side.label, side.problems.count))
        }
        if let export = exports.first(where: { !$0.missing.isEmpty }) {
            lines.append(s.exportMissing(export.missing.count))
        }
        if lines.isEmpty && inSync {
            lines.append(isEmpty ? s.empty(localLabel, remotes.map(\.label)) : s.inSync(localLabel, remotes.map(\.label)))
        }
        return lines
    }

    /// Every side was read and none holds a memo, nor lost any since its
    /// baseline: one friendly line stands instead of rows of zeros.
    package var isEmpty: Bool {
        inSync && sides.allSatisfy { $0.counts?.total == 0 && $0.alarm == nil }
    }

    /// One row of a side's count block.
    package struct CountRow {
        package var name: String
        package var value: Int
        /// `5 (local 4)` when a remote's count differs from the local one.
        package var drifted: String?
    }

    /// Active and Archived of a side; nil when the side could not be read.
    package func countRows(_ side: SideReport, _ s: Strings) -> [CountRow]? {
        guard let counts = side.counts else { return nil }
        let localCounts = local.counts
        return [(s.active, counts.active, localCounts?.active), (s.archived, counts.archived, localCounts?.archived)].map { name, value, localValue in
            let differs = side.role == .remote && localValue != nil && localValue != value
            return CountRow(name: name, value: value, drifted: differs ? s.drifted(value, localValue!) : nil)
        }
    }

    /// A remote's label from its name.
    package func label(ofRemote name: String) -> String {
        remotes.first { $0.name == name }?.label ?? name
    }

    /// An instant shown to a person: minutes, in the report's time zone.
    package func display(_ time: Timestamp) -> String {
        let zone = TimeZone(identifier: timeZone) ?? TimeZone(identifier: "UTC")!
        // The zone's offset at that instant (summer time included), then the civil date by arithmetic:
        // a DateFormatter per instant cost half a second for a report of 2,000 differences.
        let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(time.seconds)))
        let name = zone.secondsFromGMT() == 0 && ["GMT", "UTC"].contains(zone.identifier) ? "UTC" : zone.identifier
        return Timestamp(seconds: time.seconds + Int64(offset)).dayAndMinute() + " " + name
    }

    /// What one side holds of a differing memo, in a few words.
    package func describe(_ state: Difference.SideState, _ s: Strings) -> String {
        if let problem = state.problem { return problem }
        guard let modified = state.modifiedTime else { return s.absent }
        var parts = ["\(s.modified) \(display(modified))"]
        if let archived = state.archivedAt { parts.append("\(s.archivedState) \(display(archived))") }
        if let deleted = state.deletedAt { parts.append("\(s.deletedState) \(display(deleted))") }
        return parts.joined(separator: ", ")
    }

    /// The heading of the remote's column in a differences table: its label
    /// when there is one remote, else "Side".
    package func remoteColumn(_ s: Strings) -> String {
        remotes.count == 1 ? remotes[0].label : s.sideColumn
    }

    /// What the remote holds of a differing memo, named when there are several remotes.
    package func describeRemote(_ difference: Difference, _ s: Strings) -> String {
        let text = describe(difference.remoteState, s)
        return remotes.count == 1 ? text : "\(label(ofRemote: difference.remote)): \(text)"
    }

    /// What differs in words a person knows: which side alone archived or
    /// deleted the memo, then each field that differs ("text changed").
    package func whatDiffers(_ difference: Difference, _ s: Strings) -> String {
        let remote = label(ofRemote: difference.remote)
        var parts: [String] = []
        var skipped: Set<String> = []
        switch difference.kind {
        case .archivedOnOneSide:
            parts.append(s.archivedOnlyOn(difference.local.archivedAt != nil ? local.label : remote))
            skipped = ["archived", "archivedAt"]
        case .deletedOnOneSide:
            parts.append(s.deletedOnlyOn(difference.local.deletedAt != nil ? local.label : remote))
            skipped = ["deletedAt"]
        case .changed:
            break
        case .onlyOnRemote, .onlyOnLocal, .cannotCompare:
            parts.append(s.kind(difference.kind, local.label, remote))
        }
        // What a person notices first (title, text) before dates and versions.
        let order = ["title", "body", "tags", "pinned", "createdAt", "archived", "archivedAt", "deletedAt", "modifiedTime", "modifiedAt", "changeTag"]
        let fields = difference.fields.sorted { (order.firstIndex(of: $0) ?? order.count) < (order.firstIndex(of: $1) ?? order.count) }
        for field in fields where !skipped.contains(field) {
            let words = s.fieldChanged(field)
            if !parts.contains(words) { parts.append(words) }
        }
        if parts.isEmpty { parts.append(s.kind(difference.kind, local.label, remote)) }
        if let changed = difference.changed, let moved = s.moved(changed, difference.kind, local.label, remote, difference.agreedAt?.day) {
            parts.append(moved)
        }
        return parts.joined(separator: s.code == "ja" ? "、" : ", ")
    }
}

/// Paths as a person can use them from the current folder: relative when
/// they lie under it, absolute otherwise (never relative to a pipeline file).
/// Only the pages and the terminal show these; `report.json` keeps paths as given.
extension Report {
    /// A side's folder as shown.
    package func shownPath(_ side: SideReport, from current: URL) -> String {
        side.url.map { shownPath($0, from: current) } ?? side.path
    }

    /// A quarantined file's source as shown: under its side's folder as shown.
    package func shownSource(_ record: QuarantineRecord, from current: URL) -> String {
        guard let side = sides.first(where: { $0.name == record.side }) else { return record.source }
        let root = side.path.hasSuffix("/") ? side.path : side.path + "/"
        guard record.source.hasPrefix(root) else { return record.source }
        return joinPath(shownPath(side, from: current), String(record.source.dropFirst(root.count)))
    }

    /// A quarantine copy as shown: inside this run's quarantine folder.
    package func shownPath(_ record: QuarantineRecord, from current: URL) -> String {
        record.folder.map { joinPath(shownPath($0, from: current), record.copy) } ?? record.copy
    }

    /// An export file as shown: inside this run's export folder.
    package func shownPath(_ record: ExportRecord, from current: URL) -> String {
        record.folder.map { joinPath(shownPath($0, from: current), record.path) } ?? record.path
    }

    /// A resolved path relative to `current` when under it (`.` for it), else absolute.
    package func shownPath(_ url: URL, from current: URL) -> String {
        ReckonCore.shownPath(url, from: current)
    }
}

extension Report {
    /// Which drift sentence tells of a difference: a conflict when both
    /// sides moved; a memo on one side only by which side moved, when that
    /// is known (gained on one side, or lost on the other); else by its kind.
    static func driftSentence(_ difference: Difference) -> Int {
        switch (difference.kind, difference.changed) {
        case (_, .both): 0
        case (.onlyOnRemote, .remote): 1
        case (.onlyOnRemote, .local): 2
        case (.onlyOnRemote, _): 3
        case (.onlyOnLocal, .local): 4
        case (.onlyOnLocal, .remote): 5
        case (.onlyOnLocal, _): 6
        case (.archivedOnOneSide, _): 7
        case (.deletedOnOneSide, _): 8
        case (.changed, _), (.cannotCompare, _): 9
        }
    }
}
