extension Report {
    /// The sentences that say what the drift means and what to do, one per
    /// kind of drift, in the order a person should act on them.
    public func hints(_ s: Strings) -> [String] {
        var lines: [String] = []
        let localLabel = local.label
        for side in sides where side.status == .failed {
            lines.append(s.sideFailed(side.label, reason: side.problems.first?.message ?? "unknown reason"))
        }
        for side in sides where side.countsFrom == "memo-files" {
            let reason = side.problems.first { $0.path == "index.json" }?.message ?? "damaged"
            lines.append(s.rebuiltFromMemoFiles(side.label, reason: reason))
        }
        for remote in remotes where remote.status != .failed && local.status != .failed {
            let mine = differences.filter { $0.remote == remote.name }
            func count(_ kind: Difference.Kind) -> Int { mine.filter { $0.kind == kind }.count }
            let sentences: [(Difference.Kind, (Int, String, String) -> String)] = [
                (.onlyOnRemote, s.onlyOnRemote), (.onlyOnLocal, s.onlyOnLocal), (.archivedOnOneSide, s.archivedOnOneSide),
                (.deletedOnOneSide, s.deletedOnOneSide), (.changed, s.changed),
            ]
            for (kind, sentence) in sentences where count(kind) > 0 {
                lines.append(sentence(count(kind), localLabel, remote.label))
            }
            if count(.cannotCompare) > 0 { lines.append(s.cannotCompare(count(.cannotCompare), remote: remote.label)) }
        }
        if !quarantined.isEmpty { lines.append(s.quarantined(quarantined.count)) }
        let notCopied = sides.flatMap(\.problems).filter { $0.kind == .quarantineFailed }.count
        if notCopied > 0 { lines.append(s.quarantineFailed(notCopied)) }
        for side in sides where side.status != .failed {
            let errors = side.problems.filter { $0.severity == .error }.count
            if errors > 0 { lines.append(s.sideHasProblems(side.label, count: errors)) }
        }
        if let export = exports.first(where: { !$0.missing.isEmpty }) {
            lines.append(s.exportFailed("\(export.missing.count) of the memos could not be read"))
        }
        if lines.isEmpty && inSync {
            let total = sides.reduce(0) { $0 + ($1.counts?.total ?? 0) }
            lines.append(total == 0 ? s.empty(local: localLabel, remotes: remotes.map(\.label))
                                    : s.inSync(local: localLabel, remotes: remotes.map(\.label)))
        }
        return lines
    }
}
