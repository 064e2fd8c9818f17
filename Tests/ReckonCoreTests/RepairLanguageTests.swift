import Foundation
import Testing

@testable import ReckonCore

/// A plan made in Japanese, its reasons and choices as structures, as the
/// planner makes them: a copy, a soft deletion, a fix-index, two conflicts
/// (one a `--prefer` could not settle), a not-possible action, a memo that
/// cannot be compared, and a conflict settled with `both`; a title holding
/// `<script>`; and the runs that carried it out and undid it.
enum JapaneseRepairFixture {
    typealias F = RepairFixture
    static let device = "この端末"
    static let drive = "Google Drive"

    static let sides = [
        PlanSide(
            role: .local, name: "device", label: device, path: "device", kind: SideKindName(MemoFolderSide.self), place: "/x/device",
            writable: false, notWritable: RepairStrings.en.notWritable(.readOnly, device), liveMemos: 4),
        PlanSide(
            role: .remote, name: "drive", label: drive, path: "gdrive:60dMemo", kind: SideKindName(RcloneSide.self), place: "rclone:abc",
            writable: true, liveMemos: 5)
    ]

    static func action(
        _ id: String, _ sigil: Difference.Sigil, _ kind: Difference.Kind, _ action: PlanAction.Kind, from: SideRole? = nil,
        to: SideRole? = nil, changed: Difference.Changed = .local, _ why: PlanReason
    ) -> PlanAction {
        var result = PlanAction(id: MemoID(id)!, sigil: sigil, kind: kind, changed: changed, action: action, reason: "")
        result.from = from
        result.to = to
        result.say(why)
        return result
    }

    static var plan: Plan {
        var copy = action(
            F.copied, .onlyOnLocal, .onlyOnLocal, .copy, from: .local, to: .remote,
            .followed(move: .added, side: device, other: drive, agreed: F.time("2026-11-28T02:00:00Z")))
        copy.versions = [
            .local: MemoVersion(title: "買い物", modifiedTime: F.time("2026-11-30T08:00:00Z"), archivedAt: nil, deletedAt: nil, body: "牛乳\n卵")
        ]
        var softDelete = action(
            F.deleted, .differs, .deletedOnOneSide, .softDelete, from: .local, to: .remote,
            .followed(move: .deleted, side: device, other: drive, agreed: F.time("2026-11-28T02:00:00Z")))
        softDelete.destructive = true
        let fixIndex = action(
            F.id(1), .cannotCompare, .cannotCompare, .fixIndex, to: .remote,
            .orphanFile(path: "memos/0B0C0D0E-0000-4000-8000-000000000001.json", side: drive))
        var conflict = action(
            F.id(2), .differs, .changed, .conflict, changed: .both,
            .conflict(changed: .both, local: device, remote: drive, id: MemoID(F.id(2))!, note: nil, agreed: F.time("2026-11-28T02:00:00Z")))
        conflict.versions = [
            .local: MemoVersion(
                title: "計画 <script>alert(1)</script>", modifiedTime: F.time("2026-11-30T09:15:00Z"), archivedAt: nil, deletedAt: nil,
                body: "一行目\n二行目"),
            .remote: MemoVersion(
                title: "計画B", modifiedTime: F.time("2026-11-30T10:20:30.5Z"), archivedAt: F.time("2026-11-30T10:21:00Z"), deletedAt: nil,
                body: "別の一行")
        ]
        let notPossible = action(
            F.id(3), .onlyOnRemote, .onlyOnRemote, .notPossible, from: .remote, to: .local,
            .notPossible(side: device, why: .readOnly, would: .copy(from: drive)))
        let nothing = action(
            F.id(4), .cannotCompare, .cannotCompare, .none,
            .cannotCompare(problems: [.init(side: drive, problems: ["memos/x.json: unexpected byte 0x7B at offset 3"])]))
        var settled = action(
            F.id(5), .differs, .changed, .copy, from: .local, to: .remote, changed: .both,
            .settled(
                changed: .both, local: device, remote: drive, from: device, to: drive, deletes: false, keepsCopy: true,
                agreed: F.time("2026-11-28T02:00:00Z")))
        settled.choose(.takeBoth(id: MemoID(F.id(5))!, newer: device))
        settled.conflictCopy = MemoID(F.id(6))
        settled.destructive = true
        settled.versions = [
            .local: MemoVersion(title: "旅行", modifiedTime: F.time("2026-11-30T12:00:00Z"), archivedAt: nil, deletedAt: nil, body: "一日目"),
            .remote: MemoVersion(title: nil, modifiedTime: F.time("2026-11-29T12:00:00Z"), archivedAt: nil, deletedAt: nil, body: nil)
        ]
        let kept = action(
            F.id(8), .onlyOnRemote, .onlyOnRemote, .conflict, changed: .unknown,
            .conflict(
                changed: .unknown, local: device, remote: drive, id: MemoID(F.id(8))!,
                note: .preferWouldDelete(side: .local, label: device, id: MemoID(F.id(8))!)))
        var plan = Plan(
            createdAt: F.time("2026-12-01T16:30:00Z"), pipeline: "nightly", definition: "/x/nightly.json", stateDir: "/x/state", sides: sides,
            actions: [copy, softDelete, fixIndex, conflict, notPossible, nothing, settled, kept])
        plan.language = "ja"
        return plan
    }

