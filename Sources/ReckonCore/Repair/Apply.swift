import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Carries out a plan, and nothing that is not in it. Before each write
/// the target is read again and must still be what the plan saw (its
/// change tag); everything replaced is first copied to
/// `backups/<run>/<side>/<path>` in the state folder and verified; every
/// step is written to a journal before and after it is done, so a run
/// killed at any moment is finished by `--resume` or put back by `undo`.
package struct Applier {
    package struct Options: Sendable {
        /// Destructive actions (a deletion, an overwrite) were confirmed (`--yes`, or "yes" typed).
        package var confirmed = false
        /// Refuse a plan that soft-deletes more than this percent of a side's memos.
        package var maxDeletePercent = 50.0
        /// Refuse a plan older than this many seconds.
        package var maxAge: Int64 = 86_400
        /// Keep the backups of this many apply runs.
        package var keepBackups = 10
        /// Finish the interrupted run of this plan instead of starting one.
        package var resume = false
        package var now: Timestamp
        /// The environment a definition named by the plan is read with.
        package var environment: [String: String]

        package init(now: Timestamp, environment: [String: String]) {
            self.now = now
            self.environment = environment
        }
    }

    /// Why nothing was done: refused (exit 64) or trouble (exit 2).
    package struct Refusal: Error, CustomStringConvertible {
        package var description: String
        package var isTrouble = false
    }

    let plan: Plan
    let planData: Data
    let options: Options
    let stateDir: URL

    package init(plan: Plan, planData: Data, options: Options) {
        self.plan = plan
        self.planData = planData
        self.options = options
        stateDir = URL(fileURLWithPath: plan.stateDir)
    }

    // MARK: - Guards

    /// The plan's sides as they are now, refused when they are not the sides
    /// it was made from; nil for a store (never read as files) and for a side
    /// apply does not write and cannot reach.
    package static func sides(of plan: Plan, environment: [String: String]) throws(Refusal) -> [SideSpec?] {
        var definition: PipelineDefinition?
        if let path = plan.definition {
            do {
                definition = try PipelineDefinition.load(from: URL(fileURLWithPath: path), displayPath: path, environment: environment)
            } catch {
                throw Refusal(description: "the plan was made from \(path), which cannot be read now: \(error)")
            }
        }
        return try plan.sides.map { (planned: PlanSide) throws(Refusal) -> SideSpec? in
            guard let kind = planned.kind.kind else {
                throw Refusal(description: "the plan names \(planned.label) a side of kind \"\(planned.kind)\", which this reckon does not know")
            }
            guard kind.holdsFiles else { return nil }
            var spec: SideSpec
            if let definition {
                guard let found = ([definition.local] + definition.remotes).first(where: { $0.name == planned.name }) else {
                    throw Refusal(description: "the plan was made from other sides: \(plan.definition!) no longer names the side '\(planned.name)'")
                }
                spec = found
            } else if let reopened = kind.reopen(planned) {
                spec = SideSpec(role: planned.role, name: planned.name, label: planned.label, path: planned.path, kind: reopened)
            } else {
                guard planned.writable else { return nil }
                throw Refusal(
                    description:
                        "the plan does not keep \(planned.label)'s connection string, which holds a secret; make the plan from a pipeline definition")
            }
            if spec.readOnly && planned.writable {
                throw Refusal(
                    description: "\(planned.label) is marked \"readOnly\": true in \(plan.definition ?? "its definition") now; reckon never writes it"
                )
            }
            let now = SideIdentity(spec)
            guard now.kind == planned.kind, now.place == planned.place else {
                throw Refusal(
                    description:
                        "the plan was made from other sides: \(planned.label) was \(planned.kind) \(planned.place), and is now \(now.kind) \(now.place)"
                )
            }
            return spec
        }
    }

    /// Refuses a plan that is too old, deletes too much, or was changed
    /// since reckon wrote it (a file's content that is not its recorded
    /// SHA-256, a path that is not the memo's own file).
    func checkGuards() throws(Refusal) {
        guard plan.stateDir.hasPrefix("/"), plan.stateDir != "/", URL(fileURLWithPath: plan.stateDir).standardizedFileURL.path == plan.stateDir else {
            throw Refusal(description: "the plan's state folder '\(plan.stateDir)' is not a folder's full path; make the plan again")
        }
        // A run of it that was interrupted counts as its record: a record let go since must not strand it.
        guard
            PlanRecords.isRecorded(planData, stateDir: stateDir)
                || (options.resume && ApplyJournal.latestRun(in: stateDir, planSHA256: SHA256.hex(of: planData))?.finished == false)
        else {
            throw Refusal(
                description:
                    "reckon plan did not write this plan.json for the state folder \(plan.stateDir) (its SHA-256 is not among those recorded in plans/ there): it was changed after it was made, or made for another state folder; make it again"
            )
        }
        guard plan.sides.count == 2, plan.sides[0].role == .local, plan.sides[1].role == .remote else {
            throw Refusal(description: "the plan does not name a local side, then a remote; make it again with reckon plan")
        }
        if plan.createdAt.seconds > options.now.seconds + 300 {
            throw Refusal(description: "the plan says it was made at \(plan.createdAt.iso8601), after now (\(options.now.iso8601)); make it again")
        }
        for side in plan.sides where side.writable {
            guard side.kind.kind?.holdsFiles != false else {
                throw Refusal(description: "the plan marks \(side.label), \(side.kind.words), as one to write; reckon never writes a store")
            }
            guard side.index != nil else {
                throw Refusal(description: "the plan saw no index.json on \(side.label), so reckon writes nothing there; make it again")
            }
        }
        if Set(plan.actions.map(\.id)).count != plan.actions.count {
            throw Refusal(description: "the plan lists a memo twice; make it again")
        }
        for action in plan.actions {
            let writing = action.writes.map(\.side) + action.indexChanges.map(\.side)
            if let side = writing.first(where: { !plan.side($0).writable }) {
                throw Refusal(
                    description: "the plan writes memo \(action.id) on \(plan.side(side).label), which it does not mark writable; make it again")
            }
            let onTarget = action.writes.allSatisfy { $0.side == action.to } && action.indexChanges.allSatisfy { $0.side == action.to }
            let expected: Bool =
                switch action.action {
                case .copy, .softDelete:
                    action.to != nil && action.writes.contains { $0.side == action.to }
                        && action.indexChanges.contains { $0.side == action.to } && (action.conflictCopy != nil || onTarget)
                case .fixIndex: action.writes.isEmpty && action.indexChanges.count == 1 && onTarget && action.indexChanges[0].file != nil
                case .conflict, .notPossible, .none: writing.isEmpty
                }
            // Each entry is the memo's or its conflict copy's; a copy from files names the file it copies;
            // a conflict copy is written, with its entry, on every side that can be written.
            let ids = [action.id] + (action.conflictCopy.map { [$0] } ?? [])
            let copySides = plan.sides.filter(\.writable).map(\.role)
            guard expected, action.indexChanges.allSatisfy({ MemoID($0.id).map(ids.contains) == true }),
                action.action != .copy || plan.side(action.from ?? .local).kind.kind?.holdsFiles == false
                    || action.writes.contains(where: { $0.side == action.to && $0.source != nil }),
                action.conflictCopy.map({ copy in
                    copySides.allSatisfy { side in
                        action.writes.contains { $0.side == side && MemoID($0.spelledID) == copy }
                            && action.indexChanges.contains { $0.side == side && MemoID($0.id) == copy }
                    }
                }) ?? true
            else {
                throw Refusal(
                    description:
                        "the plan's \(action.action.rawValue) of memo \(action.id) writes other files than reckon plan would; make the plan again")
            }
            for write in action.writes {
                guard write.path.hasPrefix("memos/"), write.path.hasSuffix(".json"),
                    let id = MemoID(write.spelledID), ids.contains(id)
                else {
                    throw Refusal(
                        description: "the plan writes \(write.path) for memo \(action.id), which is not that memo's file; make the plan again")
                }
                let data = write.data
                guard Int64(data.count) == write.size, SHA256.hex(of: data) == write.sha256 else {
                    throw Refusal(
                        description:
                            "the plan's content for \(write.path) is not what reckon plan recorded (its size or SHA-256 differ): plan.json was changed after it was made; make it again"
                    )
                }
                guard let memo = try? MemoReader.read(data), memo.id == id else {
                    throw Refusal(description: "the plan's content for \(write.path) is not a memo file of that id; make the plan again")
                }
                // The entry written beside it must say what the file says: deleted or not, archived or not.
                if let entry = action.indexChanges.first(where: { $0.side == write.side && MemoID($0.id) == id })?.after,
                    (entry.deletedAt == nil) != (memo.deletedAt == nil) || (entry.archivedAt == nil) != (memo.archivedAt == nil)
                        || (action.action == .softDelete && id == action.id && memo.deletedAt == nil)
                {
                    throw Refusal(
                        description: "the plan's index entry for \(write.path) does not agree with the file written beside it; make the plan again")
                }
            }
        }
        let age = options.now.seconds - plan.createdAt.seconds
        if !options.resume && age > options.maxAge {
            throw Refusal(
                description:
                    "the plan was made \(Self.duration(age)) ago (\(plan.createdAt.iso8601)), more than --max-age allows (\(Self.duration(options.maxAge))); make it again"
            )
        }
    }

    /// Refuses a plan whose bytes or entries are not the ones reckon plan
    /// makes from the files they come from, where those files are still as
    /// planned: content edited with its size and SHA-256 recomputed, an
    /// entry's time edited. A copy holds the source's bytes and entry, a
    /// soft deletion the target's with `deletedAt` set, a conflict copy the
    /// older version's, an added entry its file's fields. A file changed
    /// since the plan proves nothing here; its action is skipped as changed
    /// when its turn comes.
    func checkMadeFromSides(_ readers: [SideRole: MemoFolderReader]) throws(Refusal) {
        func edited(_ action: PlanAction, _ what: String) -> Refusal {
            Refusal(
                description:
                    "the plan's \(action.action.rawValue) of memo \(action.id) writes \(what) than reckon plan makes from the files it names, which are as planned: plan.json was changed after it was made; make it again"
            )
        }
        /// The bytes of `path` on `role` when they are still the ones the plan saw.
        func asPlanned(_ role: SideRole, _ path: String, _ tag: FileTag?) throws -> Data? {
            guard let reader = readers[role], let tag, let now = try reader.read([path])[path] ?? nil, now.tag.sha256 == tag.sha256 else {
                return nil
            }
            return now.data
        }
        var indexes: [SideRole: [MemoID: IndexEntry]] = [:]
        /// The side's index entries when its index.json is still the one the plan saw.
        func entriesAsPlanned(_ role: SideRole) throws -> [MemoID: IndexEntry]? {
            if let known = indexes[role] { return known }
            guard let data = try asPlanned(role, "index.json", plan.side(role).index) else { return nil }
            indexes[role] = (try? IndexReader.read(data).firstEntries) ?? [:]
            return indexes[role]
        }
        do {
            for action in plan.actions {
                guard let to = action.to, [.copy, .softDelete, .fixIndex].contains(action.action) else { continue }
                let main = action.writes.first { $0.side == to && MemoID($0.spelledID) == action.id }
                let mainChange = action.indexChanges.first { $0.side == to && MemoID($0.id) == action.id }
                switch action.action {
                case .copy:
                    guard let from = action.from else { break }
                    if let main, let source = main.source, let bytes = try asPlanned(from, source.path, source.tag),
                        Planner.copied(bytes, as: main.spelledID) != main.data
                    {
                        throw edited(action, "other bytes")
                    }
                    if let mainChange, let entry = try entriesAsPlanned(from)?[action.id], !mainChange.after.matches(entry) {
                        throw edited(action, "another index entry")
                    }
                case .softDelete:
                    guard let mainChange, var expected = mainChange.before, let deletedAt = mainChange.after.deletedAt else {
                        throw edited(action, "another index entry")
                    }
                    expected.deletedAt = deletedAt
                    if mainChange.after != expected { throw edited(action, "another index entry") }
                    if let main, let bytes = try asPlanned(to, main.path, main.before), Planner.softDeleted(bytes, at: deletedAt) != main.data {
                        throw edited(action, "other bytes")
                    }
                default:
                    for change in action.indexChanges {
                        if let file = change.file, let bytes = try asPlanned(change.side, file.path, file.tag),
                            (try? MemoReader.read(bytes)).map(Planner.entry(describing:)) != change.after
                        {
                            throw edited(action, "another index entry")
                        }
                    }
                }
                guard let copyID = action.conflictCopy else { continue }
                if let loserEntry = mainChange?.before,
                    action.indexChanges.contains(where: { MemoID($0.id) == copyID && $0.after != Planner.conflictCopyEntry(of: loserEntry) })
                {
                    throw edited(action, "another conflict copy's index entry")
                }
                if let main, let loser = try asPlanned(to, main.path, main.before) {
                    let title = (try? MemoReader.read(loser))?.title
                    if copyID != Planner.conflictCopyID(of: action.id, version: loser)
                        || action.writes.contains(where: {
                            MemoID($0.spelledID) == copyID && $0.data != Planner.conflictCopy(of: loser, title: title, as: $0.spelledID)
                        })
                    {
                        throw edited(action, "another conflict copy")
                    }
                }
            }
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            throw Refusal(description: "the files the plan names could not be read before writing: \(error); nothing was done", isTrouble: true)
        }
    }

    /// Refuses a plan that would soft-delete more than `--max-delete`
    /// percent of the memos the side holds now (its index read again).
    func checkDeletions(_ side: PlanSide, _ writer: MemoFolderWriter) throws(Refusal) {
        let deletions = plan.actions.filter { $0.action == .softDelete && $0.to == side.role }.count
        guard deletions > 0 else { return }
        var live = 0
        do {
            if let file = try writer.reader.read(["index.json"])["index.json"] ?? nil {
                live = try IndexReader.read(file.data).entries.filter { !$0.isDeleted }.count
            }
        } catch {
            throw Refusal(description: "\(side.label): index.json cannot be read now (\(error)); nothing was done", isTrouble: true)
        }
        let percent = live == 0 ? 100 : Double(deletions) * 100 / Double(live)
        if percent > options.maxDeletePercent {
            throw Refusal(
                description:
                    "the plan would delete \(deletions) of \(counted(live, "memo")) on \(side.label) (\(Int(percent.rounded()))%), more than --max-delete allows (\(options.maxDeletePercent.formatted())%); nothing was done"
            )
        }
    }

    /// Refuses, before anything is written, a run that the free space
    /// cannot hold: on each file system, every new file and each index twice
    /// on the sides it holds, and the backups, the plan's copy and the
    /// reports in the state folder, added up where they share one.
    func checkSpace(_ writers: [SideRole: MemoFolderWriter]) throws(Refusal) {
        let writes = plan.actions.flatMap(\.writes)
        var needs: [(path: String, bytes: Int64)] = [
            (
                plan.stateDir,
                writes.reduce(0) { $0 + ($1.before?.size ?? 0) }
                    + plan.sides.reduce(0) { $0 + ($1.index?.size ?? 0) } + Int64(planData.count) + (4 << 20)
            )
        ]
        for (role, writer) in writers {
            guard let root = writer.reader.access.localFolder else { continue }
            let mine = writes.filter { $0.side == role }
            needs.append((root.path, mine.reduce(0) { $0 + $1.size } + 2 * (plan.side(role).index?.size ?? 0) + (64 << 10)))
        }
        var byDevice: [UInt64: (path: String, bytes: Int64, free: Int64)] = [:]
        for need in needs {
            var existing = need.path
            while FileKind(path: existing) == .missing, existing.count > 1 { existing = (existing as NSString).deletingLastPathComponent }
            var info = stat()
            var space = statvfs()
            guard stat(existing, &info) == 0, statvfs(existing, &space) == 0 else { continue }
            let device = UInt64(info.st_dev)
            let found = byDevice[device]
            byDevice[device] = (found?.path ?? need.path, (found?.bytes ?? 0) + need.bytes, Int64(space.f_bavail) * Int64(space.f_frsize))
        }
        for (_, need) in byDevice.sorted(by: { $0.key < $1.key }) where need.free < need.bytes {
            throw Refusal(
                description:
                    "\(need.path) has \(counted(need.free, "byte")) free, and this apply needs about \(need.bytes) on that disk for its files, backups and journal; nothing was done",
                isTrouble: true)
        }
    }

    static func duration(_ seconds: Int64) -> String {
        seconds >= 7200 ? "\(seconds / 3600) hours" : seconds >= 120 ? "\(seconds / 60) minutes" : counted(seconds, "second")
    }

    // MARK: - Running

    /// Carries out the plan. Throws when it is refused before anything was
    /// written. `publish` gets the result before the journal records the
    /// run's end, so its reports are written by the time a run counts as
    /// finished: one killed before then is resumed, not lost.
    package func run(confirm: () -> Bool, publish: (ApplyResult) -> Void = { _ in }) throws(Refusal) -> ApplyResult {
        try checkGuards()
        let specs = try Self.sides(of: plan, environment: options.environment)
        let written = zip(plan.sides, specs).compactMap { side, spec in side.writable ? spec : nil }
        for spec in written {
            if let folder = spec.kind.localURL,
                isWithin(realPath(plan.stateDir), realPath(folder.path)) || isWithin(realPath(folder.path), realPath(plan.stateDir))
            {
                throw Refusal(
                    description:
                        "the plan's state folder \(plan.stateDir) is inside \(spec.label) (\(spec.path)), or holds it; reckon keeps its backups and journals apart from every side"
                )
            }
        }
        var locks: [RunLock] = []
        defer { for lock in locks { lock.release() } }
        for spec in TargetLock.inOrder(written) {
            do {
                locks.append(try TargetLock.lock(spec))
            } catch {
                throw Refusal(description: "\(spec.label) (\(spec.path)): \(error)", isTrouble: true)
            }
        }
        TestStop.wait(at: "apply-locked")
        let planSHA = SHA256.hex(of: planData)
        if let other = ApplyJournal.runs(in: stateDir).first(where: { run in
            guard let events = ApplyJournal.events(stateDir, run: run), !events.isEmpty else { return false }
            return !ApplyJournal.isFinished(events) && events.first?["plan"] != .string(planSHA)
        }) {
            throw Refusal(
                description:
                    "the apply run \(other) of another plan was interrupted in \(plan.stateDir); finish it with reckon apply --resume and its plan, or undo it with reckon undo \(other) --state \(plan.stateDir), first"
            )
        }
        let latest = ApplyJournal.latestRun(in: stateDir, planSHA256: planSHA)
        let run: String
        if options.resume {
            guard let latest else {
                throw Refusal(description: "no apply of this plan was found in \(plan.stateDir)/apply; there is nothing to resume")
            }
            guard !latest.finished else {
                throw Refusal(description: "the apply of this plan (run \(latest.run)) already finished; there is nothing to resume")
            }
            run = latest.run
        } else {
            if let latest, !latest.finished {
                throw Refusal(
                    description:
                        "an earlier apply of this plan (run \(latest.run)) was interrupted; finish it with reckon apply --resume, or undo it with reckon undo \(latest.run)"
                )
            }
            run = ApplyJournal.newRun(in: stateDir, at: options.now)
        }
        let destructive = plan.actions.contains(where: \.needsConfirmation)
        let confirmed = options.confirmed || (destructive && !options.resume ? confirm() : options.confirmed)
        var writers: [SideRole: MemoFolderWriter] = [:]
        var readers: [SideRole: MemoFolderReader] = [:]
        for (role, spec) in zip([SideRole.local, .remote], specs) {
            guard let spec else { continue }
            do {
                if plan.side(role).writable {
                    writers[role] = try MemoFolderWriter(spec, grant: WriteGrant())
                    readers[role] = writers[role]!.reader
                } else {
                    readers[role] = try MemoFolderReader(spec)
                }
            } catch {
                throw Refusal(description: "\(spec.label) (\(spec.path)): \(error)", isTrouble: true)
            }
        }
        try checkMadeFromSides(readers)
        var known = ApplyJournal.knownContents(in: stateDir)
        for action in plan.actions {
            for write in action.writes {
                known.insert(write.sha256)
                if let before = write.before { known.insert(before.sha256) }
            }
        }
        var notes: [RunNote] = ApplyJournal.removeLeftovers(
            stateDir, plan: plan, sides: specs.compactMap { $0?.kind.localURL.map { realPath($0.path) } })
        for (role, writer) in writers {
            // Under the lock, no other reckon writes here: a temporary file of reckon's bytes is one a killed run left.
            for name in writer.removeLeftovers(known: known) {
                notes.append(.removedTemporary(name: name, side: plan.side(role).label))
            }
            try checkDeletions(plan.side(role), writer)
        }
        try checkSpace(writers)
        let journal: ApplyJournal
        do {
            journal = try ApplyJournal(stateDir: stateDir, run: run, plan: planData, planSHA256: planSHA, resuming: options.resume)
        } catch {
            throw Refusal(description: "the journal cannot be written: \(error); nothing was done", isTrouble: true)
        }
        var execution = Execution(plan: plan, journal: journal, writers: writers, readers: readers, confirmed: confirmed)
        execution.notes = notes
        execution.carryOut()
        execution.updateBaselines()
        execution.updateAgreement(at: options.now)
        var result = ApplyResult(
            mode: .apply, run: run, resumed: options.resume, pipeline: plan.pipeline, sides: plan.sides,
            stateDir: plan.stateDir, actions: execution.results)
        result.withoutDefinition = plan.definition == nil
        for note in execution.notes { result.note(note) }
        result.language = plan.languageCode
        if let failure = journal.failure {
            result.trouble = true
            result.note(.journalNotWritten(path: failure.path, error: failure.reason))
        }
        if execution.notes.contains(where: { if case .stateNotWritten = $0 { true } else { false } }) { result.trouble = true }
        publish(result)
        // Its reports are written by the time the run counts as finished: one
        // killed before then is resumed. A failure to record the end is
        // told in what the command prints, and its exit code.
        if !journal.broken, !journal.record(["event": .string("end")]), let failure = journal.failure {
            result.trouble = true
            result.note(.journalNotWritten(path: failure.path, error: failure.reason))
        }
        ApplyJournal.prune(stateDir, keep: options.keepBackups, current: run)
        return result
    }
}

