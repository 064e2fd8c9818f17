import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The pipeline of `BaselineTests`, with a baseline from day 0 and then
/// every kind of difference and every value of `changed` on day 1.
func driftedSincePipeline() throws -> BaselinePipeline { try driftedSince(servingDrive: false).pipeline }

/// `driftedSincePipeline`, with the drive read through rclone from a real
/// `rclone serve sftp` of the pipeline's folder when `servingDrive`.
func driftedSince(servingDrive: Bool) throws -> (pipeline: BaselinePipeline, server: SFTPServer?) {
    var pipeline = try BaselinePipeline(memos: 1...9)
    pipeline.drive.memos[8]!.body = "Worded otherwise on the drive from the start"
    try pipeline.drive.write()
    var server: SFTPServer?
    if servingDrive {
        server = try SFTPServer(serving: pipeline.folder)
        let definition = pipeline.folder.appendingPathComponent("p.json")
        try Data(
            try read(definition).replacingOccurrences(of: #""path": "drive""#, with: #""kind": "rclone", "remote": "\#(server!.remote)drive""#).utf8
        )
        .write(to: definition)
    }
    #expect(try pipeline.reckon(["run", "p.json"], day: 0, environment: server?.environment ?? [:]).code == 0)
    pipeline.device.memos[10] = .init(body: "New on the device", modified: "2026-04-19T18:00:00Z")
    pipeline.drive.memos[11] = .init(body: "New on the drive", modified: "2026-04-19T19:00:00Z")
    pipeline.device.memos[1] = nil
    pipeline.drive.memos[2] = nil
    pipeline.device.memos[3] = .init(body: "Edited on the device", modified: "2026-04-19T20:00:00Z")
    pipeline.drive.memos[3] = .init(body: "Edited on the drive", modified: "2026-04-19T21:00:00Z")
    pipeline.drive.memos[4]!.archived = "2026-04-19T22:00:00Z"
    pipeline.device.memos[5] = .init(body: "Edited on the device only", modified: "2026-04-19T23:00:00Z")
    pipeline.device.memos[9]!.archived = "2026-04-19T23:30:00Z"
    try pipeline.device.write()
    try pipeline.drive.write()
    return (pipeline, server)
}

extension BaselinePipeline {
    var state: URL { reports.appendingPathComponent("state") }
    var planFile: URL { state.appendingPathComponent("plan.json") }

    /// `reckon COMMAND …` at a time given in days after 2026-04-19 12:00 UTC.
    func reckon(_ arguments: [String], day: Int = 1, environment: [String: String] = [:]) throws -> RunResult {
        try runArray(
            arguments, environment: ["SOURCE_DATE_EPOCH": String(1_776_600_000 + day * 86_400)].merging(environment) { _, new in new },
            in: folder)
    }

    func plan(_ flags: [String] = [], day: Int = 1) throws -> (RunResult, [String: Any]) {
        let result = try reckon(["plan", "p.json"] + flags, day: day)
        return (result, try json(read(planFile)))
    }

    func apply(_ flags: [String] = [], day: Int = 1, environment: [String: String] = [:]) throws -> RunResult {
        try reckon(["apply", planFile.path] + flags, day: day, environment: environment)
    }

    /// Every file of both sides, byte for byte, and the state folder's baselines and agreement.
    func sides() throws -> [String: String] {
        var result: [String: String] = [:]
        for name in ["device", "drive"] {
            for (path, hash) in try fingerprint(folder.appendingPathComponent(name)) { result[name + path] = hash }
        }
        for name in ["baseline-device.txt", "baseline-drive.txt", "agreement-drive.json"] {
            let url = state.appendingPathComponent(name)
            if FileKind(path: url.path).isRegular { result["state/\(name)"] = SHA256.hex(of: try Data(contentsOf: url)) }
        }
        return result
    }

    /// The memos the pair's agreement says were agreed at `time`, each with whether `reckon show` finds it the same on both sides now.
    func agreedAt(_ time: String) throws -> [String: Bool] {
        let agreement = try json(read(state.appendingPathComponent("agreement-drive.json")))
        var result: [String: Bool] = [:]
        for memo in agreement["memos"] as! [[String: Any]] where memo["agreedAt"] as? String == time {
            let id = memo["id"] as! String
            result[id] = try json(reckon(["show", id, "p.json", "--json"]).stdout)["same"] as? Bool ?? false
        }
        return result
    }

    /// Writes `text` as plan.json and records it in the state folder as
    /// `reckon plan` records the plans it writes: a forger who can write
    /// there too, so that apply's other checks of the plan are reached.
    func writeRecordedPlan(_ text: String) throws {
        try Data(text.utf8).write(to: planFile)
        try Data().write(to: state.appendingPathComponent("plans/\(SHA256.hex(of: Data(text.utf8)))"))
    }

    /// The apply runs in the state folder, oldest first.
    func applyRuns() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("apply").path)) ?? []).sorted()
    }
}

/// Each action of a plan by memo number: `action from>to`.
func actions(_ plan: [String: Any]) -> [Int: String] {
    var result: [Int: String] = [:]
    for action in plan["actions"] as! [[String: Any]] {
        let id = (action["id"] as! String).uppercased()
        let n = (1...99).first { EditableSide.id($0) == id }!
        let route = [action["from"] as? String, action["to"] as? String].map { $0 ?? "-" }.joined(separator: ">")
        result[n] = "\(action["action"] as! String) \(route)"
    }
    return result
}

/// The paths whose bytes differ between two `sides()`.
func differing(_ a: [String: String], _ b: [String: String]) -> [String] {
    Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
}

/// The plan `text` with `change` made to its actions.
func editing(_ text: String, _ change: (inout [[String: Any]]) -> Void) throws -> String {
    var plan = try json(text)
    var actions = plan["actions"] as! [[String: Any]]
    change(&actions)
    plan["actions"] = actions
    return String(decoding: try JSONSerialization.data(withJSONObject: plan), as: UTF8.self)
}

/// A write's content replaced, its size and SHA-256 recomputed to match.
func setContent(of write: inout [String: Any], _ content: String) {
    write["content"] = content
    write["size"] = content.utf8.count
    write["sha256"] = SHA256.hex(of: Data(content.utf8))
}

/// An action's first write: still a memo of its id, another body.
func rewriteBody(of action: inout [String: Any]) {
    var writes = action["writes"] as! [[String: Any]]
    var memo = try! JSONSerialization.jsonObject(with: Data((writes[0]["content"] as! String).utf8)) as! [String: Any]
    memo["body"] = "Not what reckon plan read"
    setContent(of: &writes[0], String(decoding: try! JSONSerialization.data(withJSONObject: memo), as: UTF8.self))
    action["writes"] = writes
}

/// Every file under `folder`, path to bytes and modification time, to put back exactly.
func snapshot(_ folder: URL) throws -> [String: (Data, timespec)] {
    var result: [String: (Data, timespec)] = [:]
    let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)!
    for case let url as URL in enumerator where FileKind(path: url.path).isRegular {
        var info = stat()
        #expect(stat(url.path, &info) == 0)
        result[String(url.path.dropFirst(folder.path.count))] = (try Data(contentsOf: url), info.st_mtim)
    }
    return result
}

