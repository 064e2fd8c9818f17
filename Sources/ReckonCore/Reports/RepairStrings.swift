/// Every sentence and word a person reads on the repair side (the plan's
/// table and pages, an apply or undo run's text and pages), as one table per
/// language (`en`, `ja`), as `Strings` is for the reports. A plan's reasons,
/// choices, a run's details and notes are structures (`PlanReason`,
/// `PlanChoice`, `ApplyDetail`, `RunNote`) that one function per language
/// says in words; the English ones are the sentences `plan.json` and
/// `report.json` keep. Ids, options and command lines stay as they are, and
/// so does a side's label; an error's own message stays in English.
package struct RepairStrings: Sendable {
    typealias Spans = [RepairReport.Span]

    package var code: String
    /// Why an action is what it is.
    package var reason: @Sendable (PlanReason) -> String
    /// The choice that settled a conflict.
    package var choice: @Sendable (PlanChoice) -> String
    /// (why, the side's label): why apply never writes the side.
    package var notWritable: @Sendable (NotWritable, String) -> String
    /// What became of an action beyond its outcome.
    package var detail: @Sendable (ApplyDetail) -> String
    /// A sentence about a run as a whole.
    package var note: @Sendable (RunNote) -> String
    /// A file's size, SHA-256 and time, or that it was absent.
    package var describe: @Sendable (FileTag?) -> String
    /// A file on a side, or in the state folder.
    package var place: @Sendable (FilePlace) -> String

    /// (pipeline): the plan's page title. The pipeline is nil for a plan made
    /// without a definition (`--local`, `--remote`), which has no name.
    var planTitle: @Sendable (String?) -> String
    /// (mode, pipeline): a run's page title.
    var runTitle: @Sendable (ApplyResult.Mode, String?) -> String
    /// (pipeline, made at, what the arrows mean): the table's first line.
    var planHeader: @Sendable (String?, String, String) -> String
    /// (mode, run, pipeline, resumed, what the arrows mean): the run text's first line.
    var runHeader: @Sendable (ApplyResult.Mode, String, String?, Bool, String) -> String
    /// (made at): the plan page's first line.
    var made: @Sendable (String) -> String
    /// (run, resumed): the run page's first line.
    var runLine: @Sendable (String, Bool) -> String
    var sidesHeading: String
    /// Side, Path, Writable.
    var sideColumns: [String]
    /// (kind): after a side's path.
    var kind: @Sendable (SideKindName) -> String
    var writable: String
    var notWritableWord: String
    /// (why): after the word that says a side is not writable.
    var notWritableSuffix: @Sendable (String) -> String
    /// (number of actions)
    var actionsHeading: @Sendable (Int) -> String
    /// Id, Title, Action, Outcome, Why: the actions' columns, before the last.
    var actionColumns: [String]
    /// The last column of a plan's actions, and of a run's.
    var choiceColumn: String
    var happenedColumn: String
    /// (action, the side whose version wins): `copy →`.
    var actionLabel: @Sendable (PlanAction.Kind, SideRole?) -> String
    var outcomeLabel: @Sendable (ApplyResult.Outcome, ApplyResult.Mode) -> String
    /// How wide the action and outcome columns of the terminal are.
    var actionWidth: Int
    var outcomeWidth: Int
    /// (whether a choice is said before it): before a conflict copy's id.
    var conflictCopy: @Sendable (Bool) -> String
    /// A plan with no action.
    var nothingToDo: String
    /// (actions of each kind, how many overwrite or delete): the plan's totals.
    var planTotals: @Sendable ([PlanAction.Kind: Int], Int) -> [String]
    /// A run of a plan with no action.
    var nothingDone: String
    /// (actions, each outcome in order with its count, mode): the run's totals.
    var resultTotals: @Sendable (Int, [(ApplyResult.Outcome, Int)], ApplyResult.Mode) -> String
    /// (local label, remote label): what the arrows mean, in the table's first line.
    var directions: @Sendable (String, String) -> String
    /// The same as a sentence of its own, on the pages.
    var directionsSentence: @Sendable (String, String) -> String
    /// (where plan.json is, the command that applies it, or nil when there is nothing to apply).
    var planWritten: @Sendable (String, String?) -> String
    /// (the side's label): said before a plan's actions when apply cannot reach
    /// that side again (its connection string holds a secret), and how to apply instead.
    var cannotApply: @Sendable (String) -> String
    var chooseConflicts: String
    var backupsHeading: String
    var notesHeading: String
    /// Undo: nothing was put back, or (the backups' folder) where it came from.
    var nothingPutBack: String
    var restoredFrom: @Sendable (String) -> Spans
    /// Apply: nothing was written, or (the backups' folder, the undo command).
    var nothingBackedUp: String
    var backupsAt: @Sendable (String, String) -> Spans
    /// (number of conflicts)
    var conflictsHeading: @Sendable (Int) -> String
    /// (the choice)
    var chosen: @Sendable (String) -> String
    /// Title, Modified, Archived, Deleted; then Text.
    var versionRows: [String]
    var textRow: String
    var absent: String
    var no: String
    /// Asking at a terminal: the heading, (action label, id, side label, reason) per action, the question.
    var confirmHeading: String
    var confirmLine: @Sendable (String, String, String, String) -> String
    var confirmQuestion: String

    /// The table for a language code; English for any code not known.
    package static func forLanguage(_ code: String) -> RepairStrings { code == "ja" ? .ja : .en }

}