/// One apply run's work, action by action, then each side's index.
struct Execution {
    let plan: Plan
    let journal: ApplyJournal
    let writers: [SideRole: MemoFolderWriter]
    /// Every side read as files (the ones written, and a folder or remote a copy comes from).
    let readers: [SideRole: MemoFolderReader]
    let confirmed: Bool
    var results: [ApplyResult.ActionResult] = []
    var notes: [RunNote] = []
    /// Each side's index.json as read when the run began: entries checked against the plan.
    var indexes: [SideRole: (file: FileRead?, entries: [MemoID: IndexEntry])] = [:]
    /// The index changes of the actions done, per side, with the action's place in `results`.
    var queued: [SideRole: [(result: Int, change: PlannedIndexChange)]] = [:]
    /// Each action's written files with their backups (nil: created), to put back if its index entry cannot follow.
    var written: [Int: [(write: PlannedWrite, backup: Data?)]] = [:]

    init(plan: Plan, journal: ApplyJournal, writers: [SideRole: MemoFolderWriter], readers: [SideRole: MemoFolderReader], confirmed: Bool) {
        self.plan = plan
        self.journal = journal
        self.writers = writers
        self.readers = readers
        self.confirmed = confirmed
    }

    func label(_ role: SideRole) -> String { plan.side(role).label }