/// Puts `folder` back as `snapshot` found it, times included: a plan's change tags hold them.
func putBack(_ snapshot: [String: (Data, timespec)], in folder: URL) throws {
    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
        try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
    }
    for (path, (data, time)) in snapshot {
        let url = URL(fileURLWithPath: folder.path + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        var times = [time, time]
        #expect(utimensat(AT_FDCWD, url.path, &times, 0) == 0)
    }
}

@Suite struct RepairCommandTests {
    /// A plan holds one action per difference, chosen by which side moved:
    /// copies and soft deletions for one-sided changes, conflicts for the
    /// rest. Applied, it leaves only the conflicts; the backups hold the
    /// replaced bytes; the conflicts, once chosen, are settled too.
    @Test func planApplyAndSettleEveryKindOfDifference() throws {
        let pipeline = try driftedSincePipeline()
        let original = try snapshot(pipeline.folder)
        let sidesBefore = try pipeline.sides()
        let (planned, plan) = try pipeline.plan()
        #expect(planned.code == 1, "\(planned.stderr)")
        #expect(
            actions(plan) == [
                10: "copy local>remote", 11: "copy remote>local", 1: "soft-delete local>remote", 2: "soft-delete remote>local",
                3: "conflict ->-", 4: "copy remote>local", 5: "copy local>remote", 8: "conflict ->-", 9: "copy local>remote"
            ])
        let destructive = (plan["actions"] as! [[String: Any]]).filter { $0["destructive"] as? Bool == true }.count
        #expect(destructive == 5, "memos 1, 2, 4, 5 and 9 replace a file; 10 and 11 are new")
        #expect(FileKind(path: pipeline.state.appendingPathComponent("plan.md").path).isRegular)
        #expect(FileKind(path: pipeline.state.appendingPathComponent("plan.html").path).isRegular)
        #expect(try pipeline.sides() == sidesBefore, "plan writes nothing to the sides")

        let applied = try pipeline.apply(["--yes"])
        #expect(applied.code == 1, "two conflicts are left: \(applied.stdout) \(applied.stderr)")
        let runs = pipeline.applyRuns()
        #expect(runs == ["20260420T120000Z"])
        #expect(applied.stdout.contains("reckon undo 20260420T120000Z --state "))
        for name in ["report.json", "report.md", "report.html", "journal.jsonl", "plan.json"] {
            #expect(FileKind(path: pipeline.state.appendingPathComponent("apply/20260420T120000Z/\(name)").path).isRegular, "\(name)")
        }
        let page = try read(pipeline.state.appendingPathComponent("apply/20260420T120000Z/report.html"))
        #expect(page.contains("Edited on the device") && page.contains("Edited on the drive"), "a conflict's two versions side by side")
        let (after, report) = try pipeline.run(day: 1)
        #expect(after.code == 0)
        #expect(directions(report).keys.sorted() == [3, 8], "only the conflicts still differ")
        // The baselines moved on by what apply wrote: each side reports only its own moves since day 0.
        #expect(side(report, 0)["sinceLastRun"] as? [String: Int] == ["added": 1, "edited": 2, "archived": 1, "unarchived": 0, "deleted": 1])
        #expect(side(report, 1)["sinceLastRun"] as? [String: Int] == ["added": 1, "edited": 1, "archived": 1, "unarchived": 0, "deleted": 1])

        // Every replaced file is in the backups, byte for byte.
        let backups = pipeline.state.appendingPathComponent("backups/20260420T120000Z")
        let replaced = [("drive", 1), ("device", 2), ("device", 4), ("drive", 5), ("drive", 9)]
        for (side, n) in replaced {
            let path = "/\(side)/memos/\(EditableSide.id(n)).json"
            #expect(try Data(contentsOf: backups.appendingPathComponent(path)) == original[path]?.0, "\(path)")
        }
        for side in ["device", "drive"] {
            #expect(try Data(contentsOf: backups.appendingPathComponent("\(side)/index.json")) == original["/\(side)/index.json"]?.0)
        }
        // A soft deletion keeps the memo file, with deletedAt set.
        let deleted = try json(read(pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(1)).json")))
        #expect(deleted["deletedAt"] as? String != nil)
        #expect(deleted["body"] as? String == "Memo 1")

        // The conflicts, chosen: memo 3 keeps both versions, memo 8 takes the drive's.
        let (again, second) = try pipeline.plan(
            ["--take", EditableSide.id(3).lowercased() + "=both", "--take", EditableSide.id(8) + "=remote"], day: 1)
        #expect(again.code == 1)
        #expect(actions(second) == [3: "copy remote>local", 8: "copy remote>local"], "the drive's memo 3 is newer")
        let copyID = try #require((second["actions"] as! [[String: Any]]).first?["conflictCopy"] as? String)
        #expect(try pipeline.apply(["--yes"], day: 1).code == 0)
        let (settled, settledReport) = try pipeline.run(day: 2)
        #expect(settled.code == 0, "\(settled.stdout)")
        #expect(settledReport["inSync"] as? Bool == true)
        #expect(directions(settledReport).isEmpty)
        for side in [pipeline.device.url, pipeline.drive.url] {
            let copy = try json(read(side.appendingPathComponent("memos/\(copyID.uppercased()).json")))
            #expect(copy["title"] as? String == "Memo 3 (conflict copy)")
            #expect(copy["body"] as? String == "Edited on the device", "the older version lives on")
            let memo = try json(read(side.appendingPathComponent("memos/\(EditableSide.id(3)).json")))
            #expect(memo["body"] as? String == "Edited on the drive")
        }
    }

