import Foundation
import ReckonCore
import TestSupport
import Testing

/// Words of reckon's own English on the repair side: headings, columns,
/// labels, totals and the sentences of reasons and details. None is left on
/// a page in Japanese (the memos' own text, English here, is theirs).
let englishRepairPhrases = [
    "since the last run", "unchanged on", "copied to", "marked deleted", "is a valid memo", "its entry is added", "choose with",
    "changed on both", "no baseline", "not possible", "nothing is done", "Made ", "Sides", "Writable", "Actions (", "Why", "Choice",
    "Conflicts (", "Chosen", "Modified", "Archived", "Plan for", "Plan written", "carry it out", "Choose for each", "to choose",
    "copies", "soft-delete", "fix-index", "CONFLICT", "Outcome", "What happened", "applied", "already done", "changed since",
    "Backups", "undo it with", "Restored", "restored", "nothing was written", "Apply run", "Undo run", "Run "
]

func englishLeft(in text: String) -> [String] { englishRepairPhrases.filter { text.contains($0) } }

/// The part of a page a person reads: its `<main>`.
func mainPart(_ page: String) -> String {
    guard let start = page.range(of: "<main>"), let end = page.range(of: "</main>") else { return page }
    return String(page[start.lowerBound..<end.upperBound])
}

extension BaselinePipeline {
    /// Sets the definition's `"language"`.
    func setLanguage(_ language: String) throws {
        let url = folder.appendingPathComponent("p.json")
        let text = try read(url).replacing(#/"language": "[a-z]+"/#, with: "\"language\": \"\(language)\"")
        try Data(text.utf8).write(to: url)
    }

    /// Takes memo `n`'s entry out of the drive's index.json: its file is then an orphan, which a fix-index mends.
    func orphanOnDrive(_ n: Int) throws {
        let index = drive.url.appendingPathComponent("index.json")
        let entry = try #require(try read(index).firstRange(of: try Regex(#"\{"id": "\#(EditableSide.id(n))"[^}]*\}, "#)))
        try Data(try read(index).replacingCharacters(in: entry, with: "").utf8).write(to: index)
    }
}

@Suite struct RepairLanguageCommandTests {
    /// `reckon plan --lang ja` and `reckon apply --lang ja` on a pipeline
    /// whose definition says `"language": "ja"`: the table, plan.md and
    /// plan.html, the run's text, report.md and report.html in Japanese, the
    /// sides' labels as the definition gives them; plan.json records the
    /// language and keeps every reason in English, report.json too. Undo,
    /// without `--lang`, follows the plan's language.
    @Test func planApplyAndUndoInJapanese() throws {
        let pipeline = try driftedSincePipeline()
        try pipeline.orphanOnDrive(6)
        try pipeline.setLanguage("ja")
        let (planned, plan) = try pipeline.plan(["--lang", "ja"])
        #expect(planned.code == 1, "\(planned.stderr)")
        #expect(plan["language"] as? String == "ja")
        let actions = try #require(plan["actions"] as? [[String: Any]])
        #expect(Set(actions.compactMap { $0["action"] as? String }).isSuperset(of: ["copy", "soft-delete", "conflict", "fix-index"]))
        #expect(actions.allSatisfy { $0["why"] is [String: Any] }, "each reason's structure is kept")
        func action(_ n: Int) -> [String: Any]? { actions.first { ($0["id"] as? String)?.uppercased() == EditableSide.id(n) } }
        #expect(action(10)?["reason"] as? String == "only on この端末, and the sides never agreed on it: copied to Google Drive")

        let id3 = EditableSide.id(3).lowercased()
        let lines = planned.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "baselineの修復計画（2026-04-20T12:00:00Z 作成。→ はこの端末からGoogle Driveへ、← はGoogle Driveからこの端末へ）:")
        #expect(planned.stdout.contains("この端末にだけあり、両側が一致したことはありません。Google Driveにコピーします。"))
        #expect(lines.contains { $0.hasPrefix("計画を ") && $0.contains("plan.json に書き出しました。実行するには: reckon apply ") })
        #expect(englishLeft(in: planned.stdout).isEmpty, "\(englishLeft(in: planned.stdout))")

