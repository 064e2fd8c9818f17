import Foundation

/// Puts back what one apply run wrote, byte for byte, from its backups. A
/// file edited after the apply (it no longer holds what apply wrote) is
/// left as it is and reported. Running it again does no harm: a file
/// already as it was before the apply is left alone.
package enum Undoer {
    /// One file the run wrote: what it held before (nil: absent) and after.
    struct Written {
        var side: String
        var path: String
        var id: MemoID?
        var before: String?
        var after: String
        var backup: String?
    }

    package static func undo(
        run: String, stateDir: URL, environment: [String: String], process: ProcessSettings = ProcessSettings()
    ) throws(Applier.Refusal) -> ApplyResult {
        let (events, plan) = try journalAndPlan(run: run, stateDir: stateDir)
        let specs = try Applier.sides(of: plan, environment: environment, process: process)
        var locks: [RunLock] = []
        defer { for lock in locks { lock.release() } }
        var writers: [String: MemoFolderWriter] = [:]
        for spec in TargetLock.inOrder(specs.compactMap { $0 }) {
            let role = spec.role
            guard plan.side(role).writable else { continue }
            do {
                locks.append(try TargetLock.lock(spec, process: process))
                writers[role.rawValue] = try MemoFolderWriter(spec, grant: WriteGrant(), process: process)
                _ = writers[role.rawValue]!.removeLeftovers(known: ApplyJournal.knownContents(in: stateDir))
            } catch {
                throw Applier.Refusal(description: "\(spec.label) (\(spec.path)): \(error)", isTrouble: true)
            }
        }
        let leftovers = ApplyJournal.removeLeftovers(stateDir, plan: plan, sides: specs.compactMap { $0?.kind.localURL.map { realPath($0.path) } })
        var files = writtenFiles(events)
        var result = ApplyResult(
            mode: .undo, run: run, resumed: false, pipeline: plan.pipeline, sides: plan.sides,
            stateDir: plan.stateDir)
        result.withoutDefinition = plan.definition == nil
        result.language = plan.languageCode
        for note in leftovers { result.note(note) }
        let wholeSides = sidesLeftWhole(files, writers: writers, result: &result)
        // The state files (baselines, the agreement) are moved memo by memo once the sides are back.
        let stateFiles = files.filter { $0.side == "state" }
        files.removeAll { $0.side == "state" }
        func leftWhole(_ file: Written) -> Bool { wholeSides.contains(file.side) }
        let backups = checkedBackups(files.filter { !leftWhole($0) }, writers: writers, stateDir: stateDir, sides: result.sides)
        guard backups.problems.isEmpty else {
            throw Applier.Refusal(
                description: "run \(run) cannot be undone: " + backups.problems.joined(separator: "; ")
                    + "; nothing was put back, so that each side's memo files and index entries still agree", isTrouble: true)
        }
        var outcomes: [MemoID: [ApplyResult.Outcome]] = [:]
        // The memos whose files are back on each side (or were found so), for the state.
        var putBack: [SideRole: Set<MemoID>] = [:]
        for file in files.reversed() {
            if leftWhole(file) {
                if let id = file.id { outcomes[id, default: []].append(.changedSince) }
                continue
            }
            let outcome = put(file, back: writers, from: backups.data, stateDir: stateDir, result: &result)
            if outcome == .failed { result.trouble = true }
            if let id = file.id {
                outcomes[id, default: []].append(outcome)
                if [.restored, .alreadyDone].contains(outcome), let role = SideRole(rawValue: file.side) { putBack[role, default: []].insert(id) }
            }
        }
        // A memo that failed to go back on one side keeps its state on every side.
        for (id, found) in outcomes where !found.allSatisfy({ [.restored, .alreadyDone].contains($0) }) {
            for role in SideRole.allCases { putBack[role]?.remove(id) }
        }
        moveState(
            putBack: putBack, wholeSides: wholeSides, run: run, plan: plan, stateFiles: stateFiles, writers: writers, stateDir: stateDir,
            result: &result)
        for action in plan.actions {
            guard let found = outcomes[action.id] else { continue }
            result.actions.append(.init(action, outcome: outcome(of: found)))
        }
        recordUndone(run: run, stateDir: stateDir, result: &result, checkpoints: process.checkpoints)
        return result
    }

    /// The journal of apply run `run` and the plan it carried out; refused
    /// when `run` is not a run's id or not in the state folder.
    static func journalAndPlan(run: String, stateDir: URL) throws(Applier.Refusal) -> (events: [[String: JSONValue]], plan: Plan) {
        guard ExportFolder.runOrder(run) != nil else {
            throw Applier.Refusal(description: "'\(run)' is not an apply run's id (such as 20261201T173000Z, which reckon apply prints)")
        }
        guard let events = ApplyJournal.events(stateDir, run: run) else {
            throw Applier.Refusal(description: "there is no apply run \(run) in \(stateDir.path)/apply")
        }
        let planURL = ApplyJournal.folder(stateDir, run: run).appendingPathComponent("plan.json")
        let plan: Plan
        do {
            plan = try Plan.read(planURL, shown: planURL.path)
        } catch {
            throw Applier.Refusal(description: "\(error)", isTrouble: true)
        }
        return (events, plan)
    }

    /// Every write the run began, in the journal's order (undo goes newest
    /// first); one another writer got to first was never made.
    static func writtenFiles(_ events: [[String: JSONValue]]) -> [Written] {
        var files: [Written] = []
        for event in events {
            guard case .string(let side)? = event["side"], case .string(let path)? = event["path"] else { continue }
            if event["event"] == .string("not-written") {
                if let last = files.lastIndex(where: { $0.side == side && $0.path == path }) { files.remove(at: last) }
                continue
            }
            guard event["event"] == .string("write"), case .string(let after)? = event["after"] else { continue }
            var before: String?
            var backup: String?
            var id: MemoID?
            if case .string(let text)? = event["before"] { before = text }
            if case .string(let text)? = event["backup"] { backup = text }
            if case .string(let text)? = event["id"] { id = MemoID(text) }
            files.append(Written(side: side, path: path, id: id, before: before, after: after, backup: backup))
        }
        return files
    }

    /// A side where any file the run wrote changed after it (the app saved) is left whole, its
    /// memo files, its index.json and its baseline alike, so that its files and entries still agree.
    /// Each changed file is told in `result`.
    static func sidesLeftWhole(_ files: [Written], writers: [String: MemoFolderWriter], result: inout ApplyResult) -> Set<String> {
        var wholeSides: Set<String> = []
        for (side, writer) in writers {
            let paths = files.filter { $0.side == side }.map(\.path)
            guard let now = try? writer.reader.read(Array(Set(paths)).sorted()) else { continue }
            for path in Set(paths).sorted() {
                let sha = (now[path] ?? nil).map { SHA256.hex(of: $0.data) }
                let first = files.first { $0.side == side && $0.path == path }!
                let last = files.last { $0.side == side && $0.path == path }!
                guard sha != last.after && sha != first.before else { continue }
                let label = result.sides.first { $0.role.rawValue == side }?.label ?? side
                result.leftAlone.append("\(path) on \(label)")
                if wholeSides.insert(side).inserted {
                    result.note(.sideLeftWhole(path: path, side: label))
                }
            }
        }
        return wholeSides
    }

    /// An action's outcome from its files': failed if one failed, else
    /// changed if one had changed, else restored if one was put back.
    static func outcome(of found: [ApplyResult.Outcome]) -> ApplyResult.Outcome {
        found.contains(.failed)
            ? .failed
            : found.contains(.changedSince)
                ? .changedSince
                : found.contains(.restored) ? .restored : .alreadyDone
    }

    /// Records in the run's journal that it was undone, once it was without
    /// trouble: undone only once the journal says so, and a failure to
    /// record it is trouble. `checkpoints`: where a test stops the process.
    static func recordUndone(run: String, stateDir: URL, result: inout ApplyResult, checkpoints: Checkpoints) {
        guard result.exitCode == 0 else { return }
        do throws(OutputError) {
            let journal = try ApplyJournal(stateDir: stateDir, run: run, plan: Data(), planSHA256: "", resuming: true, checkpoints: checkpoints)
            if !journal.record(["event": .string("undone")]), let failure = journal.failure { throw failure }
        } catch {
            result.trouble = true
            result.note(.journalNotWritten(path: error.path, error: error.reason))
        }
    }

    /// Moves the state by what undo put back, so that undo's own writes
    /// never read as a change on a side. A state file (a side's baseline,
    /// the pair's agreement) that still holds what apply wrote is put back
    /// whole, as any file apply wrote; one a later run moved since is put
    /// back memo by memo, for the memos put back (`putBack`, per side), to
    /// what it held for them before the apply (the apply's backup), or,
    /// where apply never wrote it but a run after the apply began did, to
    /// what the side holds again (a baseline) and to no agreement (never
    /// agreed: a person chooses, or the one side that holds it is followed).
    /// A side left whole keeps its baseline as it is, and the agreement is then
    /// put back memo by memo. Running it again changes nothing.
    static func moveState(
        putBack: [SideRole: Set<MemoID>], wholeSides: Set<String>, run: String, plan: Plan, stateFiles: [Written],
        writers: [String: MemoFolderWriter], stateDir: URL, result: inout ApplyResult
    ) {
        let started = Timestamp(runID: run)
        func put(_ url: URL, whole: Bool = true, perMemo: (_ before: Data?, _ now: Data) -> Data?) {
            let writes = stateFiles.filter { $0.path == url.lastPathComponent }
            do {
                let now = FileKind(path: url.path) == .missing ? nil : try readRegularFile(atPath: url.path, limit: 1 << 32)
                var backup: Data?
                if let first = writes.first, let name = first.backup {
                    backup = try readRegularFile(atPath: stateDir.appendingPathComponent(name).path, limit: 1 << 32)
                    guard SHA256.hex(of: backup!) == first.before else {
                        return result.note(.backupNotTheFile(backup: name, FilePlace(path: url.lastPathComponent, side: nil)))
                    }
                }
                if whole, let last = writes.last, now.map({ SHA256.hex(of: $0) }) == last.after {
                    if let backup {
                        try AtomicFile.write(backup, to: url)
                    } else if unlink(url.path) != 0 {
                        throw OutputError(path: url.path, reason: AtomicFile.lastError())
                    }
                } else if let now, let data = perMemo(backup, now), data != now {
                    try AtomicFile.write(data, to: url)
                }
            } catch {
                result.trouble = true
                result.note(.stateNotWritten(path: url.path, error: errorWords(error)))
            }
        }
        for side in plan.sides where !wholeSides.contains(side.role.rawValue) {
            guard let writer = writers[side.role.rawValue], let ids = putBack[side.role], !ids.isEmpty else { continue }
            put(Baseline.url(in: stateDir, side: side.name)) { before, now in
                guard var baseline = try? Baseline.parse(now), baseline.side.place == side.place else { return nil }
                var prints = Dictionary(uniqueKeysWithValues: baseline.memos.pairs.map { ($0, $1) })
                if let earlier = before.flatMap({ try? Baseline.parse($0) }) {
                    for id in ids { prints[id] = earlier.memos[id] }
                } else if let started, baseline.time >= started {
                    for id in ids { prints[id] = heldAgain(id, by: writer) }
                } else {
                    return nil
                }
                let sorted = prints.keys.sorted()
                baseline.memos = IDMap(sortedKeys: sorted, values: sorted.map { prints[$0]! })
                return baseline.data
            }
        }
        let agreed = putBack.values.reduce(into: Set<MemoID>()) { $0.formUnion($1) }
        // Whole only when every side went back: a side left whole keeps what apply agreed for it.
        put(Agreement.url(in: stateDir, remote: plan.side(.remote).name), whole: wholeSides.isEmpty) { before, now in
            guard let agreement = try? Agreement.parse(now), !agreed.isEmpty else { return nil }
            let earlier = before.flatMap { try? Agreement.parse($0) }
            let back = agreed.compactMap { id -> (MemoID, Agreement.Entry?)? in
                if let earlier { return (id, earlier.memos[id]) }
                // Apply never wrote it: only what a run saw after the apply began is taken back.
                guard let entry = agreement.memos[id], let started, entry.time >= started else { return nil }
                return (id, nil)
            }
            return agreement.updating(Dictionary(uniqueKeysWithValues: back)).data
        }
    }

    /// The fingerprint of what a side holds again for `id`: its index entry and memo file; nil when it has no entry.
    static func heldAgain(_ id: MemoID, by writer: MemoFolderWriter) -> Fingerprint? {
        guard let index = try? writer.reader.read(["index.json"])["index.json"] ?? nil,
            let entry = (try? IndexReader.read(index.data).firstEntries)?[id]
        else { return nil }
        let path = "memos/" + entry.spelledAs.text(of: id) + ".json"
        let memo = (try? writer.reader.read([path])[path] ?? nil).flatMap { try? MemoReader.read($0.data) }
        return Fingerprint(entry, digest: memo.map { Fingerprint.digest(MemoSummary($0)) })
    }

    /// What `file` holds now on its side or in the state folder (nil: absent).
    static func current(_ file: Written, writers: [String: MemoFolderWriter], stateDir: URL) throws -> Data? {
        if let writer = writers[file.side] { return try writer.reader.read([file.path])[file.path]??.data }
        let url = stateDir.appendingPathComponent(file.path)
        return FileKind(path: url.path) == .missing ? nil : try readRegularFile(atPath: url.path, limit: 1 << 30)
    }

    static func shown(_ file: Written, sides: [PlanSide]) -> String { RepairStrings.en.place(place(file, sides: sides)) }

    /// Where `file` is: on a side (its label), or in the state folder.
    static func place(_ file: Written, sides: [PlanSide]) -> FilePlace {
        FilePlace(path: file.path, side: sides.first { $0.role.rawValue == file.side }?.label)
    }

    /// The backups putting `files` back needs, read and checked against the
    /// SHA-256 the journal holds (by backup path), and why any cannot be
    /// used: gone, unreadable, or not the file it was made from. Walks each
    /// file's writes newest first, as the undo will, from what the file
    /// holds now, so a file already put back or changed since needs none.
    static func checkedBackups(_ files: [Written], writers: [String: MemoFolderWriter], stateDir: URL, sides: [PlanSide])
        -> (data: [String: Data], problems: [String])
    {
        var checked: [String: Data] = [:]
        var problems: [String] = []
        var now: [String: String?] = [:]
        for file in files.reversed() {
            let key = file.side + "/" + file.path
            if now[key] == nil {
                do {
                    now[key] = .some(try current(file, writers: writers, stateDir: stateDir).map { SHA256.hex(of: $0) })
                } catch {
                    problems.append("\(shown(file, sides: sides)) cannot be read (\(error))")
                    now[key] = .some("unreadable")
                }
            }
            let sha = now[key]!
            if sha == file.before { continue }
            guard sha == file.after else { continue }
            if let backup = file.backup, let before = file.before {
                do {
                    let data = try readRegularFile(atPath: stateDir.appendingPathComponent(backup).path, limit: 1 << 30)
                    if SHA256.hex(of: data) == before {
                        checked[backup] = data
                    } else {
                        problems.append("the backup \(backup) of \(shown(file, sides: sides)) is not the file it was made from")
                    }
                } catch {
                    problems.append("the backup \(backup) of \(shown(file, sides: sides)) cannot be read (\(error))")
                }
            }
            now[key] = .some(file.before)
        }
        return (checked, problems)
    }

    /// Puts one file back from its backup (one of `backups`, read and
    /// checked already, or read now), or says why not.
    static func put(
        _ file: Written, back writers: [String: MemoFolderWriter], from backups: [String: Data], stateDir: URL,
        result: inout ApplyResult
    ) -> ApplyResult.Outcome {
        let shown = Self.shown(file, sides: result.sides)
        let place = Self.place(file, sides: result.sides)
        let current: Data?
        do {
            current = try Self.current(file, writers: writers, stateDir: stateDir)
        } catch {
            result.note(.unreadable(place, error: "\(error)"))
            return .failed
        }
        let now = current.map { SHA256.hex(of: $0) }
        if now == file.before { return .alreadyDone }
        guard now == file.after else {
            result.leftAlone.append(shown)
            result.note(.changedAfterApply(place, backup: file.backup))
            return .changedSince
        }
        do {
            if let backup = file.backup, let before = file.before {
                let data = try backups[backup] ?? readRegularFile(atPath: stateDir.appendingPathComponent(backup).path, limit: 1 << 30)
                guard SHA256.hex(of: data) == before else {
                    result.note(.backupNotTheFile(backup: backup, place))
                    return .failed
                }
                if let writer = writers[file.side] {
                    try writer.write(data, to: file.path, expecting: file.after)
                } else {
                    try AtomicFile.write(data, to: stateDir.appendingPathComponent(file.path))
                }
            } else if let writer = writers[file.side] {
                try writer.remove(file.path)
            }
        } catch {
            result.note(.notPutBack(place, error: "\(error)", backup: file.backup))
            return .failed
        }
        return .restored
    }
}
