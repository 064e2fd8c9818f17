import Foundation
import ReckonCore
import Testing

/// A memo folder a test writes, edits and writes again between two runs:
/// each memo's index entry and file come from one set of values.
struct EditableSide {
    struct Memo {
        var body: String
        var modified: String
        var archived: String? = nil
        var deleted: String? = nil
    }

    let url: URL
    var memos: [Int: Memo] = [:]

    /// The id of memo `n`, in capitals as the app writes them.
    static func id(_ n: Int) -> String { String(format: "%08X-0000-4000-8000-%012X", n, n) }

    init(_ url: URL, memos numbers: ClosedRange<Int>) {
        self.url = url
        for n in numbers { memos[n] = Memo(body: "Memo \(n)", modified: "2026-04-0\(n % 9 + 1)T10:00:00Z") }
    }

    /// Writes `index.json` and `memos/` holding exactly these memos.
    func write() throws {
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url.appendingPathComponent("memos"), withIntermediateDirectories: true)
        func value(_ text: String?) -> String { text.map { "\"\($0)\"" } ?? "null" }
        var entries: [String] = []
        for (n, memo) in memos.sorted(by: { $0.key < $1.key }) {
            let id = Self.id(n)
            let dates = #""modifiedTime": "\#(memo.modified)", "archivedAt": \#(value(memo.archived)), "deletedAt": \#(value(memo.deleted))"#
            entries.append(#"{"id": "\#(id)", \#(dates)}"#)
            let file =
                #"{"id": "\#(id)", "title": "Memo \#(n)", "body": "\#(memo.body)", "createdAt": "2026-04-01T00:00:00Z", "#
                + #""modifiedAt": "\#(memo.modified)", "archivedAt": \#(value(memo.archived)), "deletedAt": \#(value(memo.deleted)), "tags": [], "pinned": false}"#
            try Data(file.utf8).write(to: url.appendingPathComponent("memos/\(id).json"))
        }
        try Data(#"{"schemaVersion": 1, "entries": [\#(entries.joined(separator: ", "))]}"#.utf8).write(to: url.appendingPathComponent("index.json"))
    }
}

/// Two memo folders, `device` and `drive`, holding memos `numbers` alike,
/// and a pipeline `p.json` reporting to `out/reports` with `extra` keys.
struct BaselinePipeline {
    let folder = temporaryFolder()
    var device: EditableSide
    var drive: EditableSide

    init(memos numbers: ClosedRange<Int>, extra: String = "", language: String = "en") throws {
        device = EditableSide(folder.appendingPathComponent("device"), memos: numbers)
        drive = EditableSide(folder.appendingPathComponent("drive"), memos: numbers)
        try device.write()
        try drive.write()
        try Data(
            """
            {"name": "baseline", "local": {"name": "device", "path": "device"},
             "remotes": [{"name": "drive", "label": "Google Drive", "path": "drive"}],
             "reports": {"dir": "out/reports"}, "language": "\(language)" \(extra)}
            """.utf8
        ).write(to: folder.appendingPathComponent("p.json"))
    }

    var reports: URL { folder.appendingPathComponent("out/reports") }

    /// Runs the pipeline at a time given in days after 2026-04-19 12:00 UTC.
    func run(day: Int, _ flags: [String] = []) throws -> (RunResult, [String: Any]) {
        let result = try runArray(
            ["run", folder.appendingPathComponent("p.json").path] + flags,
            environment: ["SOURCE_DATE_EPOCH": String(1_776_600_000 + day * 86_400)], in: folder)
        return (result, try json(read(reports.appendingPathComponent("report.json"))))
    }

    func baseline(_ side: String) throws -> String { try read(reports.appendingPathComponent("state/baseline-\(side).txt")) }

