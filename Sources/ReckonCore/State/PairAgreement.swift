import Foundation

/// The local side's and one remote's agreement in a run: what was found in
/// the state folder, which side changed each memo that differs since they
/// last agreed, and what to save after the run.
package struct PairAgreement: Sendable {
    /// What became of the pair's agreement file (`agreement` in a side's remote report).
    package enum Use: String, Sendable, Codable, CaseIterable {
        /// Found, of this pair, and decided from.
        case used
        /// None: made from the two sides' baselines, written before agreements were kept.
        case seeded
        /// None yet, and no baselines to make one from.
        case none
        /// One of another pair of sides: not used.
        case anotherPair = "another-pair"
        /// A file that cannot be read as an agreement: not used.
        case unreadable
    }

    /// The remote's name.
    package var remote: String
    package var use: Use
    /// For `unreadable`, the file (under the state folder as the user spelled it) and why.
    package var note: String?
    /// The agreement decided from.
    var previous: Agreement?
    /// The file the agreement is kept in; nil without a state folder.
    var url: URL?

    /// Reads the agreement of `local` and `remote` from the state folder,
    /// or seeds one from their baselines when none was ever written.
    init(local: SideBaseline, remote: SideBaseline, localSpec: SideSpec, remoteSpec: SideSpec, stateDir: URL?, statePath: String?) {
        self.remote = remoteSpec.name
        url = stateDir.map { Agreement.url(in: $0, remote: remoteSpec.name) }
        let identities = (SideIdentity(localSpec), SideIdentity(remoteSpec))
        switch url.map(Agreement.read) ?? .none {
        case .none:
            previous = Self.seeded(local: local.previous, remote: remote.previous, identities)
            use = previous == nil ? .none : .seeded
        case .unreadable(let reason):
            use = .unreadable
            note = "\(joinPath(statePath ?? stateDir?.path ?? "", url!.lastPathComponent)): \(reason)"
        case .found(let found):
            if found.isOf(local: identities.0, remote: identities.1) {
                use = .used
                previous = found
            } else {
                use = .anotherPair
                note = "\(found.local.shown) and \(found.remote.shown)"
            }
        }
    }

    /// An agreement made from two baselines of this pair: every memo both
    /// hold with the same digest and state, agreed at the older baseline's time.
    static func seeded(local: Baseline?, remote: Baseline?, _ identities: (SideIdentity, SideIdentity)) -> Agreement? {
        guard let local, let remote, local.side.isSameSide(as: identities.0), remote.side.isSameSide(as: identities.1) else { return nil }
        let time = min(local.time, remote.time)
        var ids: [MemoID] = []
        var entries: [Agreement.Entry] = []
        for (id, l) in local.memos.pairs {
            guard let r = remote.memos[id], let digest = l.digest, r.digest == digest, l.archived == r.archived, l.deleted == r.deleted
            else { continue }
            ids.append(id)
            entries.append(Agreement.Entry(local: l, remote: r, time: time))
        }
        return Agreement(local: identities.0, remote: identities.1, memos: IDMap(sortedKeys: ids, values: entries))
    }

    /// Which side changed `difference`'s memo since the two last agreed on
    /// it, and when that was. Never agreed: the side that alone holds it
    /// (`+`, `-`) is told by `Difference.movedAlone`; any other is `unknown`.
    func direction(of difference: Difference, local: SideBaseline, remote: SideBaseline) -> (Difference.Changed, Timestamp?) {
        Agreement.direction(previous?.memos[difference.id], local: local.current[difference.id], remote: remote.current[difference.id])
    }

    /// What to write to the pair's agreement file after a run that found
    /// `differences` between them, if anything. Only a deep run moves it,
    /// and only for the memos it saw equal on both sides, read whole; a
    /// memo that differs or could not be read keeps its last agreement.
    /// Nothing is saved when either side failed or the disk failed to give
    /// some of it, since what the run saw is not what the sides hold.
    func toSave(
        deep: Bool, local: SideBaseline, remote: SideBaseline, differences: [Difference], startedAt: Timestamp,
        identities: (SideIdentity, SideIdentity)
    )
        -> Agreement?
    {
        guard deep, url != nil, !local.failed, !remote.failed, !local.diskTrouble, !remote.diskTrouble else { return nil }
        var keep = Set(differences.lazy.filter { $0.remote == self.remote }.map(\.id))
        keep.formUnion(local.unread)
        keep.formUnion(remote.unread)
        let before = previous?.memos ?? IDMap()
        var ids: [MemoID] = []
        var entries: [Agreement.Entry] = []
        ids.reserveCapacity(max(local.current.count, remote.current.count))
        entries.reserveCapacity(ids.capacity)
        // Each memo either side holds, or the last agreement kept, in id order.
        for id in MemoID.union([local.current.keys, remote.current.keys, before.keys]) {
            if keep.contains(id) {
                if let kept = before[id] {
                    ids.append(id)
                    entries.append(kept)
                }
                continue
            }
            let l = local.current[id]
            let r = remote.current[id]
            // A memo read whole on each side that holds it live; none is held by neither.
            guard l != nil || r != nil, [l, r].allSatisfy({ print in print.map { !$0.isLive || $0.digest != nil } ?? true }) else { continue }
            ids.append(id)
            entries.append(Agreement.Entry(local: l, remote: r, time: startedAt))
        }
        return Agreement(local: identities.0, remote: identities.1, memos: IDMap(sortedKeys: ids, values: entries))
    }
}

extension Agreement {
    /// Which side moved from `entry` (the memo as both sides last agreed on
    /// it; nil: never) to `local` and `remote` (each side's fingerprint now),
    /// and when they agreed.
    package static func direction(_ entry: Entry?, local: Fingerprint?, remote: Fingerprint?) -> (Difference.Changed, Timestamp?) {
        guard let entry else { return (.unknown, nil) }
        switch (entry.moved(.local, to: local), entry.moved(.remote, to: remote)) {
        case (true, true): return (.both, entry.time)
        case (true, false): return (.local, entry.time)
        case (false, true): return (.remote, entry.time)
        case (false, false): return (.neither, entry.time)
        }
    }
}
