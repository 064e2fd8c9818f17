/// The words of the part of a report where a person reviews each memo
/// that differs and chooses which version to keep, in each language.
package struct ReviewStrings: Sendable {
    /// A field's name in the versions table (`title`, `tags`, `created`, `modified`, `archived`, `deleted`, `body`).
    package var field: @Sendable (String) -> String
    /// A field that was not read because the check was quick.
    package var notReadQuick: String
    /// A side that has no such memo.
    package var notOnSide: String
    /// A time field that is not set ("no").
    package var notSet: String
    /// The mark beside a field that differs, read by a screen reader too.
    package var fieldDiffers: String
    /// (lines not shown) for a folded run of unchanged lines.
    package var folded: @Sendable (Int) -> String
    /// (bytes) when a body was too long to show whole.
    package var cut: @Sendable (Int) -> String
    /// When the page's budget for bodies is spent.
    package var notShownBudget: @Sendable (String) -> String
    /// A body shown as its first lines.
    package var firstLines: String
    /// The bodies are the same on both sides.
    package var bodySame: String
    /// (local label, remote label) which side each mark of a line diff stands for.
    package var diffMarks: @Sendable (String, String) -> String
    /// (command) the bodies differ only past what is compared, or in a last line break.
    package var differsUnseen: @Sendable (String) -> String
    /// (content level) what the report leaves out.
    package var hidden: @Sendable (ReportContent) -> String
    /// (side label) the choice that keeps that side's version.
    package var keep: @Sendable (String) -> String
    package var keepBoth: String
    package var leave: String
    package var chooseLegend: String
    /// (choice, why) a choice that is not offered.
    package var notOffered: @Sendable (String, String) -> String
    /// (side label, the day the sides last agreed; nil: they never did, and only that side has the
    /// memo) why a choice is made at first: only that side changed it since they last agreed.
    package var preselected: @Sendable (String, String?) -> String
    /// Why a choice is not offered, in words.
    package var refusal: @Sendable (ChoiceOffer.Refusal.Why) -> String
    /// The sentence above the built commands.
    package var carryOutHeading: String
    /// (remote label) when the pipeline has several remotes.
    package var carryOutFor: @Sendable (String) -> String
    package var carryOutHelp: String
    package var planLine: String
    package var applyLine: String
    package var choicesFile: String
    package var newerForAll: String
    package var reset: String
    package var copy: String
    package var copied: String
    package var save: String
    /// The `--take` syntax for a page read without scripts.
    package var takeSyntax: String
    /// (path) where the damaged file's copy is.
    package var quarantinedAt: @Sendable (String) -> String

    /// The words for `strings`' language.
    package static func forLanguage(_ code: String) -> ReviewStrings { code == "ja" ? .ja : .en }

    package static let en = ReviewStrings(
        field: { field in
            switch field {
            case "title": "Title"
            case "tags": "Tags"
            case "created": "Created"
            case "modified": "Modified"
            case "archived": "Archived"
            case "deleted": "Deleted"
            case "body": "Text"
            default: field
            }
        },
        notReadQuick: "not read in a quick check", notOnSide: "not on this side", notSet: "no", fieldDiffers: "differs",
        folded: { n in n == 1 ? "1 unchanged line" : "\(n) unchanged lines" },
        cut: { bytes in "The text is \(bytes) bytes long; only its first 256 KiB are compared here." },
        notShownBudget: { command in "Shown short: this page already holds as much as it shows of memos. See this one with: \(command)" },
        firstLines: "First lines", bodySame: "The text is the same on both sides.",
        diffMarks: { local, remote in "Lines marked - are only in \(local)'s version; lines marked + are only in \(remote)'s." },
        differsUnseen: { command in
            "≠ The texts differ past what is compared here: after their first 256 KiB, or only in a last line break. \(command) shows where the comparison stops."
        },
        hidden: { content in
            content == .titles
                ? "This report shows titles and tags, not the text of memos (reports.content: titles)."
                : "This report shows no titles, tags or text of memos (reports.content: none)."
        },
        keep: { label in "Keep \(label)'s" }, keepBoth: "Keep both", leave: "Leave it", chooseLegend: "Which version to keep",
        notOffered: { choice, why in "\(choice) is not offered: \(why)." },
        preselected: { label, day in
            day.map {
                "Chosen at first: only \(label) changed it since the sides last agreed on \($0), so its version is kept unless you choose otherwise."
            }
                ?? "Chosen at first: only \(label) has it, and the sides never agreed on it, so its version is kept unless you choose otherwise."
        },
        refusal: { why in
            switch why {
            case .notWritable(let label, let why): RepairStrings.en.notWritable(why, label)
            case .oneVersion: "only one side holds a version to keep"
            case .sameTime: "both versions have the same time, so neither is the newer one"
            }
        },
        carryOutHeading: "Carry out your choices",
        carryOutFor: { label in "For \(label)" },
        carryOutHelp:
            "Choose for each memo above, then run the plan line in a terminal; it changes no memo. Read the plan it prints, then run the apply line, which asks before it overwrites or deletes.",
        planLine: "Plan", applyLine: "Then apply", choicesFile: "Choices file (for reckon plan --choices FILE)",
        newerForAll: "Newer for all", reset: "Reset", copy: "Copy", copied: "Copied", save: "Save choices file",
        takeSyntax:
            "To choose by hand, add --take ID=local, --take ID=remote or --take ID=both to the plan line for each memo. With the @… that a memo's --take line on the page ends with (what this report saw of it on each side), a plan refuses the choice if the memo changed since.",
        quarantinedAt: { path in "A copy of the damaged file is kept at \(path)." })

    package static let ja = ReviewStrings(
        field: { field in
            switch field {
            case "title": "タイトル"
            case "tags": "タグ"
            case "created": "作成"
            case "modified": "更新"
            case "archived": "アーカイブ"
            case "deleted": "削除"
            case "body": "本文"
            default: field
            }
        },
        notReadQuick: "簡易チェックでは読んでいません", notOnSide: "この側にはありません", notSet: "なし", fieldDiffers: "違いあり",
        folded: { n in "変更のない\(n)行" },
        cut: { bytes in "本文は\(bytes)バイトあります。ここでは最初の256 KiBだけを比べています。" },
        notShownBudget: { command in "短く表示しています。このページに載せられるメモの量を超えました。次のコマンドで見られます: \(command)" },
        firstLines: "最初の行", bodySame: "本文は両方で同じです。",
        diffMarks: { local, remote in "「-」の行は\(local)の版だけに、「+」の行は\(remote)の版だけにあります。" },
        differsUnseen: { command in "≠ 本文は、ここで比べた範囲の先（最初の256 KiBより後、または最後の改行だけ）で異なります。\(command) で比べた範囲がわかります。" },
        hidden: { content in
            content == .titles
                ? "このレポートはタイトルとタグだけを載せ、メモの本文は載せていません（reports.content: titles）。"
                : "このレポートはメモのタイトル・タグ・本文を載せていません（reports.content: none）。"
        },
        keep: { label in "\(label)の版を残す" }, keepBoth: "両方残す", leave: "そのままにする", chooseLegend: "どちらの版を残すか",
        notOffered: { choice, why in "「\(choice)」は選べません: \(why)。" },
        preselected: { label, day in
            day.map { "\($0)に両側が一致して以降に変わったのは\(label)だけなので、はじめからその版を選んでいます。別の版も選べます。" }
                ?? "\(label)にだけあり、両側が一致したことがないので、はじめからその版を選んでいます。別の版も選べます。"
        },
        refusal: { why in
            switch why {
            case .notWritable(let label, let why): RepairStrings.ja.notWritable(why, label)
            case .oneVersion: "版があるのは片方だけです"
            case .sameTime: "両方の版の時刻が同じで、どちらが新しいか決められません"
            }
        },
        carryOutHeading: "選んだとおりに直す",
        carryOutFor: { label in "\(label)について" },
        carryOutHelp:
            "上でメモごとに選び、計画の行を端末で実行してください。計画の行はメモを変えません。表示された計画を読んでから適用の行を実行してください。上書きや削除の前に確認を求めます。",
        planLine: "計画", applyLine: "次に適用", choicesFile: "選択ファイル（reckon plan --choices FILE 用）",
        newerForAll: "すべて新しい方に", reset: "リセット", copy: "コピー", copied: "コピーしました", save: "選択をファイルに保存",
        takeSyntax:
            "手で選ぶときは、計画の行にメモごとに --take ID=local、--take ID=remote、--take ID=both のいずれかを加えてください。ページのメモごとの --take の行の末尾にある @…（このレポートが両側で見たもの）も付けると、その後に変わったメモは計画で拒否されます。",
        quarantinedAt: { path in "壊れたファイルの写しは \(path) にあります。" })
}