    func exports() -> [String] { ExportFolder.runFolders(in: folder.appendingPathComponent("out/export")) }
}

/// Each difference's `changed`, by memo number.
func directions(_ report: [String: Any]) -> [Int: String] {
    var result: [Int: String] = [:]
    for difference in report["differences"] as! [[String: Any]] {
        let id = (difference["id"] as! String).uppercased()
        let n = (1...99).first { EditableSide.id($0) == id }!
        result[n] = difference["changed"] as? String ?? "null"
    }
    return result
}

func side(_ report: [String: Any], _ index: Int) -> [String: Any] { (report["sides"] as! [[String: Any]])[index] }

/// A side's `alarm` in a few words, or nil when it is null.
func alarm(_ report: [String: Any], _ index: Int) -> String? {
    guard let alarm = side(report, index)["alarm"] as? [String: Any] else { return nil }
    return
        "\(alarm["deleted"] as? Int ?? -1) of \(alarm["of"] as? Int ?? -1), empty \(alarm["empty"] as? Bool ?? false), accepted \(alarm["accepted"] as? Bool ?? false)"
}

/// The memo lines of a baseline file, without its header.
func memoLines(_ baseline: String) -> [Substring] {
    baseline.split(separator: "\n").filter { $0.first?.isHexDigit == true && $0.count > 40 }
}

@Suite struct BaselineTests {
    /// Two runs of one pipeline with the sides edited in between give every
    /// value of `changed`, each side's counts since the first run, and the
    /// sentences that use them.
    @Test(arguments: ["en", "ja"])
    func eachDifferenceSaysWhichSideMovedSinceTheLastRun(_ language: String) throws {
        var pipeline = try BaselinePipeline(memos: 1...9, extra: #", "failOnDrift": true"#, language: language)
        pipeline.drive.memos[8]!.body = "Worded otherwise on the drive from the start"
        pipeline.device.memos[9]!.archived = "2026-04-05T00:00:00Z"
        pipeline.drive.memos[9]!.archived = "2026-04-05T00:00:00Z"
        try pipeline.drive.write()
        try pipeline.device.write()
        let (first, firstReport) = try pipeline.run(day: 0)
        #expect(first.code == 1)
        #expect(directions(firstReport) == [8: "unknown"], "no baseline yet")
        for index in 0...1 {
            #expect(side(firstReport, index)["since"] is NSNull)
            #expect(side(firstReport, index)["sinceLastRun"] is NSNull)
            #expect(side(firstReport, index)["baseline"] as? String == "none")
        }

        pipeline.device.memos[10] = .init(body: "New on the device", modified: "2026-04-19T18:00:00Z")
        pipeline.drive.memos[11] = .init(body: "New on the drive", modified: "2026-04-19T19:00:00Z")
        pipeline.device.memos[1] = nil
        pipeline.drive.memos[2] = nil
        pipeline.device.memos[3] = .init(body: "Edited on the device", modified: "2026-04-19T20:00:00Z")
        pipeline.drive.memos[3] = .init(body: "Edited on the drive", modified: "2026-04-19T21:00:00Z")
        pipeline.drive.memos[4]!.archived = "2026-04-19T22:00:00Z"
        pipeline.device.memos[5] = .init(body: "Edited on the device only", modified: "2026-04-19T23:00:00Z")
        pipeline.device.memos[9]!.archived = nil
        try pipeline.device.write()
        try pipeline.drive.write()
        let (second, report) = try pipeline.run(day: 1)
        #expect(second.code == 1, "\(second.stdout)")
        #expect(
            directions(report) == [
                10: "unknown", 11: "unknown", 1: "local", 2: "remote", 3: "both", 4: "remote", 5: "local", 8: "unknown", 9: "local"
            ],
            "10, 11 and 8 were never the same on both sides")
        for index in 0...1 {
            #expect(side(report, index)["since"] as? String == "2026-04-19T12:00:00Z")
            #expect(side(report, index)["baseline"] as? String == "used")
        }
        #expect(side(report, 0)["sinceLastRun"] as? [String: Int] == ["added": 1, "edited": 2, "archived": 0, "unarchived": 1, "deleted": 1])
        #expect(side(report, 1)["sinceLastRun"] as? [String: Int] == ["added": 1, "edited": 1, "archived": 1, "unarchived": 0, "deleted": 1])
        #expect(report["outcome"] as? String == "drift", "1 of 9 memos gone is under the alarm's 20%")

        // Markdown writes a bar as `\|`.
        let markdown = try read(pipeline.reports.appendingPathComponent("report.md")).replacingOccurrences(of: "\\|", with: "|")
        let page = try read(pipeline.reports.appendingPathComponent("report.html"))
        let expected: [String] =
            language == "en"
            ? [
                "  Since the last run (2026-04-19 12:00 UTC): 1 added, 2 edited, 0 archived, 1 unarchived, 1 deleted",
                "  Since the last run (2026-04-19 12:00 UTC): 1 added, 1 edited, 1 archived, 1 deleted",
                "1 memo changed on both this device and Google Drive since they last agreed: a conflict. Choose which version to keep in the choices of report.html, or with reckon plan --take ID=local|remote|both; reckon never chooses on its own.",
                "Google Drive has 1 memo that is not on this device. Sync this device to bring it in.",
                "This device lost 1 memo that Google Drive still has.",
                "This device has 1 memo that is not on Google Drive. Sync this device to upload it to Google Drive.",
                "Google Drive lost 1 memo that this device still has.",
                "2 memos are archived on one side only. Sync this device so that this device and Google Drive agree which memos are archived.",
                "2 memos differ between this device and Google Drive. Choose which version to keep in the choices of report.html, or with reckon plan --take ID=local|remote|both; reckon never chooses on its own."
            ]
            : [
                "  前回の実行（2026-04-19 12:00 UTC）から: 追加 1・編集 2・アーカイブ 0・アーカイブ解除 1・削除 1",
                "  前回の実行（2026-04-19 12:00 UTC）から: 追加 1・編集 1・アーカイブ 1・削除 1",
                "1件のメモが、両側が最後に一致して以降この端末とGoogle Driveの両方で変わりました（競合）。残す版は report.html の選択か reckon plan --take ID=local|remote|both で選んでください。reckon が自分で選ぶことはありません。",
                "Google Driveに、この端末にないメモが1件あります。この端末を同期すると取り込めます。",
                "この端末から、Google Driveにはまだあるメモが1件なくなりました。",
                "この端末に、Google Driveにないメモが1件あります。この端末を同期するとGoogle Driveにアップロードされます。",
                "Google Driveから、この端末にはまだあるメモが1件なくなりました。"
            ]
        let lines = second.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for line in expected {
            #expect(lines.contains(line), "\(line) in \(second.stdout)")
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            #expect(markdown.contains(trimmed), "\(trimmed) in report.md")
            #expect(page.contains(trimmed), "\(trimmed) in report.html")
        }
        // Each difference says which side moved, in words.
        let said: [Int: String] =
            language == "en"
            ? [
                3: "text changed, modified at another time, conflict: changed on both sides since they last agreed on 2026-04-19",
                11: "only on Google Drive",
                1: "only on Google Drive, deleted on this device since they last agreed on 2026-04-19",
                2: "only on this device, deleted on Google Drive since they last agreed on 2026-04-19",
                10: "only on this device", 8: "text changed"
            ]
            : [
                3: "本文が異なる、更新日時が異なる、競合: 2026-04-19に一致して以降両方で変更", 11: "Google Driveにだけある",
                1: "Google Driveにだけある、2026-04-19に一致して以降この端末で削除", 8: "本文が異なる"
            ]
        for (n, words) in said {
            let line = lines.first { $0.contains(EditableSide.id(n).lowercased()) } ?? ""
            #expect(line.contains("  \(words)  "), "memo \(n): \(line)")
        }
    }

