import Foundation

/// The part of `report.html` where a person reviews each memo that differs:
/// both versions side by side, the text as a line diff, and for each memo
/// that can be compared, the choice of which version to keep. The
/// page's one script, allowed by its hash, turns the choices into the
/// `reckon plan` and `reckon apply` lines; without it the page shows the
/// same versions and the `--take` syntax. Ids, fingerprints and commands
/// come from reckon, never from a memo's text, which is always escaped.
extension HTMLReport {
    /// The most bytes the page spends on memos shown whole. Past it each
    /// memo is shown short (its sign, id, what differs and its choice) and
    /// says how to see it with `reckon show`, so the page grows with the
    /// number of differences, never with the size of memos.
    static let textBudget = 5 << 19

    /// The differences, one stacked entry per memo so that a phone needs
    /// no sideways scrolling, then what carries out the choices made.
    func differences(_ report: Report) -> String {
        let s = strings
        let r = ReviewStrings.forLanguage(s.code)
        var out = "<section><h2>\(html("\(s.differencesHeading) (\(report.differences.count))"))</h2>"
        if report.content != .full { out += "<p class=\"hidden-content\">\(html(r.hidden(report.content)))</p>" }
        out += "<ul class=\"diffs\">"
        var budget = Self.textBudget
        for (index, d) in report.differences.enumerated() {
            let detail = index < report.details.count ? report.details[index] : nil
            let shown = entry(d, number: index, detail: detail, whole: budget > 0, report)
            budget -= shown.utf8.count
            out += shown
        }
        let meanings = s.sigilMeanings(report.local.label, report.remotes.map(\.label).joined(separator: " / "), report.readsStore)
        let legend = zip(["=", "-", "+", "*", "!"], meanings).map { "<code>\(html($0))</code> \(html($1))" }
        out += "</ul><p class=\"legend\">\(html(s.legendHeading)): " + legend.joined(separator: " · ") + "</p></section>"
        return out + carryOut(report)
    }

    /// One memo: sign, short id and title; what differs and which side
    /// moved; both versions; the text; the choice.
    func entry(_ d: Difference, number: Int, detail: MemoDetail?, whole: Bool, _ report: Report) -> String {
        let s = strings
        let id = d.id.value
        let offer = report.repair == nil ? nil : detail?.choice
        var attributes = "class=\"memo\" id=\"memo-\(number)\""
        if let offer {
            attributes += " data-id=\"\(html(id))\" data-remote=\"\(html(d.remote))\""
            attributes += " data-local-print=\"\(html(detail?.localPrint ?? ""))\" data-remote-print=\"\(html(detail?.remotePrint ?? ""))\""
            attributes += " data-newer=\"\(offer.newer?.rawValue ?? "")\""
        }
        var out =
            "<li \(attributes)><span class=\"sigil\">\(html(d.sigil.rawValue))</span> <code class=\"id\" title=\"\(html(id))\">\(html(String(id.prefix(8))))</code>"
        let title = detail?.local?.title ?? detail?.remote?.title ?? d.title
        if whole, report.content != .none, let title, !title.isEmpty { out += " <span class=\"memo-title\">\(html(shortened(title)))</span>" }
        out += "<br><span class=\"what\">\(html(report.whatDiffers(d, s)))</span>"
        if whole {
            out += versions(d, detail, report)
            out += problems(d, report)
            if report.content == .full, let detail, detail.read { out += text(d, detail, report) }
        } else {
            out += "<p class=\"cut\">\(html(ReviewStrings.forLanguage(s.code).notShownBudget("reckon show \(id)")))</p>"
        }
        if let offer { out += choice(d, number: number, offer, detail: detail, report) }
        return out + "</li>"
    }

