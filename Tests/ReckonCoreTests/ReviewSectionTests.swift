import Foundation
import Testing

@testable import ReckonCore

/// The part of the report where a person reviews a memo and chooses a version.
@Suite struct ReviewSectionTests {
    static let id = MemoID("3F2504E0-4F89-11D3-9A0C-0305E82C3301")!
    static let folder = URL(fileURLWithPath: "/nowhere/side")
    static let local = SideSpec(role: .local, name: "device", label: "this device", path: "device", kind: .folder(folder))
    static let remote = SideSpec(role: .remote, name: "drive", label: "Google Drive", path: "drive", kind: .folder(folder))

    static func time(_ text: String) -> Timestamp { Timestamp(iso8601: text)! }

    /// A `*` memo edited on both sides (no baseline), with the given texts and titles.
    func report(
        localBody: String = "one\ntwo\nthree", remoteBody: String = "one\n2\nthree", title: String = "Trip", content: ReportContent = .full,
        local: SideSpec = ReviewSectionTests.local, remote: SideSpec = ReviewSectionTests.remote, read: Bool = true, count: Int = 1
    ) -> Report {
        var differences: [Difference] = []
        var details: [MemoDetail] = []
        for n in 0..<count {
            let id = count == 1 ? Self.id : MemoID(String(format: "3F2504E0-4F89-11D3-9A0C-%012X", n))!
            let l = IndexEntry(id: id, modifiedTime: Self.time("2026-04-01T08:00:00Z"))
            let r = IndexEntry(id: id, modifiedTime: Self.time("2026-04-02T08:00:00Z"))
            var difference = Difference(
                remote: "drive", id: id, sigil: .differs, kind: .changed, fields: ["body", "modifiedTime"], title: title, local: .init(l),
                remoteState: .init(r))
            difference.changed = .unknown
            differences.append(difference)
            details.append(
                MemoDetail(
                    local: read ? Memo(id: id, title: title, body: localBody, modifiedAt: l.modifiedTime, tags: ["trip"]) : nil,
                    remote: read ? Memo(id: id, title: title, body: remoteBody, modifiedAt: r.modifiedTime, tags: ["trip"]) : nil,
                    localPrint: Fingerprint(l, digest: 1).token, remotePrint: Fingerprint(r, digest: 2).token, read: read,
                    choice: ChoiceOffer(difference, local: .init(local), remote: .init(remote))))
        }
        var report = Report(
            pipeline: "p", check: read ? .deep : .quick, sides: [SideReport(SideListing(spec: local)), SideReport(SideListing(spec: remote))],
            inSync: false, outcome: .drift, differences: differences, quarantined: [], exports: [])
        report.details = details
        report.content = content
        report.repair = .pipeline(
            {
                var definition = PipelineDefinition(name: "p", local: local, remotes: [remote])
                definition.file = URL(fileURLWithPath: "/home/a b/it's.json")
                definition.stateDir = URL(fileURLWithPath: "/home/a b/state")
                return definition
            }())
        return report
    }