    /// A side that could not be read keeps its whole baseline; the other
    /// side's moves on. Once readable again, it is compared with the run
    /// before the failure.
    @Test func aSideThatFailedKeepsItsBaseline() throws {
        var pipeline = try BaselinePipeline(memos: 1...4)
        #expect(try pipeline.run(day: 0).0.code == 0)
        let driveBefore = try pipeline.baseline("drive")
        try FileManager.default.removeItem(at: pipeline.drive.url.appendingPathComponent("index.json"))
        let (failed, failedReport) = try pipeline.run(day: 1)
        #expect(failed.code == 2)
        #expect(side(failedReport, 1)["status"] as? String == "failed")
        #expect(side(failedReport, 1)["sinceLastRun"] is NSNull)
        #expect(try pipeline.baseline("drive") == driveBefore, "byte for byte")
        #expect(try pipeline.baseline("device").contains("\ntime 2026-04-20T12:00:00Z\n"))

        pipeline.drive.memos[5] = .init(body: "Added while the drive could not be read", modified: "2026-04-20T18:00:00Z")
        try pipeline.drive.write()
        let (_, report) = try pipeline.run(day: 2)
        #expect(side(report, 0)["since"] as? String == "2026-04-20T12:00:00Z")
        #expect(side(report, 1)["since"] as? String == "2026-04-19T12:00:00Z")
        #expect(side(report, 1)["sinceLastRun"] as? [String: Int] == ["added": 1, "edited": 0, "archived": 0, "unarchived": 0, "deleted": 0])
        #expect(directions(report) == [5: "unknown"], "never agreed on, and only on the drive: a plan copies it from there")
    }