    /// Each field on both sides, a row each, the rows that differ marked in words.
    func versions(_ d: Difference, _ detail: MemoDetail?, _ report: Report) -> String {
        let r = ReviewStrings.forLanguage(strings.code)
        let remote = report.label(ofRemote: d.remote)
        let states = [d.local, d.remoteState]
        let memos = [detail?.local, detail?.remote]
        let read = detail?.read ?? false
        func present(_ side: Int) -> Bool { states[side].modifiedTime != nil || memos[side] != nil }
        func time(_ value: Timestamp?) -> String { value.map(report.display) ?? r.notSet }
        func memoField(_ side: Int, _ value: (Memo) -> String) -> String {
            guard present(side) else { return r.notOnSide }
            guard read else { return r.notReadQuick }
            return memos[side].map(value) ?? strings.notRead
        }
        var rows: [(String, [String])] = []
        if report.content != .none {
            rows.append(("title", [0, 1].map { side in memoField(side) { shortened($0.title ?? "") } }))
            rows.append(("tags", [0, 1].map { side in memoField(side) { shortened($0.tags.joined(separator: ", ")) } }))
        }
        rows.append(("created", [0, 1].map { side in memoField(side) { $0.createdAt.map(report.display) ?? r.notSet } }))
        rows.append(("modified", [0, 1].map { present($0) ? time(states[$0].modifiedTime ?? memos[$0]?.modifiedAt) : r.notOnSide }))
        rows.append(("archived", [0, 1].map { present($0) ? time(states[$0].archivedAt ?? memos[$0]?.archivedAt) : r.notOnSide }))
        rows.append(("deleted", [0, 1].map { present($0) ? time(states[$0].deletedAt ?? memos[$0]?.deletedAt) : r.notOnSide }))
        var out = "<table class=\"versions\"><thead><tr><th></th><th>\(html(report.local.label))</th><th>\(html(remote))</th></tr></thead><tbody>"
        for (field, values) in rows {
            let unknown = [r.notReadQuick, strings.notRead, r.notOnSide]
            let differs = values[0] != values[1] && !values.contains(where: unknown.contains)
            let mark = differs ? " <span class=\"mark\">≠ \(html(r.fieldDiffers))</span>" : ""
            out += "<tr\(differs ? " class=\"differs\"" : "")><th>\(html(r.field(field)))\(mark)</th>"
            out += values.map { "<td>\(html($0))</td>" }.joined() + "</tr>"
        }
        return out + "</tbody></table>"
    }

    /// A title or tags as the page shows them: at most 300 characters, then "…".
    func shortened(_ text: String) -> String { text.count > 300 ? String(text.prefix(300)) + "…" : text }

    /// For `!`: each side's problem and where the damaged file's copy is.
    func problems(_ d: Difference, _ report: Report) -> String {
        let r = ReviewStrings.forLanguage(strings.code)
        var out = ""
        for (side, state) in [(report.local, d.local), (report.sides.first { $0.name == d.remote }!, d.remoteState)] {
            guard let problem = state.problem else { continue }
            out += "<p class=\"problem\">\(html(side.label)): \(html(problem))</p>"
            let name = d.id.value.lowercased()
            for record in report.quarantined where record.side == side.name && record.source.lowercased().contains(name) {
                out += "<p class=\"problem\">\(html(r.quarantinedAt(report.shownPath(record, from: currentFolder))))</p>"
            }
        }
        return out
    }

    /// The text: a line diff when both sides hold the memo, else the first lines of the one that does.
    func text(_ d: Difference, _ detail: MemoDetail, _ report: Report) -> String {
        let r = ReviewStrings.forLanguage(strings.code)
        let heading = "<p class=\"text-heading\">\(html(r.field("body")))</p>"
        switch (detail.local, detail.remote) {
        case (let local?, let remote?):
            let diff = LineDiff(old: local.body ?? "", new: remote.body ?? "")
            if diff.differsUnseen {
                return heading + "<p class=\"cut\">\(html(r.differsUnseen("reckon show \(d.id.value)")))</p>"
                    + [diff.oldCutFrom, diff.newCutFrom].compactMap { $0 }.map { "<p class=\"cut\">\(html(r.cut($0)))</p>" }.joined()
            }
            if diff.isEmpty { return "<p class=\"same-text\">\(html(r.bodySame))</p>" }
            let marks = r.diffMarks(report.local.label, report.label(ofRemote: d.remote))
            var out = heading + "<p class=\"marks\">\(html(marks))</p><pre class=\"diff\">"
            for piece in diff.pieces {
                switch piece {
                case .same(let line): out += "<span class=\"ctx\">  \(html(line))</span>"
                case .removed(let line): out += "<del>- \(html(line))</del>"
                case .added(let line): out += "<ins>+ \(html(line))</ins>"
                case .folded(let count): out += "<span class=\"fold\">⋯ \(html(r.folded(count)))</span>"
                }
            }
            out += "</pre>"
            for size in [diff.oldCutFrom, diff.newCutFrom].compactMap({ $0 }) { out += "<p class=\"cut\">\(html(r.cut(size)))</p>" }
            return out
        case (let one?, nil), (nil, let one?):
            let lines = (one.body ?? "").split(separator: "\n", omittingEmptySubsequences: true).prefix(3).map { String($0.prefix(200)) }
            guard !lines.isEmpty else { return "" }
            return "<p class=\"text-heading\">\(html(r.firstLines))</p><pre class=\"diff\">\(lines.map(html).joined(separator: "\n"))</pre>"
        case (nil, nil):
            return ""
        }
    }

    /// The choices offered for one memo as radio buttons, chosen at first
    /// the side that alone changed since the last run, else "leave it"; those not offered are named with why; then the `--take`
    /// syntax for this memo, which a page without scripts still shows.
    func choice(_ d: Difference, number: Int, _ offer: ChoiceOffer, detail: MemoDetail?, _ report: Report) -> String {
        let r = ReviewStrings.forLanguage(strings.code)
        let labels: [ConflictChoices.Take: String] = [
            .local: r.keep(report.local.label), .remote: r.keep(report.label(ofRemote: d.remote)), .both: r.keepBoth
        ]
        var out = "<fieldset class=\"choice\"><legend>\(html(r.chooseLegend))</legend>"
        let first = offer.preselected?.rawValue ?? ""
        for (value, label) in offer.offered.map({ ($0.rawValue, labels[$0]!) }) + [("", r.leave)] {
            let control = "choice-\(number)-\(value.isEmpty ? "leave" : value)"
            out += "<input type=\"radio\" name=\"choice-\(number)\" id=\"\(control)\" value=\"\(value)\"\(value == first ? " checked" : "")>"
            out += "<label for=\"\(control)\">\(html(label))</label>"
        }
        if let moved = offer.preselected {
            out +=
                "<p class=\"why\">\(html(r.preselected(moved == .local ? report.local.label : report.label(ofRemote: d.remote), d.agreedAt?.day)))</p>"
        }
        out += offer.refused.map { "<p class=\"why\">\(html(r.notOffered(labels[$0.take]!, r.refusal($0.why))))</p>" }.joined()
        if !offer.offered.isEmpty {
            // With what the report saw of each side, so that a plan refuses the choice for a memo changed since.
            let seen = ChoiceRequest.Seen(
                local: detail?.localPrint.flatMap { Fingerprint(token: $0) }, remote: detail?.remotePrint.flatMap { Fingerprint(token: $0) })
            out += "<code class=\"take\">--take \(html(d.id.value))=\(offer.offered.map(\.rawValue).joined(separator: "|"))@\(html(seen.text))</code>"
        }
        return out + "</fieldset>"
    }

    /// Per remote with a memo to choose for: the plan and apply lines and
    /// the choices file, which the script fills as choices are made.
    func carryOut(_ report: Report) -> String {
        guard let repair = report.repair else { return "" }
        let r = ReviewStrings.forLanguage(strings.code)
        var out = ""
        for (index, remote) in report.remotes.enumerated() {
            let choosing = zip(report.differences, report.details).contains { $0.remote == remote.name && $1.choice != nil }
            guard choosing else { continue }
            let plan = repair.planWithoutChoices(remote: remote.name)
            out += "<section class=\"carry\" data-remote=\"\(html(remote.name))\" data-pipeline=\"\(html(report.pipeline))\""
            out += " data-plan=\"\(html(plan))\"><h2>\(html(r.carryOutHeading))</h2>"
            if report.remotes.count > 1 { out += "<p><strong>\(html(r.carryOutFor(remote.label)))</strong></p>" }
            out += "<p>\(html(r.carryOutHelp))</p>"
            out += "<div class=\"tools\" hidden><button type=\"button\" class=\"newer\">\(html(r.newerForAll))</button>"
            out += "<button type=\"button\" class=\"reset\">\(html(r.reset))</button></div>"
            for (kind, label, text) in [("plan", r.planLine, plan), ("apply", r.applyLine, repair.apply), ("choices", r.choicesFile, "")] {
                let field = "\(kind)-\(index)"
                out += "<div class=\"line\(kind == "choices" ? " scripted" : "")\"\(kind == "choices" ? " hidden" : "")>"
                out += "<label for=\"\(field)\">\(html(label))</label>"
                out +=
                    "<textarea id=\"\(field)\" class=\"\(kind)\" readonly rows=\"\(kind == "choices" ? 8 : 3)\" spellcheck=\"false\">\(html(text))</textarea>"
                out += "<button type=\"button\" class=\"copy\" data-for=\"\(field)\" data-done=\"\(html(r.copied))\" hidden>\(html(r.copy))</button>"
                if kind == "choices" { out += "<a class=\"save\" download=\"choices.json\" href=\"#\">\(html(r.save))</a>" }
                out += "</div>"
            }
            out += "<p class=\"syntax\">\(html(r.takeSyntax))</p></section>"
        }
        return out
    }

    /// The page's one script: it reads only what reckon wrote into the
    /// page's attributes (ids, fingerprints, commands), never a memo's text.
    static let script = """
        (function () {
          'use strict';
          var memos = Array.prototype.slice.call(document.querySelectorAll('li.memo[data-id]'));
          var blocks = Array.prototype.slice.call(document.querySelectorAll('section.carry'));
          function chosen(memo) {
            var input = memo.querySelector('input[type=radio]:checked');
            return input ? input.value : '';
          }
          function choose(memo, value) {
            memo.querySelectorAll('input[type=radio]').forEach(function (input) { input.checked = input.value === value; });
          }
          function update() {
            blocks.forEach(function (block) {
              var words = [block.dataset.plan];
              var choices = [];
              memos.forEach(function (memo) {
                var take = chosen(memo);
                if (memo.dataset.remote !== block.dataset.remote || take === '') { return; }
                words.push('--take ' + memo.dataset.id + '=' + take + '@' + (memo.dataset.localPrint || 'none') + ',' + (memo.dataset.remotePrint || 'none'));
                choices.push({ id: memo.dataset.id, take: take, local: memo.dataset.localPrint || null, remote: memo.dataset.remotePrint || null });
              });
              var file = JSON.stringify({ schemaVersion: 1, pipeline: block.dataset.pipeline, remote: block.dataset.remote, choices: choices }, null, 2) + '\\n';
              block.querySelector('textarea.plan').value = words.join(' ');
              block.querySelector('textarea.choices').value = file;
              block.querySelector('a.save').href = 'data:application/json;charset=utf-8,' + encodeURIComponent(file);
            });
          }
          blocks.forEach(function (block) {
            block.querySelectorAll('[hidden]').forEach(function (element) { element.hidden = false; });
            block.querySelector('button.newer').addEventListener('click', function () {
              memos.forEach(function (memo) {
                if (memo.dataset.remote === block.dataset.remote && chosen(memo) === '' && memo.dataset.newer) { choose(memo, memo.dataset.newer); }
              });
              update();
            });
            block.querySelector('button.reset').addEventListener('click', function () {
              memos.forEach(function (memo) { if (memo.dataset.remote === block.dataset.remote) { choose(memo, ''); } });
              update();
            });
            block.querySelectorAll('button.copy').forEach(function (button) {
              button.addEventListener('click', function () {
                var field = document.getElementById(button.dataset.for);
                field.select();
                var done = function () { button.textContent = button.dataset.done; };
                if (navigator.clipboard && navigator.clipboard.writeText) {
                  navigator.clipboard.writeText(field.value).then(done, function () { if (document.execCommand('copy')) { done(); } });
                } else if (document.execCommand('copy')) {
                  done();
                }
              });
            });
          });
          memos.forEach(function (memo) {
            memo.querySelectorAll('input[type=radio]').forEach(function (input) { input.addEventListener('change', update); });
          });
          update();
        })();
        """

    /// A script's hash, as a Content-Security-Policy allows it: `sha256-` and the digest in base64.
    static func policyHash(of script: String) -> String {
        "sha256-" + Data(script.utf8).withUnsafeBytes { SHA256.digest(of: $0) }.base64
    }

    /// How the review's parts look; every control is at least 44 px tall, to be tapped on a phone.
    static let reviewStyle = """
        .versions { margin: 6px 0; font-size: .8rem; table-layout: fixed; }
        .versions th:first-child { width: 28%; }
        .versions tr.differs td, .versions tr.differs th { background: #fff4e5; }
        .versions .mark { color: #a35200; font-weight: 600; white-space: nowrap; }
        .problem { color: #a93226; margin: 4px 0; }
        .text-heading { margin: 6px 0 2px; color: #6c6c70; font-size: .8rem; }
        .marks { margin: 0 0 2px; }
        pre.diff { margin: 0; padding: 6px 8px; background: #f8f8fa; border-radius: 6px; font: .8rem/1.4 ui-monospace, "DejaVu Sans Mono", monospace; white-space: pre-wrap; overflow-wrap: anywhere; }
        pre.diff del { display: block; background: #fdecea; color: #8e2a1e; text-decoration: none; }
        pre.diff ins { display: block; background: #e8f5e9; color: #1e5e24; text-decoration: none; }
        pre.diff .ctx { display: block; }
        pre.diff .fold { display: block; color: #6c6c70; font-style: italic; }
        .cut, .same-text, .hidden-content, .marks { color: #6c6c70; font-size: .8rem; }
        fieldset.choice { border: 1px solid #ececf0; border-radius: 8px; margin: 8px 0 0; padding: 4px 8px 8px; }
        fieldset.choice legend { font-size: .8rem; color: #6c6c70; }
        fieldset.choice input[type=radio] { position: absolute; opacity: 0; width: 1px; height: 1px; }
        fieldset.choice label { display: inline-flex; align-items: center; min-height: 44px; min-width: 44px; box-sizing: border-box; padding: 0 12px; margin: 4px 4px 0 0; border: 1px solid #c7c7cc; border-radius: 8px; cursor: pointer; }
        fieldset.choice input:checked + label { background: #1f6fd1; border-color: #1f6fd1; color: #fff; font-weight: 600; }
        fieldset.choice input:checked + label::before { content: "✓ "; }
        fieldset.choice input:focus-visible + label { outline: 2px solid #1f6fd1; outline-offset: 2px; }
        .why { color: #6c6c70; font-size: .8rem; margin: 4px 0 0; }
        code.take { display: block; margin-top: 6px; color: #6c6c70; }
        .carry { background: #fff; border-radius: 12px; padding: 12px 16px; margin: 12px 0; }
        .carry h2 { margin-top: 0; }
        .carry .line { margin: 8px 0; }
        .carry label { display: flex; align-items: flex-end; min-height: 44px; box-sizing: border-box; padding-bottom: 4px; font-size: .85rem; color: #6c6c70; }
        .carry textarea { display: block; width: 100%; box-sizing: border-box; font: .8rem ui-monospace, "DejaVu Sans Mono", monospace; }
        .carry button, .carry a.save { display: inline-flex; align-items: center; justify-content: center; min-height: 44px; min-width: 44px; box-sizing: border-box; padding: 0 14px; margin: 6px 6px 0 0; border: 1px solid #c7c7cc; border-radius: 8px; background: #f4f4f6; color: #1c1c1e; font: inherit; text-decoration: none; cursor: pointer; }
        [hidden] { display: none !important; }
        """
}