    mutating func carryOut() {
        for action in plan.actions {
            switch action.action {
            case .conflict: results.append(.init(action, outcome: .conflict))
            case .notPossible: results.append(.init(action, outcome: .notPossible))
            case .none: results.append(.init(action, outcome: .nothing))
            case .copy, .softDelete, .fixIndex:
                if action.needsConfirmation && !confirmed {
                    results.append(.init(action, outcome: .notConfirmed, happened: .notConfirmed))
                    journal.record(["event": .string("skip"), "id": .string(action.id.value), "why": .string("not confirmed")])
                    continue
                }
                carryOut(action)
            }
        }
        for role in [SideRole.local, .remote] where !(queued[role] ?? []).isEmpty {
            mergeIndex(role)
        }
    }

    mutating func index(_ role: SideRole) throws -> (file: FileRead?, entries: [MemoID: IndexEntry]) {
        if let known = indexes[role] { return known }
        let file = try readers[role]!.read(["index.json"])["index.json"] ?? nil
        let entries = file.flatMap { try? IndexReader.read($0.data).firstEntries } ?? [:]
        indexes[role] = (file, entries)
        return (file, entries)
    }

    mutating func carryOut(_ action: PlanAction) {
        let place = results.count
        func skip(_ outcome: ApplyResult.Outcome, _ happened: ApplyDetail) {
            let result = ApplyResult.ActionResult(action, outcome: outcome, happened: happened)
            results.append(result)
            journal.record(["event": .string("skip"), "id": .string(action.id.value), "why": .string(result.detail!)])
        }
        // 1. Read every target again: it must still be as planned, or already as the plan leaves it.
        var pending: [(write: PlannedWrite, current: FileRead?)] = []
        var entryToWrite = false
        do {
            for write in action.writes {
                let current = try writers[write.side]!.reader.read([write.path])[write.path] ?? nil
                if current?.tag.sha256 == write.sha256 { continue }
                guard Self.matches(current?.tag, write.before) else {
                    return skip(.changedSince, .fileChanged(path: write.path, side: label(write.side), then: write.before, now: current?.tag))
                }
                // The version copied must still be the one planned on the side it comes from.
                if let source = write.source, let from = action.from, let reader = readers[from] {
                    let now = try reader.read([source.path])[source.path] ?? nil
                    guard Self.matches(now?.tag, source.tag) else {
                        return skip(.changedSince, .sourceChanged(path: source.path, side: label(from)))
                    }
                    // So must its entry, which is copied with it.
                    if let change = action.indexChanges.first(where: { $0.side == write.side && MemoID($0.id) == action.id }),
                        !change.after.matches(try index(from).entries[action.id])
                    {
                        return skip(.changedSince, .sourceEntryChanged(id: "\(action.id)", side: label(from)))
                    }
                }
                if write.before == nil, let other = try otherSpelling(of: write) {
                    return skip(.changedSince, .otherSpelling(path: other, side: label(write.side)))
                }
                pending.append((write, current))
            }
            for change in action.indexChanges {
                // The file an added entry describes must still be the one planned (a fix-index reads it, writes none).
                if let described = change.file, !action.writes.contains(where: { $0.side == change.side && $0.path == described.path }) {
                    let current = try writers[change.side]!.reader.read([described.path])[described.path] ?? nil
                    guard Self.matches(current?.tag, described.tag) else {
                        return skip(
                            .changedSince,
                            .describedFileChanged(path: described.path, side: label(change.side), then: described.tag, now: current?.tag))
                    }
                }
                let entry = try index(change.side).entries[MemoID(change.id)!]
                if change.after.matches(entry) { continue }
                entryToWrite = true
                let asPlanned = change.before.map { $0.matches(entry) } ?? (entry == nil)
                guard asPlanned else {
                    return skip(.changedSince, .entryChanged(id: change.id, side: label(change.side)))
                }
            }
        } catch {
            return skip(.failed, .unreadable(error: "\(error)"))
        }
        // 2. Back up what will be replaced, and verify the copy.
        var backups: [String: String] = [:]
        for (write, current) in pending {
            guard let current else { continue }
            do {
                backups[write.side.rawValue + write.path] = try journal.backUp(current.data, side: plan.side(write.side).name, path: write.path)
            } catch {
                return skip(.failed, .backupFailed(path: write.path, side: label(write.side), error: "\(error)"))
            }
        }
        // 3. Write, each step in the journal before and after.
        var done: [(write: PlannedWrite, backup: Data?)] = []
        for (write, current) in pending {
            let intent = journal.record([
                "event": .string("write"), "id": .string(action.id.value), "side": .string(write.side.rawValue),
                "path": .string(write.path), "before": current.map { .string($0.tag.sha256) } ?? .null, "after": .string(write.sha256),
                "backup": backups[write.side.rawValue + write.path].map { .string($0) } ?? .null
            ])
            guard intent else {
                return skip(.failed, .journalFailed(failures: putBackFiles(done)))
            }
            do {
                try writers[write.side]!.write(write.data, to: write.path, expecting: current?.tag.sha256)
            } catch {
                let failures = putBackFiles(done)
                let undone: ApplyDetail.Undone = !failures.isEmpty ? .failures(failures) : done.isEmpty ? .nothing : .putBack
                if error.changedSince {
                    return skip(.changedSince, .changedWhileWriting(path: write.path, side: label(write.side), undone: undone))
                }
                return skip(.failed, .writeFailed(path: write.path, side: label(write.side), error: "\(error)", undone: undone))
            }
            journal.record(["event": .string("wrote"), "side": .string(write.side.rawValue), "path": .string(write.path)])
            done.append((write, current?.data))
        }
        results.append(.init(action, outcome: pending.isEmpty && !entryToWrite ? .alreadyDone : .applied))
        written[place] = done
        for change in action.indexChanges { queued[change.side, default: []].append((place, change)) }
    }

