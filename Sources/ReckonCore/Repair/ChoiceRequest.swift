import Foundation

/// The choices given for one plan, as a person gave them: `--take`s (each
/// memo named by its id or the start of it), a choices file saved from a
/// report's page, and `--prefer`. Checked against the sides as they are
/// now, they become the plan's `ConflictChoices`; a choice that cannot be
/// carried out as it was made refuses the whole plan.
package struct ChoiceRequest: Sendable {
    /// Each memo's fingerprint on each side as a report saw it, carried by
    /// a `--take ID=SIDE@LOCAL,REMOTE` that a report's page built: each a
    /// `Fingerprint.token`, or `none` where the side had no entry. With it,
    /// a `--take` is refused for a memo changed since, as a choices file is.
    package struct Seen: Sendable, Equatable {
        package var local: Fingerprint?
        package var remote: Fingerprint?

        package init(local: Fingerprint?, remote: Fingerprint?) {
            self.local = local
            self.remote = remote
        }

        /// Reads `LOCAL,REMOTE`; nil when it is not two tokens (or `none`) joined by a comma.
        package init?(_ text: some StringProtocol) {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            var prints: [Fingerprint?] = []
            for part in parts {
                if part == "none" {
                    prints.append(nil)
                } else if let print = Fingerprint(token: String(part)) {
                    prints.append(print)
                } else {
                    return nil
                }
            }
            self.init(local: prints[0], remote: prints[1])
        }

        /// `LOCAL,REMOTE`, as a report's page writes it after `@`.
        package var text: String { [local, remote].map { $0?.token ?? "none" }.joined(separator: ",") }
    }

    package var takes: [(id: MemoIDPrefix, take: ConflictChoices.Take, seen: Seen?)]
    package var file: ChoicesFile?
    package var prefer: ConflictChoices.Prefer?
    /// The pipeline a report of the sides being planned names (`reconcile`
    /// for a one-shot pair): the choices file must name it.
    package var pipeline: String

    package init(
        takes: [(id: MemoIDPrefix, take: ConflictChoices.Take, seen: Seen?)] = [], file: ChoicesFile? = nil, prefer: ConflictChoices.Prefer? = nil,
        pipeline: String
    ) {
        self.takes = takes
        self.file = file
        self.prefer = prefer
        self.pipeline = pipeline
    }

    /// What to do when the choices file no longer fits the sides.
    package static let chooseAgain =
        "Make the report again (reckon run, or reckon reconcile --out), choose again in its page, save the choices, and plan with them; nothing was written."

    /// What to do when a `--take` copied from a report's page no longer fits the sides.
    package static let chooseAgainTakes =
        "Make the report again (reckon run, or reckon reconcile --out), choose again in its page, and copy its plan line again; nothing was written."

    /// Refuses a choices file saved from a report of another pipeline or
    /// remote; checked before any side is read.
    package func checkFile(remote: String) throws(PlanError) {
        guard let file, file.pipeline != pipeline || file.remote != remote else { return }
        throw PlanError(
            choicesFile:
                "\(file.shown): was saved from a report of the pipeline '\(file.pipeline)' and its remote '\(file.remote)', but this plan is for the pipeline '\(pipeline)' and its remote '\(remote)'"
        )
    }

    /// The choices for a plan of `local` and `remote`, whose `differences`
    /// are as reconciled now. Each `--take` names one memo that either side
    /// holds, and that differs and can be compared. Each choice of the file
    /// must still be one the report would offer: the memo known, still
    /// needing a choice, the side it writes writable, and its fingerprint
    /// on each side what the report saw. Throws the refusal, naming every
    /// memo of the file that fails, with its reason.
    package func choices(local: SideListing, remote: SideListing, differences: [Difference]) throws(PlanError) -> ConflictChoices {
        let listings = [SideRole.local: local, .remote: remote]
        let known = MemoID.union([local.knownIDs, remote.knownIDs])
        let sides = "\(local.spec.label) or \(remote.spec.label)"
        var result = ConflictChoices(prefer: prefer)
        var seenByTake: [(id: MemoID, take: ConflictChoices.Take, seen: Seen)] = []
        for (prefix, take, seen) in takes {
            let id: MemoID
            switch prefix.resolve(among: known, sides: sides) {
            case .success(let found): id = found
            case .failure(let refusal): throw PlanError(take: refusal.description)
            }
            if let earlier = result.take[id], earlier != take {
                throw PlanError(take: "names the memo \(id) twice, as \(earlier.rawValue) and as \(take.rawValue); choose one")
            }
            result.take[id] = take
            if let seen { seenByTake.append((id, take, seen)) }
        }
        var differing: [MemoID: Difference] = [:]
        for difference in differences { differing[difference.id] = difference }
        if let unknown = result.take.keys.sorted().first(where: { differing[$0] == nil }) {
            throw PlanError(take: "names the memo \(unknown), which does not differ between the sides; nothing was written")
        }
        if let broken = differences.first(where: { result.take[$0.id] != nil && $0.sigil == .cannotCompare }) {
            throw PlanError(
                take: "names the memo \(broken.id), which cannot be compared (\(Self.problems(broken, listings))); mend it first; nothing was written"
            )
        }
        // A `--take` that carries what the report saw is checked as a choice of a choices file is.
        var refusedTakes: [String] = []
        for (id, take, seen) in seenByTake {
            let choice = ChoicesFile.Choice(id: id, take: take, local: seen.local, remote: seen.remote)
            let why = Self.refusal(
                of: choice, difference: differing[id], known: true, listings: listings,
                offering: (ChoiceOffer.Side(listings[.local]!.spec), ChoiceOffer.Side(listings[.remote]!.spec)), sides: sides)
            if let why { refusedTakes.append("  \(id): \(why)") }
        }
        guard refusedTakes.isEmpty else {
            var error = PlanError(
                take:
                    "'--take': \(refusedTakes.count == 1 ? "a choice" : "\(refusedTakes.count) choices") made in a report cannot be carried out as made:\n"
                    + refusedTakes.joined(separator: "\n"))
            error.advice = Self.chooseAgainTakes
            throw error
        }
        guard let file else { return result }
        if let both = file.choices.first(where: { result.take[$0.id] != nil }) {
            throw PlanError(take: "and \(file.shown) both choose the memo \(both.id); choose it in one place")
        }
        var refused: [String] = []
        let local = ChoiceOffer.Side(listings[.local]!.spec)
        let remote = ChoiceOffer.Side(listings[.remote]!.spec)
        for choice in file.choices {
            let why = Self.refusal(
                of: choice, difference: differing[choice.id], known: known.binarySearchContains(choice.id), listings: listings,
                offering: (local, remote), sides: sides)
            if let why {
                refused.append("  \(choice.id): \(why)")
            } else {
                result.take[choice.id] = choice.take
            }
        }
        guard refused.isEmpty else {
            let count = "\(refused.count) of its choices"
            throw PlanError(choicesFile: "\(file.shown): \(count) cannot be carried out as made:\n" + refused.joined(separator: "\n"))
        }
        return result
    }

    /// Why one choice of the file cannot be carried out now; nil when it can.
    /// `offering` is both sides as the choices see them, asked once for the whole file.
    static func refusal(
        of choice: ChoicesFile.Choice, difference: Difference?, known: Bool, listings: [SideRole: SideListing],
        offering: (local: ChoiceOffer.Side, remote: ChoiceOffer.Side), sides: String
    ) -> String? {
        guard known else { return "no memo on \(sides) has this id" }
        if let difference, difference.sigil == .cannotCompare {
            return "cannot be compared now (\(problems(difference, listings))); mend it first"
        }
        let moved = SideRole.allCases.filter { role in
            Fingerprint.change(from: choice.fingerprint(role), to: listings[role]!.fingerprint(of: choice.id)) != nil
        }
        if !moved.isEmpty {
            return "changed on \(moved.map { listings[$0]!.spec.label }.joined(separator: " and ")) since the report"
        }
        guard let difference else { return "is the same on both sides now; there is nothing to choose" }
        let offer = ChoiceOffer(difference, local: offering.local, remote: offering.remote)
        if let refusal = offer.refused.first(where: { $0.take == choice.take }) {
            return "'\(choice.take.rawValue)' cannot be chosen: \(ReviewStrings.en.refusal(refusal.why))"
        }
        return nil
    }

    /// What makes `difference` uncomparable, on each side that has a problem.
    static func problems(_ difference: Difference, _ listings: [SideRole: SideListing]) -> String {
        [(difference.local.problem, SideRole.local), (difference.remoteState.problem, .remote)].compactMap { problem, role in
            problem.map { "\(listings[role]!.spec.label): \($0)" }
        }.joined(separator: "; ")
    }
}

extension [MemoID] {
    /// Whether the sorted array holds `id`.
    func binarySearchContains(_ id: MemoID) -> Bool {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < count && self[low] == id
    }
}
