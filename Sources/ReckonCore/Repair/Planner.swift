import Foundation

/// What a person chose for conflicts: per memo (`--take ID=…`) or for every one (`--prefer …`).
package struct ConflictChoices: Sendable, Equatable {
    package enum Take: String, Sendable, CaseIterable {
        case local, remote, both
    }

    package enum Prefer: String, Sendable, CaseIterable {
        case newer, local, remote
    }

    package var take: [MemoID: Take] = [:]
    package var prefer: Prefer?

    package init(take: [MemoID: Take] = [:], prefer: Prefer? = nil) {
        self.take = take
        self.prefer = prefer
    }
}

/// Makes a plan from a deep reconciliation of the local side with one
/// remote: one action per memo that differs, decided by which side moved
/// since the baseline. Reads the files the actions would write, for their
/// change tags and contents; writes nothing.
package struct Planner {
    /// The sides as read, with their stores.
    package var sides: LoadedSides
    package var reconciliation: Reconciliation
    /// The pipeline's name, for the plan.
    package var pipeline: String
    package var remoteName: String
    package var choices: ConflictChoices
    package var createdAt: Timestamp
    /// The definition file's real path, when the plan is made from one.
    package var definitionPath: String?
    package var stateDir: URL
    /// The language the plan is made in: its pages, and apply's and undo's.
    package var language = "en"
    /// What the process decides for reading a side's files (rclone's
    /// environment, private folders).
    package var process = ProcessSettings()

    package init(
        sides: LoadedSides, reconciliation: Reconciliation, pipeline: String, remoteName: String, choices: ConflictChoices,
        createdAt: Timestamp, definitionPath: String?, stateDir: URL
    ) {
        self.sides = sides
        self.reconciliation = reconciliation
        self.pipeline = pipeline
        self.remoteName = remoteName
        self.choices = choices
        self.createdAt = createdAt
        self.definitionPath = definitionPath
        self.stateDir = stateDir
    }

    /// What was decided for one memo, before any file is read.
    enum Decision {
        /// Make `to` hold `from`'s version (a copy, or a soft deletion when `from` has it deleted).
        case follow(from: SideRole, to: SideRole, choice: PlanChoice?, keepLoser: Bool)
        case fixIndex(SideRole)
        case conflict(ConflictNote?)
        case none
    }

    /// The local side and the remote planned for, each with its store;
    /// throws when there is no such remote or either side could not be read.
    package func pair() throws(PlanError) -> (listings: [SideRole: SideListing], stores: [SideRole: any MemoStore]) {
        guard let remote = sides.remotes.firstIndex(where: { $0.spec.name == remoteName }) else {
            throw PlanError("there is no remote named '\(remoteName)'")
        }
        let listings: [SideRole: SideListing] = [.local: sides.local, .remote: sides.remotes[remote]]
        for role in SideRole.allCases where listings[role]!.status == .failed {
            let listing = listings[role]!
            let why = listing.problems.first.map { "\(joinPath(listing.spec.path, $0.path)): \($0.message)" } ?? "it could not be read"
            throw PlanError("nothing can be planned: \(listing.spec.label) (\(listing.spec.path)) could not be read: \(why)")
        }
        return (listings, [.local: sides.stores[0], .remote: sides.stores[remote + 1]])
    }

    package func plan() throws(PlanError) -> Plan {
        let (listings, stores) = try pair()
        let differences = reconciliation.differences.filter { $0.remote == remoteName }
        let decided = differences.map { ($0, decide($0, listings)) }

        // Every file the actions read, one batch per side.
        var wanted: [SideRole: Set<MemoID>] = [.local: [], .remote: []]
        for (difference, decision) in decided {
            switch decision {
            case .follow, .conflict:
                wanted[.local]!.insert(difference.id)
                wanted[.remote]!.insert(difference.id)
            case .fixIndex(let role): wanted[role]!.insert(difference.id)
            case .none: break
            }
        }
        var files: [SideRole: SideFiles] = [:]
        for role in [SideRole.local, .remote] {
            files[role] = try SideFiles.read(listings[role]!, store: stores[role]!, ids: wanted[role]!.sorted(), process: process)
        }
        let sides = [SideRole.local, .remote].map { role in
            planSide(listings[role]!, index: files[role]!.index)
        }
        var actions: [PlanAction] = []
        for (difference, decision) in decided {
            actions.append(action(for: difference, decision, listings: listings, files: files, sides: sides))
        }
        var plan = Plan(
            createdAt: createdAt, pipeline: pipeline, definition: definitionPath, stateDir: realPath(stateDir.path),
            sides: sides, actions: actions)
        // An English plan keeps its reasons as sentences alone, as plan.json always has.
        if language != "en" {
            plan.language = language
        } else {
            for index in plan.actions.indices {
                plan.actions[index].why = nil
                plan.actions[index].chosen = nil
            }
        }
        return plan
    }

    // MARK: - Deciding

    func decide(_ difference: Difference, _ listings: [SideRole: SideListing]) -> Decision {
        let id = difference.id
        if difference.sigil == .cannotCompare {
            // An orphan file is the one `!` reckon repairs: its index entry is added.
            let errors = [SideRole.local, .remote].map { role in listings[role]!.problems.filter { $0.id == id && $0.severity == .error } }
            for (role, other) in [(SideRole.local, SideRole.remote), (.remote, .local)] {
                let mine = errors[role == .local ? 0 : 1]
                let theirs = errors[other == .local ? 0 : 1]
                if !mine.isEmpty, theirs.isEmpty, mine.allSatisfy({ $0.kind == .orphanFile }) { return .fixIndex(role) }
            }
            return .none
        }
        // An index entry that disagrees with its own memo file, on a side that may be written, is set
        // from the file first (unless a person chose for the memo): a copy would carry the entry over.
        if choices.take[id] == nil,
            let role = [SideRole.local, .remote].first(where: { role in
                listings[role]!.spec.whyNotWritable == nil && listings[role]!.problems.contains { $0.id == id && $0.kind == .indexDisagrees }
            })
        {
            return .fixIndex(role)
        }
        let labels = [SideRole.local: listings[.local]!.spec.label, .remote: listings[.remote]!.spec.label]
        // A person's choice for this memo wins, even over the side that alone moved.
        if let take = choices.take[id] {
            switch take {
            case .local:
                return .follow(from: .local, to: .remote, choice: .take(id: id, side: .local, label: labels[.local]!), keepLoser: false)
            case .remote:
                return .follow(from: .remote, to: .local, choice: .take(id: id, side: .remote, label: labels[.remote]!), keepLoser: false)
            case .both:
                guard let newer = difference.newerSide else {
                    return .conflict(.takeBothSameTime(id: id))
                }
                return .follow(
                    from: newer, to: newer == .local ? .remote : .local,
                    choice: .takeBoth(id: id, newer: labels[newer]!),
                    keepLoser: true)
            }
        }
        if let moved = difference.movedAlone { return .follow(from: moved, to: moved.other, choice: nil, keepLoser: false) }
        // --prefer chooses between two versions; a memo one side never had is not one, and is never deleted by it.
        let absent: SideRole? =
            difference.sigil == .onlyOnRemote && listings[.local]!.entries[id] == nil
            ? .local
            : difference.sigil == .onlyOnLocal && listings[.remote]!.entries[id] == nil ? .remote : nil
        if let prefer = choices.prefer, prefer != .newer, absent?.rawValue == prefer.rawValue {
            return .conflict(.preferWouldDelete(side: absent!, label: labels[absent!]!, id: id))
        }
        switch choices.prefer {
        case .local?: return .follow(from: .local, to: .remote, choice: .prefer(side: .local, label: labels[.local]!), keepLoser: false)
        case .remote?: return .follow(from: .remote, to: .local, choice: .prefer(side: .remote, label: labels[.remote]!), keepLoser: false)
        case .newer?:
            guard let newer = difference.newerSide else {
                return .conflict(.preferNewerSameTime)
            }
            return .follow(
                from: newer, to: newer == .local ? .remote : .local, choice: .preferNewer(label: labels[newer]!),
                keepLoser: false)
        case nil: return .conflict(nil)
        }
    }

    // MARK: - Building actions

    func planSide(_ listing: SideListing, index: FileTag?) -> PlanSide {
        let identity = SideIdentity(listing.spec)
        let planned = listing.spec.kind.planned()
        // Said from the case, so that each language can say it again (PlanSide.whyNotWritable).
        let notWritable = listing.spec.whyNotWritable.map { RepairStrings.en.notWritable($0, listing.spec.label) }
        return PlanSide(
            role: listing.spec.role, name: listing.spec.name, label: listing.spec.label, path: listing.spec.path,
            kind: identity.kind, place: identity.place, location: planned.location, kept: planned.kept,
            writable: notWritable == nil, notWritable: notWritable, index: index, liveMemos: listing.counts?.total ?? 0)
    }

    func action(
        for difference: Difference, _ decision: Decision, listings: [SideRole: SideListing], files: [SideRole: SideFiles],
        sides: [PlanSide]
    ) -> PlanAction {
        let id = difference.id
        let labels = [SideRole.local: listings[.local]!.spec.label, .remote: listings[.remote]!.spec.label]
        var action = PlanAction(id: id, sigil: difference.sigil, kind: difference.kind, changed: difference.changed, action: .none, reason: "")
        for role in [SideRole.local, .remote] {
            if let memo = files[role]!.memos[id]?.memo {
                action.versions[role] = MemoVersion(
                    title: memo.title, modifiedTime: memo.modifiedAt, archivedAt: memo.archivedAt,
                    deletedAt: memo.deletedAt, body: memo.body)
            } else if let entry = listings[role]!.entries[id] {
                action.versions[role] = MemoVersion(
                    title: nil, modifiedTime: entry.modifiedTime, archivedAt: entry.archivedAt,
                    deletedAt: entry.deletedAt, body: nil)
            }
        }
        switch decision {
        case .none:
            let problems = [SideRole.local, .remote].compactMap { role in
                listings[role]!.brokenIDs[id].map { PlanReason.SideProblems(side: labels[role]!, problems: $0) }
            }
            action.say(.cannotCompare(problems: problems))
            return action

        case .conflict(let note):
            action.action = .conflict
            action.say(
                .conflict(
                    changed: difference.changed ?? .unknown, local: labels[.local]!, remote: labels[.remote]!, id: id, note: note,
                    agreed: difference.agreedAt))
            return action
        case .fixIndex(let role):
            return fixIndex(action, on: role, listings: listings, files: files, sides: sides, labels: labels)
        case .follow(let from, let to, let choice, let keepLoser):
            return follow(
                action, difference, from: from, to: to, choice: choice, keepLoser: keepLoser, listings: listings, files: files,
                sides: sides, labels: labels)
        }
    }

    /// The action made not possible: `role`'s side cannot be written, so it would not do `would`.
    func notPossible(_ action: PlanAction, _ role: SideRole, sides: [PlanSide], _ would: PlanReason.Would) -> PlanAction {
        var result = action
        result.action = .notPossible
        result.to = role
        let side = sides.side(role)
        result.say(.notPossible(side: side.label, why: side.whyNotWritable!, would: would))
        result.writes = []
        result.indexChanges = []
        return result
    }

    /// An orphan memo file on `role`'s side: its entry is added to that side's
    /// index; or an entry that disagrees with its file: it is set from the file.
    func fixIndex(
        _ action: PlanAction, on role: SideRole, listings: [SideRole: SideListing], files: [SideRole: SideFiles], sides: [PlanSide],
        labels: [SideRole: String]
    ) -> PlanAction {
        var action = action
        let id = action.id
        action.action = .fixIndex
        action.to = role
        let path = "memos/" + listings[role]!.files[id]!.fileName(of: id)
        let entry = listings[role]!.entries[id]
        action.say(entry == nil ? .orphanFile(path: path, side: labels[role]!) : .indexDisagrees(path: path, side: labels[role]!))
        guard sides.side(role).writable else { return notPossible(action, role, sides: sides, .addEntry) }
        guard let memo = files[role]!.memos[id] else {
            action.action = .none
            action.say(.orphanUnreadable(path: path, side: labels[role]!))
            return action
        }
        action.indexChanges = [
            PlannedIndexChange(
                side: role, id: entry?.spelledAs.text(of: id) ?? listings[role]!.files[id]!.text(of: id), before: entry.map(EntryState.init),
                after: Self.entry(describing: memo.memo),
                file: memo.tag.map { ReadFile(path: path, tag: $0) })
        ]
        return action
    }

    /// `to` made to hold `from`'s version: a copy, or a soft deletion when
    /// `from` has the memo deleted; with `keepLoser`, `to`'s older version
    /// lives on as a conflict copy.
    func follow(
        _ action: PlanAction, _ difference: Difference, from: SideRole, to: SideRole, choice: PlanChoice?, keepLoser: Bool,
        listings: [SideRole: SideListing], files: [SideRole: SideFiles], sides: [PlanSide], labels: [SideRole: String]
    ) -> PlanAction {
        var action = action
        let id = action.id
        action.from = from
        action.to = to
        action.choose(choice)
        let source = listings[from]!
        let target = listings[to]!
        let sourceEntry = source.entries[id]
        let sourceLive = sourceEntry.map { !$0.isDeleted } ?? false
        let targetEntry = target.entries[id]
        // `both` keeps the older version only where there is one: a live memo on the side that loses.
        let keepsCopy = keepLoser && files[to]!.memos[id] != nil && targetEntry.map { !$0.isDeleted } == true
        if keepLoser && !keepsCopy {
            action.choose(.takeBothNoCopy(id: id, holder: labels[to]!, taken: labels[from]!))
        }
        let moved = difference.movedAlone
        let agreed = difference.agreedAt
        if moved == from {
            action.say(.followed(move: move(difference, live: sourceLive), side: labels[from]!, other: labels[to]!, agreed: agreed))
        } else if moved == to {
            // A person took the side that did not move: what moved is replaced, in so many words.
            let movedLive = target.entries[id].map { !$0.isDeleted } ?? false
            action.say(
                .replaced(move: move(difference, live: movedLive), side: labels[to]!, other: labels[from]!, deletes: !sourceLive, agreed: agreed))
        } else {
            // A conflict settled by a choice says so, never that one side alone moved.
            action.say(
                .settled(
                    changed: difference.changed ?? .unknown, local: labels[.local]!, remote: labels[.remote]!, from: labels[from]!,
                    to: labels[to]!, deletes: !sourceLive, keepsCopy: keepsCopy, agreed: agreed))
        }
        guard sides.side(to).writable else {
            return notPossible(action, to, sides: sides, sourceLive ? .copy(from: labels[from]!) : .markDeleted)
        }
        let spelled = targetEntry?.spelledAs.text(of: id) ?? target.files[id]?.text(of: id) ?? spelling(of: target, for: id, like: source)
        let path = "memos/" + (target.files[id]?.fileName(of: id) ?? spelled + ".json")
        let before = files[to]!.memos[id]?.tag
        if sourceLive {
            guard let content = files[from]!.memos[id]?.data, let entry = sourceEntry else {
                action.action = .none
                action.say(.sourceUnreadable(side: labels[from]!))
                return action
            }
            action.action = .copy
            action.destructive = target.files[id] != nil
            let sourceFile = files[from]!.memos[id]?.tag.map { ReadFile(path: "memos/" + source.files[id]!.fileName(of: id), tag: $0) }
            action.writes = [PlannedWrite(side: to, path: path, before: before, content: Self.copied(content, as: spelled), source: sourceFile)]
            action.indexChanges = [PlannedIndexChange(side: to, id: spelled, before: targetEntry.map(EntryState.init), after: EntryState(entry))]
        } else {
            guard let targetEntry, let current = files[to]!.memos[id]?.data else {
                action.action = .none
                action.say(.targetUnreadable(side: labels[to]!))
                return action
            }
            let deletedAt = sourceEntry?.deletedAt ?? createdAt
            action.action = .softDelete
            action.destructive = true
            action.writes = [PlannedWrite(side: to, path: path, before: before, content: Self.softDeleted(current, at: deletedAt))]
            var after = EntryState(targetEntry)
            after.deletedAt = deletedAt
            action.indexChanges = [PlannedIndexChange(side: to, id: spelled, before: EntryState(targetEntry), after: after)]
        }
        if keepsCopy, let loser = files[to]!.memos[id], let loserEntry = targetEntry {
            addConflictCopy(
                to: &action, of: loser.data, title: loser.memo.title, entry: loserEntry, like: target, listings: listings, sides: sides)
        }
        return action
    }

    /// `both`: the older version (`loser`, with its title and `entry`) lives
    /// on as a new memo, on every side that can be written, spelled like
    /// `target`'s ids.
    func addConflictCopy(
        to action: inout PlanAction, of loser: Data, title: String?, entry loserEntry: IndexEntry, like target: SideListing,
        listings: [SideRole: SideListing], sides: [PlanSide]
    ) {
        let copyID = Self.conflictCopyID(of: action.id, version: loser)
        action.conflictCopy = copyID
        for role in [SideRole.local, .remote] where sides.side(role).writable {
            let copySpelling = spelling(of: listings[role]!, for: copyID, like: target)
            let content = Self.conflictCopy(of: loser, title: title, as: copySpelling)
            action.writes.append(PlannedWrite(side: role, path: "memos/\(copySpelling).json", before: nil, content: content))
            action.indexChanges.append(
                PlannedIndexChange(
                    side: role, id: copySpelling, before: nil,
                    after: Self.conflictCopyEntry(of: EntryState(loserEntry))))
        }
    }

    /// What moved on the one side that changed the memo since the sides last agreed, whose version is `live` or deleted.
    func move(_ difference: Difference, live: Bool) -> PlanReason.Move {
        guard live else { return .deleted }
        switch difference.sigil {
        case .onlyOnLocal, .onlyOnRemote: return .added
        default: return difference.kind == .deletedOnOneSide ? .kept : difference.kind == .archivedOnOneSide ? .archived : .edited
        }
    }

    /// How `side` would spell `id`: as its index spells most ids, else as `other` does.
    func spelling(of side: SideListing, for id: MemoID, like other: SideListing) -> String {
        func capitals(_ listing: SideListing) -> Bool? {
            var capital = 0
            var small = 0
            // Only an id holding a letter shows how the side spells ids.
            for entry in listing.entries.values.prefix(1000) where entry.id.value.contains(where: \.isLetter) {
                if case .capital = entry.spelledAs { capital += 1 } else if case .small = entry.spelledAs { small += 1 }
            }
            return capital == small ? nil : capital > small
        }
        let upper = capitals(side) ?? capitals(other) ?? true
        return upper ? id.value.uppercased() : id.value
    }

    // MARK: - What a plan writes, from what it read
    // Apply makes the same bytes again from the files as they are, to refuse a plan changed by hand.

    /// A copied memo file: the source's bytes with the id spelled as the target spells it.
    static func copied(_ content: Data, as spelled: String) -> Data { setting([("id", .string(spelled))], in: content) }

    /// A soft-deleted memo file: the target's bytes with `deletedAt` set.
    static func softDeleted(_ content: Data, at deletedAt: Timestamp) -> Data {
        setting([("deletedAt", .string(deletedAt.iso8601))], in: content)
    }

    /// The older version kept under a new id as "… (conflict copy)".
    static func conflictCopy(of loser: Data, title: String?, as spelled: String) -> Data {
        setting([("id", .string(spelled)), ("title", .string((title ?? "") + " (conflict copy)"))], in: loser)
    }

    /// The index entry a fix-index adds: the file's own fields.
    static func entry(describing memo: Memo) -> EntryState {
        EntryState(modifiedTime: memo.modifiedAt, archivedAt: memo.archivedAt, deletedAt: memo.deletedAt, changeTag: memo.changeTag)
    }

    /// The conflict copy's index entry: the older version's times, live.
    static func conflictCopyEntry(of loser: EntryState) -> EntryState {
        EntryState(modifiedTime: loser.modifiedTime, archivedAt: loser.archivedAt, deletedAt: nil, changeTag: nil)
    }

    /// A memo file's text with `fields` set; the file was read as a JSON object, so the edit cannot fail.
    static func setting(_ fields: [(key: String, value: JSONValue)], in content: Data) -> Data {
        (try? JSONEdit.setting(fields, inObject: content)) ?? content
    }

    /// The conflict copy's id: a version 4 UUID made from the memo's id and
    /// the losing version's bytes, so the same plan gives the same id.
    static func conflictCopyID(of id: MemoID, version: Data) -> MemoID {
        var seed = Data("reckon conflict copy \(id.value) ".utf8)
        seed.append(version)
        // 32 hex digits of the hash, with the version (4) and variant (8) digits of a random UUID.
        var hex = Array(SHA256.hex(of: seed).prefix(32))
        hex[12] = "4"
        hex[16] = "8"
        let text = String(hex)
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(text[text.index(text.startIndex, offsetBy: range.lowerBound)..<text.index(text.startIndex, offsetBy: range.upperBound)])
        }
        return MemoID(parts.joined(separator: "-"))!
    }
}