        let page = try read(pipeline.state.appendingPathComponent("plan.html"))
        let markdown = try read(pipeline.state.appendingPathComponent("plan.md"))
        #expect(page.hasPrefix("<!DOCTYPE html>\n<html lang=\"ja\">\n"))
        #expect(markdown.hasPrefix("# reckon 修復計画: baseline\n\n作成日時: 2026-04-20T12:00:00Z\n"))
        for part in [
            "<h2>両側</h2>", "<h2>操作（\(actions.count)件）</h2>", "<h2>競合（2件）</h2>",
            "Google Driveの memos/\(EditableSide.id(6)).json は正しいメモですが、index.json に項目がありません。項目を追加します。",
            "2026-04-19に一致して以降、この端末とGoogle Driveの両方で変更されています。--take \(id3)=local|remote|both か --prefer で選んでください。",
            "2026-04-19に一致して以降、Google Driveで削除され、この端末では変わっていません。この端末でも削除済みにします。"
        ] {
            #expect(page.contains(part), "plan.html: \(part)")
        }
        #expect(markdown.contains("|  | ID | タイトル | 操作 | 理由 | 選択 |"))
        #expect(englishLeft(in: mainPart(page)).isEmpty, "plan.html: \(englishLeft(in: mainPart(page)))")
        #expect(englishLeft(in: markdown).isEmpty, "plan.md: \(englishLeft(in: markdown))")

        let applied = try pipeline.apply(["--yes", "--lang", "ja"])
        #expect(applied.code == 1, "two conflicts are left: \(applied.stdout) \(applied.stderr)")
        let run = pipeline.state.appendingPathComponent("apply/20260420T120000Z")
        #expect(applied.stdout.hasPrefix("baselineの適用 20260420T120000Z（→ はこの端末からGoogle Driveへ"))
        #expect(applied.stdout.contains("適用済み"))
        #expect(applied.stdout.contains("にあります。取り消すには: reckon undo 20260420T120000Z --state "))
        #expect(englishLeft(in: applied.stdout).isEmpty, "\(englishLeft(in: applied.stdout))")
        let report = try read(run.appendingPathComponent("report.html"))
        #expect(report.hasPrefix("<!DOCTYPE html>\n<html lang=\"ja\">\n"))
        #expect(report.contains("<h2>バックアップ</h2>"))
        #expect(englishLeft(in: mainPart(report)).isEmpty, "report.html: \(englishLeft(in: mainPart(report)))")
        let reportMarkdown = try read(run.appendingPathComponent("report.md"))
        #expect(reportMarkdown.hasPrefix("# reckon 適用: baseline\n"))
        #expect(englishLeft(in: reportMarkdown).isEmpty, "report.md: \(englishLeft(in: reportMarkdown))")
        let result = try json(read(run.appendingPathComponent("report.json")))
        let results = try #require(result["actions"] as? [[String: Any]])
        #expect(
            results.first { ($0["id"] as? String)?.uppercased() == EditableSide.id(10) }?["reason"] as? String
                == "only on この端末, and the sides never agreed on it: copied to Google Drive")
        #expect(results.allSatisfy { $0["why"] == nil && $0["happened"] == nil } && result["language"] == nil, "report.json: English alone")