    /// A memo that could not be read keeps its previous fingerprint, so its
    /// edit is still seen once it can be read again.
    @Test func aMemoThatCouldNotBeReadKeepsItsPreviousFingerprint() throws {
        var pipeline = try BaselinePipeline(memos: 1...4)
        #expect(try pipeline.run(day: 0).0.code == 0)
        let before = memoLines(try pipeline.baseline("drive"))
        pipeline.drive.memos[2] = .init(body: "Edited, then damaged", modified: "2026-04-19T18:00:00Z")
        pipeline.drive.memos[3] = .init(body: "Edited", modified: "2026-04-19T18:00:00Z")
        try pipeline.drive.write()
        try Data("{".utf8).write(to: pipeline.drive.url.appendingPathComponent("memos/\(EditableSide.id(2)).json"))
        let (damaged, damagedReport) = try pipeline.run(day: 1)
        #expect(damaged.code == 2)
        #expect(directions(damagedReport) == [2: "null", 3: "remote"])
        let after = memoLines(try pipeline.baseline("drive"))
        #expect(after[1] == before[1], "memo 2 keeps the fingerprint of the run before")
        #expect(after[2] != before[2], "memo 3 moved on")
        #expect(after[0] == before[0] && after[3] == before[3])

        try pipeline.drive.write()
        let (_, report) = try pipeline.run(day: 2)
        #expect(side(report, 1)["sinceLastRun"] as? [String: Int] == ["added": 0, "edited": 1, "archived": 0, "unarchived": 0, "deleted": 0])
        #expect(
            directions(report) == [2: "remote", 3: "remote"], "memo 3 changed on the drive alone since the sides last agreed, however many runs ago")
    }

