import Foundation
import ReckonCore
import TestSupport
import Testing

/// Command lines and words a person copies out of reckon's outputs (issue 51,
/// items 7 to 10 and 14): each says what it means, and each line runs as printed.
@Suite struct CopiedWordsTests {
    /// The arguments a shell hands to `reckon` for `line` (which starts with
    /// `reckon `): bash runs it with `reckon` a function that prints them.
    static func arguments(of line: String) throws -> [String] {
        let result = try runTool("bash", ["-c", "reckon() { printf '%s\\0' \"$@\"; }\n" + line], in: temporaryFolder())
        #expect(result.code == 0, "\(line): \(result.stderr)")
        return result.stdout.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// The rest of the line of `text` from where `start` is in it.
    static func line(from start: String, in text: String) throws -> String {
        let found = try #require(text.firstRange(of: start), "\(text)")
        return String(text[found.lowerBound...].prefix { $0 != "\n" })
    }

    /// Text in an HTML attribute or element as reckon's `html` wrote it.
    static func unescaped(_ text: some StringProtocol) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// With a tab, a line break and a quote in the sides' paths, every plan,
    /// apply and undo line reckon prints or writes (report.md, report.html,
    /// plan, apply) holds no control character and hands the shell those paths.
    @Test func commandLinesWithATabOrALineBreakInAPathRunInAShell() throws {
        let base = temporaryFolder().appendingPathComponent("memos\tof\nit's")
        try FolderMemo.write([FolderMemo(id: ShowCommandTests.groceries)], to: base.appendingPathComponent("device"))
        try FolderMemo.write([FolderMemo(id: ShowCommandTests.groceries, body: "Milk")], to: base.appendingPathComponent("drive"))
        let (device, drive, out) = (realPath(base.path + "/device"), realPath(base.path + "/drive"), realPath(base.path) + "/out")
        let sides = ["--local", device, "--remote", drive, "--out", out]
        let reconciled = try runArray(["reconcile"] + sides)
        #expect(reconciled.code == 1, "\(reconciled.stderr)")

        var lines: [String] = []
        let markdown = try read(URL(fileURLWithPath: out).appendingPathComponent("report.md"))
        let fence = try #require(markdown.firstRange(of: "```sh\n"))
        lines += markdown[fence.upperBound...].prefix { $0 != "`" }.split(separator: "\n").map(String.init)
        let page = try read(URL(fileURLWithPath: out).appendingPathComponent("report.html"))
        lines += page.matches(of: /data-plan="([^"]*)"/).map { Self.unescaped($0.output.1) }
        lines += page.matches(of: /<textarea[^>]*class="(?:plan|apply)"[^>]*>([^<]*)</).map { Self.unescaped($0.output.1) }
        let planned = try runArray(["plan"] + sides + ["--take", "\(ShowCommandTests.groceries)=remote"])
        #expect(planned.code == 1, "\(planned.stderr)")
        lines.append(try Self.line(from: "reckon apply ", in: planned.stdout))
        let plan = out + "/plan.json"
        let applied = try runArray(["apply", plan, "--yes"])
        #expect(applied.code == 0, "\(applied.stderr)")
        lines.append(try Self.line(from: "reckon undo ", in: applied.stdout))

        #expect(lines.count == 7, "\(lines)")
        for line in lines {
            #expect(!line.unicodeScalars.contains(where: needsEscape), "\(line)")
            let words = try Self.arguments(of: line)
            switch words.first {
            case "plan": #expect(Array(words.prefix(7)) == ["plan"] + sides, "\(line)")
            case "apply": #expect(words == ["apply", plan], "\(line)")
            case "undo": #expect(words.count == 4 && words[2...] == ["--state", out + "/state"], "\(line)")
            default: Issue.record("\(line)")
            }
        }
        #expect(try Self.arguments(of: "reckon " + RepairCommand.quoted("")) == [""])
    }
}