        let undone = try pipeline.reckon(["undo", "20260420T120000Z", "--state", pipeline.state.path])
        #expect(undone.code == 0, "\(undone.stdout) \(undone.stderr)")
        #expect(undone.stdout.hasPrefix("baselineの取り消し 20260420T120000Z（→ は"))
        #expect(undone.stdout.contains("復元済み"))
        let undoPage = try read(run.appendingPathComponent("undo-report.html"))
        #expect(undoPage.hasPrefix("<!DOCTYPE html>\n<html lang=\"ja\">\n"))
        #expect(englishLeft(in: mainPart(undoPage)).isEmpty, "undo-report.html: \(englishLeft(in: mainPart(undoPage)))")
    }

    /// The language is `--lang`'s, else the definition's; an English plan
    /// records none and keeps no structure, so its plan.json is what it
    /// always was; apply follows the plan unless `--lang` says otherwise,
    /// and shows an English plan's reasons as they were recorded.
    @Test func theLanguageComesFromLangOrTheDefinition() throws {
        let pipeline = try driftedSincePipeline()
        let take = ["--take", EditableSide.id(3) + "=both"]
        let (english, _) = try pipeline.plan(take)
        #expect(english.code == 1)
        #expect(english.stdout.hasPrefix("Plan for baseline, made 2026-04-20T12:00:00Z"))
        let text = try read(pipeline.planFile)
        for key in ["\"language\"", "\"why\"", "\"chosen\""] { #expect(!text.contains(key), "\(key) in an English plan.json") }
        #expect(text.contains("\"choice\""))
        #expect(try read(pipeline.state.appendingPathComponent("plan.html")).hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">\n"))

        // Without --yes nothing destructive is done; the run's pages are in Japanese all the same.
        let applied = try pipeline.apply(["--lang", "ja"])
        #expect(applied.code == 1, "\(applied.stderr)")
        #expect(applied.stdout.hasPrefix("baselineの適用 20260420T120000Z"))
        let report = try read(pipeline.state.appendingPathComponent("apply/20260420T120000Z/report.html"))
        #expect(report.hasPrefix("<!DOCTYPE html>\n<html lang=\"ja\">\n"))
        #expect(report.contains("<h2>操作（"))
        #expect(report.contains("未確認"))
        #expect(report.contains("only on this device, and the sides never agreed on it"), "an English plan's reasons, as recorded")

        let (japanese, recorded) = try pipeline.plan(["--lang", "ja"])
        #expect(japanese.stdout.hasPrefix("baselineの修復計画"))
        #expect(recorded["language"] as? String == "ja")
        #expect(try read(pipeline.state.appendingPathComponent("plan.html")).hasPrefix("<!DOCTYPE html>\n<html lang=\"ja\">\n"))

        try pipeline.setLanguage("ja")
        let (fromDefinition, _) = try pipeline.plan()
        #expect(fromDefinition.stdout.hasPrefix("baselineの修復計画"))
        let (overridden, again) = try pipeline.plan(["--lang", "en"])
        #expect(overridden.stdout.hasPrefix("Plan for baseline"))
        #expect(again["language"] == nil)
        #expect(try read(pipeline.state.appendingPathComponent("plan.md")).hasPrefix("# reckon plan: baseline\n"))
    }

    /// A plan made in Japanese (a fix-index, conflicts, choices), and what
    /// its apply and undo print and write, are valid against their schemas.
    @Test(.needs(.python3, .jsonschema)) func aJapanesePlanAndItsRunsAreValid() throws {
        var corpus = try SchemaCorpus()
        let pipeline = try driftedSincePipeline()
        try pipeline.orphanOnDrive(6)
        let taking = ["--take", EditableSide.id(3) + "=both", "--take", EditableSide.id(8) + "=remote"]
        let plan = try corpus.printed("plan.schema.json", ["plan", "p.json", "--json", "--lang", "ja"] + taking, day: 1, code: 1, in: pipeline.folder)
        #expect(plan.json["language"] as? String == "ja")
        let actions = plan.json["actions"] as? [[String: Any]] ?? []
        #expect(actions.contains { $0["chosen"] is [String: Any] } && actions.contains { $0["action"] as? String == "fix-index" })
        try corpus.written("plan.schema.json", pipeline.planFile)
        let applied = try corpus.printed(
            "apply.schema.json", ["apply", pipeline.planFile.path, "--yes", "--json"], day: 1, code: 0, in: pipeline.folder)
        let run = try #require(applied.json["run"] as? String)
        try corpus.written("apply.schema.json", pipeline.state.appendingPathComponent("apply/\(run)/report.json"))
        try corpus.printed("undo.schema.json", ["undo", run, "--state", pipeline.state.path, "--json"], day: 1, code: 0, in: pipeline.folder)
        try corpus.validate(["plan.schema.json", "apply.schema.json", "undo.schema.json"])
    }

    /// plan.schema.json names every language, and every case of a reason and
    /// of a choice that a plan made in Japanese keeps.
    @Test func thePlanSchemaNamesEveryLanguageAndEveryCase() throws {
        let schema = try schemaObject("plan.schema.json")
        #expect(schemaEnum(schema, "properties", "language") == Set(Strings.languages))
        let id = try #require(MemoID(EditableSide.id(1)))
        let reasons: [PlanReason] = [
            .cannotCompare(problems: []), .conflict(changed: .both, local: "a", remote: "b", id: id, note: nil),
            .orphanFile(path: "p", side: "a"), .orphanUnreadable(path: "p", side: "a"), .indexDisagrees(path: "p", side: "a"),
            .followed(move: .added, side: "a", other: "b"),
            .replaced(move: .edited, side: "a", other: "b", deletes: false),
            .settled(changed: .both, local: "a", remote: "b", from: "a", to: "b", deletes: false, keepsCopy: false),
            .notPossible(side: "a", why: .readOnly, would: .addEntry), .sourceUnreadable(side: "a"), .targetUnreadable(side: "a")
        ]
        let choices: [PlanChoice] = [
            .take(id: id, side: .local, label: "a"), .takeBoth(id: id, newer: "a"), .takeBothNoCopy(id: id, holder: "a", taken: "b"),
            .prefer(side: .remote, label: "b"), .preferNewer(label: "a")
        ]
        func cases<T: Encodable>(_ values: [T]) throws -> Set<String> {
            Set(
                try values.flatMap { value -> [String] in
                    guard case .object(let object) = try JSONValue(encoding: value) else { return [] }
                    return Array(object.keys)
                })
        }
        #expect(schemaEnum(schema, "$defs", "planAction", "properties", "why", "propertyNames") == (try cases(reasons)))
        #expect(schemaEnum(schema, "$defs", "planAction", "properties", "chosen", "propertyNames") == (try cases(choices)))
    }

    /// A one-shot plan in Japanese keeps plan.json in English: its sides' labels and its reasons.
    @Test func aOneShotPlanInJapaneseKeepsItsJSONInEnglish() throws {
        let folder = temporaryFolder()
        let out = folder.appendingPathComponent("out")
        let planned = try reckon(
            "plan", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--out", out.path, "--lang", "ja")
        #expect(planned.code == 1, "\(planned.stderr)")
        let plan = try read(out.appendingPathComponent("plan.json"))
        #expect(plan.contains(#""label" : "this device""#))
        #expect(!plan.contains("この端末"))
        #expect(try read(out.appendingPathComponent("plan.html")).contains("<html lang=\"ja\">"))
    }

    /// `--lang` takes en or ja on every command that has it, and says so.
    @Test func anUnknownLanguageIsRefused() throws {
        let folder = temporaryFolder()
        for arguments in [
            ["plan", "p.json", "--lang", "xx"], ["plan", "--local", "a", "--remote", "b", "--out", "o", "--lang=fr"],
            ["apply", "plan.json", "--lang", "xx"], ["undo", "20260420T120000Z", "--state", "state", "--lang", "xx"],
            ["reconcile", "--local", "a", "--remote", "b", "--lang", "xx"]
        ] {
            let result = try runArray(arguments, in: folder)
            let value = arguments.last!.hasPrefix("--lang=") ? "fr" : "xx"
            #expect(result.code == 64, "\(arguments)")
            #expect(
                result.stderr.hasPrefix("Error: The value '\(value)' is invalid for '--lang <lang>'; expected one of: en, ja\n"),
                "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "nothing written")
    }
}
