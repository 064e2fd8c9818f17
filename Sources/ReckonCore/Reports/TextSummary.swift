import Foundation

/// The terminal summary of `reconcile` and `run`, in the seed's layout: the
/// device block above each remote's block, then the sentences, then the lists.
/// Nothing from a source reaches the terminal raw: every line is shown with
/// control and format characters escaped.
package struct TextSummary {
    package var strings: Strings
    /// Whether to colour drifted counts (a terminal without NO_COLOR).
    package var color: Bool
    /// How many differences and problems to list before pointing at the files.
    package var listLimit = 20
    /// Where `report.md` was written, to point at for the rest of a long
    /// list; nil when no report file was written.
    package var reportFolder: URL?
    /// Paths under this folder are shown relative to it.
    package var currentFolder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)

    package init(strings: Strings = .en, color: Bool = false, reportFolder: URL? = nil) {
        self.strings = strings
        self.color = color
        self.reportFolder = reportFolder
    }

    package func render(_ report: Report) -> String {
        let s = strings
        var out: [String] = []
        func add(_ line: String) { out.append(escapedForDisplay(line)) }
        for alarm in report.alarms(s) {
            out.append(color ? "\u{1B}[1;31m\(escapedForDisplay(alarm))\u{1B}[0m" : escapedForDisplay(alarm))
            out.append("")
        }
        for side in report.sides where !report.isEmpty {
            add(s.memosOn(side.label))
            guard let rows = report.countRows(side, s) else {
                add("  \(s.notRead)")
                out.append("")
                continue
            }
            for row in rows {
                var shown = row.drifted ?? String(row.value)
                if color && row.drifted != nil { shown = "\u{1B}[38;5;208m\(escapedForDisplay(shown))\u{1B}[0m" }
                out.append("  " + pad(escapedForDisplay(row.name), 10) + shown)
            }
            if let since = report.sinceLine(side, s) { add("  " + since) }
            out.append("")
        }
        report.hints(s).forEach(add)
        report.cacheLines(s).forEach(add)

        let listing = reportFolder.map { report.shownPath($0.appendingPathComponent("report.md"), from: currentFolder) }
        func more(_ count: Int) -> String { listing.map { s.andMore(count, $0) } ?? s.andMoreUnlisted(count) }
        if !report.differences.isEmpty {
            out.append("")
            add("\(s.differencesHeading) (\(report.differences.count)):")
            for difference in report.differences.prefix(listLimit) {
                var words = report.whatDiffers(difference, s)
                // With two remotes a memo can differ from each alike: the line says which ("-" lines already do).
                if report.remotes.count > 1, difference.sigil != .onlyOnRemote {
                    words = s.onRemote(report.label(ofRemote: difference.remote), words)
                }
                var line = "  \(difference.sigil.rawValue) \(difference.id)  \(words)"
                if let title = difference.title, !title.isEmpty { line += "  " + quoted(title, limit: 40) }
                add(line)
            }
            if report.differences.count > listLimit { add("  " + more(report.differences.count - listLimit)) }
        }
        let problems = report.sides.flatMap { side in side.problems.map { (side, $0) } }
        if !problems.isEmpty {
            out.append("")
            add("\(s.problemsHeading) (\(problems.count)):")
            for (side, problem) in problems.prefix(listLimit) {
                add("  " + problem.line(under: report.shownPath(side, from: currentFolder), in: s))
            }
            if problems.count > listLimit { add("  " + more(problems.count - listLimit)) }
        }
        if !report.quarantined.isEmpty {
            out.append("")
            add("\(s.quarantinedHeading) (\(report.quarantined.count)):")
            for record in report.quarantined {
                add(
                    "  \(report.shownSource(record, from: currentFolder)) → \(report.shownPath(record, from: currentFolder))  sha256 \(record.sha256)"
                )
            }
        }
        if !report.exports.isEmpty {
            out.append("")
            add("\(s.exportsHeading):")
            for failure in report.exportFailures { add("  " + s.exportFailed(failure)) }
            for export in report.exports where export.failure == nil {
                add("  \(report.shownPath(export, from: currentFolder))  \(s.exportSize(export.memos, export.bytes))")
            }
            for problem in report.exports.first?.missing ?? [] {
                add("  \(s.notExported): " + (problem.path.isEmpty ? "" : "\(problem.path): ") + s.reason(problem))
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }
}
