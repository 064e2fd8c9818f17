import Foundation
import Testing

@testable import ReckonCore

/// A plan and the runs that carried it out, built by hand: every kind of
/// action, every outcome, an open conflict and one settled with `both`, a
/// title holding `<script>` and a control character, and an id written in
/// capitals (shown in small letters everywhere).
enum RepairFixture {
    static let copied = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    static let deleted = "e4eaaaf2-d142-11e1-b3e4-080027620cdd"
    static func id(_ n: Int) -> String { "0b0c0d0e-0000-4000-8000-00000000000\(n)" }

    static let sides = [
        PlanSide(
            role: .local, name: "device", label: "this device", path: "device", kind: SideKindName(MemoFolderSide.self), place: "/x/device",
            writable: false, notWritable: "this device is marked \"readOnly\": true", liveMemos: 4),
        PlanSide(
            role: .remote, name: "drive", label: "Google Drive", path: "gdrive:60dMemo", kind: SideKindName(RcloneSide.self), place: "rclone:abc",
            writable: true, liveMemos: 5)
    ]

    static func time(_ text: String) -> Timestamp { Timestamp(iso8601: text)! }

    static func action(
        _ id: String, _ sigil: Difference.Sigil, _ kind: Difference.Kind, _ action: PlanAction.Kind,
        from: SideRole? = nil, to: SideRole? = nil, _ reason: String
    ) -> PlanAction {
        var result = PlanAction(id: MemoID(id)!, sigil: sigil, kind: kind, changed: .local, action: action, reason: reason)
        result.from = from
        result.to = to
        return result
    }

    static var plan: Plan {
        var copy = action(
            copied, .onlyOnLocal, .onlyOnLocal, .copy, from: .local, to: .remote,
            "added on this device since the last run; unchanged on Google Drive: copied to Google Drive")
        copy.versions = [
            .local: MemoVersion(
                title: "Groceries", modifiedTime: time("2026-11-30T08:00:00Z"), archivedAt: nil, deletedAt: nil,
                body: "milk\neggs")
        ]
        var softDelete = action(
            deleted, .differs, .deletedOnOneSide, .softDelete, from: .local, to: .remote,
            "deleted on this device since the last run; unchanged on Google Drive: marked deleted on Google Drive too")
        softDelete.destructive = true
        let fixIndex = action(
            id(1), .cannotCompare, .cannotCompare, .fixIndex, to: .remote,
            "memos/0B0C0D0E-0000-4000-8000-000000000001.json on Google Drive is a valid memo with no entry in index.json; its entry is added")
        var conflict = action(
            id(2), .differs, .changed, .conflict,
            "changed on both this device and Google Drive since the last run; choose with --take \(id(2))=local|remote|both or --prefer")
        conflict.changed = .both
        conflict.versions = [
            .local: MemoVersion(
                title: "Plan <script>alert(1)</script>\u{7}", modifiedTime: time("2026-11-30T09:15:00Z"), archivedAt: nil,
                deletedAt: nil, body: "first | line\n\nsecond *line*\nthird\nfourth is left out"),
            .remote: MemoVersion(
                title: "Plan B", modifiedTime: time("2026-11-30T10:20:30.5Z"), archivedAt: time("2026-11-30T10:21:00Z"),
                deletedAt: nil, body: "only line")
        ]
        let notPossible = action(
            id(3), .onlyOnRemote, .onlyOnRemote, .notPossible, from: .remote, to: .local,
            "not possible: this device is marked \"readOnly\": true; it would copy Google Drive's version there")
        let nothing = action(
            id(4), .cannotCompare, .cannotCompare, .none,
            "cannot be compared (Google Drive: memos/x.json is not valid JSON); nothing is done")
        var settled = action(
            id(5), .differs, .changed, .copy, from: .local, to: .remote,
            "edited on this device: copied to Google Drive (--take \(id(5))=both: this device's newer version keeps the id)")
        settled.changed = .both
        settled.choice = "--take \(id(5))=both: this device's newer version keeps the id, the older one is kept as a conflict copy"
        settled.conflictCopy = MemoID(id(6))
        settled.destructive = true
        settled.versions = [
            .local: MemoVersion(title: "Trip", modifiedTime: time("2026-11-30T12:00:00Z"), archivedAt: nil, deletedAt: nil, body: "day 1\nday 2"),
            .remote: MemoVersion(title: nil, modifiedTime: time("2026-11-29T12:00:00Z"), archivedAt: nil, deletedAt: nil, body: nil)
        ]
        let failing = action(
            id(7), .onlyOnLocal, .onlyOnLocal, .copy, from: .local, to: .remote,
            "added on this device since the last run; unchanged on Google Drive: copied to Google Drive")
        return Plan(
            createdAt: time("2026-12-01T16:30:00Z"), pipeline: "nightly", definition: "/x/nightly.json", stateDir: "/x/state", sides: sides,
            actions: [copy, softDelete, fixIndex, conflict, notPossible, nothing, settled, failing])
    }

