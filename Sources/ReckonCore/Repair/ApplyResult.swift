import Foundation

/// What one `reckon apply` (or `reckon undo`) run did, action by action:
/// the report's model, written as `report.json` in the run's folder.
package struct ApplyResult: Sendable, Equatable, Codable {
    package static let currentSchemaVersion = 1

    package enum Mode: String, Sendable, Codable, CaseIterable {
        case apply
        case undo
    }

    /// What became of one action.
    package enum Outcome: String, Sendable, Codable, CaseIterable {
        /// Written, after its backup was verified.
        case applied
        /// Already as planned (written by an interrupted run of this plan, or by someone else the same way).
        case alreadyDone = "already-done"
        /// Its target changed since the plan (or, for undo, since the apply): left exactly as found.
        case changedSince = "changed-since"
        /// Destructive, and not confirmed (no `--yes`, no typed "yes").
        case notConfirmed = "not-confirmed"
        /// A backup or a write failed; nothing was written for this memo, or what was written was put back.
        case failed
        /// A conflict left for a person to choose.
        case conflict
        /// The plan said it could not be done (a store or read-only side).
        case notPossible = "not-possible"
        /// Nothing to do (a memo that cannot be compared).
        case nothing
        /// Undo: put back as it was before the apply.
        case restored
    }

    package struct ActionResult: Sendable, Equatable, Codable {
        package var id: MemoID
        package var action: PlanAction.Kind
        package var from: SideRole?
        package var to: SideRole?
        package var outcome: Outcome
        /// Why, in words: the plan's reason, then what happened.
        package var reason: String
        package var detail: String?
        package var choice: String?
        package var versions: [String: MemoVersion]
        /// The plan's reason and choice, and the detail, as structures each
        /// language says in its own words; report.json keeps the English sentences alone.
        package var why: PlanReason?
        package var chosen: PlanChoice?
        package var happened: ApplyDetail?

        enum CodingKeys: String, CodingKey {
            case id, action, from, to, outcome, reason, detail, choice, versions
        }

        /// `from`, `to` and `choice` are written null when there is none, as `plan.json` writes them.
        package func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(action, forKey: .action)
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
            try container.encode(outcome, forKey: .outcome)
            try container.encode(reason, forKey: .reason)
            try container.encodeIfPresent(detail, forKey: .detail)
            try container.encode(choice, forKey: .choice)
            try container.encode(versions, forKey: .versions)
        }

        package init(_ action: PlanAction, outcome: Outcome, detail: String? = nil) {
            id = action.id
            self.action = action.action
            from = action.from
            to = action.to
            self.outcome = outcome
            reason = action.reason
            self.detail = detail
            choice = action.choice
            versions = Dictionary(uniqueKeysWithValues: action.versions.map { ($0.key.rawValue, $0.value) })
            why = action.why
            chosen = action.chosen
        }

        /// Says what became of the action: the structure, and its English sentence.
        package mutating func tell(_ happened: ApplyDetail) {
            self.happened = happened
            detail = RepairStrings.en.detail(happened)
        }

        /// What became of `action`, said by `happened` (its English sentence is `detail`).
        package init(_ action: PlanAction, outcome: Outcome, happened: ApplyDetail) {
            self.init(action, outcome: outcome, detail: RepairStrings.en.detail(happened))
            self.happened = happened
        }
    }

    package var schemaVersion = ApplyResult.currentSchemaVersion
    package var mode: Mode
    /// The run's id: its UTC start time (`20261201T173000Z`).
    package var run: String
    package var resumed: Bool
    package var pipeline: String
    /// Whether the plan was made without a definition (`--local`, `--remote`),
    /// so that its pipeline's name is only the command's.
    package var withoutDefinition = false
    /// The pipeline's name as the pages and the text say it: nil without a definition.
    package var named: String? { withoutDefinition ? nil : pipeline }
    /// The local side, then the remote, as the plan names them.
    package var sides: [PlanSide]
    /// The state folder (its real path) and where this run's backups are in it.
    package var stateDir: String
    package var backups: String
    package var actions: [ActionResult]
    /// Sentences about the run as a whole (a lock taken over, a file that could not be restored).
    package var notes: [String]
    /// Undo: files left as found because they changed after the apply.
    package var leftAlone: [String] = []
    /// A file could not be read, written or put back (said in `notes`).
    package var trouble = false
    /// `notes` as structures each language says in its own words, when every
    /// note was made as one (report.json keeps the English sentences alone).
    package var runNotes: [RunNote] = []
    /// The language of the run's text and pages: the plan's, unless `--lang` said another.
    package var language = "en"

    enum CodingKeys: String, CodingKey {
        case schemaVersion, mode, run, resumed, pipeline, sides, stateDir, backups, actions, notes, leftAlone, trouble
    }

    package init(
        mode: Mode, run: String, resumed: Bool, pipeline: String, sides: [PlanSide], stateDir: String,
        actions: [ActionResult] = [], notes: [String] = []
    ) {
        self.mode = mode
        self.run = run
        self.resumed = resumed
        self.pipeline = pipeline
        self.sides = sides
        self.stateDir = stateDir
        backups = joinPath(stateDir, "backups/\(run)")
        self.actions = actions
        self.notes = notes
    }

    /// 0 when everything planned was done, 1 when something was skipped
    /// (changed since, not confirmed, a conflict, not possible), 2 when a
    /// backup or a write failed.
    package var exitCode: Int32 {
        if trouble || actions.contains(where: { $0.outcome == .failed }) { return 2 }
        if !leftAlone.isEmpty { return 1 }
        let settled: Set<Outcome> = [.applied, .alreadyDone, .nothing, .restored]
        return actions.allSatisfy { settled.contains($0.outcome) } ? 0 : 1
    }

    /// Adds a sentence about the run as a whole.
    package mutating func note(_ note: RunNote) {
        notes.append(RepairStrings.en.note(note))
        runNotes.append(note)
    }

    /// How many actions ended each way.
    package var totals: [Outcome: Int] { actions.reduce(into: [:]) { $0[$1.outcome, default: 0] += 1 } }

    /// `report.json`'s bytes.
    package var data: Data { JSONWriter.data(try! JSONValue(encoding: self)) }
}
