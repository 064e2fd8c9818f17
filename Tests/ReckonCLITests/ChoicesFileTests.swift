import Foundation
import ReckonCore
import TestSupport
import Testing

/// Each memo's fingerprint tokens in a baseline file a run wrote (what the
/// run saw of the side), by id in small letters: `seconds.nanoseconds-state-
/// rowVersion-changeTag-digest`, `_` for a field the baseline writes `-`.
func tokens(inBaseline text: String) -> [String: String] {
    var result: [String: String] = [:]
    for line in memoLines(text) {
        let fields = line.split(separator: " ").map(String.init)
        let hex = fields[0]
        let id = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex.dropFirst(range.lowerBound).prefix(range.count))
        }.joined(separator: "-")
        let nanoseconds = String(repeating: "0", count: 9 - fields[2].count) + fields[2]
        result[id] = "\(fields[1]).\(nanoseconds)-\(fields[3])-" + fields[4...6].map { $0 == "-" ? "_" : $0 }.joined(separator: "-")
    }
    return result
}

/// A choices file as a report's page saves it.
func choicesFile(pipeline: String, remote: String, _ choices: [(id: String, take: String, local: String?, remote: String?)]) -> String {
    func token(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "null" }
    let items = choices.map {
        #"{"id": "\#($0.id.lowercased())", "take": "\#($0.take)", "local": \#(token($0.local)), "remote": \#(token($0.remote))}"#
    }
    return
        #"{"$schema": "choices.schema.json", "schemaVersion": 1, "pipeline": "\#(pipeline)", "remote": "\#(remote)", "choices": [\#(items.joined(separator: ",\n  "))]}"#
}

extension BaselinePipeline {
    /// The fingerprints `reckon show --json` prints for memo `n` on each side, now.
    func prints(_ n: Int) throws -> (local: String?, remote: String?) {
        let shown = try json(try reckon(["show", String(EditableSide.id(n).prefix(8)), "p.json", "--json"]).stdout)
        func token(_ role: String) -> String? { (shown[role] as? [String: Any])?["fingerprint"] as? String }
        return (token("local"), token("remote"))
    }

    /// Writes a choices file for this pipeline's remote, each memo's fingerprints as `reckon show` prints them now.
    func writeChoices(_ takes: [(n: Int, take: String)], pipeline: String = "baseline", remote: String = "drive") throws -> URL {
        let file = folder.appendingPathComponent("choices.json")
        let choices = try takes.map { n, take in
            let (local, remote) = try prints(n)
            return (EditableSide.id(n), take, local, remote)
        }
        try Data(choicesFile(pipeline: pipeline, remote: remote, choices).utf8).write(to: file)
        return file
    }
}

