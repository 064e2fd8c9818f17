/// The repair side in Japanese: the same sentences as `RepairStrings.en`,
/// one for one.
extension RepairStrings {
    package static let ja: RepairStrings = {
        @Sendable func conflicted(_ changed: Difference.Changed, _ local: String, _ remote: String, _ agreed: Timestamp?) -> String {
            let since = agreed.map { "\($0.day)に一致して以降" } ?? "最後に一致して以降"
            switch changed {
            case .both: return "\(since)、\(local)と\(remote)の両方で変更されています"
            case .neither: return "異なりますが、\(since)どちらも変更されていません"
            default: return "\(local)と\(remote)は一度も一致したことがありません（状態フォルダを使う詳細な照合で一致が記録されます）"
            }
        }
        @Sendable func moved(_ move: PlanReason.Move, _ side: String, _ other: String, _ agreed: Timestamp?) -> String {
            guard let agreed else { return "\(side)にだけあり、両側が一致したことはありません" }
            let what =
                switch move {
                case .added: "追加され"
                case .edited: "編集され"
                case .archived: "アーカイブまたはアーカイブ解除され"
                case .kept: "削除されずに残され"
                case .deleted: "削除され"
                }
            return "\(agreed.day)に一致して以降、\(side)で\(what)、\(other)では変わっていません"
        }
        @Sendable func conflictNote(_ note: ConflictNote) -> String {
            switch note {
            case .takeBothSameTime(let id): "--take \(id)=both では、どちらの版が新しいか判断できません（両側で同じ日時）。local か remote を選んでください。"
            case .preferNewerSameTime: "--prefer newer では、どちらの版が新しいか判断できません（両側で同じ日時）。--take で選んでください。"
            case .preferWouldDelete(let side, let label, let id):
                "--prefer \(side.rawValue) は、\(label)に一度もなかったメモを削除しません。削除するには --take \(id)=\(side.rawValue) を選んでください。"
            }
        }
        @Sendable func notWritable(_ why: NotWritable, _ label: String) -> String {
            switch why {
            case .readOnly: "\(label)には \"readOnly\": true が指定されています"
            case .kind(let kind): kind.kind?.neverWritten(label, language: "ja") ?? "\(label)（\(kind.name)）には reckon は書き込みません"
            case .other(let words): words
            }
        }
        @Sendable func failures(_ failures: [PutBackFailure]) -> String {
            failures.map { "\($0.path) を元に戻せませんでした（\($0.error)）。バックアップは \($0.backup) にあります。" }.joined()
        }
        @Sendable func putBack(_ failed: [PutBackFailure]) -> String { failed.isEmpty ? "メモのファイルは元に戻しました。" : failures(failed) }
        @Sendable func undone(_ undone: ApplyDetail.Undone) -> String {
            switch undone {
            case .nothing: ""
            case .putBack: "このメモに書き込んだものは元に戻しました。"
            case .failures(let failed): failures(failed)
            }
        }
        @Sendable func describe(_ tag: FileTag?) -> String {
            guard let tag else { return "なし" }
            return "\(tag.size)バイト、sha256 \(tag.sha256.prefix(12))…" + (tag.modified.map { "、更新 \($0.iso8601)" } ?? "")
        }
        @Sendable func changed(_ then: FileTag?, _ now: FileTag?) -> String { "（計画時: \(describe(then))、現在: \(describe(now))）" }
        @Sendable func shown(_ place: FilePlace) -> String { "\(place.side ?? "状態フォルダ")の \(place.path)" }
        @Sendable func actionLabel(_ action: PlanAction.Kind, _ from: SideRole?) -> String {
            let arrow = from.map { $0 == .local ? " →" : " ←" } ?? ""
            return switch action {
            case .copy: "コピー" + arrow
            case .softDelete: "削除済みにする" + arrow
            case .fixIndex: "索引を修復"
            case .conflict: "競合"
            case .notPossible: "実行不可"
            case .none: "何もしない"
            }
        }
        @Sendable func outcomeLabel(_ outcome: ApplyResult.Outcome, _ mode: ApplyResult.Mode) -> String {
            switch outcome {
            case .applied: "適用済み"
            case .alreadyDone: "すでに適用済み"
            case .changedSince: mode == .undo ? "適用後に変更あり" : "計画後に変更あり"
            case .notConfirmed: "未確認"
            case .failed: "失敗"
            case .conflict: "競合"
            case .notPossible: "実行不可"
            case .nothing: "何もしない"
            case .restored: "復元済み"
            }
        }
        @Sendable func directions(_ local: String, _ remote: String) -> String { "→ は\(local)から\(remote)へ、← は\(remote)から\(local)へ" }
        let doing: [(PlanAction.Kind, String)] = [(.copy, "コピー"), (.softDelete, "削除済みにする"), (.fixIndex, "索引を修復")]
        let others: [(PlanAction.Kind, String)] = [(.conflict, "選ぶ必要のある競合"), (.notPossible, "実行不可"), (.none, "何もしないもの")]
        return RepairStrings(
            code: "ja",
            reason: { why in
                switch why {
                case .cannotCompare(let problems):
                    "比較できません（\(problems.map { "\($0.side): \($0.problems.joined(separator: "; "))" }.joined(separator: "; "))）。何もしません。"
                case .conflict(let changed, let local, let remote, let id, let note, let agreed):
                    conflicted(changed, local, remote, agreed) + "。--take \(id)=local|remote|both か --prefer で選んでください。"
                        + (note.map(conflictNote) ?? "")
                case .orphanFile(let path, let side): "\(side)の \(path) は正しいメモですが、index.json に項目がありません。項目を追加します。"
                case .orphanUnreadable(let path, let side): "\(side)の \(path) は index.json に項目がなく、メモとしても読み込めません。何もしません。"
                case .indexDisagrees(let path, let side): "\(side)の index.json の \(path) の項目がメモのファイルと食い違っています。ファイルの値に合わせて項目を直します。"
                case .followed(let move, let side, let other, let agreed):
                    moved(move, side, other, agreed) + "。" + (move == .deleted ? "\(other)でも削除済みにします。" : "\(other)にコピーします。")
                case .replaced(let move, let side, let other, let deletes, let agreed):
                    moved(move, side, other, agreed) + "。" + (deletes ? "代わりに\(side)で削除済みにします。" : "代わりに\(other)の版を\(side)にコピーします。")
                case .settled(let changed, let local, let remote, let from, let to, let deletes, let keepsCopy, let agreed):
                    conflicted(changed, local, remote, agreed) + "。" + (deletes ? "\(to)で削除済みにします。" : "\(from)の版を\(to)にコピーします。")
                        + (keepsCopy ? "\(to)の古い版は競合コピーとして残します。" : "")
                case .notPossible(let side, let why, let would):
                    "実行できません: \(notWritable(why, side))。本来は"
                        + {
                            switch would {
                            case .addEntry: "\(side)の index.json に項目を追加する"
                            case .copy(let from): "\(from)の版を\(side)にコピーする"
                            case .markDeleted: "\(side)でメモを削除済みにする"
                            }
                        }() + "操作です。"
                case .sourceUnreadable(let side): "\(side)の版を読み込めませんでした。何もしません。"
                case .targetUnreadable(let side): "\(side)のメモのファイルを読み込めませんでした。何もしません。"
                }
            },
            choice: { choice in
                switch choice {
                case .take(let id, let side, let label): "--take \(id)=\(side.rawValue): \(label)の版を残します"
                case .takeBoth(let id, let newer): "--take \(id)=both: \(newer)の新しい版がこの ID を使い、古い版は競合コピーとして残します"
                case .takeBothNoCopy(let id, let holder, let taken):
                    "--take \(id)=both: \(holder)には競合コピーとして残せる版がないため、\(taken)の版を使います"
                case .prefer(let side, let label): "--prefer \(side.rawValue): \(label)の版を残します"
                case .preferNewer(let label): "--prefer newer: \(label)の版のほうが新しいため残します"
                }
            },
            notWritable: notWritable,
            detail: { detail in
                switch detail {
                case .notConfirmed: "削除または上書きを伴い、確認されていない（--yes がない）ため、何も書き込んでいません。"
                case .fileChanged(let path, let side, let then, let now):
                    "\(side)の \(path) が計画のあとに変わりました\(changed(then, now))。そのままにしています。"
                case .sourceChanged(let path, let side): "コピー元である\(side)の \(path) が計画のあとに変わりました。何も書き込んでいません。"
                case .sourceEntryChanged(let id, let side):
                    "コピー元である\(side)の index.json で \(id) の項目が計画のあとに変わりました。何も書き込んでいません。"
                case .otherSpelling(let path, let side):
                    "計画のあと、\(side)に、このメモが別の書き方の ID で置かれました（\(path)）。何も書き込んでいません。"
                case .describedFileChanged(let path, let side, let then, let now):
                    "\(side)の \(path) が計画のあとに変わりました\(changed(then, now))。項目は追加していません。"
                case .entryChanged(let id, let side): "\(side)の index.json で \(id) の項目が計画のあとに変わりました。何も書き込んでいません。"
                case .unreadable(let error): "書き込む前に読み直せませんでした（\(error)）。何も書き込んでいません。"
                case .backupFailed(let path, let side, let error):
                    "\(side)の \(path) のバックアップを作れませんでした（\(error)）。このメモには何も書き込んでいません。"
                case .journalFailed(let failed): "ジャーナルに書き込めないため、これ以上は書き込みません。" + failures(failed)
                case .changedWhileWriting(let path, let side, let what):
                    "\(side)の \(path) が書き込みの途中で変わりました。ほかの書き手が残したままにしています。" + undone(what)
                case .writeFailed(let path, let side, let error, let what): "\(side)の \(path) に書き込めませんでした（\(error)）。" + undone(what)
                case .entryChangedWhileWriting(let id, let side, let failed):
                    "メモの書き込み中に、\(side)の index.json で \(id) の項目が変わりました。" + putBack(failed)
                case .indexFailed(let trouble, let side, let failed):
                    "\(side): "
                        + {
                            switch trouble {
                            case .keptChanging: "reckon が書き加える間も index.json が変わり続けました"
                            case .unreadableAgain(let error): "index.json を読み直せませんでした（\(error)）"
                            case .gone: "index.json がなくなっています"
                            case .unreadableNow(let error): "index.json を今は読み込めません（\(error)）"
                            case .notEditable(let error): "index.json を書き換えられませんでした（\(error)）"
                            case .backupFailed(let error): "index.json のバックアップを作れませんでした（\(error)）"
                            case .journal: "ジャーナルに書き込めません"
                            case .writeFailed(let error): "index.json に書き込めませんでした（\(error)）"
                            }
                        }() + "。" + putBack(failed)
                }
            },
            note: { note in
                switch note {
                case .removedTemporary(let name, let side): "\(side)の \(name) を削除しました（中断された実行が残した一時ファイルです）。"
                case .removedStateTemporary(let path): "状態フォルダの \(path) を削除しました（中断された実行が残した一時ファイルです）。"
                case .sideLeftWhole(let path, let side):
                    "\(side)の \(path) が適用のあとに変わったため、\(side)は何も戻していません（基準も戻していません）。メモのファイルと index.json の項目が食い違わないようにするためです。"
                case .unreadable(let place, let error): "\(shown(place)) を読み込めませんでした（\(error)）。戻していません。"
                case .changedAfterApply(let place, let backup):
                    "\(shown(place)) は適用のあとに変わったため、そのままにしています。" + (backup.map { "バックアップは \($0) にあります。" } ?? "")
                case .backupNotTheFile(let backup, let place): "バックアップ \(backup) は元のファイルと一致しません。\(shown(place)) はそのままにしています。"
                case .notPutBack(let place, let error, let backup):
                    "\(shown(place)) を元に戻せませんでした（\(error)）。" + (backup.map { "バックアップは \($0) にあります。" } ?? "")
                case .journalNotWritten(let path, let error):
                    "記録 \(path) を書き込めませんでした（\(error)）。reckon apply --resume で続けるか、取り消してください。"
                case .stateNotWritten(let path, let error):
                    "\(path) を書き込めませんでした（\(error)）。両側はこの実行のとおりで、次の詳しい確認で保存し直します。"
                }
            },
            describe: describe,
            place: shown,
            planTitle: { "reckon 修復計画" + ($0.map { ": \($0)" } ?? "") },
            runTitle: { mode, pipeline in "reckon \(mode == .apply ? "適用" : "取り消し")" + (pipeline.map { ": \($0)" } ?? "") },
            planHeader: { pipeline, made, directions in (pipeline.map { "\($0)の" } ?? "") + "修復計画（\(made) 作成。\(directions)）:" },
            runHeader: { mode, run, pipeline, resumed, directions in
                (pipeline.map { "\($0)の" } ?? "") + "\(mode == .apply ? "適用" : "取り消し") \(run)" + (resumed ? "（中断のあとに再開）" : "") + "（\(directions)）:"
            },
            made: { "作成日時: \($0)" },
            runLine: { run, resumed in "実行 \(run)" + (resumed ? "（中断のあとに再開しました）" : "") },
            sidesHeading: "両側", sideColumns: ["場所", "パス", "書き込み"],
            kind: { "（\($0.kind?.japaneseDescription ?? $0.name)）" },
            writable: "可", notWritableWord: "不可", notWritableSuffix: { "（\($0)）" },
            actionsHeading: { "操作（\($0)件）" },
            actionColumns: ["ID", "タイトル", "操作", "結果", "理由"], choiceColumn: "選択", happenedColumn: "詳細",
            actionLabel: actionLabel, outcomeLabel: outcomeLabel, actionWidth: 18, outcomeWidth: 25,
            conflictCopy: { $0 ? "。競合コピー " : "競合コピー " },
            nothingToDo: "何もすることはありません。すべてのメモが両側で同じです。",
            planTotals: { totals, destructive in
                let done = doing.reduce(0) { $0 + totals[$1.0, default: 0] }
                var parts = [
                    done == 0
                        ? "操作なし"
                        : "操作\(done)件（" + doing.compactMap { kind, word in totals[kind].map { "\(word)\($0)件" } }.joined(separator: "・") + "）"
                ]
                for (kind, word) in others { if let n = totals[kind] { parts.append("\(word)\(n)件") } }
                let line = parts.joined(separator: "、") + "。"
                guard destructive > 0 else { return [line] }
                return [line, "そのうち\(destructive)件はメモを上書きまたは削除するため、apply は確認を求めます（または --yes）。"]
            },
            nothingDone: "計画に操作がないため、何もしていません。",
            resultTotals: { total, counts, mode in
                "操作\(total)件: " + counts.map { outcome, n in "\(outcomeLabel(outcome, mode))\(n)件" }.joined(separator: "、")
            },
            directions: directions,
            directionsSentence: { directions($0, $1) + "。" },
            planWritten: { path, command in
                "計画を \(path) に書き出しました。" + (command.map { "実行するには: \($0)" } ?? "")
            },
            cannotApply: { label in
                "この計画は reckon apply で実行できません。\(label)は秘密を含む接続文字列で指定されていて、計画はそれを保存しません。"
                    + "適用するには、rclone の設定にリモートを名前で登録して（rclone config create 名前 …）名前:パス で指定するか、"
                    + "パイプライン定義を使い、計画し直してください。"
            },
            chooseConflicts: "競合ごとに --take ID=local|remote|both、--choices FILE（レポートのページで保存したもの）か --prefer newer|local|remote で選んでから、もう一度計画してください。",
            backupsHeading: "バックアップ", notesHeading: "注記",
            nothingPutBack: "何も戻していません。",
            restoredFrom: { [.code($0), .text(" のバックアップから戻しました。")] },
            nothingBackedUp: "何も書き込んでいないため、バックアップもありません。",
            backupsAt: { folder, command in [.text("バックアップは "), .code(folder), .text(" にあります。取り消すには: "), .code(command)] },
            conflictsHeading: { "競合（\($0)件）" },
            chosen: { "選択: \($0)" },
            versionRows: ["タイトル", "更新日時", "アーカイブ", "削除"], textRow: "本文", absent: "なし", no: "いいえ",
            confirmHeading: "次の操作はメモを削除または上書きします:",
            confirmLine: { action, id, side, reason in "  \(side)の \(id): \(action)（\(reason)）" },
            confirmQuestion: "実行するには yes と入力してください（それ以外なら飛ばします）: ")
    }()
}
