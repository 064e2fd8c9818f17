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
        /// What the process decides for the run (child environment, lock
        /// wait, test checkpoints).
        package var process = ProcessSettings()

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

    // MARK: - Running

    /// Carries out the plan. Throws when it is refused before anything was
    /// written. `publish` gets the result before the journal records the
    /// run's end, so its reports are written by the time a run counts as
    /// finished: one killed before then is resumed, not lost.
    package func run(confirm: () -> Bool, publish: (ApplyResult) -> Void = { _ in }) throws(Refusal) -> ApplyResult {
        try checkGuards()
        let specs = try Self.sides(of: plan, environment: options.environment, process: options.process)
        let written = zip(plan.sides, specs).compactMap { side, spec in side.writable ? spec : nil }
        try checkStateFolderApart(written)
        var locks: [RunLock] = []
        defer { for lock in locks { lock.release() } }
        for spec in TargetLock.inOrder(written) {
            do {
                locks.append(try TargetLock.lock(spec, process: options.process))
            } catch {
                throw Refusal(description: "\(spec.label) (\(spec.path)): \(error)", isTrouble: true)
            }
        }
        options.process.checkpoints.wait(at: "apply-locked")
        let planSHA = SHA256.hex(of: planData)
        let run = try runID(planSHA256: planSHA)
        let destructive = plan.actions.contains(where: \.needsConfirmation)
        let confirmed = options.confirmed || (destructive && !options.resume ? confirm() : options.confirmed)
        let (writers, readers) = try open(specs)
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
            journal = try ApplyJournal(
                stateDir: stateDir, run: run, plan: planData, planSHA256: planSHA, resuming: options.resume, checkpoints: options.process.checkpoints)
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

    /// The run this apply is: with `--resume`, the interrupted run of this
    /// plan; else a new one. Refused while a run of another plan, or an
    /// earlier run of this one, is left interrupted.
    func runID(planSHA256: String) throws(Refusal) -> String {
        if let other = ApplyJournal.runs(in: stateDir).first(where: { run in
            guard let events = ApplyJournal.events(stateDir, run: run), !events.isEmpty else { return false }
            return !ApplyJournal.isFinished(events) && events.first?["plan"] != .string(planSHA256)
        }) {
            throw Refusal(
                description:
                    "the apply run \(other) of another plan was interrupted in \(plan.stateDir); finish it with reckon apply --resume and its plan, or undo it with reckon undo \(other) --state \(plan.stateDir), first"
            )
        }
        let latest = ApplyJournal.latestRun(in: stateDir, planSHA256: planSHA256)
        if options.resume {
            guard let latest else {
                throw Refusal(description: "no apply of this plan was found in \(plan.stateDir)/apply; there is nothing to resume")
            }
            guard !latest.finished else {
                throw Refusal(description: "the apply of this plan (run \(latest.run)) already finished; there is nothing to resume")
            }
            return latest.run
        } else {
            if let latest, !latest.finished {
                throw Refusal(
                    description:
                        "an earlier apply of this plan (run \(latest.run)) was interrupted; finish it with reckon apply --resume, or undo it with reckon undo \(latest.run)"
                )
            }
            return ApplyJournal.newRun(in: stateDir, at: options.now)
        }
    }

    /// A writer for each side the plan writes and a reader for every side
    /// read as files (nil specs are skipped).
    func open(_ specs: [SideSpec?]) throws(Refusal) -> (writers: [SideRole: MemoFolderWriter], readers: [SideRole: MemoFolderReader]) {
        var writers: [SideRole: MemoFolderWriter] = [:]
        var readers: [SideRole: MemoFolderReader] = [:]
        for (role, spec) in zip([SideRole.local, .remote], specs) {
            guard let spec else { continue }
            do {
                if plan.side(role).writable {
                    writers[role] = try MemoFolderWriter(spec, grant: WriteGrant(), process: options.process)
                    readers[role] = writers[role]!.reader
                } else {
                    readers[role] = try MemoFolderReader(spec, process: options.process)
                }
            } catch {
                throw Refusal(description: "\(spec.label) (\(spec.path)): \(error)", isTrouble: true)
            }
        }
        return (writers, readers)
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
        let pending: [(write: PlannedWrite, current: FileRead?)]
        let entryToWrite: Bool
        switch recheck(action) {
        case .skip(let outcome, let happened): return skip(outcome, happened)
        case .proceed(let writes, let entryChanges):
            pending = writes
            entryToWrite = entryChanges
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

    /// What reading an action's targets again found: the writes still to do
    /// (each with the file there now) and whether an index entry changes, or
    /// why the action is skipped.
    enum Recheck {
        case proceed(pending: [(write: PlannedWrite, current: FileRead?)], entryToWrite: Bool)
        case skip(ApplyResult.Outcome, ApplyDetail)
    }

    /// Reads every target of `action` again: each must still be as planned,
    /// or already as the plan leaves it, and so must what a copy comes from.
    mutating func recheck(_ action: PlanAction) -> Recheck {
        var pending: [(write: PlannedWrite, current: FileRead?)] = []
        var entryToWrite = false
        do {
            for write in action.writes {
                let current = try writers[write.side]!.reader.read([write.path])[write.path] ?? nil
                if current?.tag.sha256 == write.sha256 { continue }
                guard Self.matches(current?.tag, write.before) else {
                    return .skip(.changedSince, .fileChanged(path: write.path, side: label(write.side), then: write.before, now: current?.tag))
                }
                // The version copied must still be the one planned on the side it comes from.
                if let source = write.source, let from = action.from, let reader = readers[from] {
                    let now = try reader.read([source.path])[source.path] ?? nil
                    guard Self.matches(now?.tag, source.tag) else {
                        return .skip(.changedSince, .sourceChanged(path: source.path, side: label(from)))
                    }
                    // So must its entry, which is copied with it.
                    if let change = action.indexChanges.first(where: { $0.side == write.side && MemoID($0.id) == action.id }),
                        !change.after.matches(try index(from).entries[action.id])
                    {
                        return .skip(.changedSince, .sourceEntryChanged(id: "\(action.id)", side: label(from)))
                    }
                }
                if write.before == nil, let other = try otherSpelling(of: write) {
                    return .skip(.changedSince, .otherSpelling(path: other, side: label(write.side)))
                }
                pending.append((write, current))
            }
            for change in action.indexChanges {
                // The file an added entry describes must still be the one planned (a fix-index reads it, writes none).
                if let described = change.file, !action.writes.contains(where: { $0.side == change.side && $0.path == described.path }) {
                    let current = try writers[change.side]!.reader.read([described.path])[described.path] ?? nil
                    guard Self.matches(current?.tag, described.tag) else {
                        return .skip(
                            .changedSince,
                            .describedFileChanged(path: described.path, side: label(change.side), then: described.tag, now: current?.tag))
                    }
                }
                let entry = try index(change.side).entries[MemoID(change.id)!]
                if change.after.matches(entry) { continue }
                entryToWrite = true
                let asPlanned = change.before.map { $0.matches(entry) } ?? (entry == nil)
                guard asPlanned else {
                    return .skip(.changedSince, .entryChanged(id: change.id, side: label(change.side)))
                }
            }
            return .proceed(pending: pending, entryToWrite: entryToWrite)
        } catch {
            return .skip(.failed, .unreadable(error: "\(error)"))
        }
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
