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

    /// The remote's name, and how reports name it.
    package var remote: String
    var remoteLabel: String?
    package var use: Use
    /// For `unreadable`, the file (under the state folder as the user spelled it) and why.
    package var note: String?
    /// The agreement decided from.
    var previous: Agreement?
    /// The file the agreement is kept in; nil without a state folder.
    var url: URL?

    /// The agreement of `local` and `remote` as `found` in the state folder
    /// (`Agreement.read` of `url`), or seeded from their baselines when none was ever written.
    init(
        found: StateFile<Agreement>, url: URL?, local: SideBaseline, remote: SideBaseline, localSpec: SideSpec, remoteSpec: SideSpec,
        stateDir: URL?, statePath: String?
    ) {
        self.remote = remoteSpec.name
        self.remoteLabel = remoteSpec.label
        self.url = url
        let identities = (SideIdentity(localSpec), SideIdentity(remoteSpec))
        switch found {
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

    /// Why the pair's agreement file was not used, in `strings`' words; nil when it was, or there is none.
    func notUsed(local: SideSpec, strings: Strings) -> String? {
        let label = remoteLabel ?? remote
        switch use {
        case .anotherPair: return strings.agreementOfOtherSides(local.label, label, note ?? "")
        case .unreadable: return strings.agreementUnreadable(local.label, label, note ?? "")
        default: return nil
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
    /// memo that differs or could not be read keeps its last agreement, and
    /// so does one agreed as before (with the time they came to agree on it).
    /// Nothing is written when nothing moved.
    /// Nothing is saved when either side failed or the disk failed to give
    /// some of it, since what the run saw is not what the sides hold.
    func toSave(
        deep: Bool, local: SideBaseline, remote: SideBaseline, differences: [Difference], startedAt: Timestamp,
        identities: (SideIdentity, SideIdentity)
    )
        -> Agreement?
    {
        guard deep, url != nil, !local.failed, !remote.failed, !local.diskTrouble, !remote.diskTrouble else { return nil }
        let keep = MemoID.union([differences.filter { $0.remote == self.remote }.map(\.id), local.unread, remote.unread])
        let before = previous?.memos ?? IDMap()
        let (l, r) = (local.current, remote.current)
        var ids: [MemoID] = []
        var entries: [Agreement.Entry] = []
        ids.reserveCapacity(max(l.count, r.count))
        entries.reserveCapacity(ids.capacity)
        // Each memo either side holds, or the last agreement kept, in id order: the four sorted lists walked together.
        var (i, j, b, k) = (0, 0, 0, 0)
        while i < l.count || j < r.count || b < before.count {
            var id = MemoID(high: .max, low: .max)
            if i < l.count { id = min(id, l.keys[i]) }
            if j < r.count { id = min(id, r.keys[j]) }
            if b < before.count { id = min(id, before.keys[b]) }
            let mine = i < l.count && l.keys[i] == id ? l.values[i] : nil
            let theirs = j < r.count && r.keys[j] == id ? r.values[j] : nil
            let kept = b < before.count && before.keys[b] == id ? before.values[b] : nil
            if mine != nil { i += 1 }
            if theirs != nil { j += 1 }
            if kept != nil { b += 1 }
            while k < keep.count && keep[k] < id { k += 1 }
            if k < keep.count && keep[k] == id {
                if let kept {
                    ids.append(id)
                    entries.append(kept)
                }
                continue
            }
            // A memo read whole on each side that holds it live; none is held by neither.
            guard mine != nil || theirs != nil, mine.map({ !$0.isLive || $0.digest != nil }) ?? true,
                theirs.map({ !$0.isLive || $0.digest != nil }) ?? true
            else { continue }
            ids.append(id)
            // Agreed as before: the entry keeps the time they came to agree on this version.
            let now = Agreement.Entry(local: mine, remote: theirs, time: startedAt)
            entries.append(kept.map { $0.local == now.local && $0.remote == now.remote } == true ? kept! : now)
        }
        // Nothing moved since the file was written: it is not written again.
        if use == .used, ids == before.keys, entries == before.values { return nil }
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