/// `reckon plan --choices FILE`: the choices a report's page saved, each
/// memo's fingerprints as the report saw them, checked against the sides
/// now; what passes acts as `--take` does.
@Suite struct ChoicesFileTests {
    /// A one-shot reconcile writes the report and its baselines; a choices
    /// file made from what that run saw (its baseline files) plans exactly
    /// what the same `--take`s plan, and `reckon show` prints the same fingerprints.
    @Test func aChoicesFilePlansWhatTheSameTakesPlan() throws {
        let folder = temporaryFolder()
        let edited = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
        let onlyOnDrive = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
        let same = "16FD2706-8BAF-433B-82EB-8C7FADA847DA"
        try FolderMemo.write(
            [FolderMemo(id: edited, modified: "2026-04-19T10:00:00Z"), FolderMemo(id: same, title: "Same")],
            to: folder.appendingPathComponent("device"))
        try FolderMemo.write(
            [
                FolderMemo(id: edited, body: "Milk\nMiso", modified: "2026-04-19T11:00:00Z"), FolderMemo(id: same, title: "Same"),
                FolderMemo(id: onlyOnDrive, title: "Idea")
            ], to: folder.appendingPathComponent("drive"))
        let sides = ["--local", "device", "--remote", "drive", "--out", "out"]
        let epoch = ["SOURCE_DATE_EPOCH": "1776600000"]
        let report = try runArray(["reconcile"] + sides, environment: epoch, in: folder)
        #expect(report.code == 1, "\(report.stderr)")
        let local = tokens(inBaseline: try read(folder.appendingPathComponent("out/state/baseline-local.txt")))
        let remote = tokens(inBaseline: try read(folder.appendingPathComponent("out/state/baseline-remote.txt")))
        #expect(local.count == 2 && remote.count == 3)
        for id in [edited, onlyOnDrive] {
            let shown = try json(try runArray(["show", id, "--local", "device", "--remote", "drive", "--json"], in: folder).stdout)
            #expect((shown["local"] as? [String: Any])?["fingerprint"] as? String == local[id.lowercased()], "\(id)")
            #expect((shown["remote"] as? [String: Any])?["fingerprint"] as? String == remote[id.lowercased()], "\(id)")
        }
        let file = choicesFile(
            pipeline: "reconcile", remote: "remote",
            [
                (edited, "both", local[edited.lowercased()], remote[edited.lowercased()]),
                (onlyOnDrive, "remote", nil, remote[onlyOnDrive.lowercased()])
            ])
        try Data(file.utf8).write(to: folder.appendingPathComponent("choices.json"))
        let chosen = try runArray(["plan"] + sides + ["--choices", "choices.json"], environment: epoch, in: folder)
        #expect(chosen.code == 1, "\(chosen.stderr)")
        let fromFile = try Data(contentsOf: folder.appendingPathComponent("out/plan.json"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out/plan.json"))
        let taken = try runArray(["plan"] + sides + ["--take", "3f2504e0=both", "--take", "\(onlyOnDrive)=remote"], environment: epoch, in: folder)
        #expect(taken.code == 1, "\(taken.stderr)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("out/plan.json")) == fromFile, "the same plan, byte for byte")
        #expect(chosen.stdout == taken.stdout)
        let plan = try json(String(decoding: fromFile, as: UTF8.self))
        let choices = (plan["actions"] as! [[String: Any]]).compactMap { $0["choice"] as? String }
        #expect(choices.count == 2 && choices.allSatisfy { $0.hasPrefix("--take ") }, "\(choices)")
    }

    /// Every choice that no longer fits the sides is listed with its reason,
    /// then what to do; the plan is refused whole and nothing is written.
    @Test func choicesThatNoLongerFitAreEachRefusedAndNothingIsWritten() throws {
        let pipeline = try driftedSincePipeline()
        // A plan made before: the refusals must leave it as it is.
        #expect(try pipeline.reckon(["plan", "p.json", "--take", EditableSide.id(3) + "=local"]).code == 1)
        let planBefore = try Data(contentsOf: pipeline.planFile)
        let unknown = "0BADC0DE-0000-4000-8000-000000000000"
        var file = try pipeline.writeChoices([(3, "local"), (6, "local"), (5, "remote"), (8, "remote"), (7, "local")])
        var text = try read(file)
        text = text.replacingOccurrences(
            of: #""choices": ["#, with: #""choices": [{"id": "\#(unknown.lowercased())", "take": "local", "local": null, "remote": null}, "#)
        try Data(text.utf8).write(to: file)
        // Since the report: memo 8 edited on the drive, memo 7's file on the drive damaged.
        var drive = pipeline.drive
        drive.memos[8]!.body = "Edited on the drive after the report"
        try drive.write()
        try Data("{ not json".utf8).write(to: pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(7)).json"))
        let sidesNow = try pipeline.sides()
        let refused = try pipeline.reckon(["plan", "p.json", "--choices", file.lastPathComponent])
        #expect(refused.code == 64)
        #expect(refused.stdout.isEmpty)
        func id(_ n: Int) -> String { EditableSide.id(n).lowercased() }
        let lines = refused.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "Error: choices.json: 4 of its choices cannot be carried out as made:")
        #expect(lines.dropFirst().first == "  \(unknown.lowercased()): no memo on this device or Google Drive has this id")
        #expect(lines.contains("  \(id(6)): is the same on both sides now; there is nothing to choose"))
        // Memo 5 changed on this device alone: a choice for it still fits, as a --take would.
        #expect(!lines.contains { $0.contains(id(5)) })
        #expect(lines.contains("  \(id(8)): changed on Google Drive since the report"))
        #expect(lines.contains { $0.hasPrefix("  \(id(7)): cannot be compared now (Google Drive: ") && $0.hasSuffix("); mend it first") }, "\(lines)")
        #expect(!lines.contains { $0.contains(id(3)) }, "memo 3's choice still fits")
        #expect(lines.count == 6)
        #expect(
            lines.last
                == "Make the report again (reckon run, or reckon reconcile --out), choose again in its page, save the choices, and plan with them; nothing was written."
        )
        #expect(try Data(contentsOf: pipeline.planFile) == planBefore, "plan.json is left as it was")
        #expect(try pipeline.sides() == sidesNow)

        // A side that may not be written: a choice that would write it is one the report never offers.
        let definition = pipeline.folder.appendingPathComponent("p.json")
        let original = try read(definition)
        try Data(original.replacingOccurrences(of: #""path": "drive"}"#, with: #""path": "drive", "readOnly": true}"#).utf8).write(to: definition)
        file = try pipeline.writeChoices([(3, "local")])
        let readOnly = try pipeline.reckon(["plan", "p.json", "--choices", "choices.json"])
        #expect(readOnly.code == 64)
        #expect(readOnly.stderr.contains("\n  \(id(3)): 'local' cannot be chosen: Google Drive is marked \"readOnly\": true\n"), "\(readOnly.stderr)")
        try Data(original.utf8).write(to: definition)

        // Made for another pipeline, or another remote: refused before a side is read.
        for (pipelineName, remote) in [("nightly", "drive"), ("baseline", "nas")] {
            file = try pipeline.writeChoices([(3, "local")], pipeline: pipelineName, remote: remote)
            let other = try pipeline.reckon(["plan", "p.json", "--choices", "choices.json"])
            #expect(other.code == 64)
            #expect(
                other.stderr.hasPrefix(
                    "Error: choices.json: was saved from a report of the pipeline '\(pipelineName)' and its remote '\(remote)', but this plan is for the pipeline 'baseline' and its remote 'drive'\nMake the report again"
                ), "\(other.stderr)")
        }
        // One memo chosen both by --take and by the file.
        file = try pipeline.writeChoices([(3, "local")])
        let twice = try pipeline.reckon(["plan", "p.json", "--choices", "choices.json", "--take", String(EditableSide.id(3).prefix(8)) + "=remote"])
        #expect(twice.code == 64)
        #expect(
            twice.stderr.hasPrefix("Error: '--take' and choices.json both choose the memo \(id(3)); choose it in one place\n"), "\(twice.stderr)")
        #expect(try Data(contentsOf: pipeline.planFile) == planBefore)
        // A --take's id cut to fewer than 8 hex digits is refused before a side is read.
        let short = try pipeline.reckon(["plan", "p.json", "--choices", "choices.json", "--take", "0000008=local"])
        #expect(short.code == 64)
        #expect(short.stderr.hasPrefix("Error: '--take' '0000008' is too short to name a memo: give at least 8 hex digits of its id\n"))
        // What passes is taken: memo 3 from the file, memo 8 (edited since) by a --take.
        let taken = try pipeline.reckon(["plan", "p.json", "--choices", "choices.json", "--take", EditableSide.id(8) + "=local"])
        #expect(taken.code == 1, "\(taken.stderr)")
        let choices = (try json(read(pipeline.planFile))["actions"] as! [[String: Any]]).compactMap { $0["choice"] as? String }.sorted()
        #expect(choices == ["--take \(id(3))=local: this device's version is kept", "--take \(id(8))=local: this device's version is kept"])
    }

    /// A file that is not a choices file is refused, naming it, the key and what was expected.
    @Test func aMalformedChoicesFileIsRefusedNamingTheFileAndTheKey() throws {
        let pipeline = try driftedSincePipeline()
        let good = try read(try pipeline.writeChoices([(3, "local")]))
        let cases: [(String, String)] = [
            ("{\"schemaVersion\": 1,", "Error: bad.json: is not valid JSON ("),
            (
                good.replacingOccurrences(of: #""take": "local""#, with: #""take": "mine""#),
                #"Error: bad.json: 'choices[0].take' must be one of local, remote, both, found 'mine'"#
            ),
            (
                good.replacingOccurrences(of: #""schemaVersion": 1"#, with: #""schemaVersion": 1, "colour": "red""#),
                "Error: bad.json: 'colour' is not a known key (known: $schema, choices, pipeline, remote, schemaVersion)"
            ),
            (
                good.replacingOccurrences(of: #""local": "1"#, with: #""local": "x1"#),
                "Error: bad.json: 'choices[0].local' must be a fingerprint as a report gives it"
            ),
            (
                good.replacingOccurrences(
                    of: #""choices": ["#, with: #""choices": [{"id": "\#(EditableSide.id(3))", "take": "remote", "local": null, "remote": null}, "#),
                "Error: bad.json: 'choices[1].id' names the memo \(EditableSide.id(3).lowercased()), which choices[0] names already; choose each memo once"
            )
        ]
        for (text, expected) in cases {
            try Data(text.utf8).write(to: pipeline.folder.appendingPathComponent("bad.json"))
            let result = try pipeline.reckon(["plan", "p.json", "--choices", "bad.json"])
            #expect(result.code == 64)
            #expect(result.stderr.hasPrefix(expected), "\(result.stderr)")
            #expect(FileKind(path: pipeline.planFile.path) == .missing, "nothing written")
        }
        let missing = try pipeline.reckon(["plan", "p.json", "--choices", "nowhere.json"])
        #expect(missing.code == 64)
        #expect(missing.stderr == "Error: nowhere.json: no such file\n")
    }
}