extension CopiedWordsTests {
    /// A folder whose path holds a tab or a line break cannot be named by a
    /// crontab line or a systemd `ExecStart=`: init refuses it and writes nothing.
    @Test(arguments: ["a\tb", "a\nb"])
    func initRefusesAFolderWhosePathHoldsAControlCharacter(_ name: String) throws {
        let parent = temporaryFolder()
        let dir = parent.appendingPathComponent(name)
        let result = try reckon("init", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--dir", dir.path)
        #expect(result.code == 64, "\(result.stdout)")
        #expect(result.stderr.contains("holds a control character (such as a tab or a line break)"), "\(result.stderr)")
        #expect(result.stderr.contains("which a crontab line and a systemd ExecStart= line cannot name; nothing was written"))
        #expect(!result.stderr.contains(name), "the path is shown escaped")
        #expect(FileKind(path: dir.appendingPathComponent("reckon.json").path) == .missing)
        #expect(result.stdout.isEmpty)
        // The same folder reached as '.' from inside it.
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let here = try runArray(
            ["init", "--local", packageRoot.path + "/Samples/drift/device", "--remote", packageRoot.path + "/Samples/drift/drive", "--dir", "."],
            in: dir)
        #expect(here.code == 64 && here.stderr.contains("holds a control character"), "\(here.stdout)\(here.stderr)")
        #expect(FileKind(path: dir.appendingPathComponent("reckon.json").path) == .missing)
    }
}

extension CopiedWordsTests {
    /// With two remotes, a memo that differs alike from both, or cannot be
    /// compared on both, has one line per remote in the terminal's list, each
    /// naming its remote, and report.md's text diffs say which remote each is.
    @Test func twoRemotesNameTheRemoteOnEachDifferenceLine() throws {
        let folder = temporaryFolder()
        let damaged = ShowCommandTests.twin
        try FolderMemo.write([FolderMemo(id: ShowCommandTests.groceries), FolderMemo(id: damaged)], to: folder.appendingPathComponent("device"))
        for remote in ["drive", "nas"] {
            let url = folder.appendingPathComponent(remote)
            try FolderMemo.write([FolderMemo(id: ShowCommandTests.groceries, body: "Milk"), FolderMemo(id: damaged)], to: url)
            try Data("{".utf8).write(to: url.appendingPathComponent("memos/\(damaged).json"))
        }
        try Data(
            #"""
            {"name": "home", "local": {"label": "my phone", "path": "device"},
             "remotes": [{"name": "drive", "label": "Drive", "path": "drive"}, {"name": "nas", "label": "the NAS", "path": "nas"}],
             "reports": {"dir": "out"}}
            """#.utf8
        ).write(to: folder.appendingPathComponent("p.json"))
        let run = try runArray(["run", "p.json"], in: folder)
        #expect(run.code == 2, "\(run.stderr)")
        let listed = run.stdout.split(separator: "\n").filter { $0.hasPrefix("  * ") || $0.hasPrefix("  ! ") }
        #expect(listed.count == 4, "\(run.stdout)")
        #expect(Set(listed).count == 4, "no two lines alike: \(run.stdout)")
        #expect(listed.filter { $0.contains("  Drive: ") }.count == 2 && listed.filter { $0.contains("  the NAS: ") }.count == 2, "\(run.stdout)")
        let markdown = try read(folder.appendingPathComponent("out/report.md"))
        let id = ShowCommandTests.groceries.lowercased()
        #expect(markdown.contains("### `\(id)` Text (Drive)\n") && markdown.contains("### `\(id)` Text (the NAS)\n"), "\(markdown)")
    }
}

extension CopiedWordsTests {
    /// Two texts past the 256 KiB compared, cut at the same size but at other
    /// lines (the remote has lines more near the start): the lines past the
    /// first cut are left out, never shown as removed, and the counts follow.
    @Test func aDiffCutAt256KiBShowsNoUnchangedLineAsRemoved() throws {
        let lines = (1...30_000).map { String(format: "line %05d of the long memo", $0) }
        let inserted = (1...100).map { "inserted line \($0)" }
        let folder = try ShowCommandTests.sides(
            device: FolderMemo(id: ShowCommandTests.groceries, body: lines.joined(separator: "\n")),
            drive: FolderMemo(id: ShowCommandTests.groceries, body: (Array(lines[..<10]) + inserted + lines[10...]).joined(separator: "\n")))
        let shown = try ShowCommandTests.show(["3f2504e0"], in: folder)
        #expect(shown.code == 1, "\(shown.stderr)")
        #expect(shown.stdout.contains("body (- this device, + Google Drive; 0 removed, 100 added):\n"), "\(shown.stdout.prefix(2000))")
        #expect(!shown.stdout.contains("\n- "), "no line is shown removed")
    }
}

extension CopiedWordsTests {
    /// A plan applied twice: the second run finds every action already
    /// done, writes no memo file and says so, offering no backups and no undo;
    /// undo of that run says it wrote nothing, rather than that the plan had no action.
    @Test func aPlanAppliedTwiceSaysItWasAlreadyDoneAndNeededNoBackup() throws {
        let folder = try ShowCommandTests.sides(drive: FolderMemo(id: ShowCommandTests.groceries, body: "Milk"))
        func reckon(_ arguments: [String], at seconds: Int) throws -> RunResult {
            try runArray(arguments, environment: ["SOURCE_DATE_EPOCH": String(1_776_600_000 + seconds)], in: folder)
        }
        let plan = ["apply", "out/plan.json", "--yes"]
        let planned = try reckon(
            ["plan", "--local", "device", "--remote", "drive", "--out", "out", "--take", "\(ShowCommandTests.groceries)=local"], at: 0)
        #expect(planned.code == 1, "\(planned.stderr)")
        let first = try reckon(plan, at: 10)
        #expect(first.code == 0 && first.stdout.contains("1 action: 1 applied\nBackups are in "), "\(first.stdout)\(first.stderr)")
        let second = try reckon(plan, at: 20)
        #expect(second.code == 0, "\(second.stderr)")
        #expect(
            second.stdout.hasSuffix(
                "1 action: 1 already done\n"
                    + "Everything in the plan was already done: no memo file was written, so no backup was needed and this run has nothing to undo.\n"
            ),
            "\(second.stdout)")
        #expect(!second.stdout.contains("Backups are in") && !second.stdout.contains("reckon undo"))
        let undone = try reckon(["undo", "20260419T120020Z", "--state", "out/state"], at: 30)
        #expect(undone.code == 0, "\(undone.stderr)")
        #expect(
            undone.stdout.contains(
                "Run 20260419T120020Z changed no memo (the actions of its plan were already done, or not carried out), so there is nothing to undo.\n"
            ),
            "\(undone.stdout)")
        #expect(!undone.stdout.contains("No action in the plan"))
        let japanese = try reckon(plan + ["--lang", "ja"], at: 40)
        #expect(japanese.stdout.contains("計画の操作はすべて適用済みでした。"), "\(japanese.stdout)")
    }
}

extension CopiedWordsTests {
    /// A plan folder whose path starts with `-`, run as printed, names the
    /// plan: the line leads it with `./`, or reckon would take it for an option.
    @Test func aPlanPathStartingWithADashIsPrintedAsAPath() throws {
        let folder = temporaryFolder()
        try FolderMemo.write([FolderMemo(id: ShowCommandTests.groceries)], to: folder.appendingPathComponent("device"))
        try FolderMemo.write([FolderMemo(id: ShowCommandTests.groceries, body: "Milk")], to: folder.appendingPathComponent("drive"))
        let sides = ["--local", "device", "--remote", "drive", "--out=-x/plan"]
        #expect(try runArray(["reconcile"] + sides, in: folder).code == 1)
        let planned = try runArray(["plan"] + sides + ["--take", "\(ShowCommandTests.groceries)=remote"], in: folder)
        let line = try Self.line(from: "reckon apply ", in: planned.stdout)
        #expect(line == "reckon apply ./-x/plan/plan.json", "\(planned.stdout)")
        let applied = try runArray(["apply"] + Array(try Self.arguments(of: line).dropFirst()) + ["--yes"], in: folder)
        #expect(applied.code == 0, "\(applied.stderr)")
    }
}
