import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What an apply refuses before it writes anything: a plan that is not
/// reckon's, too old, or changed since it was made; sides that are not the
/// ones it was made from; too many deletions; too little free space.
extension Applier {
    /// The plan's sides as they are now, refused when they are not the sides
    /// it was made from; nil for a store (never read as files) and for a side
    /// apply does not write and cannot reach. `process` says where a
    /// remote's temporary cache goes.
    package static func sides(of plan: Plan, environment: [String: String], process: ProcessSettings) throws(Refusal) -> [SideSpec?] {
        var definition: PipelineDefinition?
        if let path = plan.definition {
            do {
                definition = try PipelineDefinition.load(
                    from: URL(fileURLWithPath: path), displayPath: path, environment: environment, process: process)
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
            } else if let reopened = kind.reopen(planned, process: process) {
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
        for action in plan.actions { try checkAction(action) }
        let age = options.now.seconds - plan.createdAt.seconds
        if !options.resume && age > options.maxAge {
            throw Refusal(
                description:
                    "the plan was made \(Self.duration(age)) ago (\(plan.createdAt.iso8601)), more than --max-age allows (\(Self.duration(options.maxAge))); make it again"
            )
        }
    }

    /// Refuses a plan whose state folder is inside a side it writes, or
    /// holds one: backups and journals are kept apart from every side.
    func checkStateFolderApart(_ written: [SideSpec]) throws(Refusal) {
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
    }

    /// Refuses an action that writes other files than reckon plan would:
    /// on a side not marked writable, another memo's file or entry, content
    /// that is not what was recorded, an entry that disagrees with its file.
    func checkAction(_ action: PlanAction) throws(Refusal) {
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

    /// Refuses a plan whose bytes or entries are not the ones reckon plan
    /// makes from the files they come from, where those files are still as
    /// planned: content edited with its size and SHA-256 recomputed, an
    /// entry's time edited. A copy holds the source's bytes and entry, a
    /// soft deletion the target's with `deletedAt` set, a conflict copy the
    /// older version's, an added entry its file's fields. A file changed
    /// since the plan proves nothing here; its action is skipped as changed
    /// when its turn comes.
    func checkMadeFromSides(_ readers: [SideRole: MemoFolderReader]) throws(Refusal) {
        var files = FilesAsPlanned(plan: plan, readers: readers)
        do {
            for action in plan.actions { try checkMadeFromSides(action, &files) }
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            throw Refusal(description: "the files the plan names could not be read before writing: \(error); nothing was done", isTrouble: true)
        }
    }

    /// Refuses one action whose bytes or entries are not the ones reckon
    /// plan makes from the files it names, where they are still as planned.
    func checkMadeFromSides(_ action: PlanAction, _ files: inout FilesAsPlanned) throws {
        guard let to = action.to, [.copy, .softDelete, .fixIndex].contains(action.action) else { return }
        let main = action.writes.first { $0.side == to && MemoID($0.spelledID) == action.id }
        let mainChange = action.indexChanges.first { $0.side == to && MemoID($0.id) == action.id }
        switch action.action {
        case .copy:
            guard let from = action.from else { break }
            if let main, let source = main.source, let bytes = try files.bytes(from, source.path, source.tag),
                Planner.copied(bytes, as: main.spelledID) != main.data
            {
                throw Self.edited(action, "other bytes")
            }
            if let mainChange, let entry = try files.entries(from)?[action.id], !mainChange.after.matches(entry) {
                throw Self.edited(action, "another index entry")
            }
        case .softDelete:
            guard let mainChange, var expected = mainChange.before, let deletedAt = mainChange.after.deletedAt else {
                throw Self.edited(action, "another index entry")
            }
            expected.deletedAt = deletedAt
            if mainChange.after != expected { throw Self.edited(action, "another index entry") }
            if let main, let bytes = try files.bytes(to, main.path, main.before), Planner.softDeleted(bytes, at: deletedAt) != main.data {
                throw Self.edited(action, "other bytes")
            }
        default:
            for change in action.indexChanges {
                if let file = change.file, let bytes = try files.bytes(change.side, file.path, file.tag),
                    (try? MemoReader.read(bytes)).map(Planner.entry(describing:)) != change.after
                {
                    throw Self.edited(action, "another index entry")
                }
            }
        }
        guard let copyID = action.conflictCopy else { return }
        if let loserEntry = mainChange?.before,
            action.indexChanges.contains(where: { MemoID($0.id) == copyID && $0.after != Planner.conflictCopyEntry(of: loserEntry) })
        {
            throw Self.edited(action, "another conflict copy's index entry")
        }
        if let main, let loser = try files.bytes(to, main.path, main.before) {
            let title = (try? MemoReader.read(loser))?.title
            if copyID != Planner.conflictCopyID(of: action.id, version: loser)
                || action.writes.contains(where: {
                    MemoID($0.spelledID) == copyID && $0.data != Planner.conflictCopy(of: loser, title: title, as: $0.spelledID)
                })
            {
                throw Self.edited(action, "another conflict copy")
            }
        }
    }

    /// The refusal of an action whose `what` (bytes, an entry) was edited in plan.json.
    static func edited(_ action: PlanAction, _ what: String) -> Refusal {
        Refusal(
            description:
                "the plan's \(action.action.rawValue) of memo \(action.id) writes \(what) than reckon plan makes from the files it names, which are as planned: plan.json was changed after it was made; make it again"
        )
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
}

/// The files a plan names, read again: their bytes and a side's index
/// entries, only while they are still the ones the plan saw.
struct FilesAsPlanned {
    let plan: Plan
    let readers: [SideRole: MemoFolderReader]
    var indexes: [SideRole: [MemoID: IndexEntry]] = [:]

    init(plan: Plan, readers: [SideRole: MemoFolderReader]) {
        self.plan = plan
        self.readers = readers
    }

    /// The bytes of `path` on `role` when they are still the ones the plan saw.
    func bytes(_ role: SideRole, _ path: String, _ tag: FileTag?) throws -> Data? {
        guard let reader = readers[role], let tag, let now = try reader.read([path])[path] ?? nil, now.tag.sha256 == tag.sha256 else {
            return nil
        }
        return now.data
    }

    /// The side's index entries when its index.json is still the one the plan saw.
    mutating func entries(_ role: SideRole) throws -> [MemoID: IndexEntry]? {
        if let known = indexes[role] { return known }
        guard let data = try bytes(role, "index.json", plan.side(role).index) else { return nil }
        indexes[role] = (try? IndexReader.read(data).firstEntries) ?? [:]
        return indexes[role]
    }
}