    static let changedTag = FileTag(size: 12, modified: F.time("2026-12-01T17:00:00Z"), sha256: String(repeating: "ab", count: 32))

    static var applied: ApplyResult {
        let actions = plan.actions
        var results = [
            ApplyResult.ActionResult(actions[0], outcome: .applied),
            ApplyResult.ActionResult(actions[1], outcome: .notConfirmed, happened: .notConfirmed),
            ApplyResult.ActionResult(actions[2], outcome: .alreadyDone),
            ApplyResult.ActionResult(actions[3], outcome: .conflict),
            ApplyResult.ActionResult(actions[4], outcome: .notPossible),
            ApplyResult.ActionResult(actions[5], outcome: .nothing),
            ApplyResult.ActionResult(
                actions[6], outcome: .changedSince,
                happened: .fileChanged(path: "memos/0B0C0D0E-0000-4000-8000-000000000005.json", side: drive, then: changedTag, now: nil)),
            ApplyResult.ActionResult(actions[7], outcome: .conflict)
        ]
        results[0].tell(.writeFailed(path: "memos/A.json", side: drive, error: "No space left on device", undone: .putBack))
        results[0].outcome = .failed
        var result = ApplyResult(
            mode: .apply, run: "20261201T173000Z", resumed: false, pipeline: "nightly", sides: sides, stateDir: "state", actions: results)
        result.note(.removedTemporary(name: "memos/.reckon-write.4242.0.tmp", side: drive))
        result.language = "ja"
        return result
    }

    static var undone: ApplyResult {
        var result = ApplyResult(
            mode: .undo, run: "20261201T173000Z", resumed: true, pipeline: "nightly", sides: sides, stateDir: "state",
            actions: [
                ApplyResult.ActionResult(plan.actions[0], outcome: .restored),
                ApplyResult.ActionResult(plan.actions[6], outcome: .changedSince)
            ])
        result.note(.changedAfterApply(FilePlace(path: "memos/0B0C0D0E-0000-4000-8000-000000000005.json", side: drive), backup: "backups/x"))
        result.language = "ja"
        return result
    }

    /// English words the pages said before they spoke Japanese: headings,
    /// columns, labels, totals and the sentences of reasons, choices,
    /// details and notes. None may be left on a Japanese page.
    static let englishPhrases = [
        "Made ", "Sides", "Path", "Writable", "Actions (", "Title", "Action", "Why", "Choice", "Conflicts (", "Chosen", "Modified",
        "Archived", "Deleted", "Text", "absent", "memo folder", "rclone remote", "since the last run", "since they last agreed", "never agreed",
        "unchanged on", "copied to",
        "marked deleted", "is a valid memo", "its entry is added", "not possible", "it would", "choose with", "changed on both",
        "no baseline", "cannot be compared", "nothing is done", "'s version", "newer version", "conflict copy", "is marked", "does not delete",
        "never had", "action", "copies", "copy", "soft-delete", "fix-index", "CONFLICT", "nothing", "left alone", "to choose",
        "overwrite", "confirm", "from ", " to ", "Plan for", "Plan written", "carry it out", "Choose for each", "plan again", ">no<",
        ">yes<", "| no |", "| yes |", "Run ", "run ", "Outcome", "What happened", "applied", "already done", "changed since",
        "not confirmed", "FAILED", "Backups", "Notes", "undo it with", "Restored", "restored", "removed ", "temporary file",
        "left as it is", "was written", "could not", "put back", "Undo", "Apply"
    ]