extension PlanAction {
    /// Gives the action its reason: the structure, and its English sentence.
    mutating func say(_ why: PlanReason) {
        self.why = why
        reason = RepairStrings.en.reason(why)
    }

    /// Gives the action the choice that settled it: the structure, and its English sentence.
    mutating func choose(_ choice: PlanChoice?) {
        chosen = choice
        self.choice = choice.map(RepairStrings.en.choice)
    }
}

/// The memo files of one side that the plan reads, with their change tags,
/// and the tag of its `index.json`.
struct SideFiles {
    struct Read {
        /// The file's bytes (a store's memo written as a memo file).
        var data: Data
        var memo: Memo
        /// The file's change tag; nil for a store's row.
        var tag: FileTag?
    }

    var memos: [MemoID: Read] = [:]
    var index: FileTag?

    /// The files of `ids` with their tags; a side whose memos are rows
    /// (the app's store) is read through the store that listed it; the
    /// files of the others with what `process` decides.
    static func read(_ listing: SideListing, store: any MemoStore, ids: [MemoID], process: ProcessSettings) throws(PlanError) -> SideFiles {
        var result = SideFiles()
        if !type(of: listing.spec.kind).holdsFiles {
            let pairs = ids.map { ($0, IDSpelling.capital) }
            for case .success(let memo) in store.read(pairs, chunkSize: 64, as: .memo, then: { $0 }) {
                let data = JSONWriter.data(JSONExport.value(of: memo))
                result.memos[memo.id] = Read(data: data, memo: memo, tag: nil)
            }
            return result
        }
        let paths = ids.compactMap { id in listing.files[id].map { "memos/" + $0.fileName(of: id) } }
        let found: [String: FileRead?]
        do {
            found = try MemoFolderReader(listing.spec, process: process).read(["index.json"] + paths)
        } catch {
            throw PlanError("\(listing.spec.label) (\(listing.spec.path)): \(error)")
        }
        result.index = found["index.json"]??.tag
        for (id, path) in zip(ids.filter { listing.files[$0] != nil }, paths) {
            guard let file = found[path] ?? nil, let memo = try? MemoReader.read(file.data) else { continue }
            result.memos[id] = Read(data: file.data, memo: memo, tag: file.tag)
        }
        return result
    }
}