    /// A file standing for the same memo under another spelling of its id (`memos/<small letters>.json`
    /// beside `memos/<CAPITALS>.json`), which a new file would duplicate.
    func otherSpelling(of write: PlannedWrite) throws -> String? {
        guard let id = MemoID(write.spelledID) else { return nil }
        let others = Set(["memos/\(id.value).json", "memos/\(id.value.uppercased()).json"]).subtracting([write.path]).sorted()
        guard !others.isEmpty else { return nil }
        let found = try writers[write.side]!.reader.read(others)
        return others.first { found[$0] ?? nil != nil }
    }

    /// Puts back files this run wrote (their backups, or removes a file it created); says what could not be.
    func putBackFiles(_ files: [(write: PlannedWrite, backup: Data?)]) -> [PutBackFailure] {
        var failures: [PutBackFailure] = []
        for (write, backup) in files.reversed() {
            do {
                if let backup {
                    try writers[write.side]!.write(backup, to: write.path, expecting: write.sha256)
                } else {
                    try writers[write.side]!.remove(write.path)
                }
                journal.record(["event": .string("put-back"), "side": .string(write.side.rawValue), "path": .string(write.path)])
            } catch {
                failures.append(
                    PutBackFailure(
                        path: write.path, error: "\(error)", backup: journal.backupPath(side: plan.side(write.side).name, path: write.path)))
            }
        }
        return failures
    }

