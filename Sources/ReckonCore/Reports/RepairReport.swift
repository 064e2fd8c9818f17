import Foundation

/// How `reckon plan`, `reckon apply` and `reckon undo` read, for people: the
/// plan as a table for the terminal and as `plan.md` / `plan.html`, a run's
/// result as text and as `report.md` / `report.html`. Conflicts show both
/// versions side by side. In the plan's language (`Plan.language`), or the
/// run's (`ApplyResult.language`), with words from `RepairStrings`: a reason,
/// a choice, a detail or a note made as a structure is said in that language,
/// one read back as an English sentence alone (an English plan.json) stays
/// one. Nothing read from a memo or a path reaches a terminal or a page raw,
/// and the same plan or result gives the same bytes (times in UTC, ISO 8601).
package enum RepairReport {
    /// The plan as a table for the terminal: one line per action — sigil, id (small letters), action
    /// (copy → / ← , soft-delete, fix-index, CONFLICT, not possible, nothing), and the reason; then a
    /// totals line ("3 actions: 1 copy, 1 soft-delete, 1 fix-index; 1 conflict to choose") and where
    /// plan.json is. Colour only when `color` (as TextSummary does). Escaped for display.
    package static func table(_ plan: Plan, planPath: String, color: Bool) -> String {
        let s = RepairStrings.forLanguage(plan.languageCode)
        var out = [escapedForDisplay(s.planHeader(plan.named, plan.createdAt.iso8601, directions(plan.sides, s)))]
        let unreachable = plan.sideApplyCannotReach
        if let unreachable { out.append(escapedForDisplay(s.cannotApply(unreachable.label))) }
        for action in plan.actions {
            out.append(
                "  \(action.sigil.rawValue) \(action.id.value)  "
                    + cell(s.actionLabel(action.action, action.from), width: s.actionWidth, mark: color ? actionMark(action.action) : nil)
                    + escapedForDisplay(reason(action.why, action.reason, s)))
        }
        out.append("")
        out += planTotals(plan, s).map(escapedForDisplay)
        let command =
            unreachable == nil && plan.actions.contains(where: { doing.contains($0.action) }) ? "reckon apply \(shellWord(planPath))" : nil
        out.append(escapedForDisplay(s.planWritten(planPath, command)))
        if plan.actions.contains(where: { $0.action == .conflict }) {
            out.append(s.chooseConflicts)
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// plan.md / plan.html: the sides (label, path, kind, writable or why not), every action with its
    /// reason and choice, and for each conflict both versions side by side: title, time, first lines of
    /// the body (MemoVersion) — in HTML a two-column table, in Markdown a table with a column per side.
    package static func markdown(_ plan: Plan) -> String {
        let s = RepairStrings.forLanguage(plan.languageCode)
        return markdown(title: s.planTitle(plan.named), document(plan, s), s)
    }

    package static func html(_ plan: Plan) -> String {
        let s = RepairStrings.forLanguage(plan.languageCode)
        return page(title: s.planTitle(plan.named), document(plan, s), s)
    }

    /// The apply / undo result for the terminal: run id, one line per action with its outcome and
    /// detail, totals, and where the backups are ("undo it with: reckon undo <run>").
    package static func text(_ result: ApplyResult, color: Bool) -> String {
        let s = RepairStrings.forLanguage(result.language)
        var out = [escapedForDisplay(s.runHeader(result.mode, result.run, result.named, result.resumed, directions(result.sides, s)))]
        for action in result.actions {
            out.append(
                "  \(action.id.value)  " + cell(s.actionLabel(action.action, action.from), width: s.actionWidth, mark: nil)
                    + cell(s.outcomeLabel(action.outcome, result.mode), width: s.outcomeWidth, mark: color ? outcomeMark(action.outcome) : nil)
                    + escapedForDisplay(detail(action, s) ?? reason(action.why, action.reason, s)))
        }
        out.append("")
        out.append(escapedForDisplay(resultTotals(result, s)))
        out += notes(result, s).map(escapedForDisplay)
        out.append(escapedForDisplay(backupsSentence(result, s).map(\.plain).joined()))
        return out.joined(separator: "\n") + "\n"
    }

    /// report.md / report.html of an apply or undo run: the same, with conflicts side by side as above.
    package static func markdown(_ result: ApplyResult) -> String {
        let s = RepairStrings.forLanguage(result.language)
        return markdown(title: s.runTitle(result.mode, result.named), document(result, s), s)
    }

    package static func html(_ result: ApplyResult) -> String {
        let s = RepairStrings.forLanguage(result.language)
        return page(title: s.runTitle(result.mode, result.named), document(result, s), s)
    }

    /// What apply asks a person at a terminal before it deletes or overwrites: each such action, with
    /// its side and reason, then the question. Escaped for display.
    package static func confirmation(_ plan: Plan, language: String) -> String {
        let s = RepairStrings.forLanguage(language)
        var lines = [s.confirmHeading]
        for action in plan.actions where action.needsConfirmation {
            let word = s.code == "en" ? action.action.rawValue : s.actionLabel(action.action, nil)
            lines.append(s.confirmLine(word, action.id.description, plan.side(action.to ?? .remote).label, reason(action.why, action.reason, s)))
        }
        return lines.map(escapedForDisplay).joined(separator: "\n") + "\n" + s.confirmQuestion
    }
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

    /// One conflict shown side by side: the memo, its action, its reason and choice in words, both versions.
    struct ConflictShown {
        var id: MemoID
        var action: PlanAction.Kind
        var reason: String
        var choice: String?
        var versions: [SideRole: MemoVersion]
    }

    /// The actions that do something.
    static let doing: Set<PlanAction.Kind> = [.copy, .softDelete, .fixIndex]

    /// A reason in `s`'s language: its structure said there, or the English
    /// sentence when there is no structure (a plan that keeps none).
    static func reason(_ why: PlanReason?, _ english: String, _ s: RepairStrings) -> String {
        s.code == "en" ? english : why.map(s.reason) ?? english
    }

    static func choice(_ chosen: PlanChoice?, _ english: String?, _ s: RepairStrings) -> String? {
        s.code == "en" ? english : chosen.map(s.choice) ?? english
    }

    static func detail(_ action: ApplyResult.ActionResult, _ s: RepairStrings) -> String? {
        s.code == "en" ? action.detail : action.happened.map(s.detail) ?? action.detail
    }

    /// The run's notes in `s`'s language, when each was made as a structure.
    static func notes(_ result: ApplyResult, _ s: RepairStrings) -> [String] {
        s.code == "en" || result.runNotes.count != result.notes.count ? result.notes : result.runNotes.map(s.note)
    }

    static func document(_ plan: Plan, _ s: RepairStrings) -> [Block] {
        var blocks: [Block] = [.paragraph([.text(s.made(plan.createdAt.iso8601))])]
        blocks += sides(plan.sides, s)
        blocks.append(.heading(s.actionsHeading(plan.actions.count)))
        if !plan.actions.isEmpty {
            blocks.append(
                .actions(
                    plan.actions.map { action in
                        var choice: [Span] = Self.choice(action.chosen, action.choice, s).map { [.text($0)] } ?? []
                        if let copy = action.conflictCopy {
                            choice += [.text(s.conflictCopy(!choice.isEmpty)), .code(copy.value)]
                        }
                        return ActionRow(
                            sigil: action.sigil.rawValue, id: action.id, title: title(action.versions, action.from),
                            action: marked(s.actionLabel(action.action, action.from), actionMark(action.action)), outcome: nil,
                            reason: reason(action.why, action.reason, s), note: choice)
                    }, note: s.choiceColumn))
        }
        blocks += planTotals(plan, s).map { .paragraph([.text($0)]) }
        blocks.append(.paragraph([.text(directionsSentence(plan.sides, s))]))
        return blocks
            + conflicts(
                plan.actions.map {
                    ConflictShown(
                        id: $0.id, action: $0.action, reason: reason($0.why, $0.reason, s), choice: choice($0.chosen, $0.choice, s),
                        versions: $0.versions)
                }, sides: plan.sides, s)
    }

    static func document(_ result: ApplyResult, _ s: RepairStrings) -> [Block] {
        var blocks: [Block] = [.paragraph([.text(s.runLine(result.run, result.resumed))])]
        blocks += sides(result.sides, s)
        blocks.append(.heading(s.actionsHeading(result.actions.count)))
        if !result.actions.isEmpty {
            blocks.append(
                .actions(
                    result.actions.map { action in
                        ActionRow(
                            sigil: nil, id: action.id, title: title(roles(action.versions), action.from),
                            action: marked(s.actionLabel(action.action, action.from), actionMark(action.action)),
                            outcome: marked(s.outcomeLabel(action.outcome, result.mode), outcomeMark(action.outcome)),
                            reason: reason(action.why, action.reason, s), note: detail(action, s).map { [.text($0)] } ?? [])
                    }, note: s.happenedColumn))
        }
        blocks.append(.paragraph([.text(resultTotals(result, s))]))
        blocks.append(.paragraph([.text(directionsSentence(result.sides, s))]))
        blocks += [.heading(s.backupsHeading), .paragraph(backupsSentence(result, s))]
        let notes = notes(result, s)
        if !notes.isEmpty { blocks += [.heading(s.notesHeading)] + notes.map { .paragraph([.text($0)]) } }
        return blocks
            + conflicts(
                result.actions.map {
                    ConflictShown(
                        id: $0.id, action: $0.action, reason: reason($0.why, $0.reason, s), choice: choice($0.chosen, $0.choice, s),
                        versions: roles($0.versions))
                }, sides: result.sides, s)
    }

    /// The sides: label, path and kind, and whether apply may write there.
    static func sides(_ sides: [PlanSide], _ s: RepairStrings) -> [Block] {
        return [
            .heading(s.sidesHeading),
            .table(
                s.sideColumns,
                sides.map { side in
                    [
                        [.text(side.label)], [.code(side.path), .text(s.kind(side.kind))],
                        side.writable
                            ? [.text(s.writable)]
                            : [.marked(s.notWritableWord, .warning), .text(notWritable(side, s).map(s.notWritableSuffix) ?? "")]
                    ]
                })
        ]
    }

    /// Why apply may not write `side`, in `s`'s language.
    static func notWritable(_ side: PlanSide, _ s: RepairStrings) -> String? {
        s.code == "en" ? side.notWritable : side.whyNotWritable.map { s.notWritable($0, side.label) } ?? side.notWritable
    }

    /// Every conflict, open or settled by a choice, with both versions side by side.
    static func conflicts(_ actions: [ConflictShown], sides: [PlanSide], _ s: RepairStrings) -> [Block] {
        let shown = actions.filter { $0.action == .conflict || $0.choice != nil }
        guard !shown.isEmpty else { return [] }
        var blocks: [Block] = [.heading(s.conflictsHeading(shown.count))]
        for action in shown {
            var heading: [Span] = [.code(action.id.value)]
            if let title = title(action.versions, nil) { heading.append(.text(" " + title)) }
            blocks += [.subheading(heading), .paragraph([.text(action.reason)])]
            if let choice = action.choice { blocks.append(.paragraph([.text(s.chosen(choice))])) }
            let local = column(action.versions[.local], s)
            let remote = column(action.versions[.remote], s)
            var rows = zip(s.versionRows, zip(local.fields, remote.fields)).map { name, pair in
                [[Span.text(name)], [.text(pair.0)], [.text(pair.1)]]
            }
            for line in 0..<max(local.lines.count, remote.lines.count, 1) {
                // A side with no text at all says so in its first row.
                func text(_ lines: [String]) -> [Span] { [.text(lines.indices.contains(line) ? lines[line] : line == 0 ? "–" : "")] }
                rows.append([[.text(line == 0 ? s.textRow : "")], text(local.lines), text(remote.lines)])
            }
            blocks.append(.table(["", label(.local, sides), label(.remote, sides)], rows))
        }
        return blocks
    }

    /// One side's version as rows: title, modified, archived, deleted; and the body's first lines.
    static func column(_ version: MemoVersion?, _ s: RepairStrings) -> (fields: [String], lines: [String]) {
        guard let version else { return ([s.absent, "–", "–", "–"], []) }
        return (
            [
                version.title.flatMap { $0.isEmpty ? nil : $0 } ?? "–", version.modifiedTime?.iso8601 ?? "–",
                version.archivedAt?.iso8601 ?? s.no, version.deletedAt?.iso8601 ?? s.no
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
    static func directions(_ sides: [PlanSide], _ s: RepairStrings) -> String {
        s.directions(label(.local, sides), label(.remote, sides))
    }

    static func directionsSentence(_ sides: [PlanSide], _ s: RepairStrings) -> String {
        s.directionsSentence(label(.local, sides), label(.remote, sides))
    }

    static func actionMark(_ action: PlanAction.Kind) -> Mark? {
        action == .conflict || action == .notPossible ? .warning : nil
    }

    /// The outcomes in the order the totals name them.
    static let outcomes: [ApplyResult.Outcome] = [
        .applied, .restored, .alreadyDone, .changedSince, .notConfirmed, .conflict, .notPossible,
        .nothing, .failed
    ]

    static func outcomeMark(_ outcome: ApplyResult.Outcome) -> Mark? {
        switch outcome {
        case .failed: .failure
        case .changedSince, .notConfirmed, .conflict, .notPossible: .warning
        case .applied, .alreadyDone, .nothing, .restored: nil
        }
    }

    static func marked(_ text: String, _ mark: Mark?) -> Span { mark.map { .marked(text, $0) } ?? .text(text) }

    /// "3 actions: 1 copy, 1 soft-delete, 1 fix-index; 1 conflict to choose", and how many need confirming.
    static func planTotals(_ plan: Plan, _ s: RepairStrings) -> [String] {
        guard !plan.isEmpty else { return [s.nothingToDo] }
        return s.planTotals(plan.totals, plan.actions.filter(\.destructive).count)
    }

    /// "5 actions: 2 applied, 1 changed since the plan, …".
    static func resultTotals(_ result: ApplyResult, _ s: RepairStrings) -> String {
        // An undo's actions are the memos the apply run wrote: none means it found everything done.
        guard !result.actions.isEmpty else { return result.mode == .undo ? s.undoWroteNothing(result.run) : s.nothingDone }
        let totals = result.totals
        return s.resultTotals(result.actions.count, outcomes.compactMap { outcome in totals[outcome].map { (outcome, $0) } }, result.mode)
    }

    /// Where the backups are, and how to undo the run.
    static func backupsSentence(_ result: ApplyResult, _ s: RepairStrings) -> [Span] {
        if result.mode == .undo {
            guard result.actions.contains(where: { $0.outcome == .restored }) else { return [.text(s.nothingPutBack)] }
            return s.restoredFrom(result.backups)
        }
        // Nothing written or put back, and not resumed (whose earlier part's backups are in the run's folder): none made.
        let mayHaveWritten: Set<ApplyResult.Outcome> = [.applied, .failed, .changedSince]
        if !result.resumed, !result.actions.contains(where: { mayHaveWritten.contains($0.outcome) }) {
            let allDone =
                result.actions.contains { $0.outcome == .alreadyDone } && result.actions.allSatisfy { [.alreadyDone, .nothing].contains($0.outcome) }
            return [.text(allDone ? s.alreadyDoneNoBackup : s.nothingBackedUp)]
        }
        guard result.actions.contains(where: { $0.outcome == .applied || $0.outcome == .alreadyDone }) else {
            return [.text(s.nothingBackedUp)]
        }
        return s.backupsAt(result.backups, "reckon undo \(shellWord(result.run)) --state \(shellWord(result.stateDir))")
    }

    /// A word as a shell reads it back: as it is when plain, else in single
    /// quotes; a path that starts with `-` is led by `./`, so that reckon
    /// reads it as a path, not an option.
    static func shellWord(_ text: String) -> String {
        if text.hasPrefix("-") { return shellWord("./" + text) }
        let plain =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "/._-:+=@,%".unicodeScalars.contains($0)) }
        return plain ? text : RepairCommand.quoted(text)
    }
}

// MARK: - Terminal, Markdown and HTML

extension RepairReport {
    /// A table cell for the terminal: escaped, coloured when marked, padded to `width`.
    static func cell(_ text: String, width: Int, mark: Mark?) -> String {
        let shown = escapedForDisplay(text)
        let padding = String(repeating: " ", count: max(2, width - displayWidth(shown)))
        guard let mark else { return shown + padding }
        return "\u{1B}[\(mark == .failure ? "1;31" : "38;5;208")m\(shown)\u{1B}[0m" + padding
    }

    static func markdown(title: String, _ blocks: [Block], _ s: RepairStrings) -> String {
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
                let columns = s.actionColumns
                let headers = (sigils ? [""] : []) + columns[0..<3] + (outcomes ? [columns[3]] : []) + [columns[4], note]
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

    static func page(title: String, _ blocks: [Block], _ s: RepairStrings) -> String {
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
        return HTMLReport.page(language: s.code, title: title, body: body)
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
