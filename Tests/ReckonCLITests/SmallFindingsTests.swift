import Foundation
import ReckonCore
import Testing

/// The small findings of the unattended-runs issue: names matched whole,
/// paths named from the current folder.
@Suite struct SmallFindingsTests {
    /// A name is matched whole: a newline at its end (which a regex's `$` lets through) is refused.
    @Test(arguments: [
        (
            #"{"local": {"path": "device"}, "remotes": [{"name": "drive\n", "path": "drive"}]}"#,
            #"p.json: 'remotes[0].name' must be 1 to 32 small letters, digits, '-' or '_', starting with a letter or digit, found 'drive\u{a}'"#
        ),
        (
            #"{"local": {"name": "device", "kind": "store", "path": "s.store", "model": {"attributes": {"title": "ZTITLE\n"}}}, "remotes": [{"path": "drive"}]}"#,
            #"p.json: 'local.model.attributes.title' must be an attribute's name (a letter, then letters, digits or '_'), found 'ZTITLE\u{a}'"#
        )
    ])
    func aNameEndingInANewlineIsRefused(definition: String, message: String) throws {
        let folder = temporaryFolder()
        try Data(definition.utf8).write(to: folder.appendingPathComponent("p.json"))
        let result = try runArray(["validate", "p.json"], in: folder)
        #expect(result.code == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    /// A run's warning about an old export names it from the current folder,
    /// as a person would type it, not from the definition's folder.
    @Test func aKeptOldExportIsNamedFromTheCurrentFolder() throws {
        let folder = temporaryFolder()
        let definitions = folder.appendingPathComponent("defs")
        try FileManager.default.createDirectory(at: definitions, withIntermediateDirectories: true)
        let samples = packageRoot.appendingPathComponent("Samples/drift").path
        try Data(
            """
            {"name": "nightly", "local": {"path": "\(samples)/device"}, "remotes": [{"name": "drive", "path": "\(samples)/drive"}],
             "reports": {"dir": "reports"}, "export": {"dir": "exports", "keep": 1}}
            """.utf8
        ).write(to: definitions.appendingPathComponent("nightly.json"))
        #expect(try runArray(["run", "defs/nightly.json", "--quiet"], in: folder).code == 0)
        let exports = definitions.appendingPathComponent("exports")
        let old = try #require(ExportFolder.runFolders(in: exports).first)
        try Data("mine".utf8).write(to: exports.appendingPathComponent("\(old)/notes.txt"))
        let result = try runArray(["run", "defs/nightly.json", "--quiet"], in: folder)
        #expect(result.code == 0)
        #expect(
            result.stderr.hasPrefix("warning: kept the old export defs/exports/\(old), which keep: 1 would remove: notes.txt:"), "\(result.stderr)")
    }

    /// `from`, `to` and `choice` are null when there is none, in what apply
    /// and undo print and write as in the plan: one spelling per field.
    @Test func applyAndUndoWriteFromToAndChoiceNullAsThePlanDoes() throws {
        let folder = temporaryFolder()
        for side in ["device", "drive"] {
            try FileManager.default.copyItem(
                at: packageRoot.appendingPathComponent("Samples/drift/\(side)"), to: folder.appendingPathComponent(side))
        }
        try Data(
            #"{"name": "repair", "local": {"name": "device", "path": "device"}, "remotes": [{"name": "drive", "path": "drive"}], "reports": {"dir": "out"}}"#
                .utf8
        ).write(to: folder.appendingPathComponent("p.json"))
        let plan = try runArray(["plan", "p.json", "--json"], in: folder)
        #expect(plan.code == 1)
        let planned = try json(plan.stdout)["actions"] as? [[String: Any]] ?? []
        #expect(!planned.isEmpty && planned.allSatisfy { $0["choice"] is NSNull }, "a copy settles no conflict: \(planned)")
        let apply = try runArray(["apply", "out/state/plan.json", "--yes", "--json"], in: folder)
        #expect(apply.code == 0, "\(apply.stderr)")
        let applied = try json(apply.stdout)
        let run = try #require(applied["run"] as? String)
        let written = try json(read(folder.appendingPathComponent("out/state/apply/\(run)/report.json")))
        let undo = try runArray(["undo", run, "--state", "out/state", "--json"], in: folder)
        #expect(undo.code == 0, "\(undo.stderr)")
        for (what, result) in [("apply --json", applied), ("report.json", written), ("undo --json", try json(undo.stdout))] {
            let actions = result["actions"] as? [[String: Any]] ?? []
            #expect(actions.count == planned.count, "\(what)")
            for action in actions {
                #expect(["from", "to", "choice"].allSatisfy { action.keys.contains($0) }, "\(what): \(action)")
                #expect(action["choice"] is NSNull, "\(what)")
            }
        }
    }

    /// A side that failed has `counts` null in `history.jsonl`, as in `report.json`.
    @Test func aFailedSidesCountsAreNullInTheHistoryAsInTheReport() throws {
        let folder = temporaryFolder()
        let samples = packageRoot.appendingPathComponent("Samples/drift").path
        try Data(
            """
            {"name": "nightly", "local": {"path": "\(samples)/device"}, "remotes": [{"name": "drive", "path": "missing"}],
             "reports": {"dir": "reports"}}
            """.utf8
        ).write(to: folder.appendingPathComponent("p.json"))
        #expect(try runArray(["run", "p.json", "--quiet"], in: folder).code == 2)
        let report = try json(read(folder.appendingPathComponent("reports/report.json")))
        let line = try read(folder.appendingPathComponent("reports/history.jsonl")).split(separator: "\n").last.map(String.init) ?? ""
        for (what, sides) in [("report.json", report["sides"]), ("history.jsonl", try json(line)["sides"])] {
            let drive = (sides as? [[String: Any]])?.first { $0["name"] as? String == "drive" }
            #expect(drive?.keys.contains("counts") == true && drive?["counts"] is NSNull, "\(what): \(drive ?? [:])")
        }
    }
}
