import Foundation

/// How `reckon plan`, `reckon apply` and `reckon undo` read, for people: the
/// plan as a table for the terminal and as `plan.md` / `plan.html`, a run's
/// result as text and as `report.md` / `report.html`. Conflicts show both
/// versions side by side. English only, as the plan's reasons are. Nothing
/// read from a memo or a path reaches a terminal or a page raw, and the same
/// plan or result gives the same bytes (times in UTC, ISO 8601).
package enum RepairReport {
    /// The plan as a table for the terminal: one line per action — sigil, id (small letters), action
    /// (copy → / ← , soft-delete, fix-index, CONFLICT, not possible, nothing), and the reason; then a
    /// totals line ("3 actions: 1 copy, 1 soft-delete, 1 fix-index; 1 conflict to choose") and where
    /// plan.json is. Colour only when `color` (as TextSummary does). Escaped for display.
    package static func table(_ plan: Plan, planPath: String, color: Bool) -> String {
        var out = [escapedForDisplay("Plan for \(plan.pipeline), made \(plan.createdAt.iso8601) (\(directions(plan.sides))):")]
        for action in plan.actions {
            out.append(
                "  \(action.sigil.rawValue) \(action.id.value)  "
                    + cell(actionLabel(action.action, from: action.from), width: 15, mark: color ? actionMark(action.action) : nil)
                    + escapedForDisplay(action.reason))
        }
        out.append("")
        out += planTotals(plan).map(escapedForDisplay)
        let command = shellWord(planPath)
        if plan.actions.contains(where: { doing.keys.contains($0.action) }) {
            out.append(escapedForDisplay("Plan written to \(planPath); carry it out with: reckon apply \(command)"))
        } else {
            out.append(escapedForDisplay("Plan written to \(planPath)."))
        }
        if plan.actions.contains(where: { $0.action == .conflict }) {
            out.append("Choose for each conflict with --take ID=local|remote|both, or --prefer newer|local|remote, and plan again.")
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// plan.md / plan.html: the sides (label, path, kind, writable or why not), every action with its
    /// reason and choice, and for each conflict both versions side by side: title, time, first lines of
    /// the body (MemoVersion) — in HTML a two-column table, in Markdown a table with a column per side.
    package static func markdown(_ plan: Plan) -> String { markdown(title: planTitle(plan), document(plan)) }

    package static func html(_ plan: Plan) -> String { page(title: planTitle(plan), document(plan)) }

    /// The apply / undo result for the terminal: run id, one line per action with its outcome and
    /// detail, totals, and where the backups are ("undo it with: reckon undo <run>").
    package static func text(_ result: ApplyResult, color: Bool) -> String {
        let run = (result.mode == .apply ? "Apply" : "Undo") + " run \(result.run) of \(result.pipeline)" + (result.resumed ? ", resumed" : "")
        var out = [escapedForDisplay("\(run) (\(directions(result.sides))):")]
        for action in result.actions {
            out.append(
                "  \(action.id.value)  " + cell(actionLabel(action.action, from: action.from), width: 15, mark: nil)
                    + cell(outcomeLabel(action.outcome, result.mode), width: 25, mark: color ? outcomeMark(action.outcome) : nil)
                    + escapedForDisplay(action.detail ?? action.reason))
        }
        out.append("")
        out.append(escapedForDisplay(resultTotals(result)))
        out += result.notes.map(escapedForDisplay)
        out.append(escapedForDisplay(backupsSentence(result).map(\.plain).joined()))
        return out.joined(separator: "\n") + "\n"
    }

    /// report.md / report.html of an apply or undo run: the same, with conflicts side by side as above.
    package static func markdown(_ result: ApplyResult) -> String { markdown(title: resultTitle(result), document(result)) }

    package static func html(_ result: ApplyResult) -> String { page(title: resultTitle(result), document(result)) }
}

// MARK: - What the pages say

extension RepairReport {
    /// A piece of a sentence or of a table cell, shown alike on every page.
    enum Span {
        case text(String)
        /// A path, an id or a command.
        case code(String)
        /// Words a person must not miss: a conflict, a skipped action, a failure.
        case marked(String, Mark)

        var plain: String {
            switch self {
            case .text(let text), .code(let text), .marked(let text, _): text
            }
        }
    }

    enum Mark {
        /// Needs a look or a choice (orange).
        case warning
        /// Went wrong (red).
        case failure
    }

    /// One part of a page.
    enum Block {
        case heading(String)
        case subheading([Span])
        case paragraph([Span])
        /// Header texts, then rows of cells.
        case table([String], [[[Span]]])
        /// The actions, and what their last column says (`Choice`, `What happened`).
        case actions([ActionRow], note: String)
    }

    /// One action: in Markdown a table row, in HTML a stacked item, so that
    /// a phone needs no sideways scrolling (as report.html's differences).
    struct ActionRow {
        /// The plan's sigil; a run's rows have none.
        var sigil: String?
        var id: MemoID
        var title: String?
        var action: Span
        /// What became of it; a plan's rows have none.
        var outcome: Span?
        var reason: String
        var note: [Span]
    }

    /// The actions that do something, with their singular and plural names for the totals.
    static let doing: [PlanAction.Kind: (String, String)] = [
        .copy: ("copy", "copies"), .softDelete: ("soft-delete", "soft-deletes"),
        .fixIndex: ("fix-index", "fix-indexes")
    ]

    static func planTitle(_ plan: Plan) -> String { "reckon plan: \(plan.pipeline)" }

    static func resultTitle(_ result: ApplyResult) -> String { "reckon \(result.mode.rawValue): \(result.pipeline)" }

    static func document(_ plan: Plan) -> [Block] {
        var blocks: [Block] = [.paragraph([.text("Made \(plan.createdAt.iso8601).")])]
        blocks += sides(plan.sides)
        blocks.append(.heading("Actions (\(plan.actions.count))"))
        if !plan.actions.isEmpty {
            blocks.append(
                .actions(
                    plan.actions.map { action in
                        var choice: [Span] = action.choice.map { [.text($0)] } ?? []
                        if let copy = action.conflictCopy {
                            choice += [.text(choice.isEmpty ? "conflict copy " : "; conflict copy "), .code(copy.value)]
                        }
                        return ActionRow(
                            sigil: action.sigil.rawValue, id: action.id, title: title(action.versions, action.from),
                            action: marked(actionLabel(action.action, from: action.from), actionMark(action.action)), outcome: nil,
                            reason: action.reason, note: choice)
                    }, note: "Choice"))
        }
        blocks += planTotals(plan).map { .paragraph([.text($0)]) }
        blocks.append(.paragraph([.text(directions(plan.sides) + ".")]))
        return blocks + conflicts(plan.actions.map { ($0.id, $0.action, $0.reason, $0.choice, $0.versions) }, sides: plan.sides)
    }

    static func document(_ result: ApplyResult) -> [Block] {
        var blocks: [Block] = [.paragraph([.text("Run \(result.run)" + (result.resumed ? ", resumed after an interruption." : "."))])]
        blocks += sides(result.sides)
        blocks.append(.heading("Actions (\(result.actions.count))"))
        if !result.actions.isEmpty {
            blocks.append(
                .actions(
                    result.actions.map { action in
                        ActionRow(
                            sigil: nil, id: action.id, title: title(roles(action.versions), action.from),
                            action: marked(actionLabel(action.action, from: action.from), actionMark(action.action)),
                            outcome: marked(outcomeLabel(action.outcome, result.mode), outcomeMark(action.outcome)), reason: action.reason,
                            note: action.detail.map { [.text($0)] } ?? [])
                    }, note: "What happened"))
        }
        blocks.append(.paragraph([.text(resultTotals(result))]))
        blocks.append(.paragraph([.text(directions(result.sides) + ".")]))
        blocks += [.heading("Backups"), .paragraph(backupsSentence(result))]
        if !result.notes.isEmpty { blocks += [.heading("Notes")] + result.notes.map { .paragraph([.text($0)]) } }
        return blocks + conflicts(result.actions.map { ($0.id, $0.action, $0.reason, $0.choice, roles($0.versions)) }, sides: result.sides)
    }

    /// The sides: label, path and kind, and whether apply may write there.
    static func sides(_ sides: [PlanSide]) -> [Block] {
        return [
            .heading("Sides"),
            .table(
                ["Side", "Path", "Writable"],
                sides.map { side in
                    [
                        [.text(side.label)], [.code(side.path), .text(" (\(side.kind.words))")],
                        side.writable ? [.text("yes")] : [.marked("no", .warning), .text(side.notWritable.map { ": \($0)" } ?? "")]
                    ]
                })
        ]
    }

    /// Every conflict, open or settled by a choice, with both versions side by side.
    static func conflicts(
        _ actions: [(id: MemoID, action: PlanAction.Kind, reason: String, choice: String?, versions: [SideRole: MemoVersion])],
        sides: [PlanSide]
    ) -> [Block] {
        let shown = actions.filter { $0.action == .conflict || $0.choice != nil }
        guard !shown.isEmpty else { return [] }
        var blocks: [Block] = [.heading("Conflicts (\(shown.count))")]
        for action in shown {
            var heading: [Span] = [.code(action.id.value)]
            if let title = title(action.versions, nil) { heading.append(.text(" " + title)) }
            blocks += [.subheading(heading), .paragraph([.text(action.reason)])]
            if let choice = action.choice { blocks.append(.paragraph([.text("Chosen: \(choice)")])) }
            let local = column(action.versions[.local])
            let remote = column(action.versions[.remote])
            var rows = zip(["Title", "Modified", "Archived", "Deleted"], zip(local.fields, remote.fields)).map { name, pair in
                [[Span.text(name)], [.text(pair.0)], [.text(pair.1)]]
            }
            for line in 0..<max(local.lines.count, remote.lines.count, 1) {
                // A side with no text at all says so in its first row.
                func text(_ lines: [String]) -> [Span] { [.text(lines.indices.contains(line) ? lines[line] : line == 0 ? "–" : "")] }
                rows.append([[.text(line == 0 ? "Text" : "")], text(local.lines), text(remote.lines)])
            }
            blocks.append(.table(["", label(.local, sides), label(.remote, sides)], rows))
        }
        return blocks
    }

    /// One side's version as rows: title, modified, archived, deleted; and the body's first lines.
    static func column(_ version: MemoVersion?) -> (fields: [String], lines: [String]) {
        guard let version else { return (["absent", "–", "–", "–"], []) }
        return (
            [
                version.title.flatMap { $0.isEmpty ? nil : $0 } ?? "–", version.modifiedTime?.iso8601 ?? "–",
                version.archivedAt?.iso8601 ?? "no", version.deletedAt?.iso8601 ?? "no"
            ], version.firstLines
        )
    }

    /// The memo's title: the winning side's, else either side's.
    static func title(_ versions: [SideRole: MemoVersion], _ from: SideRole?) -> String? {
        [from, .local, .remote].lazy.compactMap { $0.flatMap { versions[$0]?.title } }.first { !$0.isEmpty }
    }

    static func roles(_ versions: [String: MemoVersion]) -> [SideRole: MemoVersion] {
        Dictionary(uniqueKeysWithValues: versions.compactMap { key, value in SideRole(rawValue: key).map { ($0, value) } })
    }

    static func label(_ role: SideRole, _ sides: [PlanSide]) -> String {
        sides.first { $0.role == role }?.label ?? role.rawValue
    }

    /// What the arrows mean.
    static func directions(_ sides: [PlanSide]) -> String {
        let local = label(.local, sides)
        let remote = label(.remote, sides)
        return "→ from \(local) to \(remote), ← from \(remote) to \(local)"
    }

    static func actionLabel(_ action: PlanAction.Kind, from: SideRole?) -> String {
        let arrow = from.map { $0 == .local ? " →" : " ←" } ?? ""
        return switch action {
        case .copy: "copy" + arrow
        case .softDelete: "soft-delete" + arrow
        case .fixIndex: "fix-index"
        case .conflict: "CONFLICT"
        case .notPossible: "not possible"
        case .none: "nothing"
        }
    }

    static func actionMark(_ action: PlanAction.Kind) -> Mark? {
        action == .conflict || action == .notPossible ? .warning : nil
    }

    /// The outcomes in the order the totals name them.
    static let outcomes: [ApplyResult.Outcome] = [
        .applied, .restored, .alreadyDone, .changedSince, .notConfirmed, .conflict, .notPossible,
        .nothing, .failed
    ]

    static func outcomeLabel(_ outcome: ApplyResult.Outcome, _ mode: ApplyResult.Mode) -> String {
        switch outcome {
        case .applied: "applied"
        case .alreadyDone: "already done"
        case .changedSince: mode == .undo ? "changed since the apply" : "changed since the plan"
        case .notConfirmed: "not confirmed"
        case .failed: "FAILED"
        case .conflict: "CONFLICT"
        case .notPossible: "not possible"
        case .nothing: "nothing done"
        case .restored: "restored"
        }
    }

    static func outcomeMark(_ outcome: ApplyResult.Outcome) -> Mark? {
        switch outcome {
        case .failed: .failure
        case .changedSince, .notConfirmed, .conflict, .notPossible: .warning
        case .applied, .alreadyDone, .nothing, .restored: nil
        }
    }

    static func marked(_ text: String, _ mark: Mark?) -> Span { mark.map { .marked(text, $0) } ?? .text(text) }

    /// "3 actions: 1 copy, 1 soft-delete, 1 fix-index; 1 conflict to choose", and how many need confirming.
    static func planTotals(_ plan: Plan) -> [String] {
        guard !plan.isEmpty else { return ["Nothing to do: every memo is the same on both sides."] }
        let totals = plan.totals
        let kinds: [PlanAction.Kind] = [.copy, .softDelete, .fixIndex]
        let done = kinds.reduce(0) { $0 + totals[$1, default: 0] }
        var line =
            done == 0
            ? "No action"
            : counted(done, "action", "actions") + ": "
                + kinds.compactMap { kind in totals[kind].map { counted($0, doing[kind]!.0, doing[kind]!.1) } }.joined(separator: ", ")
        let others: [(PlanAction.Kind, String, String)] = [
            (.conflict, "conflict to choose", "conflicts to choose"),
            (.notPossible, "not possible", "not possible"), (.none, "left alone", "left alone")
        ]
        for (kind, one, many) in others { if let n = totals[kind] { line += "; " + counted(n, one, many) } }
        let destructive = plan.actions.filter(\.destructive).count
        guard destructive > 0 else { return [line] }
        return [
            line,
            (destructive == 1 ? "1 of them overwrites or deletes" : "\(destructive) of them overwrite or delete")
                + " a memo, so apply asks to confirm (or --yes)."
        ]
    }

    /// "5 actions: 2 applied, 1 changed since the plan, …".
    static func resultTotals(_ result: ApplyResult) -> String {
        guard !result.actions.isEmpty else { return "No action in the plan: nothing was done." }
        let totals = result.totals
        return counted(result.actions.count, "action", "actions") + ": "
            + outcomes.compactMap { outcome in totals[outcome].map { "\($0) \(outcomeLabel(outcome, result.mode).lowercased())" } }.joined(
                separator: ", ")
    }

    /// Where the backups are, and how to undo the run.
    static func backupsSentence(_ result: ApplyResult) -> [Span] {
        if result.mode == .undo {
            guard result.actions.contains(where: { $0.outcome == .restored }) else { return [.text("Nothing was put back.")] }
            return [.text("Restored from the backups in "), .code(result.backups), .text(".")]
        }
        guard result.actions.contains(where: { $0.outcome == .applied || $0.outcome == .alreadyDone }) else {
            return [.text("Nothing was written, so nothing was backed up.")]
        }
        return [
            .text("Backups are in "), .code(result.backups), .text("; undo it with: "),
            .code("reckon undo \(shellWord(result.run)) --state \(shellWord(result.stateDir))")
        ]
    }

    static func counted(_ n: Int, _ one: String, _ many: String) -> String { "\(n) \(n == 1 ? one : many)" }

    /// A word as a shell reads it back: as it is when plain, else in single quotes.
    static func shellWord(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "/._-:+=@,%".unicodeScalars.contains($0)) }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

// MARK: - Terminal, Markdown and HTML

extension RepairReport {
    /// A table cell for the terminal: escaped, coloured when marked, padded to `width`.
    static func cell(_ text: String, width: Int, mark: Mark?) -> String {
        let shown = escapedForDisplay(text)
        let padding = String(repeating: " ", count: max(2, width - shown.count))
        guard let mark else { return shown + padding }
        return "\u{1B}[\(mark == .failure ? "1;31" : "38;5;208")m\(shown)\u{1B}[0m" + padding
    }

    static func markdown(title: String, _ blocks: [Block]) -> String {
        let md = MarkdownReport()
        func inline(_ spans: [Span]) -> String {
            spans.map { span in
                switch span {
                case .text(let text): md.escape(text)
                case .code(let text): md.code(text)
                case .marked(let text, _): "**\(md.escape(text))**"
                }
            }.joined()
        }
        var out = ["# \(md.escape(title))", ""]
        for block in blocks {
            switch block {
            case .heading(let text): out.append("## \(md.escape(text))")
            case .subheading(let spans): out.append("### " + inline(spans))
            case .paragraph(let spans): out.append(inline(spans))
            case .table(let headers, let rows):
                out.append("| " + headers.map { md.escape($0) }.joined(separator: " | ") + " |")
                out.append("|" + String(repeating: " --- |", count: headers.count))
                out += rows.map { "| " + $0.map(inline).joined(separator: " | ") + " |" }
            case .actions(let rows, let note):
                let sigils = rows.first?.sigil != nil
                let outcomes = rows.first?.outcome != nil
                let headers = (sigils ? [""] : []) + ["Id", "Title", "Action"] + (outcomes ? ["Outcome"] : []) + ["Why", note]
                out.append("| " + headers.joined(separator: " | ") + " |")
                out.append("|" + String(repeating: " --- |", count: headers.count))
                for row in rows {
                    let cells = row.sigil.map { [md.code($0)] } ?? []
                    let outcome = row.outcome.map { [inline([$0])] } ?? []
                    out.append(
                        "| "
                            + (cells + [md.code(row.id.value), md.escape(row.title ?? ""), inline([row.action])] + outcome
                            + [md.escape(row.reason), inline(row.note)]).joined(separator: " | ") + " |")
                }
            }
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    static func page(title: String, _ blocks: [Block]) -> String {
        func inline(_ spans: [Span]) -> String {
            spans.map { span in
                switch span {
                case .text(let text): ReckonCore.html(text)
                case .code(let text): "<code>\(ReckonCore.html(text))</code>"
                case .marked(let text, let mark): "<span class=\"\(mark == .failure ? "failed" : "degraded")\">\(ReckonCore.html(text))</span>"
                }
            }.joined()
        }
        let body = blocks.map { block in
            switch block {
            case .heading(let text): "<h2>\(ReckonCore.html(text))</h2>"
            case .subheading(let spans): "<h3>\(inline(spans))</h3>"
            case .paragraph(let spans): "<p>\(inline(spans))</p>"
            case .table(let headers, let rows): HTMLReport.grid(headers, rows.map { $0.map(inline) })
            case .actions(let rows, let note):
                "<ul class=\"diffs\">"
                    + rows.map { row in
                        var item = row.sigil.map { "<span class=\"sigil\">\(ReckonCore.html($0))</span> " } ?? ""
                        item += "<code class=\"id\">\(row.id.value)</code>"
                        if let title = row.title { item += " <span class=\"memo-title\">\(ReckonCore.html(title))</span>" }
                        item += "<br><strong>" + inline([row.action] + (row.outcome.map { [.text(" · "), $0] } ?? [])) + "</strong>"
                        item += "<br>" + ReckonCore.html(row.reason)
                        if !row.note.isEmpty { item += "<br><span class=\"state\">\(ReckonCore.html(note)): \(inline(row.note))</span>" }
                        return "<li>\(item)</li>"
                    }.joined() + "</ul>"
            }
        }
        return HTMLReport.page(language: "en", title: title, body: body)
    }
}

extension Plan {
    /// Records the plan in the state folder (apply carries out only plans
    /// recorded there), then writes `plan.json` (private: it holds whole
    /// memos, as the backups do), `plan.md` and `plan.html` into `folder`.
    package func write(into folder: URL) throws {
        try PlanRecords.record(data, stateDir: URL(fileURLWithPath: stateDir))
        try AtomicFile.write(data, to: folder.appendingPathComponent("plan.json"), mode: 0o600)
        try AtomicFile.write(Data(RepairReport.markdown(self).utf8), to: folder.appendingPathComponent("plan.md"))
        try AtomicFile.write(Data(RepairReport.html(self).utf8), to: folder.appendingPathComponent("plan.html"))
    }
}

extension ApplyResult {
    /// Writes the run's `report.json`, `report.md` and `report.html` (with
    /// `undo-` before each name for an undo) beside its journal in the state folder.
    package func writeReports(stateDir: URL) throws {
        let folder = stateDir.appendingPathComponent("apply/\(run)")
        let prefix = mode == .undo ? "undo-" : ""
        try AtomicFile.write(data, to: folder.appendingPathComponent("\(prefix)report.json"))
        try AtomicFile.write(Data(RepairReport.markdown(self).utf8), to: folder.appendingPathComponent("\(prefix)report.md"))
        try AtomicFile.write(Data(RepairReport.html(self).utf8), to: folder.appendingPathComponent("\(prefix)report.html"))
    }
}
