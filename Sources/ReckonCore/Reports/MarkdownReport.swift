import Foundation

/// `report.md`: the same content as the HTML page, for people who read
/// reports in a terminal or a repository.
package struct MarkdownReport {
    package var strings: Strings
    /// Paths under this folder are shown relative to it.
    package var currentFolder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)

    package init(strings: Strings = .en) {
        self.strings = strings
    }

    /// The whole report: alarms, each side's counts and what to do first,
    /// then the sections a person looks things up in.
    package func render(_ report: Report) -> String {
        let s = strings
        var out: [String] = ["# \(escape(s.title(report.pipeline)))", ""]
        for alarm in report.alarms(s) { out += ["> ⚠ **\(escape(alarm))**", ""] }
        if let startedAt = report.startedAt { out += [escape(s.checkedAt(report.display(startedAt))), ""] }
        for side in report.sides where !report.isEmpty { out += sideCounts(side, in: report) }
        for hint in report.hints(s) { out += ["> \(escape(hint))", ""] }
        out += sources(report)
        if !report.differences.isEmpty { out += differences(report) }
        out += problems(report) + quarantined(report) + exports(report) + history(report) + timings(report)
        return out.joined(separator: "\n")
    }

    /// One side's Active and Archived counts, each marked where it drifted,
    /// and what moved since the last run.
    func sideCounts(_ side: SideReport, in report: Report) -> [String] {
        let s = strings
        var out = ["## \(escape(s.memosOn(side.label)))", ""]
        guard let rows = report.countRows(side, s) else { return out + [escape(s.notRead), ""] }
        out += ["| | |", "| --- | --- |"]
        for row in rows { out.append("| \(row.name) | \(row.drifted.map { "**\($0)** ⚠ \(s.differs)" } ?? String(row.value)) |") }
        out.append("")
        if let since = report.sinceLine(side, s) { out += [escape(since), ""] }
        return out
    }

    /// Each side's path and status.
    func sources(_ report: Report) -> [String] {
        let s = strings
        var out = ["## \(s.sourcesHeading)", "", "| \(s.sideColumn) | \(s.pathColumn) | \(s.statusColumn) |", "| --- | --- | --- |"]
        for side in report.sides {
            out.append(
                "| \(escape(side.label)) | \(code(report.shownPath(side, from: currentFolder))) | \(s.statusWithProblems(side.status, side.problems.count)) |"
            )
        }
        return out + [""]
    }

    /// The table of differences, the legend of its sigils, then the review.
    func differences(_ report: Report) -> [String] {
        let s = strings
        var out = [
            "## \(s.differencesHeading) (\(report.differences.count))", "",
            "| | Id | \(s.titleColumn) | \(s.whatDiffersColumn) | \(escape(report.local.label)) | \(escape(report.remoteColumn(s))) |",
            "| --- | --- | --- | --- | --- | --- |"
        ]
        for d in report.differences {
            out.append(
                "| \(code(d.sigil.rawValue)) | \(code(d.id.value)) | \(escape(report.content == .none ? "" : d.title ?? "")) | \(escape(report.whatDiffers(d, s))) | "
                    + "\(escape(report.describe(d.local, s))) | \(escape(report.describeRemote(d, s))) |")
        }
        let legend = zip(
            ["=", "-", "+", "*", "!"],
            s.sigilMeanings(report.local.label, report.remotes.map(\.label).joined(separator: " / "), report.readsStore))
        out += ["", "\(s.legendHeading): " + legend.map { "\(code($0)) \(escape($1))" }.joined(separator: " · "), ""]
        return out + review(report)
    }

    /// Every problem of every side, by the file it is about; nothing when there is none.
    func problems(_ report: Report) -> [String] {
        let s = strings
        let problems = report.sides.flatMap { side in side.problems.map { (side, $0) } }
        guard !problems.isEmpty else { return [] }
        var out = ["## \(s.problemsHeading) (\(problems.count))", ""]
        for (side, problem) in problems {
            out.append(
                "- \(s.severity(problem.severity)): \(code(joinPath(report.shownPath(side, from: currentFolder), problem.path))): \(escape(s.reason(problem)))"
            )
        }
        return out + [""]
    }

    /// Every file set aside: the file, its copy, SHA-256 and why; nothing when there is none.
    func quarantined(_ report: Report) -> [String] {
        let s = strings
        guard !report.quarantined.isEmpty else { return [] }
        var out = [
            "## \(s.quarantinedHeading) (\(report.quarantined.count))", "",
            "| \(s.fileColumn) | \(s.copyColumn) | SHA-256 | \(s.whyColumn) |", "| --- | --- | --- | --- |"
        ]
        for q in report.quarantined {
            out.append(
                "| \(code(report.shownSource(q, from: currentFolder))) | \(code(report.shownPath(q, from: currentFolder))) | `\(q.sha256)` | \(escape(q.reason)) |"
            )
        }
        return out + [""]
    }

    /// What the export could not write, then the files it wrote; nothing without an export.
    func exports(_ report: Report) -> [String] {
        let s = strings
        guard !report.exports.isEmpty else { return [] }
        var out = ["## \(s.exportsHeading)", ""]
        for failure in report.exportFailures { out += ["> ⚠ \(escape(s.exportFailed(failure)))", ""] }
        let written = report.exports.filter { $0.failure == nil }
        guard !written.isEmpty else { return out }
        out += ["| \(s.fileColumn) | \(s.memosColumn) | \(s.bytesColumn) | SHA-256 |", "| --- | --- | --- | --- |"]
        for e in written {
            out.append(
                "| \(code(report.shownPath(e, from: currentFolder))) | \(e.memos) | \(e.bytes) | \(e.sha256.map { "`\($0)`" } ?? "") |")
        }
        return out + [""]
    }

    /// Active and Archived per side over the last runs; nothing without a history.
    func history(_ report: Report) -> [String] {
        let s = strings
        guard !report.history.isEmpty else { return [] }
        let names = report.sides.map(\.name)
        var out = [
            "## \(s.historyHeading)", "",
            "| \(s.timeColumn) | " + report.sides.map { "\(escape($0.label)) (\(s.active) / \(s.archived))" }.joined(separator: " | ")
                + " | \(s.differencesHeading) |",
            "| --- | " + names.map { _ in "---" }.joined(separator: " | ") + " | --- |"
        ]
        for entry in report.history {
            let cells = names.map { name in
                entry.sides.first { $0.name == name }?.counts.map { "\($0.active) / \($0.archived)" } ?? "–"
            }
            let trouble = entry.exitCode == 2 ? " ⚠ \(s.troubleRun)" : ""
            out.append("| \(report.display(entry.time)) | " + cells.joined(separator: " | ") + " | \(entry.differences)\(trouble) |")
        }
        return out + [""]
    }

    /// How long each stage took; nothing when no stage was timed.
    func timings(_ report: Report) -> [String] {
        let s = strings
        guard !report.timings.isEmpty else { return [] }
        var out = ["## \(s.timingsHeading)", "", "| \(s.stageColumn) | \(s.secondsColumn) |", "| --- | --- |"]
        for timing in report.timings { out.append("| \(timing.stage) | \(seconds(timing.seconds)) |") }
        return out + [""]
    }

    /// Text safe inside Markdown: characters that start formatting or HTML are
    /// escaped, and so is an `&` that would start an entity (`&amp;`, `&#65;`).
    func escape(_ text: String) -> String {
        let shown = escapedForDisplay(text)
        guard shown.utf8.contains(where: Self.special.contains) else { return shown }
        var result = ""
        let scalars = Array(shown.unicodeScalars)
        for (at, scalar) in scalars.enumerated() {
            switch scalar {
            case "\\", "`", "*", "_", "[", "]", "<", ">", "|", "#", "!": result += "\\\(scalar)"
            case "&" where Self.startsEntity(scalars[(at + 1)...]): result += "\\&"
            case "\n", "\r": result += " "
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The bytes `escape` may change.
    static let special = Set("\\`*_[]<>|#!&\n\r".utf8)

    /// Whether what follows an `&` makes it an entity in CommonMark: letters,
    /// digits or `#`, then `;`. (A few more than CommonMark's: an `&` escaped
    /// without need still shows as itself.)
    static func startsEntity(_ rest: ArraySlice<Unicode.Scalar>) -> Bool {
        let name = rest.prefix { $0 == "#" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0) }
        return !name.isEmpty && rest.dropFirst(name.count).first == ";"
    }

    /// A path or id in code style, safe from a backtick or a table bar inside it.
    func code(_ text: String) -> String {
        "`"
            + escapedForDisplay(text).replacingOccurrences(of: "`", with: "'").replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(
                of: "\n", with: " ") + "`"
    }

    /// After the differences: what the report leaves out, each memo's text
    /// as a line diff (in a fence longer than any run of backticks in it),
    /// and how to carry out choices with `--take`.
    func review(_ report: Report) -> [String] {
        let r = ReviewStrings.forLanguage(strings.code)
        var out: [String] = []
        if report.content != .full { out += [escape(r.hidden(report.content)), ""] }
        var budget = HTMLReport.textBudget
        for (d, detail) in zip(report.differences, report.details) where report.content == .full {
            guard let local = detail.local, let remote = detail.remote else { continue }
            let diff = LineDiff(old: local.body ?? "", new: remote.body ?? "")
            guard !diff.isEmpty || diff.differsUnseen else { continue }
            var heading = r.field("body")
            if report.remotes.count > 1 { heading = strings.withRemote(heading, report.label(ofRemote: d.remote)) }
            out += ["### \(code(d.id.value)) \(escape(heading))", ""]
            if diff.differsUnseen {
                out += [escape(r.differsUnseen("reckon show \(d.id.value)")), ""]
                continue
            }
            guard budget > 0 else {
                out += [escape(r.notShownBudget("reckon show \(d.id.value)")), ""]
                continue
            }
            let text = diff.text(colour: false)
            // The longest run of backticks anywhere in the text: the fence is longer.
            var longest = 0
            var run = 0
            for character in text {
                run = character == "`" ? run + 1 : 0
                longest = max(longest, run)
            }
            let fence = String(repeating: "`", count: max(3, longest + 1))
            out += [escape(r.diffMarks(report.local.label, report.label(ofRemote: d.remote))), "", "\(fence)diff", text + fence, ""]
            budget -= text.utf8.count
        }
        if let repair = report.repair, report.details.contains(where: { $0.choice != nil }) {
            out += ["## \(escape(r.carryOutHeading))", "", escape(r.takeSyntax), ""]
            for remote in report.remotes
            where zip(report.differences, report.details).contains(where: { $0.remote == remote.name && $1.choice != nil }) {
                out += ["```sh", repair.planWithoutChoices(remote: remote.name) + " --take ID=local", repair.apply, "```", ""]
            }
        }
        return out
    }
}

/// Seconds with three decimals, for timing tables.
func seconds(_ value: Double) -> String {
    let millis = Int((value * 1000).rounded())
    let fraction = String(millis % 1000)
    return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}