    /// Re-reads the side's index.json, merges the done actions' entries into
    /// it, and writes it, only over the index it read: when another writer
    /// saved the index in between, it is read and merged again (3 tries).
    mutating func mergeIndex(_ role: SideRole) {
        for _ in 0..<3 {
            guard let changedMeanwhile = mergeIndexOnce(role), changedMeanwhile else { return }
        }
        failIndex(role, .keptChanging)
    }

    /// One merge; true when index.json changed between its read and its write (nothing written), nil when done or failed.
    mutating func mergeIndexOnce(_ role: SideRole) -> Bool? {
        let writer = writers[role]!
        let side = plan.side(role)
        let file: FileRead?
        var entries: [MemoID: IndexEntry] = [:]
        do {
            file = try writer.reader.read(["index.json"])["index.json"] ?? nil
        } catch {
            failIndex(role, .unreadableAgain(error: "\(error)"))
            return nil
        }
        guard let file else {
            failIndex(role, .gone)
            return nil
        }
        do {
            entries = try IndexReader.read(file.data).firstEntries
        } catch {
            failIndex(role, .unreadableNow(error: error.message))
            return nil
        }
        var changing: [MemoID: [(key: String, value: JSONValue)]] = [:]
        var appending: [Data] = []
        for (place, change) in queued[role]! where [.applied, .alreadyDone].contains(results[place].outcome) {
            let id = MemoID(change.id)!
            let entry = entries[id]
            if change.after.matches(entry) { continue }
            guard change.before.map({ $0.matches(entry) }) ?? (entry == nil) else {
                results[place].outcome = .changedSince
                results[place].tell(.entryChangedWhileWriting(id: change.id, side: side.label, failures: putBackFiles(written[place] ?? [])))
                continue
            }
            func time(_ t: Timestamp?) -> JSONValue { t.map { .string($0.iso8601) } ?? .null }
            var fields: [(key: String, value: JSONValue)] = [
                ("modifiedTime", time(change.after.modifiedTime)), ("archivedAt", time(change.after.archivedAt)),
                ("deletedAt", time(change.after.deletedAt))
            ]
            if let tag = change.after.changeTag { fields.append(("changeTag", .string(tag))) }
            if entry == nil {
                var object: [String: JSONValue] = ["id": .string(change.id)]
                for (key, value) in fields { object[key] = value }
                appending.append(JSONWriter.data(.object(object), pretty: false))
                entries[id] = IndexEntry(
                    id: id, spelling: change.id, modifiedTime: change.after.modifiedTime, archivedAt: change.after.archivedAt,
                    deletedAt: change.after.deletedAt, changeTag: change.after.changeTag)
            } else {
                changing[id] = fields
            }
        }
        guard !changing.isEmpty || !appending.isEmpty else { return nil }
        let merged: Data
        do {
            merged = try JSONEdit.index(file.data, changing: changing, appending: appending)
        } catch {
            failIndex(role, .notEditable(error: "\(error)"))
            return nil
        }
        let backup: String
        do {
            backup = try journal.backUp(file.data, side: side.name, path: "index.json")
        } catch {
            failIndex(role, .backupFailed(error: "\(error)"))
            return nil
        }
        let intent = journal.record([
            "event": .string("write"), "side": .string(role.rawValue), "path": .string("index.json"),
            "before": .string(file.tag.sha256), "after": .string(SHA256.hex(of: merged)), "backup": .string(backup)
        ])
        guard intent else {
            failIndex(role, .journal)
            return nil
        }
        do {
            try writer.write(merged, to: "index.json", expecting: file.tag.sha256)
        } catch {
            if error.changedSince {
                journal.record(["event": .string("not-written"), "side": .string(role.rawValue), "path": .string("index.json")])
                return true
            }
            failIndex(role, .writeFailed(error: "\(error)"))
            return nil
        }
        journal.record(["event": .string("wrote"), "side": .string(role.rawValue), "path": .string("index.json")])
        return nil
    }