    /// The part of a page a person reads: the page's `<main>`, without the
    /// style and policy that HTMLReport writes for every language.
    static func shown(_ page: String) -> String {
        guard let start = page.range(of: "<main>"), let end = page.range(of: "</main>") else { return page }
        return String(page[start.lowerBound..<end.upperBound])
    }

    static func english(in text: String) -> [String] { englishPhrases.filter { text.contains($0) } }
}

@Suite struct RepairLanguageTests {
    typealias F = RepairFixture
    typealias J = JapaneseRepairFixture

    /// plan.md in Japanese: headings, columns, labels, totals, each reason
    /// and choice; ids, options and the side's own label as they are; no
    /// English sentence left.
    @Test func thePlanInMarkdownIsInJapanese() {
        let markdown = RepairReport.markdown(J.plan)
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(Array(lines.prefix(3)) == ["# reckon 修復計画: nightly", "", "作成日時: 2026-12-01T16:30:00Z"])
        for line in [
            "## 両側",
            "| 場所 | パス | 書き込み |",
            #"| この端末 | `device`（メモフォルダ） | **不可**（この端末には "readOnly": true が指定されています） |"#,
            "| Google Drive | `gdrive:60dMemo`（rclone のリモート） | 可 |",
            "## 操作（8件）",
            "|  | ID | タイトル | 操作 | 理由 | 選択 |",
            "| `+` | `3f2504e0-4f89-11d3-9a0c-0305e82c3301` | 買い物 | コピー → | 2026-11-28に一致して以降、この端末で追加され、Google Driveでは変わっていません。Google Driveにコピーします。 |  |",
            "| `*` | `e4eaaaf2-d142-11e1-b3e4-080027620cdd` |  | 削除済みにする → | 2026-11-28に一致して以降、この端末で削除され、Google Driveでは変わっていません。Google Driveでも削除済みにします。 |  |",
            "| `!` | `0b0c0d0e-0000-4000-8000-000000000001` |  | 索引を修復 | Google Driveの memos/0B0C0D0E-0000-4000-8000-000000000001.json は正しいメモですが、index.json に項目がありません。項目を追加します。 |  |",
            #"| `*` | `0b0c0d0e-0000-4000-8000-000000000002` | 計画 \<script\>alert(1)\</script\> | **競合** | 2026-11-28に一致して以降、この端末とGoogle Driveの両方で変更されています。--take 0b0c0d0e-0000-4000-8000-000000000002=local\|remote\|both か --prefer で選んでください。 |  |"#,
            #"| `-` | `0b0c0d0e-0000-4000-8000-000000000003` |  | **実行不可** | 実行できません: この端末には "readOnly": true が指定されています。本来はGoogle Driveの版をこの端末にコピーする操作です。 |  |"#,
            "| `!` | `0b0c0d0e-0000-4000-8000-000000000004` |  | 何もしない | 比較できません（Google Drive: memos/x.json: unexpected byte 0x7B at offset 3）。何もしません。 |  |",
            "| `*` | `0b0c0d0e-0000-4000-8000-000000000005` | 旅行 | コピー → | 2026-11-28に一致して以降、この端末とGoogle Driveの両方で変更されています。この端末の版をGoogle Driveにコピーします。Google Driveの古い版は競合コピーとして残します。 | --take 0b0c0d0e-0000-4000-8000-000000000005=both: この端末の新しい版がこの ID を使い、古い版は競合コピーとして残します。競合コピー `0b0c0d0e-0000-4000-8000-000000000006` |",
            #"| `-` | `0b0c0d0e-0000-4000-8000-000000000008` |  | **競合** | この端末とGoogle Driveは一度も一致したことがありません（状態フォルダを使う詳細な照合で一致が記録されます）。--take 0b0c0d0e-0000-4000-8000-000000000008=local\|remote\|both か --prefer で選んでください。--prefer local は、この端末に一度もなかったメモを削除しません。削除するには --take 0b0c0d0e-0000-4000-8000-000000000008=local を選んでください。 |  |"#,
            "操作4件（コピー2件・削除済みにする1件・索引を修復1件）、選ぶ必要のある競合2件、実行不可1件、何もしないもの1件。",
            "そのうち2件はメモを上書きまたは削除するため、apply は確認を求めます（または --yes）。",
            "→ はこの端末からGoogle Driveへ、← はGoogle Driveからこの端末へ。",
            "## 競合（3件）",
            "選択: --take 0b0c0d0e-0000-4000-8000-000000000005=both: この端末の新しい版がこの ID を使い、古い版は競合コピーとして残します",
            "|  | この端末 | Google Drive |",
            #"| タイトル | 計画 \<script\>alert(1)\</script\> | 計画B |"#,
            "| 更新日時 | 2026-11-30T09:15:00Z | 2026-11-30T10:20:30.500Z |",
            "| アーカイブ | いいえ | 2026-11-30T10:21:00Z |",
            "| 削除 | いいえ | いいえ |",
            "| 本文 | 一行目 | 別の一行 |",
            "| タイトル | 旅行 | – |",
            "| タイトル | なし | なし |"
        ] {
            #expect(lines.contains(line), "\(line)")
        }
        #expect(J.english(in: markdown).isEmpty, "English left: \(J.english(in: markdown))")
    }

