import Foundation

/// `report.html`: one self-contained page in the manner of the notes app's
/// export screen. Inline CSS, no network, a Content-Security-Policy that
/// allows one script, by its hash, and only on a page where a person
/// chooses versions; every string from a memo or a path is escaped.
package struct HTMLReport {
    package var strings: Strings
    /// Paths under this folder are shown relative to it.
    package var currentFolder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)

    package init(strings: Strings = .en) {
        self.strings = strings
    }

    static let style = """
        :root { color-scheme: light; }
        body { margin: 0; background: #f4f4f6; color: #1c1c1e; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans CJK JP", "Noto Sans", sans-serif; }
        main { max-width: 760px; margin: 0 auto; padding: 16px; }
        h1 { font-size: 1.3rem; margin: 8px 0 4px; }
        h2 { font-size: 1.05rem; margin: 24px 0 8px; }
        .when { color: #6c6c70; margin: 0 0 12px; font-size: .9rem; }
        .side { background: #fff; border-radius: 12px; padding: 12px 16px; margin: 0 0 12px; }
        .side h2 { margin: 0 0 6px; font-size: 1rem; }
        .row { display: flex; justify-content: space-between; padding: 4px 0; border-top: 1px solid #ececf0; }
        .row:first-of-type { border-top: 0; }
        .same { color: #6c6c70; }
        .drift { color: #b35900; font-weight: 600; }
        .notread { color: #c0392b; font-weight: 600; }
        .hints p { background: #fff4e5; border-left: 4px solid #e67e00; padding: 8px 12px; margin: 8px 0; border-radius: 6px; }
        .hints p.ok { background: #eef7ee; border-left-color: #3a9a3a; }
        .alarm { background: #fdecea; border-left: 4px solid #c0392b; color: #a93226; font-weight: 700; padding: 8px 12px; margin: 8px 0; border-radius: 6px; }
        .since { color: #6c6c70; font-size: .85rem; padding-top: 4px; }
        .scroll { overflow-x: auto; background: #fff; border-radius: 12px; }
        table { border-collapse: collapse; width: 100%; font-size: .85rem; }
        th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #ececf0; vertical-align: top; overflow-wrap: anywhere; }
        th { color: #6c6c70; font-weight: 600; overflow-wrap: normal; word-break: keep-all; hyphens: none; }
        code { font: .8rem ui-monospace, "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }
        code.id { white-space: nowrap; }
        .diffs { list-style: none; margin: 0; padding: 0; background: #fff; border-radius: 12px; font-size: .9rem; }
        .diffs li { padding: 8px 12px; border-top: 1px solid #ececf0; overflow-wrap: anywhere; }
        .diffs li:first-child { border-top: 0; }
        .sigil { display: inline-block; min-width: 1.4em; text-align: center; font: 600 .85rem ui-monospace, "DejaVu Sans Mono", monospace; background: #ececf0; border-radius: 4px; }
        .memo-title { font-weight: 600; }
        .what { color: #b35900; }
        .state { color: #6c6c70; font-size: .8rem; }
        .legend code { background: #ececf0; border-radius: 4px; padding: 0 4px; }
        .failed { color: #c0392b; font-weight: 600; }
        .degraded { color: #b35900; font-weight: 600; }
        svg { width: 100%; height: auto; background: #fff; border-radius: 12px; }
        .legend { font-size: .8rem; color: #6c6c70; }
        button, select, textarea, input:not([type=radio]):not([type=checkbox]) { font: inherit; min-height: 44px; box-sizing: border-box; }
        button, select { min-width: 44px; padding: 8px 14px; }
        textarea { width: 100%; min-height: 88px; padding: 8px; }
        input[type=radio], input[type=checkbox] { width: 22px; height: 22px; margin: 11px 6px 11px 0; vertical-align: middle; }
        input[type=radio] + label, input[type=checkbox] + label, .choice { display: inline-flex; flex-wrap: wrap; align-items: center; min-height: 44px; min-width: 44px; padding-right: 12px; box-sizing: border-box; vertical-align: middle; }
        summary { min-height: 44px; padding: 10px 0; box-sizing: border-box; }
        """

    /// The whole page: what needs attention first (alarms, each side's
    /// counts, what to do), then the tables a person looks things up in.
    package func render(_ report: Report) -> String {
        let s = strings
        var out: [String] = []
        out += report.alarms(s).map { "<p class=\"alarm\" role=\"alert\">⚠ \(html($0))</p>" }
        if let startedAt = report.startedAt { out.append("<p class=\"when\">\(html(s.checkedAt(report.display(startedAt))))</p>") }
        if !report.isEmpty { out += report.sides.flatMap { sideCounts($0, in: report) } }
        let calm = report.inSync && report.outcome == .inSync
        out.append("<section class=\"hints\">" + report.hints(s).map { "<p\(calm ? " class=\"ok\"" : "")>\(html($0))</p>" }.joined() + "</section>")
        out += report.cacheLines(s).map { "<p class=\"cache\">\(html($0))</p>" }
        if report.history.count >= 2 { out.append(chart(report)) }
        out.append(sources(report))
        if !report.differences.isEmpty { out.append(differences(report)) }
        out += [problems(report), quarantined(report), exports(report), timings(report)].compactMap { $0 }
        let choosing = report.repair != nil && report.details.contains { $0.choice != nil }
        return Self.page(language: s.code, title: s.title(report.pipeline), body: out, script: choosing ? Self.script : nil)
    }

    /// One side's Active and Archived counts, each marked where it
    /// drifted, and what moved since the last run: the page's lines.
    func sideCounts(_ side: SideReport, in report: Report) -> [String] {
        let s = strings
        var out = ["<section class=\"side\" data-side=\"\(html(side.name))\"><h2>\(html(s.memosOn(side.label)))</h2>"]
        if let rows = report.countRows(side, s) {
            for row in rows {
                let value =
                    row.drifted.map { "<span class=\"drift\">⚠ \(html($0)) <small>\(html(s.differs))</small></span>" }
                    ?? "<span class=\"same\">\(row.value)</span>"
                out.append("<div class=\"row\"><span>\(html(row.name))</span>\(value)</div>")
            }
        } else {
            out.append("<div class=\"row\"><span class=\"notread\">\(html(s.notRead))</span></div>")
        }
        if let since = report.sinceLine(side, s) { out.append("<div class=\"since\">\(html(since))</div>") }
        return out + ["</section>"]
    }

    /// Each side's path and status.
    func sources(_ report: Report) -> String {
        let s = strings
        return table(
            s.sourcesHeading, [s.sideColumn, s.pathColumn, s.statusColumn],
            report.sides.map { side in
                [
                    html(side.label), "<code>\(html(report.shownPath(side, from: currentFolder)))</code>",
                    "<span class=\"\(side.status.rawValue)\">\(html(s.statusWithProblems(side.status, side.problems.count)))</span>"
                ]
            })
    }

    /// Every problem of every side, by the file it is about; nil when there is none.
    func problems(_ report: Report) -> String? {
        let s = strings
        let problems = report.sides.flatMap { side in side.problems.map { (side, $0) } }
        guard !problems.isEmpty else { return nil }
        return table(
            "\(s.problemsHeading) (\(problems.count))", [s.fileColumn, s.whyColumn],
            problems.map { side, problem in
                [
                    "<code>\(html(joinPath(report.shownPath(side, from: currentFolder), problem.path)))</code>",
                    "\(html(s.severity(problem.severity))): \(html(s.reason(problem)))"
                ]
            })
    }

    /// Every file set aside, one stacked row each (four columns do not fit
    /// a phone): the file, why, its copy and SHA-256; nil when there is none.
    func quarantined(_ report: Report) -> String? {
        let s = strings
        guard !report.quarantined.isEmpty else { return nil }
        return list(
            "\(s.quarantinedHeading) (\(report.quarantined.count))",
            report.quarantined.map { q in
                "<code>\(html(report.shownSource(q, from: currentFolder)))</code><br><span class=\"what\">\(html(q.reason))</span>"
                    + "<br><span class=\"state\">\(html(s.copyColumn)): <code>\(html(report.shownPath(q, from: currentFolder)))</code></span>"
                    + "<br><span class=\"state\">SHA-256: <code>\(html(q.sha256))</code></span>"
            })
    }

    /// The files the export wrote, after what it could not, one stacked row
    /// each (four columns do not fit a phone): the file, its memos and
    /// bytes, its SHA-256; nil without an export.
    func exports(_ report: Report) -> String? {
        let s = strings
        guard !report.exports.isEmpty else { return nil }
        let written = report.exports.filter { $0.failure == nil }
        let failures = report.exportFailures.map { "<p class=\"failed\">⚠ \(html(s.exportFailed($0)))</p>" }
        if written.isEmpty { return "<section><h2>\(html(s.exportsHeading))</h2>\(failures.joined())</section>" }
        return list(
            s.exportsHeading,
            written.map { e in
                "<code>\(html(report.shownPath(e, from: currentFolder)))</code>"
                    + "<br><span class=\"state\">\(html(s.memosColumn)): \(e.memos) · \(html(s.bytesColumn)): \(e.bytes)</span>"
                    + (e.sha256.map { "<br><span class=\"state\">SHA-256: <code>\(html($0))</code></span>" } ?? "")
            }, before: failures.joined())
    }

    /// How long each stage took; nil when no stage was timed.
    func timings(_ report: Report) -> String? {
        guard !report.timings.isEmpty else { return nil }
        return table(
            strings.timingsHeading, [strings.stageColumn, strings.secondsColumn], report.timings.map { [html($0.stage), seconds($0.seconds)] })
    }

    /// One self-contained page: the head with its policy and style, the
    /// title as heading, then `body`'s lines (already escaped HTML), then
    /// `script`, the one script the policy allows (by its hash), if any.
    static func page(language: String, title: String, body: [String], script: String? = nil) -> String {
        let scripts = script.map { " script-src '\(policyHash(of: $0))';" } ?? ""
        let head = """
            <!DOCTYPE html>
            <html lang="\(language)">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none';\(scripts) style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(html(title))</title>
            <style>
            \(style)
            \(reviewStyle)
            </style>
            </head>
            <body>
            <main>
            <h1>\(html(title))</h1>
            """
        let end = (script.map { "<script>\($0)</script>\n" } ?? "") + "</main>\n</body>\n</html>\n"
        return ([head] + body + [end]).joined(separator: "\n")
    }

    /// A titled table whose cells are already escaped HTML.
    func table(_ title: String, _ headers: [String], _ rows: [[String]], before: String = "") -> String {
        "<section><h2>\(html(title))</h2>\(before)" + Self.grid(headers, rows) + "</section>"
    }

    /// A titled list of files, one stacked row each, as the differences are;
    /// the items are already escaped HTML.
    func list(_ title: String, _ items: [String], before: String = "") -> String {
        "<section><h2>\(html(title))</h2>\(before)<ul class=\"diffs files\">" + items.map { "<li>\($0)</li>" }.joined() + "</ul></section>"
    }

    /// A table that scrolls sideways on a narrow screen; headers are text, cells already escaped HTML.
    static func grid(_ headers: [String], _ rows: [[String]]) -> String {
        var out = "<div class=\"scroll\"><table><thead><tr>"
        out += headers.map { "<th>\(html($0))</th>" }.joined() + "</tr></thead><tbody>"
        out += rows.map { "<tr>" + $0.map { "<td>\($0)</td>" }.joined() + "</tr>" }.joined()
        return out + "</tbody></table></div>"
    }

    /// Active and Archived per side over the last runs, as an inline SVG
    /// drawn at a phone's width with text large enough to read there. A run
    /// that ended in trouble is marked with a red ⚠ line, named in the legend.
    func chart(_ report: Report) -> String {
        let s = strings
        let width = 360.0
        let height = 170.0
        let left = 30.0
        let right = 10.0
        let top = 20.0
        let bottom = 8.0
        let entries = report.history
        let values = entries.flatMap { $0.sides.compactMap(\.counts).flatMap { [$0.active, $0.archived] } }
        let maximum = Double(max(values.max() ?? 1, 1))
        func x(_ i: Int) -> Double { left + (width - left - right) * Double(i) / Double(max(entries.count - 1, 1)) }
        func y(_ v: Int) -> Double { top + (height - top - bottom) * (1 - Double(v) / maximum) }
        func number(_ v: Double) -> String { String(Int(v.rounded())) }
        // Each 4.5:1 or more on the page's #f4f4f6, where the legend names them in their colour.
        let colors = ["#1a64c0", "#a35200", "#2e7d32", "#8e44ad", "#c0392b", "#0b7a63"]
        var shapes: [String] = []
        var legend: [String] = []
        for (i, entry) in entries.enumerated() where entry.exitCode == 2 {
            shapes.append(
                "<line x1=\"\(number(x(i)))\" y1=\"\(number(top))\" x2=\"\(number(x(i)))\" y2=\"\(number(height - bottom))\" stroke=\"#c0392b\" stroke-dasharray=\"3 3\"/>"
                    + "<text x=\"\(number(x(i)))\" y=\"14\" font-size=\"13\" fill=\"#c0392b\" text-anchor=\"middle\">⚠</text>")
        }
        for (index, side) in report.sides.enumerated() {
            let color = colors[index % colors.count]
            for (series, dash, pick) in [
                (s.active, "", { (c: MemoCounts) in c.active }), (s.archived, " stroke-dasharray=\"5 4\"", { (c: MemoCounts) in c.archived })
            ] {
                let points = entries.enumerated().compactMap { i, entry in
                    entry.sides.first { $0.name == side.name }?.counts.map { (number(x(i)), number(y(pick($0)))) }
                }
                guard !points.isEmpty else { continue }
                shapes.append(
                    "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(dash) points=\"\(points.map { "\($0),\($1)" }.joined(separator: " "))\"/>"
                )
                // A dot per run, so a run is seen even where a line has one point.
                shapes += points.map { "<circle cx=\"\($0)\" cy=\"\($1)\" r=\"3\" fill=\"\(color)\"/>" }
                legend.append("<span style=\"color:\(color)\">\(dash.isEmpty ? "━" : "┅") \(html(side.label)) \(html(series))</span>")
            }
        }
        if entries.contains(where: { $0.exitCode == 2 }) { legend.append("<span class=\"failed\">⚠ \(html(s.troubleRun))</span>") }
        let axis = """
            <line x1="\(number(left))" y1="\(number(height - bottom))" x2="\(number(width - right))" y2="\(number(height - bottom))" stroke="#ccc"/>\
            <text x="4" y="\(number(top + 4))" font-size="13" fill="#6c6c70">\(Int(maximum))</text>\
            <text x="4" y="\(number(height - bottom))" font-size="13" fill="#6c6c70">0</text>
            """
        let span = "\(html(report.display(entries.first!.time))) – \(html(report.display(entries.last!.time)))"
        return
            "<section><h2>\(html(s.historyHeading))</h2><svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(html(s.historyHeading))\">"
            + axis + shapes.joined() + "</svg><p class=\"legend\">" + span + "<br>" + legend.joined(separator: " &nbsp; ") + "</p></section>"
    }
}

/// Text made safe for HTML, in element content and in quoted attributes;
/// control and format characters are shown escaped (`\u{202e}`).
package func html(_ text: String) -> String {
    let shown = escapedForDisplay(text)
    let special: Set<UInt8> = [0x26, 0x3C, 0x3E, 0x22, 0x27]
    guard shown.utf8.contains(where: special.contains) else { return shown }
    var out = ""
    out.reserveCapacity(shown.utf8.count + 16)
    for scalar in shown.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}