    /// The side's index.json cannot take the done actions' entries: their memo files are put back.
    mutating func failIndex(_ role: SideRole, _ why: ApplyDetail.IndexTrouble) {
        for (place, _) in queued[role]! where results[place].outcome == .applied {
            results[place].outcome = .failed
            results[place].tell(.indexFailed(why, side: label(role), failures: putBackFiles(written[place] ?? [])))
        }
    }

    /// Moves each target side's baseline on by what was applied, so the next
    /// run does not report reckon's own writes as another device's changes.
    mutating func updateBaselines() {
        let stateDir = URL(fileURLWithPath: plan.stateDir)
        for role in [SideRole.local, .remote] {
            let side = plan.side(role)
            let url = Baseline.url(in: stateDir, side: side.name)
            guard case .found(var baseline) = Baseline.read(url), baseline.side.place == side.place else { continue }
            var prints: [MemoID: Fingerprint] = Dictionary(uniqueKeysWithValues: baseline.memos.pairs.map { ($0, $1) })
            var moved = false
            for (index, action) in plan.actions.enumerated() where [.applied, .alreadyDone].contains(results[index].outcome) {
                for change in action.indexChanges where change.side == role {
                    let id = MemoID(change.id)!
                    prints[id] = Self.fingerprint(after: change, of: action, digest: prints[id]?.digest)
                    moved = true
                }
            }
            guard moved, let before = try? readRegularFile(atPath: url.path, limit: 1 << 30) else { continue }
            let ids = prints.keys.sorted()
            baseline.memos = IDMap(sortedKeys: ids, values: ids.map { prints[$0]! })
            writeState(baseline.data, to: url, before: before)
        }
    }

