import Foundation

/// How much of the memos' content the pages show (`reports.content` in a
/// definition, `--report-content` on the command line): for reports that
/// are mailed or published. `report.json` never holds bodies.
package enum ReportContent: String, Sendable, CaseIterable {
    /// Bodies, titles and tags.
    case full
    /// Titles and tags, no bodies.
    case titles
    /// Ids, sigils, the names of the fields that differ, dates and states.
    case none
}

/// What the pages show of one differing memo besides what `report.json`
/// holds: each side's version as read, each side's fingerprint, and the
/// choices a plan would offer for it.
package struct MemoDetail: Sendable, Equatable {
    /// Each side's memo as read; nil where the side has no usable file, or
    /// where it was not read (a quick check).
    package var local: Memo?
    package var remote: Memo?
    /// Each side's fingerprint of the memo (`Fingerprint.token`); nil where
    /// the side has no entry for it.
    package var localPrint: String?
    package var remotePrint: String?
    /// The memo files were read: false after a quick check.
    package var read: Bool
    /// What a person may choose for the memo; nil when it cannot be compared.
    package var choice: ChoiceOffer?

    package init(
        local: Memo? = nil, remote: Memo? = nil, localPrint: String? = nil, remotePrint: String? = nil, read: Bool,
        choice: ChoiceOffer? = nil
    ) {
        self.local = local
        self.remote = remote
        self.localPrint = localPrint
        self.remotePrint = remotePrint
        self.read = read
        self.choice = choice
    }

    /// One side's memo.
    package func memo(_ role: SideRole) -> Memo? { role == .local ? local : remote }
}

/// The choices a report offers for one memo a plan cannot settle alone.
package struct ChoiceOffer: Sendable, Equatable {
    /// One choice not offered, and why.
    package struct Refusal: Sendable, Equatable {
        package enum Why: Sendable, Equatable {
            /// It would write this side, which reckon may not write, for this reason.
            case notWritable(label: String, NotWritable)
            /// "Both" keeps two versions, and only one side holds one.
            case oneVersion
            /// "Both" keeps the newer version under the id, and the times are the same.
            case sameTime
        }

        package var take: ConflictChoices.Take
        package var why: Why
    }

    /// The choices offered, in the order local, remote, both.
    package var offered: [ConflictChoices.Take]
    package var refused: [Refusal]
    /// The side whose version is newer, where keeping it is offered ("newer
    /// for all" takes it); nil when both times are the same, or it is not offered.
    package var newer: SideRole?
    /// The side that alone changed the memo since the sides last agreed
    /// (or alone holds one they never agreed on), whose version the page
    /// chooses at first, as a plan would; nil when a person must choose.
    package var preselected: SideRole?

    /// A side as the choices see it: its label, and why reckon may not
    /// write it, asked once for all the differences (it resolves the
    /// side's path on disk).
    package struct Side: Sendable {
        let label: String
        let whyNotWritable: NotWritable?

        package init(_ spec: SideSpec) {
            label = spec.label
            whyNotWritable = spec.whyNotWritable
        }
    }

    /// The choices for `difference`: a choice that would write a side
    /// reckon may not write is refused with that side's reason; "both"
    /// needs a live version on each side to keep, and both sides written.
    package init(_ difference: Difference, local: Side, remote: Side) {
        newer = difference.newerSide
        offered = []
        refused = []
        let writes: [ConflictChoices.Take: [Side]] = [.local: [remote], .remote: [local], .both: [local, remote]]
        let bothLive = difference.sigil == .differs && difference.kind != .deletedOnOneSide
        for take in ConflictChoices.Take.allCases {
            if let blocked = writes[take]!.first(where: { $0.whyNotWritable != nil }) {
                refused.append(Refusal(take: take, why: .notWritable(label: blocked.label, blocked.whyNotWritable!)))
            } else if take == .both && !bothLive {
                refused.append(Refusal(take: take, why: .oneVersion))
            } else if take == .both && newer == nil {
                refused.append(Refusal(take: take, why: .sameTime))
            } else {
                offered.append(take)
            }
        }
        let kept = Set(offered.map(\.rawValue))
        newer = newer.flatMap { kept.contains($0.rawValue) ? $0 : nil }
        preselected = difference.movedAlone.flatMap { kept.contains($0.rawValue) ? $0 : nil }
    }
}

