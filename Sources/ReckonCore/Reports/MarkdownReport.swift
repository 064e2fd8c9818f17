/// `report.md`: the same content as the terminal summary, for people who read
/// reports in a repository or a terminal pager.
public struct MarkdownReport {
    public var strings: Strings

    public init(strings: Strings = .en) {
        self.strings = strings
    }

    public func render(_ report: Report) -> String {
        let s = strings
        var out: [String] = ["# reckon report: \(escape(report.pipeline))", ""]
        let localCounts = report.local.counts
        for side in report.sides {
            out.append("## \(escape(s.memosOn(side.label)))")
            out.append("")
            guard let counts = side.counts else {
                out += ["\(s.notRead)", ""]
                continue
            }
            out += ["| | |", "| --- | --- |"]
            for (name, value, localValue) in [(s.active, counts.active, localCounts?.active), (s.archived, counts.archived, localCounts?.archived)] {
                var shown = String(value)
                if side.role == .remote, let localValue, localValue != value { shown = "**\(s.drifted(value, local: localValue))** ⚠" }
                out.append("| \(name) | \(shown) |")
            }
            out.append("")
        }
        for hint in report.hints(s) { out += ["> \(escape(hint))", ""] }

        out += ["## \(s.sourcesHeading)", "", "| Side | Name | Path | Status |", "| --- | --- | --- | --- |"]
        for side in report.sides {
            out.append("| \(escape(side.label)) | \(escape(side.name)) | \(code(side.path)) | \(side.status.rawValue) |")
        }
        out.append("")

        if !report.differences.isEmpty {
            out += ["## \(s.differencesHeading) (\(report.differences.count))", "", "| | Id | Title | Remote | What differs |", "| --- | --- | --- | --- | --- |"]
            let labels = Dictionary(report.remotes.map { ($0.name, $0.label) }, uniquingKeysWith: { a, _ in a })
            for d in report.differences {
                let label = labels[d.remote] ?? d.remote
                let what = d.kind == .changed ? d.fields.joined(separator: ", ") : s.kind(d.kind, remote: label)
                let reason = [d.local.problem, d.remoteState.problem].compactMap { $0 }.joined(separator: "; ")
                out.append("| \(code(d.sigil.rawValue)) | \(code(d.id.value)) | \(escape(d.title ?? "")) | \(escape(label)) | \(escape(reason.isEmpty ? what : reason)) |")
            }
            out.append("")
        }
        let problems = report.sides.flatMap { side in side.problems.map { (side, $0) } }
        if !problems.isEmpty {
            out += ["## \(s.problemsHeading) (\(problems.count))", ""]
            for (side, problem) in problems {
                out.append("- \(problem.severity.rawValue): \(code(joinPath(side.path, problem.path))): \(escape(problem.message))")
            }
            out.append("")
        }
        if !report.quarantined.isEmpty {
            out += ["## \(s.quarantinedHeading) (\(report.quarantined.count))", "", "| File | Copy | SHA-256 | Why |", "| --- | --- | --- | --- |"]
            for q in report.quarantined { out.append("| \(code(q.source)) | \(code(q.copy)) | `\(q.sha256)` | \(escape(q.reason)) |") }
            out.append("")
        }
        if !report.exports.isEmpty {
            out += ["## \(s.exportsHeading)", "", "| File | Memos | Bytes | Missing |", "| --- | --- | --- | --- |"]
            for e in report.exports { out.append("| \(code(e.path)) | \(e.memos) | \(e.bytes) | \(e.missing.count) |") }
            out.append("")
        }
        return out.joined(separator: "\n")
    }

    /// Text safe inside Markdown: characters that start formatting or HTML are escaped.
    func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\", "`", "*", "_", "[", "]", "<", ">", "|", "#", "!": result += "\\\(character)"
            case "\n", "\r": result += " "
            default: result.append(character)
            }
        }
        return result
    }

    /// A path or id in code style, safe from a backtick inside it.
    func code(_ text: String) -> String {
        "`" + text.replacingOccurrences(of: "`", with: "'").replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ") + "`"
    }
}