    /// A memo's fingerprint on the side `change` wrote, once written: its
    /// new index entry, and the digest of the file written (else `digest`).
    static func fingerprint(after change: PlannedIndexChange, of action: PlanAction, digest: UInt64?) -> Fingerprint {
        let id = MemoID(change.id)!
        let content = action.writes.first { $0.side == change.side && MemoID($0.spelledID) == id }
        let entry = IndexEntry(
            id: id, modifiedTime: change.after.modifiedTime, archivedAt: change.after.archivedAt, deletedAt: change.after.deletedAt,
            changeTag: change.after.changeTag)
        return Fingerprint(entry, digest: content.flatMap { try? MemoReader.read($0.data) }.map { Fingerprint.digest(MemoSummary($0)) } ?? digest)
    }

    /// Records in the pair's agreement every memo the run made equal on
    /// both sides: a copy or a soft deletion done (or found done), and a
    /// conflict copy written to both sides. Runs after every side's writes,
    /// so a run stopped before it leaves the agreement behind what was
    /// written, never ahead of it; the next deep run catches up.
    mutating func updateAgreement(at now: Timestamp) {
        let local = plan.side(.local)
        let remote = plan.side(.remote)
        let url = Agreement.url(in: URL(fileURLWithPath: plan.stateDir), remote: remote.name)
        let identities = [local, remote].map { SideIdentity(kind: $0.kind, place: $0.place, shown: $0.path) }
        var agreement = Agreement(local: identities[0], remote: identities[1])
        switch Agreement.read(url) {
        case .found(let found) where found.isOf(local: identities[0], remote: identities[1]): agreement = found
        case .none: break
        default: return  // another pair's, or unreadable: the next deep run writes this pair's
        }
        var agreed: [MemoID: Agreement.Entry?] = [:]
        for (index, action) in plan.actions.enumerated()
        where [.applied, .alreadyDone].contains(results[index].outcome) && [.copy, .softDelete].contains(action.action) {
            let ids = [action.id] + (action.conflictCopy.map { [$0] } ?? [])
            for id in ids {
                let changes = action.indexChanges.filter { MemoID($0.id) == id }
                // The memo itself changes on the side that follows; a conflict copy is new on both or on neither.
                guard id == action.id ? changes.count == 1 : changes.count == 2, let change = changes.first else { continue }
                let print = Self.fingerprint(after: change, of: action, digest: nil)
                agreed[id] = Agreement.Entry(local: print, remote: print, time: now)
            }
        }
        guard !agreed.isEmpty else { return }
        let before = FileKind(path: url.path) == .missing ? nil : try? readRegularFile(atPath: url.path, limit: 1 << 32)
        writeState(agreement.updating(agreed).data, to: url, before: before)
    }

