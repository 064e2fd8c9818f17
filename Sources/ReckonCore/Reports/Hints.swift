import Foundation

/// What every rendering of a report shares: the sentences, the count rows,
/// the run's time, a difference in words.
extension Report {
    /// The sentences that say what the drift means and what to do, one per
    /// kind of drift, in the order a person should act on them.
    public func hints(_ s: Strings) -> [String] {
        var lines: [String] = []
        let localLabel = local.label
        for side in sides where side.status == .failed {
            lines.append(s.sideFailed(side.label, side.problems.first?.message ?? "unknown reason"))
        }
        for side in sides where side.countsFrom == "memo-files" {
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
        for side in sides where side.status != .failed {
            let errors = side.problems.filter { $0.severity == .error }.count
            if errors > 0 { lines.append(s.sideHasProblems(side.label, errors)) }
        }
        if let exportFailure { lines.append(s.exportFailed(exportFailure)) }
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
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        let name = zone.secondsFromGMT() == 0 && ["GMT", "UTC"].contains(zone.identifier) ? "UTC" : zone.identifier
        return formatter.string(from: Date(timeIntervalSince1970: Double(time.seconds))) + " " + name
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

    /// What differs in a few words: the fields for a change, else the kind.
    public func whatDiffers(_ difference: Difference, _ s: Strings) -> String {
        difference.kind == .changed ? difference.fields.joined(separator: ", ") : s.kind(difference.kind, label(ofRemote: difference.remote))
    }
}