    /// A quick run compares with the baseline and never saves one.
    @Test func aQuickRunComparesButNeverSaves() throws {
        var pipeline = try BaselinePipeline(memos: 1...3, extra: #", "check": "quick""#)
        #expect(try pipeline.run(day: 0).0.code == 0)
        let state = pipeline.reports.appendingPathComponent("state")
        #expect(FileKind(path: state.path) == .missing)
        let definition = pipeline.folder.appendingPathComponent("p.json")
        let deep = try read(definition).replacingOccurrences(of: #""check": "quick""#, with: #""check": "deep""#)
        try Data(deep.utf8).write(to: definition)
        #expect(try pipeline.run(day: 1).0.code == 0)
        let saved = try pipeline.baseline("device")
        try Data(deep.replacingOccurrences(of: #""check": "deep""#, with: #""check": "quick""#).utf8).write(to: definition)
        pipeline.device.memos[2] = .init(body: "Edited", modified: "2026-04-20T18:00:00Z")
        try pipeline.device.write()
        let (_, report) = try pipeline.run(day: 2)
        #expect(directions(report) == [2: "local"])
        #expect(side(report, 0)["since"] as? String == "2026-04-20T12:00:00Z")
        #expect(try pipeline.baseline("device") == saved)
    }

    /// `reconcile --out DIR` keeps a baseline in `DIR/state/`; one of other
    /// folders, as when DIR is reused, is not used, and the report says so.
    @Test func aBaselineOfAnotherSideIsNotUsedAndTheReportSaysSo() throws {
        let folder = try copyOfDriftSamples()
        let out = folder.appendingPathComponent("out")
        func reconcile(_ local: String, _ remote: String, epoch: Int) throws -> (RunResult, [String: Any]) {
            let result = try runArray(
                ["reconcile", "--local", local, "--remote", remote, "--out", "out"],
                environment: ["SOURCE_DATE_EPOCH": String(epoch)], in: folder)
            return (result, try json(read(out.appendingPathComponent("report.json"))))
        }
        _ = try reconcile("device", "drive", epoch: 1_776_600_000)
        #expect(FileKind(path: out.appendingPathComponent("state/baseline-local.txt").path) != .missing)
        let (swapped, report) = try reconcile("drive", "device", epoch: 1_776_686_400)
        for index in 0...1 {
            #expect(side(report, index)["baseline"] as? String == "another-side")
            #expect(side(report, index)["since"] is NSNull)
        }
        #expect((report["differences"] as! [[String: Any]]).map { $0["changed"] as? String } == ["unknown"])
        #expect(
            swapped.stdout.contains(
                "The last run's record of this device belongs to another side (device), so it was not used: which side changed is not known this time."
            ),
            "\(swapped.stdout)")
        let (_, again) = try reconcile("drive", "device", epoch: 1_776_772_800)
        #expect(side(again, 0)["baseline"] as? String == "used")
        #expect(side(again, 0)["since"] as? String == "2026-04-20T12:00:00Z")
    }
}

extension BaselineTests {
    /// A baseline file that cannot be read is named with what is wrong, is
    /// not used, and is replaced by the next deep run.
    @Test func aDamagedBaselineIsNamedAndReplaced() throws {
        let pipeline = try BaselinePipeline(memos: 1...2)
        #expect(try pipeline.run(day: 0).0.code == 0)
        let file = pipeline.reports.appendingPathComponent("state/baseline-drive.txt")
        let text = try read(file)
        try Data(text.replacingOccurrences(of: "memos 2\n", with: "memos 3\n").utf8).write(to: file)
        let (result, report) = try pipeline.run(day: 1)
        #expect(result.code == 0)
        #expect(side(report, 1)["baseline"] as? String == "unreadable")
        #expect(side(report, 1)["since"] is NSNull)
        #expect(side(report, 0)["baseline"] as? String == "used")
        #expect(
            result.stdout.contains(
                "The last run's record of Google Drive could not be read (out/reports/state/baseline-drive.txt: "
                    + "it lists 2 memos where its header says 3), so it was not used: which side changed is not known this time."),
            "\(result.stdout)")
        #expect(try pipeline.baseline("drive").contains("\ntime 2026-04-20T12:00:00Z\nmemos 2\n"))
    }
}

@Suite struct DeletionAlarmTests {
    static let sentence =
        "Alarm: Google Drive lost 2 of its 8 memos (25%) since the last run (2026-04-19 12:00 UTC). Its baseline is kept, "
        + "and so is the last export made before this; if the deletions were meant, run again with --accept-deletions."

    /// 2 of 8 memos gone (25%, over the default 20%): exit 2, the alarm in
    /// red first in every report, the baseline held back and the last export
    /// before the loss kept whatever `keep` says, run after run, until a
    /// person gives `--accept-deletions`.
    @Test func aQuarterOfTheMemosGoneSoundsTheAlarmUntilAccepted() throws {
        var pipeline = try BaselinePipeline(memos: 1...8, extra: #", "export": {"formats": ["json"], "dir": "out/export", "keep": 1}"#)
        #expect(try pipeline.run(day: 0).0.code == 0)
        let baseline = try pipeline.baseline("drive")
        #expect(pipeline.exports() == ["20260419T120000Z"])

        pipeline.drive.memos[3] = nil
        pipeline.drive.memos[6] = nil
        try pipeline.drive.write()
        let (alarmed, report) = try pipeline.run(day: 1)
        #expect(alarmed.code == 2)
        #expect(alarmed.stdout.hasPrefix(Self.sentence + "\n\nMemos on this device\n"), "\(alarmed.stdout)")
        #expect(report["outcome"] as? String == "trouble")
        #expect(alarm(report, 1) == "2 of 8, empty false, accepted false")
        #expect(side(report, 0)["alarm"] is NSNull)
        let markdown = try read(pipeline.reports.appendingPathComponent("report.md"))
        #expect(markdown.hasPrefix("# reckon report: baseline\n\n> ⚠ **\(Self.sentence)**\n"), "\(markdown)")
        let page = try read(pipeline.reports.appendingPathComponent("report.html"))
        let body = page[page.range(of: "<main>")!.upperBound...]
        #expect(
            body.hasPrefix("\n<h1>reckon report: baseline</h1>\n<p class=\"alarm\" role=\"alert\">⚠ \(html(Self.sentence))</p>"),
            "\(body.prefix(400))")
        #expect(page.contains(".alarm { background: #fdecea; border-left: 4px solid #c0392b; color: #a93226;"), "in red")
        #expect(memoLines(try pipeline.baseline("drive")) == memoLines(baseline), "the baseline is not replaced")
        #expect(try pipeline.baseline("drive").contains("\ntime 2026-04-19T12:00:00Z\nalarm-since 2026-04-20T12:00:00Z\n"))
        #expect(pipeline.exports() == ["20260420T120000Z", "20260419T120000Z"], "the export before the loss is kept despite keep 1")

        let (still, stillReport) = try pipeline.run(day: 2)
        #expect(still.code == 2, "the next run still sees the loss")
        #expect(side(stillReport, 1)["since"] as? String == "2026-04-19T12:00:00Z")
        #expect(pipeline.exports() == ["20260421T120000Z", "20260419T120000Z"])

        let (accepted, acceptedReport) = try pipeline.run(day: 3, ["--accept-deletions"])
        #expect(accepted.code == 0, "drift does not fail this pipeline: \(accepted.stdout)")
        #expect(alarm(acceptedReport, 1) == "2 of 8, empty false, accepted true")
        #expect(
            accepted.stdout.contains(
                "Google Drive lost 2 of its 8 memos since the last run (2026-04-19 12:00 UTC); a person accepted this with --accept-deletions, so its baseline moves on."
            ))
        #expect(!accepted.stdout.contains("Alarm:"))
        #expect(try pipeline.baseline("drive").contains("\ntime 2026-04-22T12:00:00Z\nmemos 6\n"))
        #expect(pipeline.exports() == ["20260422T120000Z"])

        let (after, afterReport) = try pipeline.run(day: 4)
        #expect(after.code == 0)
        #expect(side(afterReport, 1)["alarm"] is NSNull)
        #expect((side(afterReport, 1)["sinceLastRun"] as? [String: Int])?["deleted"] == 0)
    }

    /// A side found empty after a baseline that held memos sounds the alarm
    /// in words of its own, whatever the limits; without an export, no
    /// export is promised.
    @Test(arguments: [
        (
            "en",
            "Alarm: Google Drive holds no memo, but held 3 memos at the last run (2026-04-19 12:00 UTC). Its baseline is kept; "
                + "if the deletions were meant, run again with --accept-deletions."
        ),
        (
            "ja",
            "警報: Google Driveにメモが1件もありません。前回の実行（2026-04-19 12:00 UTC）では3件ありました。基準は更新しません。"
                + "削除が意図したものなら --accept-deletions を付けてもう一度実行してください。"
        )
    ])
    func anEmptySideAlwaysSoundsTheAlarm(_ language: String, _ sentence: String) throws {
        var pipeline = try BaselinePipeline(memos: 1...3, extra: #", "alarm": {"deletedPercent": 99.5}"#, language: language)
        #expect(try pipeline.run(day: 0).0.code == 0)
        pipeline.drive.memos = [:]
        try pipeline.drive.write()
        let (result, report) = try pipeline.run(day: 1)
        #expect(result.code == 2)
        #expect(result.stdout.hasPrefix(sentence + "\n\n"), "\(result.stdout)")
        #expect(alarm(report, 1) == "3 of 3, empty true, accepted false")
    }

    /// Both sides emptied agree, but nothing is "empty yet": both alarms
    /// lead, and the zeros are shown with what moved.
    @Test func bothSidesEmptiedAreNotCalledEmptyYet() throws {
        var pipeline = try BaselinePipeline(memos: 1...2)
        #expect(try pipeline.run(day: 0).0.code == 0)
        pipeline.device.memos = [:]
        pipeline.drive.memos = [:]
        try pipeline.device.write()
        try pipeline.drive.write()
        let (result, _) = try pipeline.run(day: 1)
        #expect(result.code == 2)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0].hasPrefix("Alarm: this device holds no memo, but held 2 memos at the last run"), "\(result.stdout)")
        #expect(lines[2].hasPrefix("Alarm: Google Drive holds no memo, but held 2 memos at the last run"))
        #expect(
            result.stdout.contains(
                "Memos on this device\n  Active    0\n  Archived  0\n  Since the last run (2026-04-19 12:00 UTC): 0 added, 0 edited, 0 archived, 2 deleted\n"
            ))
        #expect(!result.stdout.contains("There are no memos yet"))
    }

    /// `alarm.deletedCount` sounds it for fewer memos than the percentage:
    /// 2 of 20 soft-deleted is 10%, over a count of 1.
    @Test func aCountOfDeletionsSoundsItTooWhenSet() throws {
        for (extra, code) in [("", Int32(0)), (#", "alarm": {"deletedCount": 1}"#, Int32(2))] {
            var pipeline = try BaselinePipeline(memos: 1...20, extra: extra)
            #expect(try pipeline.run(day: 0).0.code == 0)
            pipeline.drive.memos[4]!.deleted = "2026-04-19T13:00:00Z"
            pipeline.drive.memos[5]!.deleted = "2026-04-19T13:00:00Z"
            try pipeline.drive.write()
            let (result, report) = try pipeline.run(day: 1)
            #expect(result.code == code, "\(extra): \(result.stdout)")
            #expect((side(report, 1)["sinceLastRun"] as? [String: Int])?["deleted"] == 2)
            #expect(result.stdout.hasPrefix("Alarm: Google Drive lost 2 of its 20 memos (10%)") == (code == 2))
        }
    }

    /// No key turns the alarm off; a wrong one names itself.
    @Test(arguments: [
        (
            #""alarm": {"deletedPercent": 100}"#,
            "'alarm.deletedPercent' must be a number greater than 0 and less than 100 (the alarm cannot be switched off)"
        ),
        (
            #""alarm": {"deletedPercent": 0}"#,
            "'alarm.deletedPercent' must be a number greater than 0 and less than 100 (the alarm cannot be switched off)"
        ),
        (#""alarm": {"deletedCount": 2.5}"#, "'alarm.deletedCount' must be a whole number from 1 to 1000000000"),
        (#""alarm": {"off": true}"#, "'alarm.off' is not a known key (known: deletedCount, deletedPercent)"),
        (#""state": {"dir": ""}"#, "'state.dir' must not be empty")
    ])
    func aWrongAlarmOrStateKeyIsNamed(_ extra: String, _ message: String) throws {
        let pipeline = try BaselinePipeline(memos: 1...1, extra: ", " + extra)
        let result = try runArray(["validate", "p.json"], in: pipeline.folder)
        #expect(result.code == 64)
        #expect(result.stderr == "Error: p.json: \(message)\n")
    }
}
