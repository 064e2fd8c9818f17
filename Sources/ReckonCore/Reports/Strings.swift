/// Every sentence and word a person reads in a summary or report, as one
/// table per language (`en`, `ja`). The terminal, Markdown and HTML
/// renderers all take their words from here. A problem's own message (what
/// exactly is wrong with one file) stays in English; a report in another
/// language says in its own words what kind of problem it is first.
package struct Strings: Sendable {
    package typealias Count = @Sendable (Int) -> String
    /// (number of memos, local label, remote label)
    package typealias Drift = @Sendable (Int, String, String) -> String

    package var code: String
    package var defaultLocalLabel: String
    package var defaultRemoteLabel: String
    package var title: @Sendable (String) -> String
    package var memosOn: @Sendable (String) -> String
    package var active: String
    package var archived: String
    /// (remote count, local count): `5 (local 4)`.
    package var drifted: @Sendable (Int, Int) -> String
    /// The word beside a drifted count, so colour is never the only sign.
    package var differs: String
    package var notRead: String
    package var onlyOnRemote: Drift
    package var onlyOnLocal: Drift
    package var archivedOnOneSide: Drift
    package var deletedOnOneSide: Drift
    package var changed: Drift
    /// (number of memos, remote label, whether a side is the app's store, whose memos are rows)
    package var cannotCompare: @Sendable (Int, String, Bool) -> String
    /// (label, reason)
    package var sideFailed: @Sendable (String, String) -> String
    /// (label, number of problems)
    package var sideHasProblems: @Sendable (String, Int) -> String
    /// (local label, remote labels)
    package var inSync: @Sendable (String, [String]) -> String
    package var empty: @Sendable (String, [String]) -> String
    /// (label, reason)
    package var rebuiltFromMemoFiles: @Sendable (String, String) -> String
    package var quarantined: Count
    package var quarantineFailed: Count
    package var exportMissing: Count
    package var checkedAt: @Sendable (String) -> String
    /// (kind, local label, remote label): a difference in a few words.
    package var kind: @Sendable (Difference.Kind, String, String) -> String
    /// (label of the only side that archived or deleted it)
    package var archivedOnlyOn: @Sendable (String) -> String
    package var deletedOnlyOn: @Sendable (String) -> String
    /// A field that differs, in words a person knows (`body`: "text changed").
    package var fieldChanged: @Sendable (String) -> String
    /// (number left out, file that lists them)
    package var andMore: @Sendable (Int, String) -> String
    /// (number left out) when no file lists them.
    package var andMoreUnlisted: Count
    /// How a remote's memo files were had: (label, downloaded, from the cache, the cache is temporary).
    package var cacheUse: @Sendable (String, Int, Int, Bool) -> String
    package var status: @Sendable (SideStatus) -> String
    /// (status, number of problems): `ok, 3 problems`.
    package var statusWithProblems: @Sendable (SideStatus, Int) -> String
    /// (what went wrong): the export could not be written.
    package var exportFailed: @Sendable (String) -> String
    /// The heading of the sigils' legend, and (local label, remote labels,
    /// whether a side is the app's store) each sigil's meaning, in the order `=`, `-`, `+`, `*`, `!`.
    package var legendHeading: String
    package var sigilMeanings: @Sendable (String, String, Bool) -> [String]
    /// A run in the chart that ended in trouble.
    package var troubleRun: String
    /// "error" or "warning".
    package var severity: @Sendable (Problem.Severity) -> String
    /// Why a problem is one: its message, after its kind in words of the language.
    package var reason: @Sendable (Problem) -> String
    /// Before a memo an export left out.
    package var notExported: String
    /// (memos, bytes) of one export file.
    package var exportSize: @Sendable (Int, Int) -> String
    package var differencesHeading: String
    package var problemsHeading: String
    package var sourcesHeading: String
    package var exportsHeading: String
    package var quarantinedHeading: String
    package var timingsHeading: String
    package var historyHeading: String
    package var sideColumn: String
    package var pathColumn: String
    package var statusColumn: String
    package var titleColumn: String
    package var whatDiffersColumn: String
    package var fileColumn: String
    package var copyColumn: String
    package var whyColumn: String
    package var memosColumn: String
    package var bytesColumn: String
    package var stageColumn: String
    package var secondsColumn: String
    package var timeColumn: String
    package var modified: String
    package var archivedState: String
    package var deletedState: String
    package var absent: String
    /// (label, memos gone, memos at the baseline, whether none is left, the baseline's time,
    /// whether the run exports): the alarm, the first sentence of every report.
    package var deletionAlarm: @Sendable (String, Int, Int, Bool, String, Bool) -> String
    /// (label, memos gone, memos at the baseline, the baseline's time): an alarm a person accepted.
    package var deletionsAccepted: @Sendable (String, Int, Int, String) -> String
    /// (label, the other side's path): a baseline of another side, not used.
    package var baselineOfAnotherSide: @Sendable (String, String) -> String
    /// (label, why): a baseline that could not be read, not used.
    package var baselineUnreadable: @Sendable (String, String) -> String
    /// (local label, remote label, the sides it belongs to): a pair's last agreement of other sides, not used.
    package var agreementOfOtherSides: @Sendable (String, String, String) -> String
    /// (local label, remote label, the file and why): a pair's last agreement that could not be read, not used.
    package var agreementUnreadable: @Sendable (String, String, String) -> String
    /// (the baseline's time): the heading of a side's changes since then.
    package var sinceLastRun: @Sendable (String) -> String
    /// What moved on a side since the baseline, in counts.
    package var changeCounts: @Sendable (SinceLastRun) -> String
    /// Drift sentences that know which side moved: the remote gained memos,
    /// the local side lost memos the remote still has, the local side gained
    /// memos, the remote lost memos the local side still has, and both
    /// sides changed memos (a conflict).
    package var remoteGained: Drift
    package var localLost: Drift
    package var localGained: Drift
    package var remoteLost: Drift
    package var conflict: Drift
    /// (which side changed it since they last agreed, the difference's kind, local label, remote
    /// label, the day they last agreed): a difference's direction in a few words; a memo on one
    /// side only was new on the side that has it, or deleted on the side that does not. Nothing
    /// for a memo the sides never agreed on.
    package var moved: @Sendable (Difference.Changed, Difference.Kind, String, String, String?) -> String?

    /// The table for a language code; English for any code not known.
    package static func forLanguage(_ code: String) -> Strings { code == "ja" ? .ja : .en }

    package static let languages = ["en", "ja"]

    package static let en: Strings = {
        @Sendable func memos(_ n: Int) -> String { counted(n, "memo") }
        @Sendable func isAre(_ n: Int) -> String { n == 1 ? "is" : "are" }
        @Sendable func itThem(_ n: Int) -> String { n == 1 ? "it" : "them" }
        @Sendable func upper(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }
        return Strings(
            code: "en", defaultLocalLabel: "this device", defaultRemoteLabel: "Google Drive",
            title: { "reckon report: \($0)" },
            memosOn: { "Memos on \($0)" }, active: "Active", archived: "Archived",
            drifted: { "\($0) (local \($1))" }, differs: "differs", notRead: "not read",
            onlyOnRemote: { n, local, remote in
                "\(upper(remote)) has \(memos(n)) that \(isAre(n)) not on \(local). Sync \(local) to bring \(itThem(n)) in."
            },
            onlyOnLocal: { n, local, remote in
                "\(upper(local)) has \(memos(n)) that \(isAre(n)) not on \(remote). Sync \(local) to upload \(itThem(n)) to \(remote)."
            },
            archivedOnOneSide: { n, local, remote in
                "\(upper(memos(n))) \(isAre(n)) archived on one side only. Sync \(local) so that \(local) and \(remote) agree which memos are archived."
            },
            deletedOnOneSide: { n, _, _ in
                "\(upper(memos(n))) \(n == 1 ? "was" : "were") deleted on one side only. Sync to carry the deletion over, or restore \(itThem(n)) from the side that still has \(itThem(n))."
            },
            changed: { n, local, remote in
                "\(upper(memos(n))) \(n == 1 ? "differs" : "differ") between \(local) and \(remote). Choose which version to keep in the choices of report.html, or with reckon plan --take ID=local|remote|both; reckon never chooses on its own."
            },
            cannotCompare: { n, remote, store in
                "\(upper(memos(n))) could not be compared with \(remote) because \(store ? "a row of the app's store or a file" : "a file") is damaged, missing or duplicated. The problems are listed below; nothing was changed."
            },
            sideFailed: { label, reason in
                "\(upper(label)) could not be read: \(reason). Its counts are left out; fix what the problem names and run again."
            },
            sideHasProblems: { label, n in "\(upper(label)) has \(counted(n, "problem")) that \(n == 1 ? "needs" : "need") a look; see below." },
            inSync: { local, remotes in "\(upper(local)) and \(remotes.joined(separator: ", ")) agree: every memo is the same on each side." },
            empty: { local, remotes in "There are no memos yet, on \(local) or on \(remotes.joined(separator: ", "))." },
            rebuiltFromMemoFiles: { label, reason in
                "The index.json of \(label) could not be used (\(reason)), so its counts were rebuilt from the memo files."
            },
            quarantined: { n in
                "\(counted(n, "file")) could not be used and \(n == 1 ? "was" : "were") copied aside (listed below); the \(n == 1 ? "original was" : "originals were") left exactly as \(n == 1 ? "it was" : "they were")."
            },
            quarantineFailed: { n in
                "\(counted(n, "damaged file")) could not be copied aside; the \(n == 1 ? "original is" : "originals are") untouched. See the problems below."
            },
            exportMissing: { n in "The export could not be written in full: \(memos(n)) could not be read." },
            checkedAt: { "Checked \($0)." },
            kind: { kind, local, remote in
                switch kind {
                case .onlyOnRemote: "only on \(remote)"
                case .onlyOnLocal: "only on \(local)"
                case .deletedOnOneSide: "deleted on one side"
                case .archivedOnOneSide: "archived on one side"
                case .changed: "changed"
                case .cannotCompare: "cannot be compared"
                }
            },
            archivedOnlyOn: { "archived on \($0) only" },
            deletedOnlyOn: { "deleted on \($0) only" },
            fieldChanged: { field in
                switch field {
                case "title": "title changed"
                case "body": "text changed"
                case "tags": "tags changed"
                case "createdAt": "created at another time"
                case "modifiedTime", "modifiedAt": "modified at another time"
                case "archived", "archivedAt": "archived at another time"
                case "deletedAt": "deleted at another time"
                case "pinned": "pinned on one side only"
                case "changeTag": "another version"
                default: "\(field) changed"
                }
            },
            andMore: { n, file in "… and \(n) more (see \(file))" },
            andMoreUnlisted: { n in "… and \(n) more" },
            cacheUse: { label, fetched, cached, temporary in
                "\(upper(label)): \(counted(fetched, "memo file")) downloaded, \(cached) from the cache"
                    + (temporary ? " (a temporary folder, so the next run downloads them all again)." : ".")
            },
            status: { $0.rawValue },
            statusWithProblems: { status, n in n == 0 ? status.rawValue : "\(status.rawValue), \(counted(n, "problem"))" },
            exportFailed: { "The export could not be written: \($0)" },
            legendHeading: "Signs",
            sigilMeanings: { local, remote, store in
                [
                    "same on both sides", "only on \(remote)", "only on \(local)", "on both sides, different",
                    "cannot be compared (\(store ? "a row of the app's store or a file" : "a file") is damaged or missing)"
                ]
            },
            troubleRun: "ended in trouble",
            severity: { $0.rawValue },
            reason: { $0.message },
            notExported: "not exported",
            exportSize: { n, bytes in "\(memos(n)), \(counted(bytes, "byte"))" },
            differencesHeading: "Differences", problemsHeading: "Problems", sourcesHeading: "Sources", exportsHeading: "Exports",
            quarantinedHeading: "Set aside", timingsHeading: "Timings", historyHeading: "Last runs",
            sideColumn: "Side", pathColumn: "Path", statusColumn: "Status", titleColumn: "Title", whatDiffersColumn: "What differs",
            fileColumn: "File", copyColumn: "Copy", whyColumn: "Why", memosColumn: "Memos", bytesColumn: "Bytes",
            stageColumn: "Stage", secondsColumn: "Seconds", timeColumn: "Time",
            modified: "modified", archivedState: "archived", deletedState: "deleted", absent: "absent",
            deletionAlarm: { label, deleted, of, empty, time, exports in
                (empty
                    ? "Alarm: \(label) holds no memo, but held \(memos(of)) at the last run (\(time))."
                    : "Alarm: \(label) lost \(deleted) of its \(memos(of)) (\(percent(deleted, of))) since the last run (\(time)).")
                    + (exports ? " Its baseline is kept, and so is the last export made before this;" : " Its baseline is kept;")
                    + " if the deletions were meant, run again with --accept-deletions."
            },
            deletionsAccepted: { label, deleted, of, time in
                "\(upper(label)) lost \(deleted) of its \(memos(of)) since the last run (\(time)); a person accepted this with --accept-deletions, so its baseline moves on."
            },
            baselineOfAnotherSide: { label, other in
                "The last run's record of \(label) belongs to another side (\(other)), so it was not used: which side changed is not known this time."
            },
            baselineUnreadable: { label, reason in
                "The last run's record of \(label) could not be read (\(reason)), so it was not used: which side changed is not known this time."
            },
            agreementOfOtherSides: { local, remote, other in
                "The last agreement of \(local) and \(remote) in the state folder belongs to other sides (\(other)), so it was not used: each memo that differs counts as one they never agreed on, and this deep run records theirs anew."
            },
            agreementUnreadable: { local, remote, reason in
                "The last agreement of \(local) and \(remote) could not be read (\(reason)), so it was not used: each memo that differs counts as one they never agreed on."
            },
            sinceLastRun: { "Since the last run (\($0))" },
            changeCounts: { c in
                "\(c.added) added, \(c.edited) edited, \(c.archived) archived, " + (c.unarchived > 0 ? "\(c.unarchived) unarchived, " : "")
                    + "\(c.deleted) deleted"
            },
            remoteGained: { n, local, remote in
                "\(upper(remote)) gained \(memos(n)) since the sides last agreed (from another device?). Sync \(local) to bring \(itThem(n)) in."
            },
            localLost: { n, local, remote in "\(upper(local)) lost \(memos(n)) that \(remote) still has." },
            localGained: { n, local, remote in
                "\(upper(local)) gained \(memos(n)) since the sides last agreed. Sync \(local) to upload \(itThem(n)) to \(remote)."
            },
            remoteLost: { n, local, remote in "\(upper(remote)) lost \(memos(n)) that \(local) still has." },
            conflict: { n, local, remote in
                "\(upper(memos(n))) changed on both \(local) and \(remote) since they last agreed: \(n == 1 ? "a conflict" : "conflicts"). Choose which version to keep in the choices of report.html, or with reckon plan --take ID=local|remote|both; reckon never chooses on its own."
            },
            moved: { changed, kind, local, remote, day in
                guard let day else { return nil }
                let since = "since they last agreed on \(day)"
                switch (changed, kind) {
                case (.local, .onlyOnLocal): return "new on \(local) \(since)"
                case (.local, .onlyOnRemote): return "deleted on \(local) \(since)"
                case (.remote, .onlyOnRemote): return "new on \(remote) \(since)"
                case (.remote, .onlyOnLocal): return "deleted on \(remote) \(since)"
                case (.local, _): return "changed on \(local) \(since)"
                case (.remote, _): return "changed on \(remote) \(since)"
                case (.both, _): return "conflict: changed on both sides \(since)"
                case (.neither, _): return "different, though neither side changed \(since)"
                case (.unknown, _): return nil
                }
            })
    }()

    package static let ja = Strings(
        code: "ja", defaultLocalLabel: "この端末", defaultRemoteLabel: "Google Drive",
        title: { "reckon レポート: \($0)" },
        memosOn: { "\($0)のメモ" }, active: "アクティブ", archived: "アーカイブ",
        drifted: { "\($0)（端末 \($1)）" }, differs: "不一致", notRead: "読み込めませんでした",
        onlyOnRemote: { n, local, remote in "\(remote)に、\(local)にないメモが\(n)件あります。\(local)を同期すると取り込めます。" },
        onlyOnLocal: { n, local, remote in "\(local)に、\(remote)にないメモが\(n)件あります。\(local)を同期すると\(remote)にアップロードされます。" },
        archivedOnOneSide: { n, local, remote in "\(n)件のメモが片方でだけアーカイブされています。\(local)を同期して、\(local)と\(remote)のアーカイブをそろえてください。" },
        deletedOnOneSide: { n, _, _ in "\(n)件のメモが片方でだけ削除されています。同期して削除を反映するか、残っている側から復元してください。" },
        changed: { n, local, remote in
            "\(n)件のメモが\(local)と\(remote)で異なります。残す版は report.html の選択か reckon plan --take ID=local|remote|both で選んでください。reckon が自分で選ぶことはありません。"
        },
        cannotCompare: { n, remote, store in
            "\(n)件のメモは、\(store ? "アプリのデータベースの行かファイル" : "ファイル")が壊れている・見つからない・重複しているため\(remote)と比較できませんでした。下の問題一覧を確認してください。何も変更していません。"
        },
        sideFailed: { label, reason in "\(label)を読み込めませんでした（\(reason)）。件数は表示していません。問題の箇所を確認して、もう一度実行してください。" },
        sideHasProblems: { label, n in "\(label)に確認が必要な問題が\(n)件あります。下の一覧を見てください。" },
        inSync: { local, remotes in "\(local)と\(remotes.joined(separator: "・"))は一致しています。すべてのメモが両側で同じです。" },
        empty: { local, remotes in "まだメモはありません（\(local)にも\(remotes.joined(separator: "・"))にも）。" },
        rebuiltFromMemoFiles: { label, reason in "\(label)の index.json が使えなかったため（\(reason)）、件数はメモファイルから数え直しました。" },
        quarantined: { n in "使えないファイル\(n)件を別の場所にコピーしました（下の一覧）。元のファイルはそのままです。" },
        quarantineFailed: { n in "壊れたファイル\(n)件をコピーできませんでした。元のファイルには手を触れていません。下の問題一覧を見てください。" },
        exportMissing: { n in "エクスポートを完全には書き出せませんでした。\(n)件のメモを読み込めませんでした。" },
        checkedAt: { "確認日時: \($0)" },
        kind: { kind, local, remote in
            switch kind {
            case .onlyOnRemote: "\(remote)にだけある"
            case .onlyOnLocal: "\(local)にだけある"
            case .deletedOnOneSide: "片方でだけ削除"
            case .archivedOnOneSide: "片方でだけアーカイブ"
            case .changed: "内容が異なる"
            case .cannotCompare: "比較できない"
            }
        },
        archivedOnlyOn: { "\($0)でだけアーカイブ" },
        deletedOnlyOn: { "\($0)でだけ削除" },
        fieldChanged: { field in
            switch field {
            case "title": "タイトルが異なる"
            case "body": "本文が異なる"
            case "tags": "タグが異なる"
            case "createdAt": "作成日時が異なる"
            case "modifiedTime", "modifiedAt": "更新日時が異なる"
            case "archived", "archivedAt": "アーカイブ日時が異なる"
            case "deletedAt": "削除日時が異なる"
            case "pinned": "ピン留めが片方だけ"
            case "changeTag": "版が異なる"
            default: "\(field) が異なる"
            }
        },
        andMore: { n, file in "…ほか\(n)件（\(file) を参照）" },
        andMoreUnlisted: { n in "…ほか\(n)件" },
        cacheUse: { label, fetched, cached, temporary in
            "\(label): メモのファイルを\(fetched)件ダウンロードし、\(cached)件はキャッシュから読みました"
                + (temporary ? "（一時フォルダなので、次の実行ではすべてダウンロードし直します）。" : "。")
        },
        status: { status in
            switch status {
            case .ok: "正常"
            case .degraded: "一部のみ"
            case .failed: "失敗"
            }
        },
        statusWithProblems: { status, n in
            let word =
                switch status {
                case .ok: "正常"
                case .degraded: "一部のみ"
                case .failed: "失敗"
                }
            return n == 0 ? word : "\(word)（問題\(n)件）"
        },
        exportFailed: { "エクスポートを書き出せませんでした: \($0)" },
        legendHeading: "記号",
        sigilMeanings: { local, remote, store in
            ["両方で同じ", "\(remote)にだけある", "\(local)にだけある", "両方にあるが異なる", "比較できない（\(store ? "アプリのデータベースの行かファイル" : "ファイル")が壊れているか、見つからない）"]
        },
        troubleRun: "問題あり",
        severity: { $0 == .error ? "エラー" : "警告" },
        reason: { problem in
            let kind =
                switch problem.kind {
                case .unreadableFolder: "フォルダを読み込めません"
                case .missingIndex: "index.json がありません"
                case .corruptIndex: "index.json が壊れています"
                case .unsupportedSchema: "この reckon が読めない新しい形式です"
                case .badEntry: "index.json の項目が正しくありません"
                case .invalidID: "ID が UUID ではありません"
                case .duplicateID: "同じ ID が重複しています"
                case .danglingEntry: "index.json にあるメモのファイルがありません"
                case .orphanFile: "index.json に載っていないメモのファイルです"
                case .indexDisagrees: "index.json の項目がメモのファイルと食い違っています"
                case .notRegularFile: "通常のファイルではありません"
                case .link: "リンクです（たどりません）"
                case .unreadableFile: "ファイルを読み込めません"
                case .diskTrouble: "ディスクの読み書きに失敗しました"
                case .corruptMemo: "メモのファイルが壊れています"
                case .idMismatch: "ファイル名と中身の ID が違います"
                case .nameSpelling: "ファイル名の ID の書き方が index.json と違います"
                case .exportFailed: "エクスポートできませんでした"
                case .quarantineFailed: "隔離用のコピーができませんでした"
                case .corruptStore: "端末のデータベースが壊れています"
                case .storeModel: "端末のデータベースの形が想定と違います"
                case .unreachable: "リモートから取得できませんでした"
                }
            return "\(kind)（\(problem.message)）"
        },
        notExported: "エクスポートしていません",
        exportSize: { memos, bytes in "メモ\(memos)件、\(bytes)バイト" },
        differencesHeading: "差分", problemsHeading: "問題", sourcesHeading: "読み込んだ場所", exportsHeading: "エクスポート",
        quarantinedHeading: "隔離したファイル", timingsHeading: "処理時間", historyHeading: "これまでの実行",
        sideColumn: "場所", pathColumn: "パス", statusColumn: "状態", titleColumn: "タイトル", whatDiffersColumn: "違い",
        fileColumn: "ファイル", copyColumn: "コピー", whyColumn: "理由", memosColumn: "メモ", bytesColumn: "バイト",
        stageColumn: "段階", secondsColumn: "秒", timeColumn: "日時",
        modified: "更新", archivedState: "アーカイブ済み", deletedState: "削除済み", absent: "なし",
        deletionAlarm: { label, deleted, of, empty, time, exports in
            (empty
                ? "警報: \(label)にメモが1件もありません。前回の実行（\(time)）では\(of)件ありました。"
                : "警報: \(label)のメモ\(of)件のうち\(deleted)件（\(percent(deleted, of))）が前回の実行（\(time)）から消えました。")
                + (exports ? "基準は更新せず、これより前の最後のエクスポートも残します。" : "基準は更新しません。")
                + "削除が意図したものなら --accept-deletions を付けてもう一度実行してください。"
        },
        deletionsAccepted: { label, deleted, of, time in
            "\(label)のメモ\(of)件のうち\(deleted)件が前回の実行（\(time)）から消えました。--accept-deletions で了承されたため、基準を更新します。"
        },
        baselineOfAnotherSide: { label, other in
            "\(label)の前回の記録は別の場所（\(other)）のものなので使いませんでした。今回はどちら側が変わったかわかりません。"
        },
        baselineUnreadable: { label, reason in
            "\(label)の前回の記録を読み込めなかったため（\(reason)）、使いませんでした。今回はどちら側が変わったかわかりません。"
        },
        agreementOfOtherSides: { local, remote, other in
            "状態フォルダにある\(local)と\(remote)の最後の一致の記録は別の場所（\(other)）のものなので使いませんでした。異なるメモはすべて一度も一致していないものとして扱い、この詳細な照合で記録し直します。"
        },
        agreementUnreadable: { local, remote, reason in
            "\(local)と\(remote)の最後の一致の記録を読み込めなかったため（\(reason)）、使いませんでした。異なるメモはすべて一度も一致していないものとして扱います。"
        },
        sinceLastRun: { "前回の実行（\($0)）から" },
        changeCounts: { c in
            "追加 \(c.added)・編集 \(c.edited)・アーカイブ \(c.archived)・" + (c.unarchived > 0 ? "アーカイブ解除 \(c.unarchived)・" : "") + "削除 \(c.deleted)"
        },
        remoteGained: { n, local, remote in "\(remote)に、両側が最後に一致して以降メモが\(n)件増えました（別の端末から？）。\(local)を同期すると取り込めます。" },
        localLost: { n, local, remote in "\(local)から、\(remote)にはまだあるメモが\(n)件なくなりました。" },
        localGained: { n, local, remote in "\(local)に、両側が最後に一致して以降メモが\(n)件増えました。\(local)を同期すると\(remote)にアップロードされます。" },
        remoteLost: { n, local, remote in "\(remote)から、\(local)にはまだあるメモが\(n)件なくなりました。" },
        conflict: { n, local, remote in
            "\(n)件のメモが、両側が最後に一致して以降\(local)と\(remote)の両方で変わりました（競合）。残す版は report.html の選択か reckon plan --take ID=local|remote|both で選んでください。reckon が自分で選ぶことはありません。"
        },
        moved: { changed, kind, local, remote, day in
            guard let day else { return nil }
            let since = "\(day)に一致して以降"
            switch (changed, kind) {
            case (.local, .onlyOnLocal): return "\(since)\(local)で追加"
            case (.local, .onlyOnRemote): return "\(since)\(local)で削除"
            case (.remote, .onlyOnRemote): return "\(since)\(remote)で追加"
            case (.remote, .onlyOnLocal): return "\(since)\(remote)で削除"
            case (.local, _): return "\(since)\(local)で変更"
            case (.remote, _): return "\(since)\(remote)で変更"
            case (.both, _): return "競合: \(since)両方で変更"
            case (.neither, _): return "異なるが、\(since)どちらも変更なし"
            case (.unknown, _): return nil
            }
        })
}

/// A share of a whole in whole percent, never rounded down to 0% nor up to 100%: `3 of 10` is `30%`.
package func percent(_ part: Int, _ whole: Int) -> String {
    guard whole > 0 else { return "100%" }
    let value = (part * 100 + whole / 2) / whole
    return "\(part > 0 ? max(1, part < whole ? min(99, value) : value) : 0)%"
}

// MARK: - Which remote a difference is with (a pipeline with more than one)

extension Strings {
    /// A difference's words with the remote it is with: "Google Drive: title changed".
    package func onRemote(_ remote: String, _ words: String) -> String { code == "ja" ? "\(remote)：\(words)" : "\(remote): \(words)" }

    /// A heading with the remote it is about: "Text (Google Drive)".
    package func withRemote(_ heading: String, _ remote: String) -> String { code == "ja" ? "\(heading)（\(remote)）" : "\(heading) (\(remote))" }
}