extension Pipeline {
    /// Reads the local side and one remote in full (a deep check, nothing
    /// written) and plans what would make them the same.
    /// The choices are checked against the sides as read (`ChoiceRequest`)
    /// before anything is planned; a choices file made for another pipeline
    /// or remote is refused before any side is read.
    package func plan(
        _ definition: PipelineDefinition, remote: String, choices: ChoiceRequest, stateDir: URL, context: RunContext
    ) throws(PlanError) -> Plan {
        try choices.checkFile(remote: remote)
        let definition = definition.reading(remote: remote, check: .deep)
        let run = PipelineRun(definition: definition, settings: settings, context: context)
        let loaded = load.run(definition, in: run)
        let reconciled = reconcile.run(loaded, in: run)
        // A plan decides from the agreement: one that could not be used is said, as a report says it.
        if let pair = reconciled.agreements.first(where: { $0.remote == remote }), let words = pair.notUsed(local: definition.local, strings: .en) {
            context.warn(words)
        }
        var planner = Planner(
            sides: loaded, reconciliation: reconciled, pipeline: definition.name, remoteName: remote, choices: ConflictChoices(),
            createdAt: settings.startedAt, definitionPath: definition.file.map { realPath($0.path) }, stateDir: stateDir)
        planner.process = settings.process
        let listings = try planner.pair().listings
        planner.choices = try choices.choices(
            local: listings[.local]!, remote: listings[.remote]!, differences: reconciled.differences.filter { $0.remote == remote })
        planner.language = definition.language
        return try planner.plan()
    }
}
