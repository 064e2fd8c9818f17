/// The terminal summary of `reconcile` and `run`, in the seed's layout: the
/// device block above each remote's block, then the sentences, then the lists.
public struct TextSummary {
    public var strings: Strings
    /// Whether to colour drifted counts (a terminal without NO_COLOR).
    public var color: Bool
    /// How many differences and problems to list before pointing at the files.
    public var listLimit = 20

    public init(strings: Strings = .en, color: Bool = false) {
        self.strings = strings
        self.color = color
    }

    public func render(_ report: Report) -> String {
        let s = strings
        var out: [String] = []
        for side in report.sides where !report.isEmpty {
            out.append(s.memosOn(side.label))
            guard let rows = report.countRows(side, s) else {
                out += ["  \(s.notRead)", ""]
                continue
            }
            for row in rows {
                var shown = row.drifted ?? String(row.value)
                if color && row.drifted != nil { shown = "\u{1B}[38;5;208m\(shown)\u{1B}[0m" }
                out.append("  " + pad(row.name, 10) + shown)
            }
            out.append("")
        }
        out += report.hints(s)

        if !report.differences.isEmpty {
            out.append("")
            out.append("\(s.differencesHeading) (\(report.differences.count)):")
            for difference in report.differences.prefix(listLimit) {
                var line = "  \(difference.sigil.rawValue) \(difference.id)  \(report.whatDiffers(difference, s))"
                if let title = difference.title, !title.isEmpty { line += "  " + quoted(title, limit: 40) }
                out.append(line)
            }
            if report.differences.count > listLimit { out.append("  " + s.andMore(report.differences.count - listLimit, "combined.txt")) }
        }
        let problems = report.sides.flatMap { side in side.problems.map { (side, $0) } }
        if !problems.isEmpty {
            out.append("")
            out.append("\(s.problemsHeading) (\(problems.count)):")
            for (side, problem) in problems.prefix(listLimit) {
                out.append("  " + problem.line(under: side.path, in: s))
            }
            if problems.count > listLimit { out.append("  " + s.andMore(problems.count - listLimit, "report.json")) }
        }
        if !report.quarantined.isEmpty {
            out.append("")
            out.append("\(s.quarantinedHeading) (\(report.quarantined.count)):")
            for record in report.quarantined { out.append("  \(record.source) → \(record.copy)  sha256 \(record.sha256)") }
        }
        if !report.exports.isEmpty {
            out.append("")
            out.append("\(s.exportsHeading):")
            for export in report.exports {
                out.append("  \(export.path)  \(s.exportSize(export.memos, export.bytes))")
            }
            for problem in report.exports.first?.missing ?? [] {
                out.append("  \(s.notExported): \(problem.path): \(s.reason(problem))")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }
}

/// A side's path joined with a path inside it, for messages.
public func joinPath(_ root: String, _ inside: String) -> String {
    if inside.isEmpty { return root }
    return root.hasSuffix("/") ? root + inside : root + "/" + inside
}