    /// plan.html in Japanese: `lang="ja"`, the same words, escaped as ever.
    @Test func thePlanPageIsInJapanese() {
        let page = RepairReport.html(J.plan)
        #expect(page.hasPrefix("<!DOCTYPE html>\n<html lang=\"ja\">\n"))
        #expect(page.contains("<title>reckon 修復計画: nightly</title>"))
        #expect(!page.contains("<script"), "a title never becomes markup")
        for part in [
            "<p>作成日時: 2026-12-01T16:30:00Z</p>", "<h2>両側</h2>", "<h2>操作（8件）</h2>", "<h2>競合（3件）</h2>",
            "<tr><th>場所</th><th>パス</th><th>書き込み</th></tr>",
            "<td><span class=\"degraded\">不可</span>（この端末には &quot;readOnly&quot;: true が指定されています）</td>",
            "<br><strong>コピー →</strong><br>2026-11-28に一致して以降、この端末で追加され、Google Driveでは変わっていません。Google Driveにコピーします。</li>",
            "<strong><span class=\"degraded\">実行不可</span></strong><br>実行できません: この端末には &quot;readOnly&quot;: true が指定されています。本来はGoogle Driveの版をこの端末にコピーする操作です。",
            "<br><span class=\"state\">選択: --take 0b0c0d0e-0000-4000-8000-000000000005=both: この端末の新しい版がこの ID を使い、古い版は競合コピーとして残します。競合コピー <code>0b0c0d0e-0000-4000-8000-000000000006</code></span>",
            "<tr><td>タイトル</td><td>計画 &lt;script&gt;alert(1)&lt;/script&gt;</td><td>計画B</td></tr>",
            "<p>選択: --take 0b0c0d0e-0000-4000-8000-000000000005=both:"
        ] {
            #expect(page.contains(part), "\(part)")
        }
        #expect(J.english(in: J.shown(page)).isEmpty, "English left: \(J.english(in: J.shown(page)))")
    }

