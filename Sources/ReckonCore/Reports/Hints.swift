import Foundation

/// What every rendering of a report shares: the sentences, the count rows,
/// the run's time, a difference in words.
extension Report {
    /// One line per remote read through a cache: how many memo files were
    /// downloaded and how many came from the cache.
    public func cacheLines(_ s: Strings) -> [String] {
        sides.compactMap { side in side.cacheUse.map { s.cacheUse(side.label, $0.fetched, $0.fromCache, $0.temporary) } }
    }

    /// The sentences that say what the drift means and what to do, one per
    /// kind of drift, in the order a person should act on them.
    public func hints(_ s: Strings) -> [String] {
        var lines: [String] = []
        let localLabel = local.label
        for side in sides where side.status == .failed {
            lines.append(s.sideFailed(side.label, side.problems.first?.message ?? "unknown reason"))
        }
        for side in sides where side.countsFrom == .memoFiles {
            lines.append(s.rebuiltFromMemoFiles(side.label, side.problems.first(where: \.isAboutIndex)?.message ?? "damaged"))
        }
        for remote in remotes where remote.status != .failed && local.status != .failed {
            let mine = differences.filter { $0.remote == remote.name }
            func count(_ kind: Difference.Kind) -> Int { mine.filter { $0.kind == kind }.count }
            let sentences: [(Difference.Kind, Strings.Drift)] = [
                (.onlyOnRemote, s.onlyOnRemote), (.onlyOnLocal, s.onlyOnLocal), (.archivedOnOneSide, s.archivedOnOneSide),
                (.deletedOnOneSide, s.deletedOnOneSide), (.changed, s.changed),
            ]
            for (kind, sentence) in sentences where count(kind) > 0 {
                lines.append(sentence(count(kind), localLabel, remote.label))
            }
            if count(.cannotCompare) > 0 { lines.append(s.cannotCompare(count(.cannotCompare), remote.label)) }
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

    /// Every side was read and none holds a memo: one friendly line stands
    /// instead of rows of zeros.
    public var isEmpty: Bool {
        inSync && sides.allSatisfy { $0.counts?.total == 0 }
    }

    /// One row of a side's count block.
    public struct CountRow {
        public var name: String
        public var value: Int
        /// `5 (local 4)` when a remote's count differs from the local one.
        public var drifted: String?
    }

    /// Active and Archived of a side; nil when the side could not be read.
    public func countRows(_ side: SideReport, _ s: Strings) -> [CountRow]? {
        guard let counts = side.counts else { return nil }
        let localCounts = local.counts
        return [(s.active, counts.active, localCounts?.active), (s.archived, counts.archived, localCounts?.archived)].map { name, value, localValue in
            let differs = side.role == .remote && localValue != nil && localValue != value
            return CountRow(name: name, value: value, drifted: differs ? s.drifted(value, localValue!) : nil)
        }
    }

    /// A remote's label from its name.
    public func label(ofRemote name: String) -> String {
        remotes.first { $0.name == name }?.label ?? name
    }

    /// An instant shown to a person: minutes, in the report's time zone.
    public func display(_ time: Timestamp) -> String {
        let zone = TimeZone(identifier: timeZone) ?? TimeZone(identifier: "UTC")!
        // The zone's offset at that instant (summer time included), then the civil date by arithmetic:
        // a DateFormatter per instant cost half a second for a report of 2,000 differences.
        let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(time.seconds)))
        let name = zone.secondsFromGMT() == 0 && ["GMT", "UTC"].contains(zone.identifier) ? "UTC" : zone.identifier
        return Timestamp(seconds: time.seconds + Int64(offset)).dayAndMinute() + " " + name
    }

    /// What one side holds of a differing memo, in a few words.
    public func describe(_ state: Difference.SideState, _ s: Strings) -> String {
        if let problem = state.problem { return problem }
        guard let modified = state.modifiedTime else { return s.absent }
        var parts = ["\(s.modified) \(display(modified))"]
        if let archived = state.archivedAt { parts.append("\(s.archivedState) \(display(archived))") }
        if let deleted = state.deletedAt { parts.append("\(s.deletedState) \(display(deleted))") }
        return parts.joined(separator: ", ")
    }

    /// The heading of the remote's column in a differences table: its label
    /// when there is one remote, else "Side".
    public func remoteColumn(_ s: Strings) -> String {
        remotes.count == 1 ? remotes[0].label : s.sideColumn
    }

    /// What the remote holds of a differing memo, named when there are several remotes.
    public func describeRemote(_ difference: Difference, _ s: Strings) -> String {
        let text = describe(difference.remoteState, s)
        return remotes.count == 1 ? text : "\(label(ofRemote: difference.remote)): \(text)"
    }

    /// What differs in words a person knows: which side alone archived or
    /// deleted the memo, then each field that differs ("text changed").
    public func whatDiffers(_ difference: Difference, _ s: Strings) -> String {
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
            return s.kind(difference.kind, local.label, remote)
        }
        // What a person notices first (title, text) before dates and versions.
        let order = ["title", "body", "tags", "pinned", "createdAt", "archived", "archivedAt", "deletedAt", "modifiedTime", "modifiedAt", "changeTag"]
        let fields = difference.fields.sorted { (order.firstIndex(of: $0) ?? order.count) < (order.firstIndex(of: $1) ?? order.count) }
        for field in fields where !skipped.contains(field) {
            let words = s.fieldChanged(field)
            if !parts.contains(words) { parts.append(words) }
        }
        return parts.isEmpty ? s.kind(difference.kind, local.label, remote) : parts.joined(separator: s.code == "ja" ? "、" : ", ")
    }
}

/// Paths as a person can use them from the current folder: relative when
/// they lie under it, absolute otherwise (never relative to a pipeline file).
/// Only the pages and the terminal show these; `report.json` keeps paths as given.
extension Report {
    /// A side's folder as shown.
    public func shownPath(_ side: SideReport, from current: URL) -> String {
        side.url.map { shownPath($0, from: current) } ?? side.path
    }

    /// A quarantined file's source as shown: under its side's folder as shown.
    public func shownSource(_ record: QuarantineRecord, from current: URL) -> String {
        guard let side = sides.first(where: { $0.name == record.side }) else { return record.source }
        let root = side.path.hasSuffix("/") ? side.path : side.path + "/"
        guard record.source.hasPrefix(root) else { return record.source }
        return joinPath(shownPath(side, from: current), String(record.source.dropFirst(root.count)))
    }

    /// A quarantine copy as shown: inside this run's quarantine folder.
    public func shownPath(_ record: QuarantineRecord, from current: URL) -> String {
        record.folder.map { joinPath(shownPath($0, from: current), record.copy) } ?? record.copy
    }

    /// An export file as shown: inside this run's export folder.
    public func shownPath(_ record: ExportRecord, from current: URL) -> String {
        record.folder.map { joinPath(shownPath($0, from: current), record.path) } ?? record.path
    }

    /// A resolved path relative to `current` when under it (`.` for it), else absolute.
    public func shownPath(_ url: URL, from current: URL) -> String {
        let path = url.standardizedFileURL.path
        let base = current.standardizedFileURL.path
        if path == base { return "." }
        let prefix = base.hasSuffix("/") ? base : base + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }
}