    static var applied: ApplyResult {
        let actions = plan.actions
        let outcomes: [(ApplyResult.Outcome, String?)] = [
            (.applied, nil), (.notConfirmed, "deletes a memo; run again with --yes"), (.alreadyDone, nil), (.conflict, nil), (.notPossible, nil),
            (.nothing, nil), (.changedSince, "memos/0B0C0D0E-0000-4000-8000-000000000005.json on Google Drive changed since the plan; left as it is"),
            (.failed, "the backup could not be written: state/backups/20261201T173000Z/drive/index.json: No space left on device")
        ]
        return ApplyResult(
            mode: .apply, run: "20261201T173000Z", resumed: false, pipeline: "nightly", sides: sides,
            stateDir: "state",
            actions: zip(actions, outcomes).map { ApplyResult.ActionResult($0, outcome: $1.0, detail: $1.1) },
            notes: ["The lock of Google Drive was left by a run that is gone (process 4242); it was taken over."])
    }

    static var undone: ApplyResult {
        let actions = plan.actions
        return ApplyResult(
            mode: .undo, run: "20261201T173000Z", resumed: true, pipeline: "nightly", sides: sides,
            stateDir: "state",
            actions: [
                ApplyResult.ActionResult(actions[0], outcome: .restored),
                ApplyResult.ActionResult(
                    actions[6], outcome: .changedSince,
                    detail: "memos/0B0C0D0E-0000-4000-8000-000000000005.json on Google Drive was edited after the apply; not overwritten")
            ])
    }
}

/// Whether `text` holds a character a terminal would obey rather than show (line breaks aside).
func holdsRawControl(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0 != "\n" && needsEscape($0) }
}

@Suite struct RepairReportTests {
    typealias F = RepairFixture