    /// The table in Japanese; its columns line up in a terminal, where a
    /// Japanese character takes two columns.
    @Test func thePlanTableIsInJapaneseAndLinesUp() {
        let table = RepairReport.table(J.plan, planPath: "out/plan.json", color: false)
        let lines = table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "nightlyの修復計画（2026-12-01T16:30:00Z 作成。→ はこの端末からGoogle Driveへ、← はGoogle Driveからこの端末へ）:")
        #expect(lines.contains("計画を out/plan.json に書き出しました。実行するには: reckon apply out/plan.json"))
        #expect(lines.contains("競合ごとに --take ID=local|remote|both、--choices FILE（レポートのページで保存したもの）か --prefer newer|local|remote で選んでから、もう一度計画してください。"))
        for action in J.plan.actions {
            let reason = RepairStrings.ja.reason(action.why!)
            let line = lines.first { $0.hasSuffix(reason) }
            #expect(line.map { displayWidth(String($0.dropLast(reason.count))) } == 2 + 2 + 36 + 2 + 18, "\(reason)")
        }
        #expect(J.english(in: table).isEmpty, "English left: \(J.english(in: table))")
    }

    /// An apply run and an undo run of the Japanese plan: outcomes, details,
    /// notes, totals and backups in Japanese, on the terminal and the pages.
    @Test func theRunsOfAJapanesePlanAreInJapanese() {
        let text = RepairReport.text(J.applied, color: false)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "nightlyの適用 20261201T173000Z（→ はこの端末からGoogle Driveへ、← はGoogle Driveからこの端末へ）:")
        for line in [
            "操作8件: すでに適用済み1件、計画後に変更あり1件、未確認1件、競合2件、実行不可1件、何もしない1件、失敗1件",
            "Google Driveの memos/.reckon-write.4242.0.tmp を削除しました（中断された実行が残した一時ファイルです）。",
            "バックアップは state/backups/20261201T173000Z にあります。取り消すには: reckon undo 20261201T173000Z --state state"
        ] where !lines.contains(line) {
            Issue.record("missing: \(line)\n\(text)")
        }
        #expect(text.contains("Google Driveの memos/A.json に書き込めませんでした（No space left on device）。このメモに書き込んだものは元に戻しました。"))
        #expect(
            text.contains(
                "Google Driveの memos/0B0C0D0E-0000-4000-8000-000000000005.json が計画のあとに変わりました（計画時: 12バイト、sha256 abababababab…、更新 2026-12-01T17:00:00Z、現在: なし）。そのままにしています。"
            ))
        #expect(text.contains("削除または上書きを伴い、確認されていない（--yes がない）ため、何も書き込んでいません。"))
        let markdown = RepairReport.markdown(J.applied)
        #expect(markdown.hasPrefix("# reckon 適用: nightly\n\n実行 20261201T173000Z\n"))
        for part in ["## 操作（8件）", "| ID | タイトル | 操作 | 結果 | 理由 | 詳細 |", "## バックアップ", "## 注記", "**失敗**", "**未確認**"] {
            #expect(markdown.contains(part), "\(part)")
        }
        let page = RepairReport.html(J.applied)
        #expect(page.hasPrefix("<!DOCTYPE html>\n<html lang=\"ja\">\n"))
        #expect(page.contains("<strong>コピー → · <span class=\"failed\">失敗</span></strong>"))
        #expect(page.contains("<span class=\"state\">詳細: Google Driveの memos/A.json に書き込めませんでした"))

        let undo = RepairReport.text(J.undone, color: false)
        #expect(undo.hasPrefix("nightlyの取り消し 20261201T173000Z（中断のあとに再開）（→ は"))
        #expect(undo.contains("復元済み"))
        #expect(undo.contains("操作2件: 復元済み1件、適用後に変更あり1件"))
        #expect(undo.contains("Google Driveの memos/0B0C0D0E-0000-4000-8000-000000000005.json は適用のあとに変わったため、そのままにしています。バックアップは backups/x にあります。"))
        #expect(undo.contains("state/backups/20261201T173000Z のバックアップから戻しました。"))
        let undoPage = RepairReport.html(J.undone)
        #expect(undoPage.contains("<title>reckon 取り消し: nightly</title>"))
        #expect(undoPage.contains("<p><code>state/backups/20261201T173000Z</code> のバックアップから戻しました。</p>"))

        for (name, shown) in [
            ("text", text), ("markdown", markdown), ("page", J.shown(page)), ("undo", undo), ("undo page", J.shown(undoPage)),
            ("undo markdown", RepairReport.markdown(J.undone))
        ] {
            #expect(J.english(in: shown).isEmpty, "\(name): English left: \(J.english(in: shown))")
        }
    }

    /// plan.json of a Japanese plan records its language and its reasons'
    /// structures, and keeps each reason in English beside them; read back,
    /// it gives the same pages. report.json is the same whatever the
    /// language: English sentences alone.
    @Test func theJSONKeepsEnglishAndAJapanesePlanKeepsItsStructures() throws {
        let plan = J.plan
        let top = try #require(try JSONSerialization.jsonObject(with: plan.data) as? [String: Any])
        #expect(top["language"] as? String == "ja")
        let actions = try #require(top["actions"] as? [[String: Any]])
        #expect(
            actions[0]["reason"] as? String == "added on この端末 since they last agreed on 2026-11-28; unchanged on Google Drive: copied to Google Drive"
        )
        #expect(actions[0]["why"] is [String: Any])
        #expect(
            actions[6]["choice"] as? String
                == "--take 0b0c0d0e-0000-4000-8000-000000000005=both: この端末's newer version keeps the id, the older one is kept as a conflict copy")
        #expect(actions[6]["chosen"] is [String: Any])
        let readBack = try JSONDecoder().decode(Plan.self, from: plan.data)
        #expect(readBack == plan)
        #expect(RepairReport.markdown(readBack) == RepairReport.markdown(plan))
        #expect(RepairReport.html(readBack) == RepairReport.html(plan))
        #expect(RepairReport.table(readBack, planPath: "p", color: true) == RepairReport.table(plan, planPath: "p", color: true))

        // The same plan in English keeps no language and no structure: plan.json as it always was.
        var english = plan
        english.language = nil
        for index in english.actions.indices {
            english.actions[index].why = nil
            english.actions[index].chosen = nil
        }
        let englishText = String(decoding: english.data, as: UTF8.self)
        for key in ["\"language\"", "\"why\"", "\"chosen\""] { #expect(!englishText.contains(key), "\(key)") }
        #expect(RepairReport.markdown(english).hasPrefix("# reckon plan: nightly\n\nMade 2026-12-01T16:30:00Z.\n"))

        var inEnglish = J.applied
        inEnglish.language = "en"
        #expect(J.applied.data == inEnglish.data, "the language never reaches report.json")
        let report = try #require(try JSONSerialization.jsonObject(with: J.applied.data) as? [String: Any])
        let results = try #require(report["actions"] as? [[String: Any]])
        #expect(results[1]["detail"] as? String == "it deletes or overwrites, and was not confirmed (--yes); nothing was written")
        #expect(
            results[0]["detail"] as? String
                == "memos/A.json on Google Drive could not be written (No space left on device); what was written for this memo was put back")
        #expect(report["notes"] as? [String] == ["removed memos/.reckon-write.4242.0.tmp on Google Drive, a temporary file a killed run left"])
        #expect(Set(results.flatMap(\.keys)) == ["id", "action", "from", "to", "outcome", "reason", "detail", "choice", "versions"])
        #expect(report["language"] == nil)
        // A run read back from report.json has sentences alone, and says them as they are.
        let runBack = try JSONDecoder().decode(ApplyResult.self, from: inEnglish.data)
        #expect(RepairReport.text(runBack, color: false) == RepairReport.text(inEnglish, color: false))
    }

    /// A plan whose actions hold English sentences alone (plan.json of an
    /// English plan) shown in Japanese: every heading and word of reckon's
    /// own is Japanese, and each reason is the sentence as recorded.
    @Test func anEnglishPlanShownInJapaneseKeepsItsSentences() {
        var plan = F.plan
        plan.language = "ja"
        let markdown = RepairReport.markdown(plan)
        #expect(markdown.hasPrefix("# reckon 修復計画: nightly\n\n作成日時: 2026-12-01T16:30:00Z\n"))
        #expect(markdown.contains("## 操作（8件）"))
        #expect(
            markdown.contains(
                "| `+` | `3f2504e0-4f89-11d3-9a0c-0305e82c3301` | Groceries | コピー → | added on this device since the last run; unchanged on Google Drive: copied to Google Drive |  |"
            ))
        #expect(markdown.contains(#"| this device | `device`（メモフォルダ） | **不可**（this deviceには "readOnly": true が指定されています） |"#))
    }

    /// Each reason, choice, detail and note said in English is the sentence
    /// reckon has always written: the structures add a language, and change
    /// no byte of plan.json or report.json.
    @Test func theEnglishOfEachStructureIsTheSentenceReckonAlwaysWrote() throws {
        let en = RepairStrings.en
        let id = try #require(MemoID(F.id(2)))
        let local = "this device"
        let remote = "Google Drive"
        let agreed = try #require(Timestamp(iso8601: "2026-11-28T02:00:00Z"))
        let reasons: [(PlanReason, String)] = [
            (
                .followed(move: .added, side: local, other: remote, agreed: agreed),
                "added on this device since they last agreed on 2026-11-28; unchanged on Google Drive: copied to Google Drive"
            ),
            (
                .followed(move: .deleted, side: local, other: remote, agreed: agreed),
                "deleted on this device since they last agreed on 2026-11-28; unchanged on Google Drive: marked deleted on Google Drive too"
            ),
            (
                .followed(move: .archived, side: remote, other: local, agreed: agreed),
                "archived or unarchived on Google Drive since they last agreed on 2026-11-28; unchanged on this device: copied to this device"
            ),
            (
                .followed(move: .kept, side: remote, other: local, agreed: agreed),
                "kept (not deleted) on Google Drive since they last agreed on 2026-11-28; unchanged on this device: copied to this device"
            ),
            (
                .replaced(move: .edited, side: local, other: remote, deletes: false, agreed: agreed),
                "edited on this device since they last agreed on 2026-11-28; unchanged on Google Drive; Google Drive's version is copied to this device instead"
            ),
            (
                .replaced(move: .added, side: remote, other: local, deletes: true, agreed: agreed),
                "added on Google Drive since they last agreed on 2026-11-28; unchanged on this device; marked deleted on Google Drive instead"
            ),
            (
                .settled(changed: .both, local: local, remote: remote, from: remote, to: local, deletes: false, keepsCopy: true, agreed: agreed),
                "changed on both this device and Google Drive since they last agreed on 2026-11-28; Google Drive's version is copied to this device, and this device's older version is kept as a conflict copy"
            ),
            (
                .settled(changed: .neither, local: local, remote: remote, from: remote, to: local, deletes: true, keepsCopy: false, agreed: agreed),
                "different, though neither side changed since they last agreed on 2026-11-28; marked deleted on this device"
            ),
            (
                .conflict(changed: .both, local: local, remote: remote, id: id, note: nil, agreed: agreed),
                "changed on both this device and Google Drive since they last agreed on 2026-11-28; choose with --take 0b0c0d0e-0000-4000-8000-000000000002=local|remote|both or --prefer"
            ),
            (
                .conflict(changed: .unknown, local: local, remote: remote, id: id, note: .takeBothSameTime(id: id)),
                "this device and Google Drive never agreed on it (a deep reconcile with a state folder remembers when they do); choose with --take 0b0c0d0e-0000-4000-8000-000000000002=local|remote|both or --prefer. --take 0b0c0d0e-0000-4000-8000-000000000002=both cannot tell which version is newer (the same time on both sides); take local or remote"
            ),
            (
                .conflict(changed: .neither, local: local, remote: remote, id: id, note: .preferNewerSameTime, agreed: agreed),
                "different, though neither side changed since they last agreed on 2026-11-28; choose with --take 0b0c0d0e-0000-4000-8000-000000000002=local|remote|both or --prefer. --prefer newer cannot tell which version is newer (the same time on both sides); choose with --take"
            ),
            (
                .conflict(changed: .unknown, local: local, remote: remote, id: id, note: .preferWouldDelete(side: .remote, label: remote, id: id)),
                "this device and Google Drive never agreed on it (a deep reconcile with a state folder remembers when they do); choose with --take 0b0c0d0e-0000-4000-8000-000000000002=local|remote|both or --prefer. --prefer remote does not delete a memo Google Drive never had; choose with --take 0b0c0d0e-0000-4000-8000-000000000002=remote to delete it"
            ),
            (
                .followed(move: .added, side: remote, other: local),
                "only on Google Drive, and the sides never agreed on it: copied to this device"
            ),
            (
                .replaced(move: .added, side: local, other: remote, deletes: true),
                "only on this device, and the sides never agreed on it; marked deleted on this device instead"
            ),
            (
                .orphanFile(path: "memos/X.json", side: remote),
                "memos/X.json on Google Drive is a valid memo with no entry in index.json; its entry is added"
            ),
            (
                .orphanUnreadable(path: "memos/X.json", side: remote),
                "memos/X.json on Google Drive has no entry in index.json, and cannot be read as a memo; nothing is done"
            ),
            (
                .notPossible(side: local, why: .readOnly, would: .copy(from: remote)),
                "not possible: this device is marked \"readOnly\": true; it would copy Google Drive's version there"
            ),
            (
                .notPossible(side: local, why: .kind(SideKindName(AppStoreSide.self)), would: .markDeleted),
                "not possible: this device is the app's own store, which reckon never writes; it would mark the memo deleted there"
            ),
            (
                .notPossible(side: local, why: .kind(SideKindName(AppStoreSide.self)), would: .addEntry),
                "not possible: this device is the app's own store, which reckon never writes; it would add an index entry"
            ),
            (
                .cannotCompare(problems: [.init(side: local, problems: ["a", "b"]), .init(side: remote, problems: ["c"])]),
                "cannot be compared (this device: a; b; Google Drive: c); nothing is done"
            ),
            (.sourceUnreadable(side: remote), "Google Drive's version could not be read; nothing is done"),
            (.targetUnreadable(side: local), "this device's memo file could not be read; nothing is done")
        ]
        for (why, sentence) in reasons { #expect(en.reason(why) == sentence) }
        let choices: [(PlanChoice, String)] = [
            (.take(id: id, side: .local, label: local), "--take 0b0c0d0e-0000-4000-8000-000000000002=local: this device's version is kept"),
            (.take(id: id, side: .remote, label: remote), "--take 0b0c0d0e-0000-4000-8000-000000000002=remote: Google Drive's version is kept"),
            (
                .takeBoth(id: id, newer: remote),
                "--take 0b0c0d0e-0000-4000-8000-000000000002=both: Google Drive's newer version keeps the id, the older one is kept as a conflict copy"
            ),
            (
                .takeBothNoCopy(id: id, holder: local, taken: remote),
                "--take 0b0c0d0e-0000-4000-8000-000000000002=both: this device holds no live version to keep as a conflict copy, so Google Drive's is taken"
            ),
            (.prefer(side: .local, label: local), "--prefer local: this device's version is kept"),
            (.preferNewer(label: remote), "--prefer newer: Google Drive's version is newer")
        ]
        for (choice, sentence) in choices { #expect(en.choice(choice) == sentence) }
        // The store's words are the ones its kind gives when a plan is made.
        let store = SideSpec(
            role: .local, name: "store", label: local, path: "/x/default.store",
            kind: AppStoreSide(url: URL(fileURLWithPath: "/x/default.store"), isBackup: false, app: nil))
        let storeKind = NotWritable.kind(SideKindName(AppStoreSide.self))
        #expect(store.whyNotWritable == storeKind)
        #expect(AppStoreSide.neverWritten(local, language: "en") == en.notWritable(storeKind, local))
        #expect(RepairStrings.ja.notWritable(storeKind, "この端末") == "この端末はアプリ自身のデータベースで、reckon は書き込みません")

        let failure = PutBackFailure(path: "memos/A.json", error: "EIO", backup: "backups/r/drive/memos/A.json")
        let details: [(ApplyDetail, String)] = [
            (.notConfirmed, "it deletes or overwrites, and was not confirmed (--yes); nothing was written"),
            (
                .fileChanged(path: "memos/A.json", side: remote, then: nil, now: J.changedTag),
                "memos/A.json on Google Drive changed since the plan (absent then, 12 bytes, sha256 abababababab…, modified 2026-12-01T17:00:00Z now); left as it is"
            ),
            (.journalFailed(failures: []), "the journal cannot be written, so nothing more is written"),
            (
                .journalFailed(failures: [failure]),
                "the journal cannot be written, so nothing more is written; memos/A.json could not be put back (EIO); its backup is in backups/r/drive/memos/A.json"
            ),
            (
                .changedWhileWriting(path: "memos/A.json", side: remote, undone: .nothing),
                "memos/A.json on Google Drive changed while it was being written; it was left as the other writer left it"
            ),
            (
                .entryChangedWhileWriting(id: "A", side: remote, failures: []),
                "the index.json entry of A on Google Drive changed while the memo was written; the memo file was put back as it was"
            ),
            (
                .indexFailed(.unreadableNow(error: "not JSON"), side: remote, failures: [failure]),
                "index.json cannot be read now (not JSON) on Google Drive; memos/A.json could not be put back (EIO); its backup is in backups/r/drive/memos/A.json"
            )
        ]
        for (detail, sentence) in details { #expect(en.detail(detail) == sentence) }
        let notes: [(RunNote, String)] = [
            (
                .sideLeftWhole(path: "index.json", side: remote),
                "index.json on Google Drive changed after the apply; nothing of Google Drive was put back (nor its baseline), so that its memo files and index entries still agree"
            ),
            (
                .notPutBack(FilePlace(path: "baseline-drive.txt", side: nil), error: "EIO", backup: nil),
                "baseline-drive.txt on the state folder could not be put back (EIO)"
            ),
            (.removedStateTemporary(path: "apply/x.tmp"), "removed apply/x.tmp in the state folder, a temporary file a killed run left")
        ]
        for (note, sentence) in notes { #expect(en.note(note) == sentence) }
    }
}