    /// Writes a state file (a baseline, an agreement) with a backup in the
    /// run, so that undo can put it back; a failure is noted, and makes the run trouble.
    mutating func writeState(_ data: Data, to url: URL, before: Data?) {
        guard data != before else { return }
        do {
            var event: [String: JSONValue] = [
                "event": .string("write"), "side": .string("state"), "path": .string(url.lastPathComponent),
                "after": .string(SHA256.hex(of: data))
            ]
            if let before {
                event["before"] = .string(SHA256.hex(of: before))
                event["backup"] = .string(try journal.backUp(before, side: "state", path: url.lastPathComponent))
            }
            guard journal.record(event) else { return }
            try AtomicFile.write(data, to: url)
            journal.record(["event": .string("wrote"), "side": .string("state"), "path": .string(url.lastPathComponent)])
        } catch {
            // The state only tells direction, and the next deep run
            // saves it anew; but a write failed, so the run is trouble.
            notes.append(.stateNotWritten(path: url.path, error: errorWords(error)))
        }
    }

    static func matches(_ current: FileTag?, _ planned: FileTag?) -> Bool {
        guard let current, let planned else { return current == nil && planned == nil }
        return current.size == planned.size && current.sha256 == planned.sha256
            && (current.modified == nil || planned.modified == nil || current.modified == planned.modified)
    }

    static func describe(_ tag: FileTag?) -> String {
        guard let tag else { return "absent" }
        return "\(counted(tag.size, "byte")), sha256 \(tag.sha256.prefix(12))…" + (tag.modified.map { ", modified \($0.iso8601)" } ?? "")
    }
}
