/// `report.html`: one self-contained page in the manner of the notes app's
/// export screen. Inline CSS, no script, no network, a Content-Security-Policy
/// that forbids scripts; every string from a memo or a path is escaped.
public struct HTMLReport {
    public var strings: Strings

    public init(strings: Strings = .en) {
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
        .same { color: #8e8e93; }
        .drift { color: #b35900; font-weight: 600; }
        .notread { color: #c0392b; font-weight: 600; }
        .hints p { background: #fff4e5; border-left: 4px solid #e67e00; padding: 8px 12px; margin: 8px 0; border-radius: 6px; }
        .hints p.ok { background: #eef7ee; border-left-color: #3a9a3a; }
        .scroll { overflow-x: auto; background: #fff; border-radius: 12px; }
        table { border-collapse: collapse; width: 100%; font-size: .85rem; }
        th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #ececf0; vertical-align: top; }
        th { color: #6c6c70; font-weight: 600; }
        code { font: .8rem ui-monospace, "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }
        code.id { white-space: nowrap; }
        .failed { color: #c0392b; font-weight: 600; }
        .degraded { color: #b35900; font-weight: 600; }
        svg { width: 100%; height: auto; background: #fff; border-radius: 12px; }
        .legend { font-size: .8rem; color: #6c6c70; }
        """

    public func render(_ report: Report) -> String {
        let s = strings
        var out: [String] = []
        out.append("""
            <!DOCTYPE html>
            <html lang="\(s.code)">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(html(s.title(report.pipeline)))</title>
            <style>
            \(Self.style)
            </style>
            </head>
            <body>
            <main>
            <h1>\(html(s.title(report.pipeline)))</h1>
            """)
        if let startedAt = report.startedAt { out.append("<p class=\"when\">\(html(s.checkedAt(report.display(startedAt))))</p>") }
        for side in report.sides where !report.isEmpty {
            out.append("<section class=\"side\" data-side=\"\(html(side.name))\"><h2>\(html(s.memosOn(side.label)))</h2>")
            if let rows = report.countRows(side, s) {
                for row in rows {
                    let value = row.drifted.map { "<span class=\"drift\">⚠ \(html($0)) <small>\(html(s.differs))</small></span>" }
                        ?? "<span class=\"same\">\(row.value)</span>"
                    out.append("<div class=\"row\"><span>\(html(row.name))</span>\(value)</div>")
                }
            } else {
                out.append("<div class=\"row\"><span class=\"notread\">\(html(s.notRead))</span></div>")
            }
            out.append("</section>")
        }
        let calm = report.inSync && report.outcome == .inSync
        out.append("<section class=\"hints\">" + report.hints(s).map { "<p\(calm ? " class=\"ok\"" : "")>\(html($0))</p>" }.joined() + "</section>")
        if report.history.count >= 2 { out.append(chart(report)) }

        out.append(table(s.sourcesHeading, [s.sideColumn, s.pathColumn, s.statusColumn], report.sides.map { side in
            [html(side.label), "<code>\(html(side.path))</code>", "<span class=\"\(side.status.rawValue)\">\(html(s.status(side.status)))</span>"]
        }))
        if !report.differences.isEmpty {
            out.append(table("\(s.differencesHeading) (\(report.differences.count))",
                             ["", "Id", s.titleColumn, s.whatDiffersColumn, report.local.label, report.remoteColumn(s)],
                             report.differences.map { d in
                [html(d.sigil.rawValue), "<code class=\"id\">\(html(d.id.value))</code>", html(d.title ?? ""), html(report.whatDiffers(d, s)),
                 html(report.describe(d.local, s)), html(report.describeRemote(d, s))]
            }))
        }
        let problems = report.sides.flatMap { side in side.problems.map { (side, $0) } }
        if !problems.isEmpty {
            out.append(table("\(s.problemsHeading) (\(problems.count))", [s.fileColumn, s.whyColumn], problems.map { side, problem in
                ["<code>\(html(joinPath(side.path, problem.path)))</code>", "\(html(s.severity(problem.severity))): \(html(s.reason(problem)))"]
            }))
        }
        if !report.quarantined.isEmpty {
            out.append(table("\(s.quarantinedHeading) (\(report.quarantined.count))", [s.fileColumn, s.copyColumn, "SHA-256", s.whyColumn],
                             report.quarantined.map { q in
                ["<code>\(html(q.source))</code>", "<code>\(html(q.copy))</code>", "<code>\(html(q.sha256))</code>", html(q.reason)]
            }))
        }
        if !report.exports.isEmpty {
            out.append(table(s.exportsHeading, [s.fileColumn, s.memosColumn, s.bytesColumn, "SHA-256"], report.exports.map { e in
                ["<code>\(html(e.path))</code>", String(e.memos), String(e.bytes), e.sha256.map { "<code>\(html($0))</code>" } ?? ""]
            }))
        }
        if !report.timings.isEmpty {
            out.append(table(s.timingsHeading, [s.stageColumn, s.secondsColumn], report.timings.map { [html($0.stage), seconds($0.seconds)] }))
        }
        out.append("</main>\n</body>\n</html>\n")
        return out.joined(separator: "\n")
    }

    /// A titled table whose cells are already escaped HTML.
    func table(_ title: String, _ headers: [String], _ rows: [[String]]) -> String {
        var out = "<section><h2>\(html(title))</h2><div class=\"scroll\"><table><thead><tr>"
        out += headers.map { "<th>\(html($0))</th>" }.joined() + "</tr></thead><tbody>"
        out += rows.map { "<tr>" + $0.map { "<td>\($0)</td>" }.joined() + "</tr>" }.joined()
        return out + "</tbody></table></div></section>"
    }

    /// Active and Archived per side over the last runs, as an inline SVG.
    func chart(_ report: Report) -> String {
        let s = strings
        let width = 640.0, height = 180.0, left = 36.0, right = 12.0, top = 12.0, bottom = 24.0
        let entries = report.history
        let values = entries.flatMap { $0.sides.compactMap(\.counts).flatMap { [$0.active, $0.archived] } }
        let maximum = Double(max(values.max() ?? 1, 1))
        func x(_ i: Int) -> Double { left + (width - left - right) * Double(i) / Double(max(entries.count - 1, 1)) }
        func y(_ v: Int) -> Double { top + (height - top - bottom) * (1 - Double(v) / maximum) }
        func number(_ v: Double) -> String { String(Int(v.rounded())) }
        let colors = ["#1f6fd1", "#e67e00", "#3a9a3a", "#8e44ad", "#c0392b", "#16a085"]
        var shapes: [String] = []
        var legend: [String] = []
        for (index, side) in report.sides.enumerated() {
            let color = colors[index % colors.count]
            for (series, dash, pick) in [(s.active, "", { (c: MemoCounts) in c.active }), (s.archived, " stroke-dasharray=\"5 4\"", { (c: MemoCounts) in c.archived })] {
                let points = entries.enumerated().compactMap { i, entry in
                    entry.sides.first { $0.name == side.name }?.counts.map { "\(number(x(i))),\(number(y(pick($0))))" }
                }
                guard !points.isEmpty else { continue }
                shapes.append("<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(dash) points=\"\(points.joined(separator: " "))\"/>")
                legend.append("<span style=\"color:\(color)\">\(dash.isEmpty ? "━" : "┅") \(html(side.label)) \(html(series))</span>")
            }
        }
        let axis = """
            <line x1="\(number(left))" y1="\(number(height - bottom))" x2="\(number(width - right))" y2="\(number(height - bottom))" stroke="#ccc"/>\
            <text x="4" y="\(number(top + 4))" font-size="11" fill="#6c6c70">\(Int(maximum))</text>\
            <text x="4" y="\(number(height - bottom))" font-size="11" fill="#6c6c70">0</text>\
            <text x="\(number(left))" y="\(number(height - 6))" font-size="11" fill="#6c6c70">\(html(report.display(entries.first!.time)))</text>\
            <text x="\(number(width - right))" y="\(number(height - 6))" font-size="11" fill="#6c6c70" text-anchor="end">\(html(report.display(entries.last!.time)))</text>
            """
        return "<section><h2>\(html(s.historyHeading))</h2><svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(html(s.historyHeading))\">"
            + axis + shapes.joined() + "</svg><p class=\"legend\">" + legend.joined(separator: " &nbsp; ") + "</p></section>"
    }
}

/// Text made safe for HTML, in element content and in quoted attributes.
public func html(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(character)
        }
    }
    return out
}