extension MemoDetail {
    /// The details of `differences`, in their order: both sides' memos
    /// read (in a deep check: the pages leave out what `reports.content`
    /// hides, and show the dates), with their fingerprints and the choices
    /// a plan would offer.
    package static func read(_ differences: [Difference], sides: LoadedSides, deep: Bool) -> [MemoDetail] {
        var memos: [String: [MemoID: Memo]] = [:]
        if deep {
            for (listing, store) in zip(sides.sides, sides.stores) {
                let remote = listing.spec.role == .remote ? listing.spec.name : nil
                let ids = Set(differences.filter { remote == nil || $0.remote == remote }.map(\.id)).sorted()
                memos[listing.spec.name] = readMemos(ids, of: listing, store: store).compactMapValues { try? $0.get() }
            }
        }
        let local = sides.local
        let localSide = ChoiceOffer.Side(local.spec)
        let remoteSides = sides.remotes.map { ChoiceOffer.Side($0.spec) }
        return differences.map { difference in
            let at = sides.remotes.firstIndex { $0.spec.name == difference.remote }!
            let remote = sides.remotes[at]
            return MemoDetail(
                local: memos[local.spec.name]?[difference.id], remote: memos[remote.spec.name]?[difference.id],
                localPrint: local.fingerprint(of: difference.id)?.token, remotePrint: remote.fingerprint(of: difference.id)?.token,
                read: deep,
                choice: difference.sigil == .cannotCompare ? nil : ChoiceOffer(difference, local: localSide, remote: remoteSides[at]))
        }
    }

    /// The memos of `ids` that `listing`'s side holds, read through its
    /// store: each memo, or the problem that makes it unusable (a damaged
    /// file, named with why). An id the side has no file or row of is left out.
    static func readMemos(_ ids: [MemoID], of listing: SideListing, store: any MemoStore) -> [MemoID: Result<Memo, Problem>] {
        let holdsFiles = type(of: listing.spec.kind).holdsFiles
        let wanted = ids.compactMap { id in holdsFiles ? listing.files[id].map { (id, $0) } : listing.entries[id].map { _ in (id, .capital) } }
        var result: [MemoID: Result<Memo, Problem>] = [:]
        for ((id, _), read) in zip(wanted, store.read(wanted, chunkSize: 64, as: .memo, then: { $0 })) { result[id] = read }
        return result
    }
}

/// The command lines that carry out the choices made in a report's page:
/// `reckon plan` for the run's sides, then `reckon apply` of its plan.
/// Every path and name is POSIX single-quoted.
package struct RepairCommand: Sendable, Equatable {
    /// `reckon plan` and its arguments, quoted, without `--remote` or any `--take`.
    package var plan: String
    /// Whether the plan names its remote (`--remote NAME`): a pipeline with more than one.
    package var namesRemote: Bool
    /// `reckon apply` of the plan.json that command writes, without `--yes`.
    package var apply: String

    /// For a pipeline: its definition's absolute path, and `--remote NAME`
    /// where it has more than one remote.
    package static func pipeline(_ definition: PipelineDefinition) -> RepairCommand? {
        guard let file = definition.file, let state = definition.stateDir else { return nil }
        return RepairCommand(
            plan: "reckon plan \(quoted(realPath(file.path)))", namesRemote: definition.remotes.count > 1,
            apply: "reckon apply \(quoted(joinPath(realPath(state.path), "plan.json")))")
    }

    /// For a one-shot reconcile: its sides and the folder its baselines are in, each absolute.
    package static func sides(local: String, remote: String, out: String, app: String?) -> RepairCommand {
        RepairCommand(
            plan: "reckon plan --local \(quoted(local)) --remote \(quoted(remote)) --out \(quoted(out))"
                + (app.map { " --app \(quoted($0))" } ?? ""), namesRemote: false,
            apply: "reckon apply \(quoted(joinPath(out, "plan.json")))")
    }

    /// The plan line for `remote` with one `--take ID=side` per choice.
    package func plan(remote: String, _ takes: [(MemoID, ConflictChoices.Take)]) -> String {
        ([planWithoutChoices(remote: remote)] + takes.map { "--take \($0.value)=\($1.rawValue)" }).joined(separator: " ")
    }

    /// The plan line for `remote`, before its choices.
    package func planWithoutChoices(remote: String) -> String { plan + (namesRemote ? " --remote \(Self.quoted(remote))" : "") }

    /// `text` as one shell word: in single quotes, each `'` written `'\''`;
    /// a run of control or format characters (a tab, a newline) in `$'…'`
    /// with C escapes (`$'\t'`, `$'\xe2\x80\xae'`), which bash, zsh, ksh and
    /// POSIX.1-2024's sh read as those bytes, so the line holds none raw.
    package static func quoted(_ text: String) -> String {
        var out = ""
        var plain = ""
        var escaped = ""
        func flushPlain() {
            if !plain.isEmpty { out += "'" + plain.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            plain = ""
        }
        func flushEscaped() {
            if !escaped.isEmpty { out += "$'" + escaped + "'" }
            escaped = ""
        }
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                flushEscaped()
                plain.unicodeScalars.append(scalar)
                continue
            }
            flushPlain()
            switch scalar {
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default:
                for byte in String(scalar).utf8 { escaped += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16) }
            }
        }
        flushPlain()
        flushEscaped()
        return out.isEmpty ? "''" : out
    }
}