    @Test func bothVersionsAndTheTextDiffAreShown() {
        let page = HTMLReport().render(report())
        #expect(page.contains("<th>this device</th><th>Google Drive</th>"))
        #expect(
            page.contains("<tr class=\"differs\"><th>Modified <span class=\"mark\">≠ differs</span></th>"), "marked in words, not by colour alone")
        #expect(page.contains("<tr><th>Tags</th><td>trip</td><td>trip</td></tr>"))
        #expect(page.contains("<span class=\"ctx\">  one</span><del>- two</del><ins>+ 2</ins><span class=\"ctx\">  three</span>"))
        let markdown = MarkdownReport().render(report())
        #expect(markdown.contains("```diff\n  one\n- two\n+ 2\n  three\n```"))
    }

    /// Memo text is escaped in the diff and the title, and never reaches
    /// the command: the page's commands hold only what reckon wrote.
    @Test func memoTextIsEscapedAndNeverReachesTheCommand() throws {
        let hostile = #"<img src=x onerror=alert(1)>' --take 00000000-0000-0000-0000-000000000000=remote ""#
        let page = HTMLReport().render(report(localBody: hostile, remoteBody: "", title: hostile))
        #expect(!page.contains("<img"))
        #expect(page.contains("<del>- &lt;img src=x onerror=alert(1)&gt;&#39; --take"))
        let plan = try #require(page.firstMatch(of: /data-plan="(?<plan>[^"]*)"/)?.plan)
        #expect(plan == "reckon plan &#39;/home/a b/it&#39;\\&#39;&#39;s.json&#39;", "the definition's path, POSIX single-quoted")
        #expect(!page.contains("00000000-0000-0000-0000-000000000000=remote</code>"))
        let ids = page.matches(of: /data-id="(?<id>[^"]*)"/).map { String($0.id) }
        #expect(ids == [Self.id.value])
    }

    @Test func titlesLeavesOutTheTextAndNoneLeavesOutTitlesAndTags() {
        let titles = HTMLReport().render(report(localBody: "secret-local", remoteBody: "secret-remote", content: .titles))
        #expect(!titles.contains("secret-"))
        #expect(titles.contains("Trip"))
        #expect(titles.contains("reports.content: titles"))
        let none = HTMLReport().render(report(localBody: "secret-local", remoteBody: "secret-remote", title: "Secret title", content: .none))
        #expect(!none.contains("secret-") && !none.contains("Secret title") && !none.contains(">trip<"))
        #expect(none.contains("≠ differs"), "the names of the fields that differ are still shown")
        let markdown = MarkdownReport().render(report(localBody: "secret-local", title: "Secret title", content: .none))
        #expect(!markdown.contains("secret-") && !markdown.contains("Secret title"))
    }

    /// Texts that differ only past the 256 KiB compared are never called the same.
    @Test func textsThatDifferPastTheCutAreNotCalledTheSame() {
        let long = String(repeating: "a line of a long memo\n", count: 14_000)
        let page = HTMLReport().render(report(localBody: long, remoteBody: long + "changed at the end\n"))
        #expect(!page.contains("The text is the same on both sides."))
        #expect(page.contains("≠ The texts differ past what is compared here: after their first 256 KiB, or only in a last line break."))
        #expect(page.contains("The text is 308000 bytes long; only its first 256 KiB are compared here."))
        let markdown = MarkdownReport().render(report(localBody: long, remoteBody: long + "changed at the end\n"))
        #expect(markdown.contains("≠ The texts differ past what is compared here"))
        #expect(LineDiff(old: "a", new: "a\n").differsUnseen)
        #expect(!LineDiff(old: "a\nb", new: "a\nb").differsUnseen)
    }

    @Test func aQuickCheckSaysWhatWasNotRead() {
        let page = HTMLReport().render(report(read: false))
        #expect(page.contains("<tr><th>Title</th><td>not read in a quick check</td><td>not read in a quick check</td></tr>"))
        #expect(!page.contains("<pre class=\"diff\">"))
    }

    /// A choice that would write a side reckon may not write is not offered, and the page says why.
    @Test func choicesThatWouldWriteASideThatCannotBeWrittenAreNotOffered() {
        var readOnly = Self.remote
        readOnly.readOnly = true
        let page = HTMLReport().render(report(remote: readOnly))
        #expect(!page.contains("value=\"local\""), "keeping this device's version would write Google Drive")
        #expect(!page.contains("value=\"both\""))
        #expect(page.contains("value=\"remote\""))
        #expect(page.contains("Keep this device&#39;s is not offered: Google Drive is marked &quot;readOnly&quot;: true."))

        let store = SideSpec(
            role: .local, name: "device", label: "this device", path: "app.sqlite",
            kind: .store(AppStoreSide(url: Self.folder, isBackup: false)))
        let storePage = HTMLReport().render(report(local: store))
        #expect(!storePage.contains("value=\"remote\""))
        #expect(storePage.contains("the app&#39;s own store, which reckon never writes"))
        #expect(storePage.contains("--take \(Self.id.value)=local@"), "with what the report saw of each side")
    }

    /// With two remotes, each has its own plan line naming it with `--remote`, and its memos' choices only.
    @Test func eachRemoteHasItsOwnPlanLine() throws {
        var two = report()
        let office = SideSpec(role: .remote, name: "office", label: "Office NAS", path: "nas", kind: .folder(Self.folder))
        two.sides.append(SideReport(SideListing(spec: office)))
        var other = two.differences[0]
        other.remote = "office"
        two.differences.append(other)
        two.details.append(two.details[0])
        two.repair = .pipeline(
            {
                var definition = PipelineDefinition(name: "p", local: Self.local, remotes: [Self.remote, office])
                definition.file = URL(fileURLWithPath: "/home/me/p.json")
                definition.stateDir = URL(fileURLWithPath: "/home/me/state")
                return definition
            }())
        let page = HTMLReport().render(two)
        let plans = page.matches(of: /data-plan="(?<plan>[^"]*)"/).map { String($0.plan) }
        #expect(
            plans == [
                "reckon plan &#39;/home/me/p.json&#39; --remote &#39;drive&#39;", "reckon plan &#39;/home/me/p.json&#39; --remote &#39;office&#39;"
            ])
        #expect(page.contains("<p><strong>For Office NAS</strong></p>"))
        #expect(page.components(separatedBy: "data-remote=\"office\"").count == 3, "one memo and one block")
    }

    /// 1,500 differences with long texts: the page stays under 5 MB, and
    /// the memos past its budget are shown short, saying how to see them.
    @Test func thePageGrowsWithTheDifferencesNotTheMemos() {
        let long = (0..<300).map { "line \($0) of a long memo" }.joined(separator: "\n")
        let page = HTMLReport().render(report(localBody: long, remoteBody: long.replacingOccurrences(of: "of a", with: "of one"), count: 1500))
        #expect(page.utf8.count <= 5_000_000, "\(page.utf8.count) bytes")
        #expect(page.contains("Shown short: this page already holds as much as it shows of memos. See this one with: reckon show "))
        #expect(page.components(separatedBy: "<fieldset class=\"choice\">").count == 1501, "every memo keeps its choice")
    }
}