    /// A plan made with `--local` and `--remote` has no pipeline's name, and one
    /// whose remote is a connection string with a secret says up front that
    /// apply cannot carry it out, and how to instead.
    @Test func aPlanWithoutADefinitionSaysWhatApplyCanDoWithIt() {
        var plan = F.plan
        plan.definition = nil
        plan.pipeline = "plan"
        var sides = plan.sides
        sides[1].path = ":sftp,host=h,pass=***:60dMemo"
        plan.sides = sides
        let table = RepairReport.table(plan, planPath: "out/plan.json", color: false).split(separator: "\n").map(String.init)
        #expect(table[0].hasPrefix("Plan, made 2026-12-01T16:30:00Z (→ from this device"), "\(table[0])")
        #expect(
            table[1]
                == "reckon apply cannot carry out this plan: Google Drive is given as a connection string that holds a secret, which a plan never keeps. "
                + "To apply, name the remote in an rclone config (rclone config create NAME …) and give it as NAME:path, "
                + "or use a pipeline definition, then plan again.")
        #expect(table.contains("Plan written to out/plan.json."))
        #expect(!table.joined().contains("carry it out with"))
        #expect(RepairReport.markdown(plan).hasPrefix("# reckon plan\n"))
        #expect(RepairReport.text(F.applied, color: false).hasPrefix("Apply run 20261201T173000Z of nightly ("))
        var oneShot = F.applied
        oneShot.withoutDefinition = true
        #expect(RepairReport.text(oneShot, color: false).hasPrefix("Apply run 20261201T173000Z ("))
        // Japanese says the same.
        plan.language = "ja"
        let ja = RepairReport.table(plan, planPath: "out/plan.json", color: false).split(separator: "\n").map(String.init)
        #expect(ja[0].hasPrefix("修復計画（2026-12-01T16:30:00Z 作成。"), "\(ja[0])")
        #expect(ja[1].hasPrefix("この計画は reckon apply で実行できません。Google Driveは秘密を含む接続文字列"))
        // Given with a definition, apply reads the remote from it again.
        plan.definition = "/x/nightly.json"
        #expect(plan.sideApplyCannotReach == nil)
    }

    @Test func thePlanTableHasALinePerActionThenTheTotals() {
        let table = RepairReport.table(F.plan, planPath: "out/plan.json", color: false)
        let expected = """
            Plan for nightly, made 2026-12-01T16:30:00Z (→ from this device to Google Drive, ← from Google Drive to this device):
              + 3f2504e0-4f89-11d3-9a0c-0305e82c3301  copy →         added on this device since the last run; unchanged on Google Drive: copied to Google Drive
              * e4eaaaf2-d142-11e1-b3e4-080027620cdd  soft-delete →  deleted on this device since the last run; unchanged on Google Drive: marked deleted on Google Drive too
              ! 0b0c0d0e-0000-4000-8000-000000000001  fix-index      memos/0B0C0D0E-0000-4000-8000-000000000001.json on Google Drive is a valid memo with no entry in index.json; its entry is added
              * 0b0c0d0e-0000-4000-8000-000000000002  CONFLICT       changed on both this device and Google Drive since the last run; choose with --take 0b0c0d0e-0000-4000-8000-000000000002=local|remote|both or --prefer
              - 0b0c0d0e-0000-4000-8000-000000000003  not possible   not possible: this device is marked "readOnly": true; it would copy Google Drive's version there
              ! 0b0c0d0e-0000-4000-8000-000000000004  nothing        cannot be compared (Google Drive: memos/x.json is not valid JSON); nothing is done
              * 0b0c0d0e-0000-4000-8000-000000000005  copy →         edited on this device: copied to Google Drive (--take 0b0c0d0e-0000-4000-8000-000000000005=both: this device's newer version keeps the id)
              + 0b0c0d0e-0000-4000-8000-000000000007  copy →         added on this device since the last run; unchanged on Google Drive: copied to Google Drive

            5 actions: 3 copies, 1 soft-delete, 1 fix-index; 1 conflict to choose; 1 not possible; 1 left alone
            2 of them overwrite or delete a memo, so apply asks to confirm (or --yes).
            Plan written to out/plan.json; carry it out with: reckon apply out/plan.json
            Choose for each conflict with --take ID=local|remote|both, --choices FILE (saved from the report's page), or --prefer newer|local|remote, and plan again.

            """
        #expect(table.split(separator: "\n", omittingEmptySubsequences: false) == expected.split(separator: "\n", omittingEmptySubsequences: false))
        #expect(!table.contains("3F2504E0"), "ids in small letters")
        #expect(!table.contains("\u{1B}"), "no colour unless asked")
    }

    @Test func aPlanWithNothingToDoSaysSoAndOffersNoApply() {
        var plan = F.plan
        plan.actions = []
        #expect(
            RepairReport.table(plan, planPath: "out/plan.json", color: false) == """
                Plan for nightly, made 2026-12-01T16:30:00Z (→ from this device to Google Drive, ← from Google Drive to this device):

                Nothing to do: every memo is the same on both sides.
                Plan written to out/plan.json.

                """)
        plan.actions = [F.plan.actions[3]]
        let onlyConflict = RepairReport.table(plan, planPath: "out/plan.json", color: false).split(separator: "\n").suffix(3)
        #expect(
            Array(onlyConflict) == [
                "No action; 1 conflict to choose", "Plan written to out/plan.json.",
                "Choose for each conflict with --take ID=local|remote|both, --choices FILE (saved from the report's page), or --prefer newer|local|remote, and plan again."
            ])
    }

    /// A plan path holding an escape sequence and a space is shown escaped,
    /// and quoted in the command so that it can be pasted back.
    @Test func thePlanPathIsEscapedAndQuoted() {
        let table = RepairReport.table(F.plan, planPath: "my out/plan\u{1B}[2J's.json", color: false)
        #expect(!holdsRawControl(table))
        #expect(table.contains(#"Plan written to my out/plan\u{1b}[2J's.json; carry it out with: reckon apply 'my out/plan'$'\x1b''[2J'\''s.json'"#))
    }

    @Test func colourMarksConflictsAndFailuresOnlyWhenAsked() {
        let table = RepairReport.table(F.plan, planPath: "out/plan.json", color: true)
        #expect(table.contains("  * 0b0c0d0e-0000-4000-8000-000000000002  \u{1B}[38;5;208mCONFLICT\u{1B}[0m       changed on both"))
        #expect(table.contains("  - 0b0c0d0e-0000-4000-8000-000000000003  \u{1B}[38;5;208mnot possible\u{1B}[0m   not possible:"))
        let text = RepairReport.text(F.applied, color: true)
        #expect(text.contains("\u{1B}[1;31mFAILED\u{1B}[0m                   the backup could not be written"))
        #expect(text.contains("\u{1B}[38;5;208mchanged since the plan\u{1B}[0m   memos/"))
        for shown in [table, text] {
            let withoutColour = shown.replacingOccurrences(of: "\u{1B}[38;5;208m", with: "").replacingOccurrences(of: "\u{1B}[1;31m", with: "")
                .replacingOccurrences(of: "\u{1B}[0m", with: "")
            #expect(!holdsRawControl(withoutColour), "only reckon's own colour codes reach the terminal")
        }
        #expect(!RepairReport.text(F.applied, color: false).contains("\u{1B}"))
    }

    @Test func theApplyTextHasEachOutcomeTheTotalsAndTheWayBack() {
        let expected = """
            Apply run 20261201T173000Z of nightly (→ from this device to Google Drive, ← from Google Drive to this device):
              3f2504e0-4f89-11d3-9a0c-0305e82c3301  copy →         applied                  added on this device since the last run; unchanged on Google Drive: copied to Google Drive
              e4eaaaf2-d142-11e1-b3e4-080027620cdd  soft-delete →  not confirmed            deletes a memo; run again with --yes
              0b0c0d0e-0000-4000-8000-000000000001  fix-index      already done             memos/0B0C0D0E-0000-4000-8000-000000000001.json on Google Drive is a valid memo with no entry in index.json; its entry is added
              0b0c0d0e-0000-4000-8000-000000000002  CONFLICT       CONFLICT                 changed on both this device and Google Drive since the last run; choose with --take 0b0c0d0e-0000-4000-8000-000000000002=local|remote|both or --prefer
              0b0c0d0e-0000-4000-8000-000000000003  not possible   not possible             not possible: this device is marked "readOnly": true; it would copy Google Drive's version there
              0b0c0d0e-0000-4000-8000-000000000004  nothing        nothing done             cannot be compared (Google Drive: memos/x.json is not valid JSON); nothing is done
              0b0c0d0e-0000-4000-8000-000000000005  copy →         changed since the plan   memos/0B0C0D0E-0000-4000-8000-000000000005.json on Google Drive changed since the plan; left as it is
              0b0c0d0e-0000-4000-8000-000000000007  copy →         FAILED                   the backup could not be written: state/backups/20261201T173000Z/drive/index.json: No space left on device

            8 actions: 1 applied, 1 already done, 1 changed since the plan, 1 not confirmed, 1 conflict, 1 not possible, 1 nothing done, 1 failed
            The lock of Google Drive was left by a run that is gone (process 4242); it was taken over.
            Backups are in state/backups/20261201T173000Z; undo it with: reckon undo 20261201T173000Z --state state

            """
        let text = RepairReport.text(F.applied, color: false)
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false) == expected.split(separator: "\n", omittingEmptySubsequences: false))
    }

    @Test func theUndoTextSaysWhatWasRestoredAndWhatWasLeft() {
        #expect(
            RepairReport.text(F.undone, color: false) == """
                Undo run 20261201T173000Z of nightly, resumed (→ from this device to Google Drive, ← from Google Drive to this device):
                  3f2504e0-4f89-11d3-9a0c-0305e82c3301  copy →         restored                 added on this device since the last run; unchanged on Google Drive: copied to Google Drive
                  0b0c0d0e-0000-4000-8000-000000000005  copy →         changed since the apply  memos/0B0C0D0E-0000-4000-8000-000000000005.json on Google Drive was edited after the apply; not overwritten

                2 actions: 1 restored, 1 changed since the apply
                Restored from the backups in state/backups/20261201T173000Z.

                """)
    }

    @Test func aRunThatWroteNothingOffersNoUndo() {
        var result = F.applied
        result.actions = result.actions.filter { $0.outcome != .applied && $0.outcome != .alreadyDone }
        result.notes = []
        let lines = RepairReport.text(result, color: false).split(separator: "\n")
        #expect(lines.last == "Nothing was written, so nothing was backed up.")
        #expect(lines.dropLast().last == "6 actions: 1 changed since the plan, 1 not confirmed, 1 conflict, 1 not possible, 1 nothing done, 1 failed")
    }

    @Test func thePlanInMarkdownHasTheSidesEveryActionAndBothVersionsOfEachConflict() {
        let expected = #"""
            # reckon plan: nightly

            Made 2026-12-01T16:30:00Z.

            ## Sides

            | Side | Path | Writable |
            | --- | --- | --- |
            | this device | `device` (memo folder) | **no**: this device is marked "readOnly": true |
            | Google Drive | `gdrive:60dMemo` (rclone remote) | yes |

            ## Actions (8)

            |  | Id | Title | Action | Why | Choice |
            | --- | --- | --- | --- | --- | --- |
            | `+` | `3f2504e0-4f89-11d3-9a0c-0305e82c3301` | Groceries | copy → | added on this device since the last run; unchanged on Google Drive: copied to Google Drive |  |
            | `*` | `e4eaaaf2-d142-11e1-b3e4-080027620cdd` |  | soft-delete → | deleted on this device since the last run; unchanged on Google Drive: marked deleted on Google Drive too |  |
            | `!` | `0b0c0d0e-0000-4000-8000-000000000001` |  | fix-index | memos/0B0C0D0E-0000-4000-8000-000000000001.json on Google Drive is a valid memo with no entry in index.json; its entry is added |  |
            | `*` | `0b0c0d0e-0000-4000-8000-000000000002` | Plan \<script\>alert(1)\</script\>\\u{7} | **CONFLICT** | changed on both this device and Google Drive since the last run; choose with --take 0b0c0d0e-0000-4000-8000-000000000002=local\|remote\|both or --prefer |  |
            | `-` | `0b0c0d0e-0000-4000-8000-000000000003` |  | **not possible** | not possible: this device is marked "readOnly": true; it would copy Google Drive's version there |  |
            | `!` | `0b0c0d0e-0000-4000-8000-000000000004` |  | nothing | cannot be compared (Google Drive: memos/x.json is not valid JSON); nothing is done |  |
            | `*` | `0b0c0d0e-0000-4000-8000-000000000005` | Trip | copy → | edited on this device: copied to Google Drive (--take 0b0c0d0e-0000-4000-8000-000000000005=both: this device's newer version keeps the id) | --take 0b0c0d0e-0000-4000-8000-000000000005=both: this device's newer version keeps the id, the older one is kept as a conflict copy; conflict copy `0b0c0d0e-0000-4000-8000-000000000006` |
            | `+` | `0b0c0d0e-0000-4000-8000-000000000007` |  | copy → | added on this device since the last run; unchanged on Google Drive: copied to Google Drive |  |

            5 actions: 3 copies, 1 soft-delete, 1 fix-index; 1 conflict to choose; 1 not possible; 1 left alone

            2 of them overwrite or delete a memo, so apply asks to confirm (or --yes).

            → from this device to Google Drive, ← from Google Drive to this device.

            ## Conflicts (2)

            ### `0b0c0d0e-0000-4000-8000-000000000002` Plan \<script\>alert(1)\</script\>\\u{7}

            changed on both this device and Google Drive since the last run; choose with --take 0b0c0d0e-0000-4000-8000-000000000002=local\|remote\|both or --prefer

            |  | this device | Google Drive |
            | --- | --- | --- |
            | Title | Plan \<script\>alert(1)\</script\>\\u{7} | Plan B |
            | Modified | 2026-11-30T09:15:00Z | 2026-11-30T10:20:30.500Z |
            | Archived | no | 2026-11-30T10:21:00Z |
            | Deleted | no | no |
            | Text | first \| line | only line |
            |  | second \*line\* |  |
            |  | third |  |

            ### `0b0c0d0e-0000-4000-8000-000000000005` Trip

            edited on this device: copied to Google Drive (--take 0b0c0d0e-0000-4000-8000-000000000005=both: this device's newer version keeps the id)

            Chosen: --take 0b0c0d0e-0000-4000-8000-000000000005=both: this device's newer version keeps the id, the older one is kept as a conflict copy

            |  | this device | Google Drive |
            | --- | --- | --- |
            | Title | Trip | – |
            | Modified | 2026-11-30T12:00:00Z | 2026-11-29T12:00:00Z |
            | Archived | no | no |
            | Deleted | no | no |
            | Text | day 1 | – |
            |  | day 2 |  |

            """#
        let markdown = RepairReport.markdown(F.plan)
        #expect(
            markdown.split(separator: "\n", omittingEmptySubsequences: false) == expected.split(separator: "\n", omittingEmptySubsequences: false))
    }

    @Test func theRunInMarkdownHasEachOutcomeTheBackupsAndTheNotes() {
        let lines = RepairReport.markdown(F.applied).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(Array(lines.prefix(3)) == ["# reckon apply: nightly", "", "Run 20261201T173000Z."])
        for row in [
            "| Id | Title | Action | Outcome | Why | What happened |",
            "| `3f2504e0-4f89-11d3-9a0c-0305e82c3301` | Groceries | copy → | applied | added on this device since the last run; unchanged on Google Drive: copied to Google Drive |  |",
            "| `e4eaaaf2-d142-11e1-b3e4-080027620cdd` |  | soft-delete → | **not confirmed** | deleted on this device since the last run; unchanged on Google Drive: marked deleted on Google Drive too | deletes a memo; run again with --yes |",
            "| `0b0c0d0e-0000-4000-8000-000000000007` |  | copy → | **FAILED** | added on this device since the last run; unchanged on Google Drive: copied to Google Drive | the backup could not be written: state/backups/20261201T173000Z/drive/index.json: No space left on device |",
            "8 actions: 1 applied, 1 already done, 1 changed since the plan, 1 not confirmed, 1 conflict, 1 not possible, 1 nothing done, 1 failed",
            "## Backups",
            "Backups are in `state/backups/20261201T173000Z`; undo it with: `reckon undo 20261201T173000Z --state state`",
            "## Notes",
            "The lock of Google Drive was left by a run that is gone (process 4242); it was taken over.",
            "## Conflicts (2)",
            #"| Title | Plan \<script\>alert(1)\</script\>\\u{7} | Plan B |"#,
            "| Modified | 2026-11-30T09:15:00Z | 2026-11-30T10:20:30.500Z |"
        ] {
            #expect(lines.contains(row), "\(row)")
        }
        let undo = RepairReport.markdown(F.undone).split(separator: "\n").map(String.init)
        #expect(Array(undo.prefix(2)) == ["# reckon undo: nightly", "Run 20261201T173000Z, resumed after an interruption."])
        #expect(undo.contains("Restored from the backups in `state/backups/20261201T173000Z`."))
        #expect(
            undo.contains(
                "| `0b0c0d0e-0000-4000-8000-000000000005` | Trip | copy → | **changed since the apply** | edited on this device: copied to Google Drive (--take 0b0c0d0e-0000-4000-8000-000000000005=both: this device's newer version keeps the id) | memos/0B0C0D0E-0000-4000-8000-000000000005.json on Google Drive was edited after the apply; not overwritten |"
            ))
    }

    /// The page escapes every string from a memo, and shows each conflict as
    /// a two-column table: one column per side, one row per field.
    @Test func thePlanPageEscapesAndPutsBothVersionsSideBySide() {
        let page = RepairReport.html(F.plan)
        #expect(!page.contains("<script"), "a title never becomes markup")
        #expect(!holdsRawControl(page))
        #expect(page.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">\n"))
        #expect(page.contains("<title>reckon plan: nightly</title>"))
        #expect(page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"))
        #expect(page.hasSuffix("</main>\n</body>\n</html>\n"))
        let conflict =
            "<h3><code>0b0c0d0e-0000-4000-8000-000000000002</code> Plan &lt;script&gt;alert(1)&lt;/script&gt;\\u{7}</h3>"
            + "\n<p>changed on both this device and Google Drive since the last run; choose with --take 0b0c0d0e-0000-4000-8000-000000000002=local|remote|both or --prefer</p>"
            + "\n<div class=\"scroll\"><table><thead><tr><th></th><th>this device</th><th>Google Drive</th></tr></thead><tbody>"
            + "<tr><td>Title</td><td>Plan &lt;script&gt;alert(1)&lt;/script&gt;\\u{7}</td><td>Plan B</td></tr>"
            + "<tr><td>Modified</td><td>2026-11-30T09:15:00Z</td><td>2026-11-30T10:20:30.500Z</td></tr>"
            + "<tr><td>Archived</td><td>no</td><td>2026-11-30T10:21:00Z</td></tr>"
            + "<tr><td>Deleted</td><td>no</td><td>no</td></tr>"
            + "<tr><td>Text</td><td>first | line</td><td>only line</td></tr>"
            + "<tr><td></td><td>second *line*</td><td></td></tr>"
            + "<tr><td></td><td>third</td><td></td></tr>"
            + "</tbody></table></div>"
        #expect(page.contains(conflict))
        #expect(
            page.contains(
                "<tr><td>this device</td><td><code>device</code> (memo folder)</td>"
                    + "<td><span class=\"degraded\">no</span>: this device is marked &quot;readOnly&quot;: true</td></tr>"))
        // Each action a stacked item, as report.html's differences, so that a phone needs no sideways scrolling.
        #expect(
            page.contains(
                "<ul class=\"diffs\"><li><span class=\"sigil\">+</span> <code class=\"id\">3f2504e0-4f89-11d3-9a0c-0305e82c3301</code> "
                    + "<span class=\"memo-title\">Groceries</span><br><strong>copy →</strong>"
                    + "<br>added on this device since the last run; unchanged on Google Drive: copied to Google Drive</li>"))
        #expect(
            page.contains(
                "<li><span class=\"sigil\">*</span> <code class=\"id\">0b0c0d0e-0000-4000-8000-000000000002</code> "
                    + "<span class=\"memo-title\">Plan &lt;script&gt;alert(1)&lt;/script&gt;\\u{7}</span>"
                    + "<br><strong><span class=\"degraded\">CONFLICT</span></strong><br>changed on both"))
        #expect(
            page.contains(
                "<br><span class=\"state\">Choice: --take 0b0c0d0e-0000-4000-8000-000000000005=both: this device&#39;s newer version keeps the id, "
                    + "the older one is kept as a conflict copy; conflict copy <code>0b0c0d0e-0000-4000-8000-000000000006</code></span></li>"))
        #expect(page.contains("<h2>Conflicts (2)</h2>"))
    }

    @Test func theRunPageMarksFailuresAndSaysWhereTheBackupsAre() {
        let page = RepairReport.html(F.applied)
        #expect(!page.contains("<script"))
        #expect(!holdsRawControl(page))
        #expect(page.contains("<title>reckon apply: nightly</title>"))
        #expect(
            page.contains(
                "<li><code class=\"id\">0b0c0d0e-0000-4000-8000-000000000007</code><br><strong>copy → · <span class=\"failed\">FAILED</span></strong>"
                    + "<br>added on this device since the last run; unchanged on Google Drive: copied to Google Drive"
                    + "<br><span class=\"state\">What happened: the backup could not be written: "
                    + "state/backups/20261201T173000Z/drive/index.json: No space left on device</span></li>"))
        #expect(page.contains("<strong>copy → · <span class=\"degraded\">changed since the plan</span></strong>"))
        #expect(page.contains("<strong>copy → · applied</strong>"))
        #expect(
            page.contains(
                "<p>Backups are in <code>state/backups/20261201T173000Z</code>; undo it with: <code>reckon undo 20261201T173000Z --state state</code></p>"
            ))
        #expect(page.contains("<tr><td>Title</td><td>Plan &lt;script&gt;alert(1)&lt;/script&gt;\\u{7}</td><td>Plan B</td></tr>"))
    }

    /// The same plan, also once written to plan.json and read back, gives
    /// the same bytes on every page.
    @Test func theSameInputGivesTheSameBytes() throws {
        let plan = F.plan
        let readBack = try JSONDecoder().decode(Plan.self, from: plan.data)
        #expect(RepairReport.table(readBack, planPath: "p", color: true) == RepairReport.table(plan, planPath: "p", color: true))
        #expect(RepairReport.markdown(readBack) == RepairReport.markdown(plan))
        #expect(RepairReport.html(readBack) == RepairReport.html(plan))
        let result = F.applied
        let resultBack = try JSONDecoder().decode(ApplyResult.self, from: result.data)
        #expect(RepairReport.text(resultBack, color: false) == RepairReport.text(result, color: false))
        #expect(RepairReport.markdown(resultBack) == RepairReport.markdown(result))
        #expect(RepairReport.html(resultBack) == RepairReport.html(result))
    }
}
