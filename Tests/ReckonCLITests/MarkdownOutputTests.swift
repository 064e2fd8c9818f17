import Foundation
import TestSupport
import Testing

extension Requirement {
    /// Debian's `python3-markdown-it`: a CommonMark parser (its `markdown-it`
    /// command runs on the system's python3, which then has the module).
    static let markdownIt = Requirement.tool("markdown-it")
}

/// report.md and plan.md read by a CommonMark parser that no one here wrote.
@Suite(.needs(.markdownIt))
struct MarkdownOutputTests {
    /// Titles that hold Markdown's and HTML's own syntax, entities among them.
    static let titles = [
        "&amp; &lt;", "&#65; &#x42; &copy; &nosemicolon &", "*not bold* _nor this_ **x**", "`code` and \\back\\slash",
        "<b>bold</b> <!-- c -->", "[link](http://x) ![img](y)", "a | b # c", "Tom & Jerry's \"quote\""
    ]

    /// `text` as markdown-it-py writes it in HTML.
    static func html(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// The file rendered to HTML by markdown-it-py's CommonMark with tables (as GitHub shows them).
    static func render(_ file: URL) throws -> String {
        let script = """
            import sys
            from markdown_it import MarkdownIt
            sys.stdout.write(MarkdownIt("commonmark").enable("table").render(open(sys.argv[1], encoding="utf-8").read()))
            """
        let result = try runArray(["-c", script, file.path], executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(result.code == 0, "\(result.stderr)")
        return result.stdout
    }

    /// Each title is a memo only on the remote: a row of report.md's
    /// differences and of plan.md's actions, whose cell shows the title
    /// exactly (`&amp;` is not `&`).
    @Test func everyHostileTitleRendersAsItsOwnText() throws {
        let memos = Self.titles.enumerated().map { n, title in
            memo(String(format: "3F2504E0-4F89-11D3-9A0C-0305E82C33%02d", n), title)
        }
        let local = try memoFolder([])
        let remote = try memoFolder(memos)
        let out = temporaryFolder()
        #expect(try runArray(["reconcile", "--local", local.path, "--remote", remote.path, "--out", out.path]).code == 1)
        let plan = temporaryFolder()
        #expect(try runArray(["plan", "--local", local.path, "--remote", remote.path, "--out", plan.path]).code == 1, "actions planned")
        for file in [out.appendingPathComponent("report.md"), plan.appendingPathComponent("plan.md")] {
            let rendered = try Self.render(file)
            for title in Self.titles {
                #expect(rendered.contains("<td>\(Self.html(title))</td>"), "\(file.lastPathComponent): \(title)")
            }
        }
    }
}