    /// A valid memo file with no index entry gets its entry, added at the
    /// end with every other byte of index.json kept; a soft-deleted entry
    /// whose file is gone is a tombstone, and stays.
    @Test func anOrphanFileGetsItsIndexEntryAndATombstoneStays() throws {
        var pipeline = try BaselinePipeline(memos: 1...3)
        pipeline.drive.memos[3]!.deleted = "2026-04-10T00:00:00Z"
        pipeline.device.memos[3]!.deleted = "2026-04-10T00:00:00Z"
        try pipeline.drive.write()
        try pipeline.device.write()
        try FileManager.default.removeItem(at: pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(3)).json"))
        // Memo 2's entry is taken out of the drive's index; its file stays.
        let index = pipeline.drive.url.appendingPathComponent("index.json")
        let text = try read(index)
        let entry = try #require(text.firstRange(of: try Regex(#"\{"id": "\#(EditableSide.id(2))"[^}]*\}, "#)))
        let without = text.replacingCharacters(in: entry, with: "")
        try Data(without.utf8).write(to: index)
        let (planned, plan) = try pipeline.plan(day: 0)
        #expect(planned.code == 1, "\(planned.stdout)\(planned.stderr)")
        #expect(actions(plan) == [2: "fix-index ->remote"])
        // The app deletes the memo after the plan: its entry is not added as the live memo the plan saw.
        let orphan = pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(2)).json")
        let kept = try Data(contentsOf: orphan)
        try Data(try read(orphan).replacingOccurrences(of: #""deletedAt": null"#, with: #""deletedAt": "2026-04-19T13:00:00Z""#).utf8).write(
            to: orphan)
        #expect(try pipeline.apply([], day: 0).code == 1)
        #expect(try read(index) == without, "index.json untouched")
        try kept.write(to: orphan)
        _ = try pipeline.plan(day: 0)
        // The entry added is the file's own fields: one edited in the plan is refused.
        let made = try read(pipeline.planFile)
        try pipeline.writeRecordedPlan(
            try editing(made) { actions in
                var changes = actions[0]["indexChanges"] as! [[String: Any]]
                var after = changes[0]["after"] as! [String: Any]
                after["archivedAt"] = "2026-04-19T12:00:00Z"
                changes[0]["after"] = after
                actions[0]["indexChanges"] = changes
            })
        let refused = try pipeline.apply([], day: 0)
        #expect(refused.code == 64 && refused.stderr.contains("writes another index entry than reckon plan makes"), "\(refused.stderr)")
        #expect(try read(index) == without, "index.json untouched")
        try Data(made.utf8).write(to: pipeline.planFile)
        let added = try pipeline.apply(["--json"], day: 0)
        #expect(added.code == 0, "adding an entry neither deletes nor overwrites")
        #expect(
            (try json(added.stdout)["actions"] as? [[String: Any]])?.first?["outcome"] as? String == "applied",
            "the entry this run adds is applied, not already done")
        let fixed = try read(index)
        #expect(fixed.hasPrefix(String(without.dropLast(2))), "every byte before the new entry is kept")
        #expect(fixed.contains(#""id":"\#(EditableSide.id(2))""#))
        #expect(fixed.contains(#""id": "\#(EditableSide.id(3))", "modifiedTime""#), "the tombstone stays")
        let (_, report) = try pipeline.run(day: 0)
        #expect(report["inSync"] as? Bool == true, "\(report)")
    }

    /// A file edited between plan and apply is skipped and left exactly as
    /// the user left it; the other actions go on.
    @Test func aFileEditedAfterThePlanIsLeftAsTheUserLeftIt() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let target = pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(5)).json")
        let edit = Data(#"{"id": "\#(EditableSide.id(5))", "modifiedAt": "2026-04-20T08:00:00Z", "body": "Typed on the phone meanwhile"}"#.utf8)
        try edit.write(to: target)
        let applied = try pipeline.apply(["--yes", "--json"])
        #expect(applied.code == 1)
        #expect(try Data(contentsOf: target) == edit)
        let result = try json(applied.stdout)
        let outcomes = Dictionary(
            uniqueKeysWithValues: (result["actions"] as! [[String: Any]]).map {
                (($0["id"] as! String).uppercased(), $0["outcome"] as! String)
            })
        #expect(outcomes[EditableSide.id(5)] == "changed-since")
        #expect(outcomes[EditableSide.id(10)] == "applied")
        #expect(FileKind(path: pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(10)).json").path).isRegular)
    }

    /// No backup, no write: with the backup folder unusable, nothing of the sides changes.
    @Test func aBackupThatCannotBeWrittenStopsTheWrite() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let before = try pipeline.sides()
        try Data("in the way".utf8).write(to: pipeline.state.appendingPathComponent("backups"))
        let applied = try pipeline.apply(["--yes"])
        #expect(applied.code == 2, "\(applied.stdout)")
        #expect(try pipeline.sides() == before)
    }

    /// Killed after every journal step, then `--resume`: the end state is
    /// the uninterrupted run's, byte for byte. Killed, then `undo`: the
    /// state before the run.
    @Test func killedAtEveryJournalStepThenResumedOrUndone() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let start = try snapshot(pipeline.folder)
        let original = try pipeline.sides()
        #expect(try pipeline.apply(["--yes"]).code == 1)
        let finished = try pipeline.sides()
        #expect(finished != original)

        var step = 1
        var killed = 0
        var finishedWhenKilled = 0
        while step < 200 {
            try putBack(start, in: pipeline.folder)
            let run = try pipeline.apply(["--yes"], environment: ["RECKON_TEST_STOP_AT": "journal:\(step)"])
            guard run.code == 9 else {
                #expect(run.code == 1, "step \(step) is past the last: the run ends as usual")
                break
            }
            killed += 1
            // However far it got, the agreement never holds as agreed a memo that is not the same on both sides.
            let agreed = try pipeline.agreedAt("2026-04-20T12:00:00Z")
            #expect(agreed.values.allSatisfy { $0 }, "step \(step): agreed but not the same: \(agreed.filter { !$0.value }.keys.sorted())")
            // The plan's record let go (100 plans made since): its interrupted run still resumes.
            if step == 2 { try FileManager.default.removeItem(at: pipeline.state.appendingPathComponent("plans")) }
            let resumed = try pipeline.apply(["--yes", "--resume"])
            // Killed after the journal's last line, the run had finished.
            let wasFinished = resumed.stderr.contains("already finished; there is nothing to resume")
            #expect(resumed.code == (wasFinished ? 64 : 1), "step \(step): \(resumed.stdout) \(resumed.stderr)")
            // A run counts as finished only once its report is written.
            #expect(
                FileKind(path: pipeline.state.appendingPathComponent("apply/\(pipeline.applyRuns().last!)/report.json").path).isRegular,
                "step \(step): the report is there")
            finishedWhenKilled += wasFinished ? 1 : 0
            let notAsFinished = differing(try pipeline.sides(), finished)
            #expect(notAsFinished.isEmpty, "resumed after step \(step)")

            try putBack(start, in: pipeline.folder)
            #expect(try pipeline.apply(["--yes"], environment: ["RECKON_TEST_STOP_AT": "journal:\(step)"]).code == 9)
            let undone = try pipeline.reckon(["undo", pipeline.applyRuns().last!, "--state", pipeline.state.path])
            #expect(undone.code == 0, "step \(step): \(undone.stdout) \(undone.stderr)")
            let notAsBefore = differing(try pipeline.sides(), original)
            #expect(notAsBefore.isEmpty, "undone after step \(step)")
            step += 1
        }
        #expect(killed > 20, "every step of 7 actions on two sides was tried")
        #expect(try !pipeline.agreedAt("2026-04-20T12:00:00Z").isEmpty, "the finished apply recorded what it made the same")
        #expect(finishedWhenKilled == 1, "one kill came after the journal's last line")
    }

    /// Undo puts everything back, except on a side where a file the apply
    /// wrote was edited after it: that side is left whole, so its files
    /// and entries agree; the other side is put back.
    @Test func undoLeavesASideWhereAFileWasEditedAfterTheApply() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let original = try pipeline.sides()
        #expect(try pipeline.apply(["--yes"]).code == 1)
        let applied = try pipeline.sides()
        let target = pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(5)).json")
        let edit = Data(#"{"id": "\#(EditableSide.id(5))", "modifiedAt": "2026-04-20T08:00:00Z", "body": "Edited after the apply"}"#.utf8)
        try edit.write(to: target)
        let undone = try pipeline.reckon(["undo", pipeline.applyRuns()[0], "--state", pipeline.state.path])
        #expect(undone.code == 1, "\(undone.stdout)")
        #expect(try Data(contentsOf: target) == edit)
        let now = try pipeline.sides()
        for path in now.keys where path.hasPrefix("drive/") && path != "drive/memos/\(EditableSide.id(5)).json" {
            #expect(now[path] == applied[path], "\(path) stays as apply left it")
        }
        #expect(now["state/baseline-drive.txt"] == applied["state/baseline-drive.txt"], "and so does its baseline")
        for path in original.keys where path.hasPrefix("device/") || path == "state/baseline-device.txt" {
            #expect(now[path] == original[path], "\(path) is back")
        }
    }

    /// Undo reads every backup it needs before it puts anything back: one
    /// gone or changed stops it whole, in words, so no side is left with
    /// its memo files put back and its index.json not.
    @Test func undoWithABackupGoneOrChangedPutsNothingBack() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let original = try pipeline.sides()
        #expect(try pipeline.apply(["--yes"]).code == 1)
        let applied = try pipeline.sides()
        let run = pipeline.applyRuns()[0]
        let backup = pipeline.state.appendingPathComponent("backups/\(run)/drive/index.json")
        let kept = try Data(contentsOf: backup)
        try FileManager.default.removeItem(at: backup)
        let undo = ["undo", run, "--state", pipeline.state.path]
        let gone = try pipeline.reckon(undo)
        #expect(gone.code == 2)
        #expect(
            gone.stderr
                == "Error: run \(run) cannot be undone: the backup backups/\(run)/drive/index.json of index.json on Google Drive cannot be read (cannot be opened: No such file or directory); nothing was put back, so that each side's memo files and index entries still agree\n"
        )
        #expect(try pipeline.sides() == applied, "nothing put back")
        try Data("{}".utf8).write(to: backup)
        let changed = try pipeline.reckon(undo)
        #expect(changed.code == 2)
        #expect(
            changed.stderr.contains(
                "the backup backups/\(run)/drive/index.json of index.json on Google Drive is not the file it was made from; nothing was put back"),
            "\(changed.stderr)")
        #expect(try pipeline.sides() == applied, "nothing put back")
        try kept.write(to: backup)
        #expect(try pipeline.reckon(undo).code == 0)
        #expect(try pipeline.sides() == original, "every byte back")
    }

    /// The guards refuse with exit 64 and change nothing; without `--yes`
    /// and no terminal, only what neither deletes nor overwrites is done.
    @Test func guardsRefuseAndCronWithoutYesDoesNothingDestructive() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let before = try pipeline.sides()

        let old = try pipeline.apply(["--yes"], day: 3)
        #expect(old.code == 64)
        #expect(old.stderr.contains("the plan was made 48 hours ago"), "\(old.stderr)")
        let strictAge = try pipeline.apply(["--yes", "--max-age", "1s"], day: 3)
        #expect(strictAge.code == 64)
        #expect(strictAge.stderr.contains("more than --max-age allows (1 second); make it again"), "\(strictAge.stderr)")
        let strict = try pipeline.apply(["--yes", "--max-delete", "5"])
        #expect(strict.code == 64)
        #expect(strict.stderr.contains("the plan would delete 1 of 9 memos on"), "\(strict.stderr)")
        #expect(try pipeline.sides() == before)

        let cron = try pipeline.apply(["--json"])
        #expect(cron.code == 1)
        let outcomes = (try json(cron.stdout)["actions"] as! [[String: Any]]).map { $0["outcome"] as! String }
        #expect(outcomes.filter { $0 == "not-confirmed" }.count == 5)
        #expect(outcomes.filter { $0 == "applied" }.count == 2)
        #expect(
            try Data(contentsOf: pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(5)).json"))
                != Data(contentsOf: pipeline.device.url.appendingPathComponent("memos/\(EditableSide.id(5)).json")), "not overwritten")
    }

    /// Backups and journals are kept for the last `--keep-backups` runs.
    @Test func onlyTheLastRunsKeepTheirBackups() throws {
        var pipeline = try BaselinePipeline(memos: 1...2)
        #expect(try pipeline.reckon(["run", "p.json"], day: 0).code == 0)
        for round in 1...3 {
            pipeline.device.memos[1] = .init(body: "Edit \(round)", modified: "2026-04-2\(round)T10:00:00Z")
            try pipeline.device.write()
            #expect(try pipeline.plan(day: round).0.code == 1)
            #expect(try pipeline.apply(["--yes", "--keep-backups", "2"], day: round).code == 0)
            #expect(try pipeline.reckon(["run", "p.json"], day: round).code == 0)
        }
        #expect(pipeline.applyRuns() == ["20260421T120000Z", "20260422T120000Z"] as [String])
        let backups = try FileManager.default.contentsOfDirectory(atPath: pipeline.state.appendingPathComponent("backups").path).sorted()
        #expect(backups == ["20260421T120000Z", "20260422T120000Z"])
    }

    /// One apply at a time per target: a second one, of any plan, waits for
    /// nothing and writes nothing while the first holds the side's lock.
    @Test func aSecondApplyOnTheSameSideIsRefusedWhileOneRuns() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let gate = pipeline.folder.appendingPathComponent("gate")
        try Data().write(to: gate)
        let first = try BackgroundRun(
            ["apply", pipeline.planFile.path, "--yes"],
            environment: [
                "SOURCE_DATE_EPOCH": String(1_776_600_000 + 86_400), "RECKON_TEST_WAIT_AT": "apply-locked",
                "RECKON_TEST_WAIT_FILE": gate.path
            ], in: pipeline.folder)
        for _ in 0..<300 where !FileManager.default.fileExists(atPath: gate.path + ".reached") { usleep(50_000) }
        let before = try pipeline.sides()
        let second = try pipeline.apply(["--yes"])
        #expect(second.code == 2)
        #expect(second.stderr.contains("another reckon run (process"), "\(second.stderr)")
        #expect(try pipeline.sides() == before)
        try FileManager.default.removeItem(at: gate)
        #expect(first.wait().code == 1)
    }

    /// A pipeline of several remotes plans one pair, named; a `--take` of a
    /// memo that does not differ is a mistake, said before anything is written.
    @Test func planNamesItsRemoteAndEveryChoiceNamesAMemoThatDiffers() throws {
        let pipeline = try driftedSincePipeline()
        let definition = pipeline.folder.appendingPathComponent("p.json")
        try FileManager.default.copyItem(at: pipeline.drive.url, to: pipeline.folder.appendingPathComponent("backup"))
        try Data(
            try read(definition).replacingOccurrences(of: #""path": "drive"}]"#, with: #""path": "drive"}, {"name": "backup", "path": "backup"}]"#)
                .utf8
        )
        .write(to: definition)
        let unnamed = try pipeline.reckon(["plan", "p.json"])
        #expect(unnamed.code == 64)
        #expect(unnamed.stderr.contains("p.json has 2 remotes; name the one to plan for with '--remote <name>' (drive, backup)"), "\(unnamed.stderr)")
        let unknown = try pipeline.reckon(["plan", "p.json", "--remote", "drive", "--take", EditableSide.id(6) + "=local"])
        #expect(unknown.code == 64)
        #expect(unknown.stderr.contains("which does not differ between the sides"), "\(unknown.stderr)")
        #expect(FileKind(path: pipeline.planFile.path) == .missing)
        #expect(try pipeline.reckon(["plan", "p.json", "--remote", "drive"]).code == 1)
        // A choice wins even over the side that alone moved, and says what it replaces.
        let plain = try json(read(pipeline.planFile))
        #expect(actions(plain)[5] == "copy local>remote")
        let taken = try pipeline.reckon(["plan", "p.json", "--remote", "drive", "--take", EditableSide.id(5) + "=remote"])
        #expect(taken.code == 1)
        let overridden = (try json(read(pipeline.planFile))["actions"] as! [[String: Any]]).first {
            ($0["id"] as! String).uppercased() == EditableSide.id(5)
        }!
        #expect(overridden["from"] as? String == "remote" && overridden["to"] as? String == "local" && overridden["action"] as? String == "copy")
        #expect(
            overridden["reason"] as? String
                == "edited on this device since they last agreed on 2026-04-19; unchanged on Google Drive; Google Drive's version is copied to this device instead"
        )
        #expect(overridden["choice"] as? String == "--take \(EditableSide.id(5).lowercased())=remote: Google Drive's version is kept")
        // `both` for a memo only one side holds keeps no conflict copy, and says so.
        #expect(try pipeline.reckon(["plan", "p.json", "--remote", "drive", "--take", EditableSide.id(10) + "=both"]).code == 1)
        let onlyOne = (try json(read(pipeline.planFile))["actions"] as! [[String: Any]]).first {
            ($0["id"] as! String).uppercased() == EditableSide.id(10)
        }!
        #expect(onlyOne["conflictCopy"] is NSNull && onlyOne["action"] as? String == "copy")
        #expect(
            onlyOne["choice"] as? String
                == "--take \(EditableSide.id(10).lowercased())=both: Google Drive holds no live version to keep as a conflict copy, so this device's is taken"
        )
        #expect((onlyOne["reason"] as? String)?.contains("conflict copy") == false)
        let twice = try pipeline.reckon([
            "plan", "p.json", "--remote", "drive", "--take", EditableSide.id(5) + "=remote", "--take", EditableSide.id(5) + "=local"
        ])
        #expect(twice.code == 64)
        #expect(
            twice.stderr.contains("'--take' names the memo \(EditableSide.id(5).lowercased()) twice, as remote and as local; choose one"),
            "\(twice.stderr)")
        // A memo that cannot be compared is mended first, never chosen.
        try Data("{ not json".utf8).write(to: pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(6)).json"))
        let broken = try pipeline.reckon(["plan", "p.json", "--remote", "drive", "--take", EditableSide.id(6) + "=local"])
        #expect(broken.code == 64)
        #expect(broken.stderr.contains("'--take' names the memo \(EditableSide.id(6).lowercased()), which cannot be compared ("), "\(broken.stderr)")
        try FileManager.default.removeItem(at: pipeline.folder.appendingPathComponent("backup/index.json"))
        let failed = try pipeline.reckon(["plan", "p.json", "--remote", "backup"])
        #expect(failed.code == 2, "a side that cannot be read is trouble")
        #expect(failed.stderr.contains("could not be read"), "\(failed.stderr)")
    }

    /// At a terminal, deletions and overwrites wait for "yes" typed; anything
    /// else skips them. (`script` gives apply a terminal; the answer is typed into it.)
    @Test func aPersonAtATerminalConfirmsByTypingYes() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        func applyAtTerminal(typing answer: String) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qec", "\(reckonBinary.path) apply \(pipeline.planFile.path) --json", "/dev/null"]
            process.environment = ProcessInfo.processInfo.environment.merging(["SOURCE_DATE_EPOCH": String(1_776_600_000 + 86_400)]) { $1 }
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            input.fileHandleForWriting.write(Data("\(answer)\n".utf8))
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
        let declined = try applyAtTerminal(typing: "no")
        #expect(declined.contains("Type yes to carry them out"))
        #expect(declined.components(separatedBy: #""outcome" : "not-confirmed""#).count - 1 == 5, "\(declined)")
        let target = pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(5)).json")
        #expect(try Data(contentsOf: target) != Data(contentsOf: pipeline.device.url.appendingPathComponent("memos/\(EditableSide.id(5)).json")))
        let confirmed = try applyAtTerminal(typing: "yes")
        #expect(confirmed.components(separatedBy: #""outcome" : "applied""#).count - 1 == 5, "\(confirmed)")
        #expect(try Data(contentsOf: target) == Data(contentsOf: pipeline.device.url.appendingPathComponent("memos/\(EditableSide.id(5)).json")))
    }

    /// The app saves between apply's read and its write: the memo file is
    /// swapped back whole and reported; an index saved meanwhile is merged
    /// again, keeping the app's entry and reckon's.
    @Test(arguments: ["memo-swap", "index-swap"])
    func aSaveByTheAppDuringTheWriteIsNeverLost(_ step: String) throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let gate = pipeline.folder.appendingPathComponent("gate")
        try Data().write(to: gate)
        let run = try BackgroundRun(
            ["apply", pipeline.planFile.path, "--yes", "--json"],
            environment: [
                "SOURCE_DATE_EPOCH": String(1_776_600_000 + 86_400), "RECKON_TEST_WAIT_AT": step,
                "RECKON_TEST_WAIT_FILE": gate.path
            ], in: pipeline.folder)
        for _ in 0..<300 where !FileManager.default.fileExists(atPath: gate.path + ".reached") { usleep(50_000) }
        #expect(FileManager.default.fileExists(atPath: gate.path + ".reached"))
        // The first write of the plan is memo 1's soft deletion on the drive; the first index written is the device's.
        let saved: URL
        let bytes: Data
        if step == "memo-swap" {
            saved = pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(1)).json")
            bytes = Data(#"{"id": "\#(EditableSide.id(1))", "modifiedAt": "2026-04-20T11:59:00Z", "body": "Saved by the app during the apply"}"#.utf8)
        } else {
            saved = pipeline.device.url.appendingPathComponent("index.json")
            let entry = #"{"id": "\#(EditableSide.id(20))", "modifiedTime": "2026-04-20T11:59:00Z", "archivedAt": null, "deletedAt": null}"#
            bytes = Data(try read(saved).replacingOccurrences(of: #""entries": ["#, with: #""entries": [\#(entry), "#).utf8)
        }
        try bytes.write(to: saved)
        try FileManager.default.removeItem(at: gate)
        let result = run.wait()
        if step == "memo-swap" {
            #expect(result.code == 1)
            #expect(try Data(contentsOf: saved) == bytes, "the app's save is whole")
            let outcome = (try json(result.stdout)["actions"] as! [[String: Any]]).first { ($0["id"] as! String).uppercased() == EditableSide.id(1) }
            #expect(outcome?["outcome"] as? String == "changed-since")
        } else {
            let index = try read(saved)
            #expect(index.contains(EditableSide.id(20)), "the app's new entry is kept")
            #expect(index.contains(EditableSide.id(11)), "reckon's entry was merged in again")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: pipeline.device.url.appendingPathComponent("memos").path).allSatisfy {
                !$0.hasPrefix(".")
            })
    }

    /// A plan changed by hand is refused whole, and nothing is written.
    @Test func aPlanChangedByHandIsRefused() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let planned = try read(pipeline.planFile)
        let before = try pipeline.sides()
        var edited: [(String, String, String)] = []
        var plan = try json(planned)
        var actions = plan["actions"] as! [[String: Any]]
        let copy = actions.firstIndex { $0["action"] as? String == "copy" && $0["to"] as? String == "remote" }!
        var writes = actions[copy]["writes"] as! [[String: Any]]
        writes[0]["side"] = "local"
        actions[copy]["writes"] = writes
        plan["actions"] = actions
        edited.append(
            (
                "a write on the other side", try String(decoding: JSONSerialization.data(withJSONObject: plan), as: UTF8.self),
                "writes other files than reckon plan would"
            ))
        let content = #"{"GARBAGE": true}"#
        writes = (try json(planned)["actions"] as! [[String: Any]])[copy]["writes"] as! [[String: Any]]
        writes[0]["content"] = content
        writes[0]["size"] = content.utf8.count
        writes[0]["sha256"] = SHA256.hex(of: Data(content.utf8))
        plan = try json(planned)
        actions = plan["actions"] as! [[String: Any]]
        actions[copy]["writes"] = writes
        plan["actions"] = actions
        edited.append(
            (
                "content that is not a memo", try String(decoding: JSONSerialization.data(withJSONObject: plan), as: UTF8.self),
                "is not a memo file of that id"
            ))
        edited.append(
            (
                "a plan from the future",
                planned.replacingOccurrences(of: #""createdAt" : "2026-04-20T12:00:00Z""#, with: #""createdAt" : "2099-01-01T00:00:00Z""#),
                "after now"
            ))
        plan = try json(planned)
        plan["sides"] = Array((plan["sides"] as! [Any]).prefix(1))
        edited.append(
            (
                "one side", try String(decoding: JSONSerialization.data(withJSONObject: plan), as: UTF8.self),
                "does not name a local side, then a remote"
            ))
        plan = try json(planned)
        plan["stateDir"] = "state"
        edited.append(
            (
                "a relative state folder", try String(decoding: JSONSerialization.data(withJSONObject: plan), as: UTF8.self),
                "is not a folder's full path"
            ))
        plan = try json(planned)
        actions = plan["actions"] as! [[String: Any]]
        plan["actions"] = actions + [actions[copy]]
        edited.append(
            ("a memo listed twice", try String(decoding: JSONSerialization.data(withJSONObject: plan), as: UTF8.self), "lists a memo twice"))
        plan = try json(planned)
        actions = plan["actions"] as! [[String: Any]]
        var changes = actions[copy]["indexChanges"] as! [[String: Any]]
        var after = changes[0]["after"] as! [String: Any]
        after["deletedAt"] = "2026-04-20T00:00:00Z"
        changes[0]["after"] = after
        actions[copy]["indexChanges"] = changes
        plan["actions"] = actions
        edited.append(
            (
                "an entry that says deleted beside a live file", try String(decoding: JSONSerialization.data(withJSONObject: plan), as: UTF8.self),
                "does not agree with the file written beside it"
            ))
        plan = try json(planned)
        plan["actions"] = "none"
        edited.append(
            (
                "a wrong type", try String(decoding: JSONSerialization.data(withJSONObject: plan), as: UTF8.self),
                "'actions' is not of the kind a plan holds there"
            ))
        // Edits that keep the plan whole in itself (a memo of its id, its size and SHA-256 recomputed) are
        // still refused: apply makes each write and entry again from the files, which are as planned.
        let softDelete = (try json(planned)["actions"] as! [[String: Any]]).firstIndex { $0["action"] as? String == "soft-delete" }!
        edited.append(
            (
                "a copy's content edited, its SHA-256 recomputed", try editing(planned) { rewriteBody(of: &$0[copy]) },
                "writes other bytes than reckon plan makes"
            ))
        edited.append(
            (
                "a soft deletion's content edited, its SHA-256 recomputed", try editing(planned) { rewriteBody(of: &$0[softDelete]) },
                "writes other bytes than reckon plan makes"
            ))
        for index in [copy, softDelete] {
            edited.append(
                (
                    "an entry's time edited",
                    try editing(planned) { actions in
                        var changes = actions[index]["indexChanges"] as! [[String: Any]]
                        var after = changes[0]["after"] as! [String: Any]
                        after["modifiedTime"] = "2030-01-01T00:00:00Z"
                        changes[0]["after"] = after
                        actions[index]["indexChanges"] = changes
                    }, "writes another index entry than reckon plan makes"
                ))
        }
        edited.append(
            (
                "a copy that names no file it copies",
                try editing(planned) { actions in
                    rewriteBody(of: &actions[copy])
                    actions[copy]["writes"] = (actions[copy]["writes"] as! [[String: Any]]).map {
                        var write = $0
                        write["source"] = nil
                        return write
                    }
                }, "writes other files than reckon plan would"
            ))
        edited.append(
            (
                "an entry aimed at another memo",
                try editing(planned) { actions in
                    var changes = actions[copy]["indexChanges"] as! [[String: Any]]
                    changes[0]["id"] = actions[softDelete]["id"]
                    actions[copy]["indexChanges"] = changes
                }, "writes other files than reckon plan would"
            ))
        for (what, text, words) in edited {
            try Data(text.utf8).write(to: pipeline.planFile)
            let unrecorded = try pipeline.apply(["--yes"])
            #expect(unrecorded.code == 64, "\(what): \(unrecorded.stdout)")
            // A plan that cannot be read, or names no state folder, is refused before its record is looked for.
            #expect(
                unrecorded.stderr.contains("reckon plan did not write this plan.json for the state folder") || unrecorded.stderr.contains(words),
                "\(what): \(unrecorded.stderr)")
            try pipeline.writeRecordedPlan(text)
            let refused = try pipeline.apply(["--yes"])
            #expect(refused.code == 64, "\(what): \(refused.stdout)")
            #expect(refused.stderr.contains(words), "\(what): \(refused.stderr)")
            #expect(refused.stderr.hasPrefix("Error: \(pipeline.planFile.path): "), "\(what) names the plan")
            #expect(try pipeline.sides() == before, "\(what): nothing written")
        }
        // A conflict copy is the older version's bytes under a new id.
        #expect(ReckonCLITests.actions(try json(planned))[3] == "conflict ->-")
        _ = try pipeline.plan(["--take", EditableSide.id(3) + "=both"])
        let both = try read(pipeline.planFile)
        try pipeline.writeRecordedPlan(
            try editing(both) { actions in
                let index = actions.firstIndex { $0["conflictCopy"] is String }!
                var writes = actions[index]["writes"] as! [[String: Any]]
                let copyID = (actions[index]["conflictCopy"] as! String).lowercased()
                let copyWrite = writes.firstIndex { ($0["path"] as! String).lowercased().contains(copyID) }!
                setContent(
                    of: &writes[copyWrite], (writes[copyWrite]["content"] as! String).replacingOccurrences(of: "(conflict copy)", with: "(kept)"))
                actions[index]["writes"] = writes
            })
        let refused = try pipeline.apply(["--yes"])
        #expect(refused.code == 64, "\(refused.stdout)")
        #expect(refused.stderr.contains("writes another conflict copy than reckon plan makes"), "\(refused.stderr)")
        #expect(try pipeline.sides() == before, "a conflict copy edited: nothing written")
        try pipeline.writeRecordedPlan(
            try editing(both) { actions in
                let index = actions.firstIndex { $0["conflictCopy"] is String }!
                let copyID = (actions[index]["conflictCopy"] as! String).lowercased()
                actions[index]["writes"] = (actions[index]["writes"] as! [[String: Any]]).filter {
                    !($0["path"] as! String).lowercased().contains(copyID)
                }
                actions[index]["indexChanges"] = (actions[index]["indexChanges"] as! [[String: Any]]).filter {
                    ($0["id"] as! String).lowercased() != copyID
                }
            })
        let dropped = try pipeline.apply(["--yes"])
        #expect(
            dropped.code == 64 && dropped.stderr.contains("writes other files than reckon plan would"), "a conflict copy dropped: \(dropped.stderr)")
        #expect(try pipeline.sides() == before, "a conflict copy dropped: nothing written")
        try Data(both.utf8).write(to: pipeline.planFile)
        #expect(try pipeline.apply(["--yes"]).code == 1, "the plan as made is applied")
        #expect(try pipeline.sides() != before)
    }

    /// `destructive` is told from what a plan writes, not from its word.
    @Test func aPlanThatCallsAnOverwriteHarmlessStillNeedsYes() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let planned = try read(pipeline.planFile)
        try pipeline.writeRecordedPlan(planned.replacingOccurrences(of: #""destructive" : true"#, with: #""destructive" : false"#))
        #expect(try pipeline.apply([]).code == 1)
        #expect(
            try Data(contentsOf: pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(5)).json"))
                != Data(contentsOf: pipeline.device.url.appendingPathComponent("memos/\(EditableSide.id(5)).json")), "not overwritten without --yes")
    }

    /// A state folder that holds a side is refused: its plans/, apply/ and
    /// backups/ would be written, and swept, inside that side.
    @Test func aStateFolderThatHoldsASideIsRefused() throws {
        let folder = temporaryFolder()
        for (sample, name) in [("device", "plans"), ("drive", "drv")] {
            try FileManager.default.copyItem(
                at: packageRoot.appendingPathComponent("Samples/drift/\(sample)"), to: folder.appendingPathComponent(name))
        }
        try Data(
            #"{"schemaVersion": 1, "name": "p", "local": {"path": "plans"}, "remotes": [{"name": "drive", "path": "drv"}], "reports": {"dir": "reports"}, "state": {"dir": "."}}"#
                .utf8
        )
        .write(to: folder.appendingPathComponent("p.json"))
        let before = try fingerprint(folder)
        for command in [["validate", "p.json"], ["plan", "p.json"], ["run", "p.json"]] {
            let refused = try runArray(command, in: folder)
            #expect(refused.code == 64, "\(command): \(refused.stdout)")
            #expect(
                refused.stderr.contains("holds the source folder plans; reckon keeps its plans, journals and backups apart from every source"),
                "\(command): \(refused.stderr)")
        }
        #expect(try fingerprint(folder) == before, "nothing written")
    }

    /// What the app does between plan and apply is never undone by apply:
    /// a second spelling of a new memo's id, a fix-index's file edited; and
    /// an interrupted run of another plan must be finished first.
    @Test func theWorldMovingAfterThePlanIsRespected() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let before = try pipeline.sides()
        // Memo 10 is to be copied to the drive as 0000000A-…; the app synced it as 0000000a-… meanwhile.
        let small = pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(10).lowercased()).json")
        try Data(contentsOf: pipeline.device.url.appendingPathComponent("memos/\(EditableSide.id(10)).json")).write(to: small)
        // A killed run's temporary file holds bytes of the plan; a person's file of that name does not.
        let planned = (try json(read(pipeline.planFile))["actions"] as! [[String: Any]]).first {
            ($0["id"] as! String).uppercased() == EditableSide.id(5)
        }!
        let source = pipeline.device.url.appendingPathComponent("memos/\(EditableSide.id(9)).json")
        try Data(try read(source).replacingOccurrences(of: "Memo 9", with: "Memo 9, edited again").utf8).write(to: source)
        let leftover = pipeline.drive.url.appendingPathComponent("memos/.reckon-write.99999.1.tmp")
        try Data(((planned["writes"] as! [[String: Any]])[0]["content"] as! String).utf8).write(to: leftover)
        let persons = pipeline.drive.url.appendingPathComponent("memos/.reckon-write.99999.2.tmp")
        try Data("a person's notes".utf8).write(to: persons)
        // A run killed right after making its temporary file leaves it empty.
        let empty = pipeline.drive.url.appendingPathComponent(".reckon-write.99999.3.tmp")
        try Data().write(to: empty)
        // In the state folder, reckon's own, a temporary file of a process that is gone is swept; one of a live reckon stays.
        let stateLeftover = pipeline.state.appendingPathComponent(".baseline-drive.txt.99999.7.tmp")
        let holder = try heldReckon()
        defer { holder.release() }
        let live = pipeline.state.appendingPathComponent(".baseline-drive.txt.\(holder.pid).8.tmp")
        let notOurs = ["memos/.draft.99999.0.tmp", ".baseline-mine.txt.99999.1.tmp", ".notes.99999.2.tmp"].map {
            pipeline.state.appendingPathComponent($0)
        }
        try FileManager.default.createDirectory(at: pipeline.state.appendingPathComponent("memos"), withIntermediateDirectories: true)
        for file in [stateLeftover, live] + notOurs { try Data("half a baseline".utf8).write(to: file) }
        // The app archives memo 5 in the device's index.json after the plan, its file untouched: the entry to copy moved.
        let deviceIndex = pipeline.device.url.appendingPathComponent("index.json")
        let indexText = try read(deviceIndex)
        let entry5 = try #require(indexText.firstRange(of: try Regex(#"\{"id": "\#(EditableSide.id(5))"[^}]*\}"#)))
        try Data(
            indexText.replacingCharacters(
                in: entry5,
                with: String(indexText[entry5]).replacingOccurrences(of: #""archivedAt": null"#, with: #""archivedAt": "2026-04-20T01:00:00Z""#)
            ).utf8
        )
        .write(to: deviceIndex)
        #expect(try read(deviceIndex) != indexText)
        let applied = try pipeline.apply(["--yes", "--json"])
        let memo5 = (try json(applied.stdout)["actions"] as! [[String: Any]]).first { ($0["id"] as! String).uppercased() == EditableSide.id(5) }
        #expect(memo5?["outcome"] as? String == "changed-since", "the entry to copy moved after the plan")
        #expect(FileKind(path: stateLeftover.path) == .missing)
        #expect(FileKind(path: live.path).isRegular)
        for file in notOurs { #expect(FileKind(path: file.path).isRegular, "\(file.lastPathComponent) is not reckon's to sweep") }
        #expect(
            (try json(applied.stdout)["notes"] as? [String])?.contains(
                "removed .baseline-drive.txt.99999.7.tmp in the state folder, a temporary file a killed run left") == true,
            "\(applied.stdout)")
        #expect(applied.code == 1)
        let outcome = (try json(applied.stdout)["actions"] as! [[String: Any]]).first { ($0["id"] as! String).uppercased() == EditableSide.id(10) }
        #expect(outcome?["outcome"] as? String == "changed-since")
        #expect(FileKind(path: pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(10)).json").path) == .missing, "no second file")
        #expect(FileKind(path: leftover.path) == .missing, "a killed run's temporary file is swept under the lock")
        #expect(FileKind(path: empty.path) == .missing, "and so is an empty one")
        let memo9 = (try json(applied.stdout)["actions"] as! [[String: Any]]).first { ($0["id"] as! String).uppercased() == EditableSide.id(9) }
        #expect(memo9?["outcome"] as? String == "changed-since", "the device's memo 9, the version to copy, was edited after the plan")
        #expect(try Data(contentsOf: persons) == Data("a person's notes".utf8), "a file reckon did not write is never removed")
        _ = before

        // Kill an apply of one plan; a plan made since may not run over it.
        let other = try driftedSincePipeline()
        _ = try other.plan()
        #expect(try other.apply(["--yes"], environment: ["RECKON_TEST_STOP_AT": "journal:3"]).code == 9)
        let second = try other.plan(["--take", EditableSide.id(3) + "=local"])
        #expect(second.0.code == 1)
        let refused = try other.apply(["--yes"])
        #expect(refused.code == 64)
        #expect(refused.stderr.contains("of another plan was interrupted"), "\(refused.stderr)")
    }

    /// A replaced file keeps its owner and permissions; backups are private.
    @Test func aReplacedFileKeepsItsOwnerAndBackupsArePrivate() throws {
        let pipeline = try driftedSincePipeline()
        let target = pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(5)).json")
        let root = getuid() == 0
        if root {
            #expect(chown(target.path, 65534, 65534) == 0)
        } else {
            print("not root: the owner is not changed, only the permissions are checked")
        }
        #expect(chmod(target.path, 0o640) == 0)
        _ = try pipeline.plan()
        #expect(try pipeline.apply(["--yes"]).code == 1)
        var info = stat()
        #expect(stat(target.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o640)
        if root { #expect(info.st_uid == 65534 && info.st_gid == 65534) }
        let backup = pipeline.state.appendingPathComponent("backups/\(pipeline.applyRuns()[0])/drive/memos/\(EditableSide.id(5)).json")
        #expect(stat(backup.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(backup.deletingLastPathComponent().path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    /// Undo keeps a side whole: when its index.json moved after the apply,
    /// none of its memo files is put back either.
    @Test func undoPutsNothingBackOnASideWhoseIndexMoved() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let original = try pipeline.sides()
        #expect(try pipeline.apply(["--yes"]).code == 1)
        let applied = try pipeline.sides()
        let index = pipeline.drive.url.appendingPathComponent("index.json")
        let moved = try read(index).replacingOccurrences(
            of: #""entries": ["#, with: #""entries": [{"id": "\#(EditableSide.id(30))", "modifiedTime": "2026-04-21T00:00:00Z"}, "#)
        try Data(moved.utf8).write(to: index)
        let undone = try pipeline.reckon(["undo", pipeline.applyRuns()[0], "--state", pipeline.state.path])
        #expect(undone.code == 1)
        let now = try pipeline.sides()
        for path in now.keys where path.hasPrefix("drive/") && path != "drive/index.json" {
            #expect(now[path] == applied[path], "\(path) stays as apply left it")
        }
        for path in original.keys where path.hasPrefix("device/") {
            #expect(now[path] == original[path], "\(path) is back")
        }
    }

    /// A plan made from other sides is refused.
    @Test func aPlanMadeFromOtherSidesIsRefused() throws {
        let pipeline = try driftedSincePipeline()
        _ = try pipeline.plan()
        let definition = pipeline.folder.appendingPathComponent("p.json")
        let planned = try read(definition)
        try Data(planned.replacingOccurrences(of: #""label": "Google Drive","#, with: #""label": "Google Drive", "readOnly": true,"#).utf8).write(
            to: definition)
        let readOnly = try pipeline.apply(["--yes"])
        #expect(readOnly.code == 64)
        #expect(readOnly.stderr.contains("Google Drive is marked \"readOnly\": true in"), "\(readOnly.stderr)")
        try Data(planned.utf8).write(to: definition)
        try FileManager.default.copyItem(at: pipeline.drive.url, to: pipeline.folder.appendingPathComponent("elsewhere"))
        try Data(try read(definition).replacingOccurrences(of: #""path": "drive""#, with: #""path": "elsewhere""#).utf8).write(to: definition)
        let before = try pipeline.sides()
        let refused = try pipeline.apply(["--yes"])
        #expect(refused.code == 64)
        #expect(refused.stderr.contains("the plan was made from other sides"), "\(refused.stderr)")
        #expect(try pipeline.sides() == before)
    }

    /// Over rclone (a real `rclone serve sftp`): the same plan, applied with
    /// `copyto` and `moveto`, leaves only the conflicts, keeps the backups,
    /// and leaves no temporary file on the remote.
    @Test(.needs(.rclone)) func applyOverAnRcloneRemote() throws {
        let (pipeline, started) = try driftedSince(servingDrive: true)
        let server = try #require(started)
        defer { server.stop() }
        let original = try snapshot(pipeline.drive.url)
        let planned = try pipeline.reckon(["plan", "p.json"], environment: server.environment)
        #expect(planned.code == 1, "\(planned.stderr)")
        #expect(
            actions(try json(read(pipeline.planFile))) == [
                10: "copy local>remote", 11: "copy remote>local", 1: "soft-delete local>remote", 2: "soft-delete remote>local",
                3: "conflict ->-", 4: "copy remote>local", 5: "copy local>remote", 8: "conflict ->-", 9: "copy local>remote"
            ])
        let applied = try pipeline.apply(["--yes"], environment: server.environment)
        #expect(applied.code == 1, "\(applied.stdout) \(applied.stderr)")
        let after = try pipeline.reckon(["run", "p.json", "--json"], day: 1, environment: server.environment)
        #expect(directions(try json(after.stdout)).keys.sorted() == [3, 8], "\(after.stdout)")
        let run = pipeline.applyRuns()[0]
        for n in [1, 5, 9] {
            let path = "/memos/\(EditableSide.id(n)).json"
            #expect(try Data(contentsOf: pipeline.state.appendingPathComponent("backups/\(run)/drive\(path)")) == original[path]?.0)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: pipeline.drive.url.appendingPathComponent("memos").path).sorted()
        #expect(names == ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].filter { $0 != 2 }.map { "\(EditableSide.id($0)).json" }), "no temporary file is left")
    }

    /// A side marked read-only, and the app's store, are never targets.
    @Test func aReadOnlySideAndAStoreAreNeverWritten() throws {
        let pipeline = try driftedSincePipeline()
        let definition = pipeline.folder.appendingPathComponent("p.json")
        try Data(
            try read(definition).replacingOccurrences(of: #""label": "Google Drive","#, with: #""label": "Google Drive", "readOnly": true,"#).utf8
        )
        .write(to: definition)
        let (_, plan) = try pipeline.plan()
        let notPossible = (plan["actions"] as! [[String: Any]]).filter { $0["action"] as? String == "not-possible" }
        #expect(notPossible.count == 4, "memos 10, 1, 5 and 9 would write the drive")
        #expect((notPossible.first?["reason"] as? String)?.hasPrefix("not possible: Google Drive is marked \"readOnly\": true") == true)
        let drive = try fingerprint(pipeline.drive.url)
        #expect(try pipeline.apply(["--yes"]).code == 1)
        #expect(try fingerprint(pipeline.drive.url) == drive)

        let folder = try copyOfDriftSamples()
        let store = packageRoot.appendingPathComponent("Samples/store/default.store").path
        let storeBefore = SHA256.hex(of: try Data(contentsOf: URL(fileURLWithPath: store)))
        let planned = try runArray(["plan", "--local", store, "--remote", "drive", "--out", "out", "--prefer", "remote", "--json"], in: folder)
        #expect(planned.code == 1)
        let kinds = Set((try json(planned.stdout)["actions"] as! [[String: Any]]).map { $0["action"] as! String })
        #expect(kinds == ["not-possible"], "every action would write the store")
        #expect(planned.stdout.contains("is the app's own store, which reckon never writes"))
        #expect(try runArray(["apply", "out/plan.json", "--yes"], in: folder).code == 1)
        #expect(SHA256.hex(of: try Data(contentsOf: URL(fileURLWithPath: store))) == storeBefore)
    }
}