// MARK: - English

extension RepairStrings {
    package static let en: RepairStrings = {
        @Sendable func conflicted(_ changed: Difference.Changed, _ local: String, _ remote: String, _ agreed: Timestamp?) -> String {
            let since = agreed.map { "since they last agreed on \($0.day)" } ?? "since they last agreed"
            switch changed {
            case .both: return "changed on both \(local) and \(remote) \(since)"
            case .neither: return "different, though neither side changed \(since)"
            default: return "\(local) and \(remote) never agreed on it (a deep reconcile with a state folder remembers when they do)"
            }
        }
        @Sendable func moved(_ move: PlanReason.Move, _ side: String, _ other: String, _ agreed: Timestamp?) -> String {
            guard let agreed else { return "only on \(side), and the sides never agreed on it" }
            let what =
                switch move {
                case .added: "added"
                case .edited: "edited"
                case .archived: "archived or unarchived"
                case .kept: "kept (not deleted)"
                case .deleted: "deleted"
                }
            return "\(what) on \(side) since they last agreed on \(agreed.day); unchanged on \(other)"
        }
        @Sendable func conflictNote(_ note: ConflictNote) -> String {
            switch note {
            case .takeBothSameTime(let id): "--take \(id)=both cannot tell which version is newer (the same time on both sides); take local or remote"
            case .preferNewerSameTime: "--prefer newer cannot tell which version is newer (the same time on both sides); choose with --take"
            case .preferWouldDelete(let side, let label, let id):
                "--prefer \(side.rawValue) does not delete a memo \(label) never had; choose with --take \(id)=\(side.rawValue) to delete it"
            }
        }
        @Sendable func notWritable(_ why: NotWritable, _ label: String) -> String {
            switch why {
            case .readOnly: "\(label) is marked \"readOnly\": true"
            case .kind(let kind): kind.kind?.neverWritten(label, language: "en") ?? "\(label) is \(kind.words), which reckon never writes"
            case .other(let words): words
            }
        }
        @Sendable func failures(_ failures: [PutBackFailure]) -> String {
            failures.map { "\($0.path) could not be put back (\($0.error)); its backup is in \($0.backup)" }.joined(separator: "; ")
        }
        @Sendable func putBack(_ failed: [PutBackFailure]) -> String { failed.isEmpty ? "the memo file was put back as it was" : failures(failed) }
        @Sendable func undone(_ undone: ApplyDetail.Undone) -> String {
            switch undone {
            case .nothing: ""
            case .putBack: "; what was written for this memo was put back"
            case .failures(let failed): "; " + failures(failed)
            }
        }
        @Sendable func shown(_ place: FilePlace) -> String { "\(place.path) on \(place.side ?? "the state folder")" }
        @Sendable func actionLabel(_ action: PlanAction.Kind, _ from: SideRole?) -> String {
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
        @Sendable func outcomeLabel(_ outcome: ApplyResult.Outcome, _ mode: ApplyResult.Mode) -> String {
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
        @Sendable func directions(_ local: String, _ remote: String) -> String { "→ from \(local) to \(remote), ← from \(remote) to \(local)" }
        let doing: [(PlanAction.Kind, String, String)] = [
            (.copy, "copy", "copies"), (.softDelete, "soft-delete", "soft-deletes"), (.fixIndex, "fix-index", "fix-indexes")
        ]
        let others: [(PlanAction.Kind, String, String)] = [
            (.conflict, "conflict to choose", "conflicts to choose"), (.notPossible, "not possible", "not possible"),
            (.none, "left alone", "left alone")
        ]
        return RepairStrings(
            code: "en",
            reason: { why in
                switch why {
                case .cannotCompare(let problems):
                    "cannot be compared (\(problems.map { "\($0.side): \($0.problems.joined(separator: "; "))" }.joined(separator: "; "))); nothing is done"
                case .conflict(let changed, let local, let remote, let id, let note, let agreed):
                    conflicted(changed, local, remote, agreed) + "; choose with --take \(id)=local|remote|both or --prefer"
                        + (note.map { ". " + conflictNote($0) } ?? "")
                case .orphanFile(let path, let side): "\(path) on \(side) is a valid memo with no entry in index.json; its entry is added"
                case .orphanUnreadable(let path, let side):
                    "\(path) on \(side) has no entry in index.json, and cannot be read as a memo; nothing is done"
                case .indexDisagrees(let path, let side):
                    "the entry of \(path) in index.json on \(side) disagrees with the memo file; the entry is set from the file's own fields"
                case .followed(let move, let side, let other, let agreed):
                    moved(move, side, other, agreed) + ": " + (move == .deleted ? "marked deleted on \(other) too" : "copied to \(other)")
                case .replaced(let move, let side, let other, let deletes, let agreed):
                    moved(move, side, other, agreed) + "; "
                        + (deletes ? "marked deleted on \(side) instead" : "\(other)'s version is copied to \(side) instead")
                case .settled(let changed, let local, let remote, let from, let to, let deletes, let keepsCopy, let agreed):
                    conflicted(changed, local, remote, agreed) + "; " + (deletes ? "marked deleted on \(to)" : "\(from)'s version is copied to \(to)")
                        + (keepsCopy ? ", and \(to)'s older version is kept as a conflict copy" : "")
                case .notPossible(let side, let why, let would):
                    "not possible: \(notWritable(why, side)); it would "
                        + {
                            switch would {
                            case .addEntry: "add an index entry"
                            case .copy(let from): "copy \(from)'s version there"
                            case .markDeleted: "mark the memo deleted there"
                            }
                        }()
                case .sourceUnreadable(let side): "\(side)'s version could not be read; nothing is done"
                case .targetUnreadable(let side): "\(side)'s memo file could not be read; nothing is done"
                }
            },
            choice: { choice in
                switch choice {
                case .take(let id, let side, let label): "--take \(id)=\(side.rawValue): \(label)'s version is kept"
                case .takeBoth(let id, let newer):
                    "--take \(id)=both: \(newer)'s newer version keeps the id, the older one is kept as a conflict copy"
                case .takeBothNoCopy(let id, let holder, let taken):
                    "--take \(id)=both: \(holder) holds no live version to keep as a conflict copy, so \(taken)'s is taken"
                case .prefer(let side, let label): "--prefer \(side.rawValue): \(label)'s version is kept"
                case .preferNewer(let label): "--prefer newer: \(label)'s version is newer"
                }
            },
            notWritable: notWritable,
            detail: { detail in
                switch detail {
                case .notConfirmed: "it deletes or overwrites, and was not confirmed (--yes); nothing was written"
                case .fileChanged(let path, let side, let then, let now):
                    "\(path) on \(side) changed since the plan (\(Execution.describe(then)) then, \(Execution.describe(now)) now); left as it is"
                case .sourceChanged(let path, let side): "\(path) on \(side), the version to copy, changed since the plan; nothing was written"
                case .sourceEntryChanged(let id, let side):
                    "the index.json entry of \(id) on \(side), the version to copy, changed since the plan; nothing was written"
                case .otherSpelling(let path, let side):
                    "\(path) on \(side) holds this memo under another spelling of its id since the plan; nothing was written"
                case .describedFileChanged(let path, let side, let then, let now):
                    "\(path) on \(side) changed since the plan (\(Execution.describe(then)) then, \(Execution.describe(now)) now); its entry was not added"
                case .entryChanged(let id, let side): "the index.json entry of \(id) on \(side) changed since the plan; nothing was written"
                case .unreadable(let error): "could not be read again before writing: \(error); nothing was written"
                case .backupFailed(let path, let side, let error):
                    "the backup of \(path) on \(side) could not be made (\(error)); nothing was written for this memo"
                case .journalFailed(let failed):
                    "the journal cannot be written, so nothing more is written" + (failed.isEmpty ? "" : "; " + failures(failed))
                case .changedWhileWriting(let path, let side, let what):
                    "\(path) on \(side) changed while it was being written; it was left as the other writer left it" + undone(what)
                case .writeFailed(let path, let side, let error, let what): "\(path) on \(side) could not be written (\(error))" + undone(what)
                case .entryChangedWhileWriting(let id, let side, let failed):
                    "the index.json entry of \(id) on \(side) changed while the memo was written; " + putBack(failed)
                case .indexFailed(let trouble, let side, let failed):
                    {
                        switch trouble {
                        case .keptChanging: "index.json kept changing while reckon merged into it"
                        case .unreadableAgain(let error): "index.json could not be read again (\(error))"
                        case .gone: "index.json is gone"
                        case .unreadableNow(let error): "index.json cannot be read now (\(error))"
                        case .notEditable(let error): "index.json could not be edited (\(error))"
                        case .backupFailed(let error): "the backup of index.json could not be made (\(error))"
                        case .journal: "the journal cannot be written"
                        case .writeFailed(let error): "index.json could not be written (\(error))"
                        }
                    }() + " on \(side); " + putBack(failed)
                }
            },
            note: { note in
                switch note {
                case .removedTemporary(let name, let side): "removed \(name) on \(side), a temporary file a killed run left"
                case .removedStateTemporary(let path): "removed \(path) in the state folder, a temporary file a killed run left"
                case .sideLeftWhole(let path, let side):
                    "\(path) on \(side) changed after the apply; nothing of \(side) was put back (nor its baseline), so that its memo files and index entries still agree"
                case .unreadable(let place, let error): "\(shown(place)) could not be read (\(error)); it was not put back"
                case .changedAfterApply(let place, let backup):
                    "\(shown(place)) changed after the apply; it was left as it is" + (backup.map { ", and its backup is \($0)" } ?? "")
                case .backupNotTheFile(let backup, let place):
                    "the backup \(backup) is not the file it was made from; \(shown(place)) was left as it is"
                case .notPutBack(let place, let error, let backup):
                    "\(shown(place)) could not be put back (\(error))" + (backup.map { "; its backup is \($0)" } ?? "")
                case .journalNotWritten(let path, let error):
                    "the journal \(path) could not be written (\(error)); finish with reckon apply --resume, or undo the run"
                case .stateNotWritten(let path, let error):
                    "\(path) could not be written (\(error)); the sides are as this run left them, and the next deep run saves it again"
                }
            },
            describe: { Execution.describe($0) },
            place: shown,
            planTitle: { "reckon plan" + ($0.map { ": \($0)" } ?? "") },
            runTitle: { mode, pipeline in "reckon \(mode.rawValue)" + (pipeline.map { ": \($0)" } ?? "") },
            planHeader: { pipeline, made, directions in "Plan" + (pipeline.map { " for \($0)" } ?? "") + ", made \(made) (\(directions)):" },
            runHeader: { mode, run, pipeline, resumed, directions in
                (mode == .apply ? "Apply" : "Undo") + " run \(run)" + (pipeline.map { " of \($0)" } ?? "") + (resumed ? ", resumed" : "")
                    + " (\(directions)):"
            },
            made: { "Made \($0)." },
            runLine: { run, resumed in "Run \(run)" + (resumed ? ", resumed after an interruption." : ".") },
            sidesHeading: "Sides", sideColumns: ["Side", "Path", "Writable"],
            kind: { " (\($0.words))" },
            writable: "yes", notWritableWord: "no", notWritableSuffix: { ": \($0)" },
            actionsHeading: { "Actions (\($0))" },
            actionColumns: ["Id", "Title", "Action", "Outcome", "Why"], choiceColumn: "Choice", happenedColumn: "What happened",
            actionLabel: actionLabel, outcomeLabel: outcomeLabel, actionWidth: 15, outcomeWidth: 25,
            conflictCopy: { $0 ? "; conflict copy " : "conflict copy " },
            nothingToDo: "Nothing to do: every memo is the same on both sides.",
            planTotals: { totals, destructive in
                let done = doing.reduce(0) { $0 + totals[$1.0, default: 0] }
                var line =
                    done == 0
                    ? "No action"
                    : counted(done, "action", "actions") + ": "
                        + doing.compactMap { kind, one, many in totals[kind].map { counted($0, one, many) } }.joined(separator: ", ")
                for (kind, one, many) in others { if let n = totals[kind] { line += "; " + counted(n, one, many) } }
                guard destructive > 0 else { return [line] }
                return [
                    line,
                    (destructive == 1 ? "1 of them overwrites or deletes" : "\(destructive) of them overwrite or delete")
                        + " a memo, so apply asks to confirm (or --yes)."
                ]
            },
            nothingDone: "No action in the plan: nothing was done.",
            resultTotals: { total, counts, mode in
                counted(total, "action", "actions") + ": "
                    + counts.map { outcome, n in "\(n) \(outcomeLabel(outcome, mode).lowercased())" }.joined(separator: ", ")
            },
            directions: directions,
            directionsSentence: { directions($0, $1) + "." },
            planWritten: { path, command in
                command.map { "Plan written to \(path); carry it out with: \($0)" } ?? "Plan written to \(path)."
            },
            cannotApply: { label in
                "reckon apply cannot carry out this plan: \(label) is given as a connection string that holds a secret, which a plan never keeps. "
                    + "To apply, name the remote in an rclone config (rclone config create NAME …) and give it as NAME:path, "
                    + "or use a pipeline definition, then plan again."
            },
            chooseConflicts:
                "Choose for each conflict with --take ID=local|remote|both, --choices FILE (saved from the report's page), or --prefer newer|local|remote, and plan again.",
            backupsHeading: "Backups", notesHeading: "Notes",
            nothingPutBack: "Nothing was put back.",
            restoredFrom: { [.text("Restored from the backups in "), .code($0), .text(".")] },
            nothingBackedUp: "Nothing was written, so nothing was backed up.",
            backupsAt: { folder, command in [.text("Backups are in "), .code(folder), .text("; undo it with: "), .code(command)] },
            conflictsHeading: { "Conflicts (\($0))" },
            chosen: { "Chosen: \($0)" },
            versionRows: ["Title", "Modified", "Archived", "Deleted"], textRow: "Text", absent: "absent", no: "no",
            confirmHeading: "These actions delete or overwrite:",
            confirmLine: { action, id, side, reason in "  \(action) \(id) on \(side): \(reason)" },
            confirmQuestion: "Type yes to carry them out (anything else skips them): ")
    }()
}

/// How many columns a terminal gives `text`: two for a wide character
/// (CJK, kana, full-width forms), one for any other.
func displayWidth(_ text: String) -> Int {
    text.reduce(0) { width, character in
        let value = character.unicodeScalars.first!.value
        let wide =
            (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value) || (0xAC00...0xD7A3).contains(value)
            || (0xF900...0xFAFF).contains(value) || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
            || (0xFFE0...0xFFE6).contains(value) || (0x20000...0x3FFFD).contains(value)
        return width + (wide ? 2 : 1)
    }
}

// MARK: - A run that found everything already done

extension RepairStrings {
    /// An apply run that wrote no memo file, every action of its plan being already done.
    var alreadyDoneNoBackup: String {
        code == "ja"
            ? "計画の操作はすべて適用済みでした。メモのファイルを書き込んでいないため、バックアップは不要で、この実行で取り消すものもありません。"
            : "Everything in the plan was already done: no memo file was written, so no backup was needed and this run has nothing to undo."
    }

    /// (run): undo of an apply run that changed no memo.
    func undoWroteNothing(_ run: String) -> String {
        code == "ja"
            ? "実行 \(run) はメモを変更していません（計画の操作はすでに適用済みか、実行されませんでした）。取り消すものはありません。"
            : "Run \(run) changed no memo (the actions of its plan were already done, or not carried out), so there is nothing to undo."
    }
}
