/// Compares the local side with one remote, memo by memo.
package enum Reconciler {
    /// Every memo that is not the same on both sides, sorted by id. Memos
    /// deleted on one side and absent on the other are the same to the user
    /// and are left out. When either side failed, nothing can be compared.
    package static func differences(local: SideListing, remote: SideListing, deep: Bool) -> [Difference] {
        guard local.status != .failed, remote.status != .failed else { return [] }
        // A store keeps instants to the millisecond; across kinds they are compared so.
        let toMillisecond = local.spec.kind.precision != remote.spec.kind.precision
        let localBroken = local.brokenIDs
        let remoteBroken = remote.brokenIDs
        let ids = MemoID.union([
            local.entries.keys, local.files.keys, localBroken.keys.sorted(),
            remote.entries.keys, remote.files.keys, remoteBroken.keys.sorted()
        ])
        var result: [Difference] = []
        for id in ids {
            let l = local.entries[id]
            let r = remote.entries[id]
            let title = local.memos[id]?.title ?? remote.memos[id]?.title
            func make(_ sigil: Difference.Sigil, _ kind: Difference.Kind, _ fields: [String] = []) -> Difference {
                Difference(
                    remote: remote.spec.name, id: id, sigil: sigil, kind: kind, fields: fields, title: title,
                    local: .init(l, memo: local.memos[id], problem: localBroken[id]?.joined(separator: "; ")),
                    remoteState: .init(r, memo: remote.memos[id], problem: remoteBroken[id]?.joined(separator: "; ")))
            }
            if localBroken[id] != nil || remoteBroken[id] != nil {
                result.append(make(.cannotCompare, .cannotCompare))
                continue
            }
            let localLive = l.map { !$0.isDeleted } ?? false
            let remoteLive = r.map { !$0.isDeleted } ?? false
            switch (localLive, remoteLive) {
            case (false, false):
                continue
            case (true, false):
                result.append(r == nil ? make(.onlyOnLocal, .onlyOnLocal) : make(.differs, .deletedOnOneSide, ["deletedAt"]))
            case (false, true):
                result.append(l == nil ? make(.onlyOnRemote, .onlyOnRemote) : make(.differs, .deletedOnOneSide, ["deletedAt"]))
            case (true, true):
                let fields = differingFields(l!, r!, local.memos[id], remote.memos[id], deep: deep, toMillisecond: toMillisecond)
                guard !fields.isEmpty else { continue }
                let kind: Difference.Kind = fields.contains("archived") ? .archivedOnOneSide : .changed
                result.append(make(.differs, kind, fields))
            }
        }
        return result
    }

    /// Index fields that differ, then (deep) memo fields that differ, each named once.
    static func differingFields(
        _ l: IndexEntry, _ r: IndexEntry, _ lm: MemoSummary?, _ rm: MemoSummary?, deep: Bool,
        toMillisecond: Bool = false
    ) -> [String] {
        var fields: [String] = []
        if l.isArchived != r.isArchived { fields.append("archived") }
        if toMillisecond ? l.modifiedTime.toMillisecond != r.modifiedTime.toMillisecond : l.modifiedTime != r.modifiedTime {
            fields.append("modifiedTime")
        }
        if let a = l.changeTag, let b = r.changeTag, a != b { fields.append("changeTag") }
        if deep, let lm, let rm {
            for field in lm.differingFields(from: rm, toMillisecond: toMillisecond) where !fields.contains(field) {
                if field == "archivedAt" && fields.contains("archived") { continue }
                fields.append(field)
            }
        }
        return fields
    }
}

extension Pipeline {
    /// Compares the local side with each remote, each side with its
    /// baseline (what moved since the last run), and each memo that differs
    /// with the pair's last agreement, to tell which side changed it.
    package static var reconciling: Stage<LoadedSides, Reconciliation> {
        Stage("reconcile") { loaded, run in
            let definition = run.definition
            let (startedAt, acceptDeletions) = (run.settings.startedAt, run.settings.acceptDeletions)
            let deep = definition.check == .deep
            // The sides are compared while each side's baseline is read and compared on a core of its own.
            let workers = run.settings.process.threads
            let compared = Pending(on: workers) { loaded.remotes.flatMap { Reconciler.differences(local: loaded.local, remote: $0, deep: deep) } }
            // Each pair's agreement is read on a core of its own meanwhile too.
            let agreementURLs = loaded.remotes.map { remote in definition.stateDir.map { Agreement.url(in: $0, remote: remote.spec.name) } }
            let agreementFiles = Pending(on: workers) { agreementURLs.map { $0.map(Agreement.read) ?? .none } }
            let baselines = mapOnEveryCore(loaded.sides, chunkSize: 1, on: workers) { sides in
                sides.map {
                    SideBaseline(
                        $0, stateDir: definition.stateDir, statePath: definition.statePath, limits: definition.alarm,
                        acceptDeletions: acceptDeletions, startedAt: startedAt)
                }
            }.flatMap { $0 }
            let found = agreementFiles.wait()
            let agreements = loaded.remotes.indices.map { remote in
                PairAgreement(
                    found: found[remote], url: agreementURLs[remote], local: baselines[0], remote: baselines[remote + 1],
                    localSpec: loaded.local.spec, remoteSpec: loaded.remotes[remote].spec, stateDir: definition.stateDir,
                    statePath: definition.statePath)
            }
            var differences = compared.wait()
            for index in differences.indices where differences[index].changed != nil {
                let remote = loaded.remotes.firstIndex { $0.spec.name == differences[index].remote }!
                (differences[index].changed, differences[index].agreedAt) = agreements[remote].direction(
                    of: differences[index], local: baselines[0], remote: baselines[remote + 1])
            }
            return Reconciliation(differences: differences, baselines: baselines, agreements: agreements)
        }
    }
}
