import Foundation
import ReckonCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A work folder holding copies of the report fixture (`device` and `drive`:
/// a changed memo, one archived and one deleted on the drive only, one only
/// on the device, a damaged memo, a file name spelled unlike the index),
/// `pipelines/p.json` exporting the device to `out/export` with reports in
/// `out/reports`, and a history line of an earlier run that ended in trouble.
func reportFixture(language: String = "en") throws -> URL {
    let folder = temporaryFolder()
    for side in ["device", "drive"] {
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("report/\(side)"), to: folder.appendingPathComponent(side))
    }
    let pipelines = folder.appendingPathComponent("pipelines")
    try FileManager.default.createDirectory(at: pipelines, withIntermediateDirectories: true)
    try Data(
        """
        {
          "schemaVersion": 1,
          "name": "golden",
          "local": { "name": "device", "path": "../device" },
          "remotes": [ { "name": "drive", "path": "../drive" } ],
          "reports": { "dir": "../out/reports" },
          "export": { "from": "local", "formats": ["json", "markdown"], "dir": "../out/export" },
          "language": "\(language)",
          "failOnDrift": true
        }
        """.utf8
    ).write(to: pipelines.appendingPathComponent("p.json"))
    let reports = folder.appendingPathComponent("out/reports")
    try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
    try Data(
        #"""
        {"differences":0,"exitCode":2,"sides":[{"counts":{"active":7,"archived":0},"label":"this device","name":"device"},{"counts":null,"label":"Google Drive","name":"drive"}],"time":"2026-04-18T12:00:00Z"}

        """#.utf8
    ).write(to: reports.appendingPathComponent("history.jsonl"))
    return folder
}

/// Runs the fixture's pipeline from `current` (the fixture folder by default)
/// at the given time.
func runReportFixture(_ folder: URL, from current: URL? = nil, epoch: String = "1776600000") throws -> RunResult {
    try runArray(
        ["run", folder.appendingPathComponent("pipelines/p.json").path], environment: ["SOURCE_DATE_EPOCH": epoch],
        in: current ?? folder)
}

@Suite struct ReportTests {
    /// Every part of a report in one golden case: `*`, `+`, `!`, a problem,
    /// a quarantined file, an export and a run that ended in trouble.
    @Test(arguments: ["en", "ja"])
    func aPipelineRunWritesTheGoldenReports(_ language: String) throws {
        let folder = try reportFixture(language: language)
        let result = try runReportFixture(folder)
        #expect(result.code == 2, "a damaged memo is trouble")
        let golden = packageRoot.appendingPathComponent("Tests/ReckonCLITests/Golden/pipeline/\(language)")
        try expectGolden(result.stdout, golden.appendingPathComponent("summary.txt"))
        for name in ["report.json", "report.md", "report.html", "combined.txt"] {
            // The page's commands name the definition and the state folder by their absolute paths.
            let text = maskTimings(try read(folder.appendingPathComponent("out/reports/\(name)"))).replacingOccurrences(
                of: folder.path, with: "/FIXTURE")
            try expectGolden(text, golden.appendingPathComponent(name))
        }
    }

    /// Two runs at other times, from other folders, write the same
    /// `report.json`; the run's folder is named only where a person reads.
    /// (The first run's baseline is an input of the next, so it is removed
    /// in between: both runs have the same inputs.)
    @Test func theReportJSONNamesNoRunTimeAndNoCurrentFolder() throws {
        let folder = try reportFixture()
        let first = try runReportFixture(folder)
        let firstJSON = try Data(contentsOf: folder.appendingPathComponent("out/reports/report.json"))
        let markdown = try read(folder.appendingPathComponent("out/reports/report.md"))
        let page = try read(folder.appendingPathComponent("out/reports/report.html"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("out/reports/state"))
        let second = try runReportFixture(folder, from: temporaryFolder(), epoch: "1776686400")
        #expect(try Data(contentsOf: folder.appendingPathComponent("out/reports/report.json")) == firstJSON)

        let report = try json(String(decoding: firstJSON, as: UTF8.self))
        let copies = (report["quarantined"] as? [[String: Any]] ?? []).compactMap { $0["copy"] as? String }
        #expect(copies == ["drive/memos/E5555555-5555-4555-8555-55555555555E.json"], "relative to the run's quarantine folder")
        let paths = (report["exports"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(paths == ["memos.json", "markdown/"], "relative to the run's export folder")
        #expect(!String(decoding: firstJSON, as: UTF8.self).contains("20260419T"))

        // Shown from the current folder: relative under it, absolute elsewhere; never from the pipeline file.
        let run = "20260419T120000Z"
        #expect(first.stdout.contains("  out/export/\(run)/memos.json  7 memos"), "\(first.stdout)")
        #expect(first.stdout.contains("→ out/reports/quarantine/\(run)/drive/memos/E5555555-5555-4555-8555-55555555555E.json"))
        #expect(first.stdout.contains("error: drive/memos/E5555555-5555-4555-8555-55555555555E.json: "))
        #expect(markdown.contains("| `out/export/\(run)/memos.json` |"))
        #expect(markdown.contains("| `out/reports/quarantine/\(run)/drive/memos/E5555555-5555-4555-8555-55555555555E.json` |"))
        #expect(page.contains("<code>out/export/\(run)/memos.json</code>"))
        #expect(second.stdout.contains("  \(folder.path)/out/export/20260420T120000Z/memos.json  7 memos"), "\(second.stdout)")
        #expect(second.stdout.contains("error: \(folder.path)/drive/memos/"))
        for text in [first.stdout, second.stdout, markdown, page] { #expect(!text.contains("../")) }
    }

    /// Control, bidi and format characters in file names are shown escaped,
    /// and a name that is not UTF-8 shows its bytes.
    @Test func hostileFileNamesAreShownEscaped() throws {
        let remote = temporaryFolder()
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("good/index.json"), to: remote.appendingPathComponent("index.json"))
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("good/memos"), to: remote.appendingPathComponent("memos"))
        let names: [[UInt8]] = [
            Array("\u{1B}]0;owned\u{7}\u{1B}[2J\r.json".utf8),
            Array("two\nlines.json".utf8),
            Array("\u{202E}nosj.txt".utf8),
            [0x66, 0xFF, 0xFE] + Array(".json".utf8)
        ]
        for name in names {
            let path = Array((remote.path + "/memos/").utf8) + name + [0]
            let fd = path.withUnsafeBufferPointer {
                open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o644)
            }
            try #require(fd >= 0)
            close(fd)
        }
        let out = temporaryFolder()
        let result = try runArray(["reconcile", "--local", fixtures.appendingPathComponent("good").path, "--remote", remote.path, "--out", out.path])
        #expect(result.code == 2)
        let markdown = try read(out.appendingPathComponent("report.md"))
        let page = try read(out.appendingPathComponent("report.html"))
        for (name, text) in [("terminal", result.stdout), ("report.md", markdown), ("report.html", page)] {
            for raw in ["\u{1B}", "\u{7}", "\r", "\u{202E}", "\u{FFFD}", "two\nlines"] {
                #expect(!text.contains(raw), "\(name) holds \(raw.unicodeScalars.map { String($0.value, radix: 16) })")
            }
            for escaped in [#"\u{1b}]0;owned\u{7}\u{1b}[2J\u{d}.json"#, #"two\u{a}lines.json"#, #"\u{202e}nosj.txt"#, #"f\x{ff}\x{fe}.json"#] {
                #expect(text.contains(escaped), "\(name) shows \(escaped)")
            }
        }
        let report = try json(read(out.appendingPathComponent("report.json")))
        let paths = (remoteSide(report)["problems"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(paths.contains(#"memos/f\x{ff}\x{fe}.json"#), "\(paths)")
    }

    /// A long list points at a file only when that file was written.
    @Test func aLongListPointsOnlyAtAFileThatWasWritten() throws {
        let local = temporaryFolder()
        let remote = temporaryFolder()
        try Data(#"{"schemaVersion": 1, "entries": []}"#.utf8).write(to: local.appendingPathComponent("index.json"))
        let entries = (0..<25).map {
            String(format: #"{"id": "3F2504E0-4F89-11D3-9A0C-0305E82C33%02d", "modifiedTime": "2026-04-19T14:32:00Z"}"#, $0)
        }
        try Data(#"{"schemaVersion": 1, "entries": [\#(entries.joined(separator: ","))]}"#.utf8).write(
            to: remote.appendingPathComponent("index.json"))
        try FileManager.default.createDirectory(at: remote.appendingPathComponent("memos"), withIntermediateDirectories: true)
        let bare = try runArray(["reconcile", "--local", local.path, "--remote", remote.path])
        #expect(bare.stdout.contains("  … and 5 more\n"), "\(bare.stdout)")
        #expect(!bare.stdout.contains("(see "), "no file was written to point at")
        let out = temporaryFolder()
        let written = try runArray(["reconcile", "--local", local.path, "--remote", remote.path, "--out", out.path])
        #expect(written.stdout.contains("  … and 5 more (see \(out.path)/report.md)\n"), "\(written.stdout)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("report.md").path))
    }

    /// The sentence about a side's problems counts exactly the problems
    /// listed below it, in good grammar.
    @Test func theProblemSentenceCountsWhatIsListed() throws {
        let one = try runArray([
            "reconcile", "--local", fixtures.appendingPathComponent("good").path,
            "--remote", fixtures.appendingPathComponent("bad/truncated-memo").path
        ])
        #expect(one.stdout.contains("Google Drive has 1 problem that needs a look; see below.\n"), "\(one.stdout)")
        #expect(one.stdout.contains("Problems (1):\n"))
        let two = try runReportFixture(reportFixture())
        #expect(two.stdout.contains("Google Drive has 2 problems that need a look; see below.\n"), "an error and a warning: \(two.stdout)")
        #expect(two.stdout.contains("Problems (2):\n"))
    }

    /// The page says what differs in words, explains the signs, counts a
    /// side's problems beside its status and marks a run that ended in trouble.
    @Test func thePageSpeaksInWordsAndMarksTrouble() throws {
        let folder = try reportFixture()
        _ = try runReportFixture(folder)
        let page = try read(folder.appendingPathComponent("out/reports/report.html"))
        for words in [
            "title changed, text changed, modified at another time", "archived on Google Drive only", "deleted on Google Drive only",
            "only on this device", "<code>!</code> cannot be compared", "<span class=\"ok\">ok, 2 problems</span>",
            "<span class=\"failed\">⚠ ended in trouble</span>", "<code class=\"id\" title=\"b2222222-2222-4222-8222-22222222222b\">b2222222</code>"
        ] {
            #expect(page.contains(words), "\(words)")
        }
        #expect(!page.contains(">body<") && !page.contains("modifiedTime"), "no field names")
        #expect(page.components(separatedBy: "stroke=\"#c0392b\" stroke-dasharray").count - 1 == 2, "both runs ended in trouble")
    }
}

/// `reports.content` and `--report-content`: how much of the memos the pages show.
@Suite struct ReportContentTests {
    func fixtureSides() throws -> (URL, URL) {
        let folder = temporaryFolder()
        for side in ["device", "drive"] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent("report/\(side)"), to: folder.appendingPathComponent(side))
        }
        return (folder.appendingPathComponent("device"), folder.appendingPathComponent("drive"))
    }

    @Test(arguments: ["full", "titles", "none"])
    func theReportPagesShowWhatTheLevelAllows(_ level: String) throws {
        let (device, drive) = try fixtureSides()
        let out = temporaryFolder()
        let result = try reckon("reconcile", "--local", device.path, "--remote", drive.path, "--out", out.path, "--report-content", level)
        #expect(result.code == 2, "the fixture holds a damaged memo: \(result.stderr)")
        for name in ["report.html", "report.md"] {
            let page = try read(out.appendingPathComponent(name))
            #expect(page.contains("then Osaka") == (level == "full"), "\(name) at \(level): the text")
            #expect(page.contains("Trip plan") == (level != "none"), "\(name) at \(level): the title")
        }
        let json = try read(out.appendingPathComponent("report.json"))
        #expect(!json.contains("then Osaka"), "report.json never holds a memo's text")
    }

    @Test func aDefinitionSaysItAndAWrongLevelIsRefused() throws {
        let folder = try reportFixture()
        let definition = folder.appendingPathComponent("pipelines/p.json")
        let text = try read(definition).replacingOccurrences(
            of: #""dir": "../out/reports" }"#, with: #""dir": "../out/reports", "content": "titles" }"#)
        try Data(text.utf8).write(to: definition)
        _ = try runReportFixture(folder)
        let page = try read(folder.appendingPathComponent("out/reports/report.html"))
        #expect(page.contains("Trip plan") && !page.contains("then Osaka"))
        #expect(page.contains("reports.content: titles"))

        try Data(text.replacingOccurrences(of: #""content": "titles""#, with: #""content": "bodies""#).utf8).write(to: definition)
        let refused = try runReportFixture(folder)
        #expect(refused.code == 64)
        #expect(refused.stderr.contains("reports.content"), "\(refused.stderr)")
        #expect(refused.stderr.contains(#"must be "full", "titles" or "none", found "bodies""#), "\(refused.stderr)")
        let option = try reckon("reconcile", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--report-content", "some")
        #expect(option.code == 64)
        #expect(option.stderr.contains("--report-content") && option.stderr.contains("full, titles, none"), "\(option.stderr)")
    }

    /// The plan's pages (and plan.json, which they are made from) keep no first lines below `full`.
    @Test func thePlanShowsWhatTheLevelAllows() throws {
        let (device, drive) = try fixtureSides()
        for level in ["full", "titles", "none"] {
            let out = temporaryFolder()
            _ = try reckon("plan", "--local", device.path, "--remote", drive.path, "--out", out.path, "--report-content", level)
            let page = try read(out.appendingPathComponent("plan.html"))
            #expect(page.contains("then Osaka") == (level == "full"), "plan.html at \(level): the text")
            #expect(page.contains("Trip plan") == (level != "none"), "plan.html at \(level): the title")
        }
    }
}
