import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A copy of the drift samples in a temporary folder, so that a test may
/// put links and blockers beside them.
func copyOfDriftSamples() throws -> URL {
    let folder = temporaryFolder()
    for side in ["device", "drive"] {
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Samples/drift/\(side)"), to: folder.appendingPathComponent(side))
    }
    return folder
}

/// Writes a pipeline definition into `folder`: the drift samples there,
/// reports in `reports/`, and `extra` keys (an export, say).
func pipelineFile(in folder: URL, _ extra: String = "") throws -> URL {
    let text = """
        {"name": "test", "local": {"name": "device", "path": "device"},
         "remotes": [{"name": "drive", "label": "Google Drive", "path": "drive"}],
         "reports": {"dir": "reports"} \(extra)}
        """
    let url = folder.appendingPathComponent("pipeline.json")
    try Data(text.utf8).write(to: url)
    return url
}

/// Promise 1: an output that leads into a source through a link is refused,
/// by every command that writes, and the source keeps every byte.
@Suite struct SourcesAreNeverWrittenTests {
    enum Route: String, CaseIterable {
        /// The output's parent is a link to the source.
        case linkedParent
        /// `..` after a link that leads into the source.
        case dotDotAfterLink
        /// A link inside the output path, further down.
        case linkInside
    }

    /// An output path, relative to `folder`, that reaches into the drive side.
    func route(_ route: Route, in folder: URL) throws -> String {
        let drive = folder.appendingPathComponent("drive/60dMemo")
        switch route {
        case .linkedParent:
            try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("shortcut").path, withDestinationPath: drive.path)
            return "shortcut/reports"
        case .dotDotAfterLink:
            try FileManager.default.createSymbolicLink(
                atPath: folder.appendingPathComponent("memos-link").path,
                withDestinationPath: drive.appendingPathComponent("memos").path)
            return "memos-link/../reports"
        case .linkInside:
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("out"), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("out/inner").path, withDestinationPath: "../drive")
            return "out/inner/reports"
        }
    }

    @Test(arguments: Route.allCases)
    func reconcileRefusesAnOutputThatLeadsIntoASource(_ way: Route) throws {
        let folder = try copyOfDriftSamples()
        let out = try route(way, in: folder)
        let before = try fingerprint(folder.appendingPathComponent("drive"))
        let result = try runArray(["reconcile", "--local", "device", "--remote", "drive", "--out", out], in: folder)
        #expect(result.code == 64)
        #expect(result.stderr.hasPrefix("Error: '--out' is \(out), inside the source folder drive (its real path is "), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try fingerprint(folder.appendingPathComponent("drive")) == before)
    }

    @Test(arguments: Route.allCases)
    func exportRefusesAnOutputThatLeadsIntoASource(_ way: Route) throws {
        let folder = try copyOfDriftSamples()
        let out = try route(way, in: folder)
        let before = try fingerprint(folder.appendingPathComponent("drive"))
        let result = try runArray(["export", "drive", "--out", out], in: folder)
        #expect(result.code == 64)
        #expect(result.stderr.contains("inside the source folder drive (its real path is "), "\(result.stderr)")
        #expect(try fingerprint(folder.appendingPathComponent("drive")) == before)
    }

    @Test(arguments: ["reports", "quarantine", "state", "export"])
    func validateAndRunRefuseADefinitionWhoseOutputLeadsIntoASource(_ key: String) throws {
        let folder = try copyOfDriftSamples()
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("shortcut").path,
            withDestinationPath: folder.appendingPathComponent("device").path)
        let extra = key == "reports" ? "" : #", "\#(key)": {"dir": "shortcut/\#(key)"}"#
        var url = try pipelineFile(in: folder, extra)
        if key == "reports" {
            let text = try read(url).replacingOccurrences(of: #""dir": "reports""#, with: #""dir": "shortcut/reports""#)
            try Data(text.utf8).write(to: url)
        }
        url = url.standardizedFileURL
        let before = try fingerprint(folder.appendingPathComponent("device"))
        for command in ["validate", "run"] {
            let result = try runArray([command, url.path])
            #expect(result.code == 64, "\(command)")
            #expect(
                result.stderr.contains("'\(key).dir' is shortcut/\(key), inside the source folder device (its real path is "),
                "\(command): \(result.stderr)")
        }
        #expect(try fingerprint(folder.appendingPathComponent("device")) == before)
    }

    /// A link put inside the output folder, where the run's quarantine
    /// folder will be, is not followed into the source.
    @Test func aLinkInsideTheQuarantineFolderIsNotFollowed() throws {
        let folder = temporaryFolder()
        try FileManager.default.copyItem(
            at: packageRoot.appendingPathComponent("Tests/ReckonCLITests/Fixtures/good"), to: folder.appendingPathComponent("device"))
        try FileManager.default.copyItem(
            at: packageRoot.appendingPathComponent("Tests/ReckonCLITests/Fixtures/bad/truncated-memo"),
            to: folder.appendingPathComponent("drive"))
        let quarantine = folder.appendingPathComponent("out/quarantine")
        try FileManager.default.createDirectory(at: quarantine, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: quarantine.appendingPathComponent("20261201T093000Z").path,
            withDestinationPath: folder.appendingPathComponent("drive/memos").path)
        let before = try fingerprint(folder.appendingPathComponent("drive"))
        let result = try runArray(
            ["reconcile", "--local", "device", "--remote", "drive", "--out", "out"], environment: ["SOURCE_DATE_EPOCH": "1796117400"],
            in: folder)
        #expect(result.code == 2)
        #expect(
            result.stdout.contains(
                "could not be copied aside (cannot write \(quarantine.path)/20261201T093000Z: a link stands where a folder must be"),
            "\(result.stdout)")
        #expect(try fingerprint(folder.appendingPathComponent("drive")) == before)
    }

    /// A bind mount shows a source under another name; mounting needs root.
    @Test(.needs(.root)) func aBindMountOfASourceIsStillTheSource() throws {
        let folder = try copyOfDriftSamples()
        let mirror = folder.appendingPathComponent("mirror")
        try FileManager.default.createDirectory(at: mirror, withIntermediateDirectories: true)
        try #require(
            mount(folder.appendingPathComponent("device").path, mirror.path, "", UInt(MS_BIND), nil) == 0,
            "mount: \(String(cString: strerror(errno)))")
        defer { umount(mirror.path) }
        let before = try fingerprint(folder.appendingPathComponent("device"))
        let reports = try runArray(["reconcile", "--local", "device", "--remote", "drive", "--out", "mirror/reports"], in: folder)
        #expect(reports.code == 64)
        #expect(reports.stderr.contains("inside the source folder device"), "\(reports.stderr)")
        let export = try runArray(["export", "mirror", "--out", "device/export"], in: folder)
        #expect(export.code == 64)
        #expect(export.stderr.contains("inside the source folder mirror"), "\(export.stderr)")
        #expect(try fingerprint(folder.appendingPathComponent("device")) == before)
    }

    @Test func anOutputBesideTheSourcesIsStillWritten() throws {
        let folder = try copyOfDriftSamples()
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("elsewhere").path,
            withDestinationPath: temporaryFolder().path)
        let result = try runArray(["reconcile", "--local", "device", "--remote", "drive", "--out", "elsewhere/reports"], in: folder)
        #expect(result.code == 1)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("elsewhere/reports/report.json").path))
    }
}

/// Promise 2 for a nightly run: retention deletes a run folder only when it
/// holds just what its manifest lists.
@Suite struct RetentionTests {
    @Test func aRunFolderHoldingAPersonsFileIsKept() throws {
        let folder = try copyOfDriftSamples()
        let url = try pipelineFile(in: folder, #", "export": {"dir": "export", "keep": 1, "formats": ["json"]}"#)
        #expect(try runArray(["run", url.path, "--quiet"]).code == 0)
        let exports = folder.appendingPathComponent("export")
        let first = try FileManager.default.destinationOfSymbolicLink(atPath: exports.appendingPathComponent("latest").path)
        try Data("mine".utf8).write(to: exports.appendingPathComponent("\(first)/notes.txt"))
        for _ in 0..<2 { #expect(try runArray(["run", url.path, "--quiet"]).code == 0) }
        #expect(try read(exports.appendingPathComponent("\(first)/notes.txt")) == "mine")
        let runs = try FileManager.default.contentsOfDirectory(atPath: exports.path).filter { $0.first?.isNumber == true }
        #expect(runs.count == 2, "the newest, and the one holding a person's file: \(runs)")
    }
}

/// Promise 5: when the export fails, the summary, every report and the
/// history line are still written, with the failure in them, and the run
/// exits 2.
@Suite struct OneFailedOutputTests {
    /// Runs the pipeline in `folder` and checks that everything but the
    /// export was written and says why the export failed: one record per
    /// format asked (all three by default), with words that hold no staging
    /// folder, whose name has the process id. Gives the failure.
    @discardableResult
    func expectReportsDespiteAFailedExport(_ folder: URL, failure: String) throws -> String? {
        let result = try runArray(["run", folder.appendingPathComponent("pipeline.json").path])
        #expect(result.code == 2)
        #expect(result.stdout.hasPrefix("Memos on this device\n"), "the summary is printed")
        #expect(result.stdout.contains(failure), "\(result.stdout)")
        for text in [result.stdout, result.stderr] {
            #expect(!text.contains("NSCocoaErrorDomain") && !text.contains("Error Domain"))
        }
        let reports = folder.appendingPathComponent("reports")
        let report = try json(read(reports.appendingPathComponent("report.json")))
        #expect(report["outcome"] as? String == "trouble")
        let exports = try #require(report["exports"] as? [[String: Any]])
        #expect(
            exports.map { $0["format"] as? String } == ["json", "markdown", "zip"],
            "report.json must list every format asked for, not only the first: \(exports)")
        let failures = Set(exports.map { $0["failure"] as? String })
        #expect(failures.count == 1, "every format's record must carry the one failure: \(exports)")
        let said = failures.first ?? nil
        #expect(said?.contains(failure) == true, "\(exports)")
        #expect(
            said?.contains(".partial") == false && said?.contains(".reckon-") == false,
            "the failure must name the export folder, not the pid-named staging folder: \(said ?? "")")
        #expect(result.stdout.components(separatedBy: failure).count == 2, "the summary says the failure once: \(result.stdout)")
        #expect(try read(reports.appendingPathComponent("report.md")).contains(failure))
        #expect(try read(reports.appendingPathComponent("report.html")).contains(failure))
        let history = try read(reports.appendingPathComponent("history.jsonl"))
        #expect(history.split(separator: "\n").count == 1)
        #expect(history.contains(#""exitCode":2"#))
        return said
    }

    @Test func aFileWhereTheExportFolderShouldBe() throws {
        let folder = try copyOfDriftSamples()
        _ = try pipelineFile(in: folder, #", "export": {"dir": "export"}"#)
        try Data("mine".utf8).write(to: folder.appendingPathComponent("export"))
        try expectReportsDespiteAFailedExport(folder, failure: "cannot write export: a file stands where a folder must be")
        #expect(try read(folder.appendingPathComponent("export")) == "mine")
    }

    @Test func aLatestThatIsNotALink() throws {
        let folder = try copyOfDriftSamples()
        _ = try pipelineFile(in: folder, #", "export": {"dir": "export"}"#)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("export/latest"), withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: folder.appendingPathComponent("export/latest/notes.txt"))
        try expectReportsDespiteAFailedExport(folder, failure: "cannot write export/latest: a folder stands where reckon keeps its link")
        #expect(try read(folder.appendingPathComponent("export/latest/notes.txt")) == "mine")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("export").path)
        #expect(left.filter { !$0.hasPrefix(".reckon.lock") } == ["latest"], "no half-published run is left: \(left)")
    }

    @Test func aReportFolderThatCannotBeWrittenStopsNeitherTheSummaryNorTheExport() throws {
        let folder = try copyOfDriftSamples()
        let url = try pipelineFile(in: folder, #", "export": {"dir": "export", "formats": ["json"]}"#)
        try Data("mine".utf8).write(to: folder.appendingPathComponent("reports"))
        let result = try runArray(["run", url.path])
        #expect(result.code == 2)
        #expect(result.stdout.hasPrefix("Memos on this device\n"))
        #expect(result.stderr.contains("error: cannot write \(folder.path)/reports: a file stands where a folder must be"), "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("export/latest/memos.json").path))
        #expect(try read(folder.appendingPathComponent("reports")) == "mine")
    }

    @Test func theHistoryLineHasTheExitCodeAfterEveryOutput() throws {
        let folder = try copyOfDriftSamples()
        let url = try pipelineFile(in: folder)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("reports/report.html/mine"), withIntermediateDirectories: true)
        let result = try runArray(["run", url.path, "--quiet"])
        #expect(result.code == 2)
        #expect(result.stderr.contains("report.html"), "\(result.stderr)")
        #expect(try read(folder.appendingPathComponent("reports/history.jsonl")).contains(#""exitCode":2"#))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("reports/report.json").path))
    }

    /// A full disk, made as a small tmpfs; mounting needs root.
    @Test(.needs(.root)) func aFullDisk() throws {
        let folder = try copyOfDriftSamples()
        let export = folder.appendingPathComponent("export")
        try FileManager.default.createDirectory(at: export, withIntermediateDirectories: true)
        try #require(mount("tmpfs", export.path, "tmpfs", 0, "size=16k") == 0, "mount: \(String(cString: strerror(errno)))")
        defer { umount(export.path) }
        _ = try pipelineFile(in: folder, #", "export": {"dir": "export"}"#)
        let failure = try expectReportsDespiteAFailedExport(folder, failure: "No space left on device")
        #expect(failure == "cannot write memos.json of the export into export: No space left on device")
        let left = try FileManager.default.contentsOfDirectory(atPath: export.path).filter { !$0.hasPrefix(".reckon.lock") }
        #expect(left.isEmpty, "the partial export is cleaned away: \(left)")
    }
}

/// Promise 10, the messages that say what happened.
@Suite struct MessageTests {
    @Test func aLinkedCloudFolderIsReportedAsALink() throws {
        let folder = temporaryFolder()
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("60dMemo").path,
            withDestinationPath: packageRoot.appendingPathComponent("Samples/drift/drive/60dMemo").path)
        let result = try runArray(["counts", folder.path])
        #expect(result.code == 2)
        #expect(result.stderr == "error: \(folder.path)/60dMemo: is a link; links are not followed\n")
    }

    @Test func anExportFromAFailedSideSaysThatSideFailed() throws {
        let folder = try copyOfDriftSamples()
        _ = try pipelineFile(in: folder, #", "export": {"dir": "export", "from": "drive"}"#)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("drive/60dMemo/index.json"))
        let result = try runArray(["run", folder.appendingPathComponent("pipeline.json").path])
        #expect(result.code == 2)
        #expect(result.stdout.contains("Google Drive could not be read, so nothing was exported"))
        #expect(!result.stdout.contains("could not be read.") && !result.stdout.contains(": :"), "\(result.stdout)")
        let report = try json(read(folder.appendingPathComponent("reports/report.json")))
        let exports = try #require(report["exports"] as? [[String: Any]])
        #expect(exports.map { $0["format"] as? String } == ["json", "markdown", "zip"], "every format asked is listed")
        #expect(exports.map { $0["failure"] as? String } == Array(repeating: "Google Drive could not be read, so nothing was exported", count: 3))
    }

    @Test func aMissingMemosFolderIsOneProblem() throws {
        let folder = try copyOfDriftSamples()
        try FileManager.default.removeItem(at: folder.appendingPathComponent("drive/60dMemo/memos"))
        let result = try runArray(["reconcile", "--local", "device", "--remote", "drive", "--quick", "--json"], in: folder)
        #expect(result.code == 2)
        let report = try json(result.stdout)
        let sides = try #require(report["sides"] as? [[String: Any]])
        let problems = try #require(sides[1]["problems"] as? [[String: Any]])
        #expect(problems.map { $0["path"] as? String } == ["60dMemo/memos"])
        #expect(problems.first?["message"] as? String == "the folder is missing, so the files of 6 memos in index.json are missing")
    }

    @Test func aForeignFileNameInTheExportFolderIsShownEscaped() throws {
        let out = temporaryFolder()
        try Data("mine".utf8).write(to: out.appendingPathComponent("\u{1b}[2Jnotes\u{202e}.txt"))
        let result = try reckon("export", "Samples/drift/device", "--out", out.path)
        #expect(result.code == 2)
        #expect(result.stderr.contains("\\u{1b}[2Jnotes\\u{202e}.txt"), "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1b}") && !result.stderr.contains("\u{202e}"))
    }

    @Test func aPathWithControlCharactersIsShownEscapedOnStdoutToo() throws {
        let folder = temporaryFolder().appendingPathComponent("x\u{1b}[2Jy\u{202e}")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Samples/in-sync/drive"), to: folder)
        let plain = try reckon("counts", folder.path)
        #expect(plain.stdout.hasPrefix("Memos in \(folder.deletingLastPathComponent().path)/x\\u{1b}[2Jy\\u{202e}\n"), "\(plain.stdout)")
        let json = try reckon("counts", folder.path, "--json")
        #expect(!json.stdout.contains("\u{1b}") && !json.stdout.contains("\u{202e}"))
        #expect(try ReckonCLITests.json(json.stdout)["path"] as? String == folder.path, "the value is the same, only written with escapes")
    }

    @Test func helpHelpShowsHelpsOwnHelp() throws {
        let result = try reckon("help", "help")
        #expect(result.code == 0)
        #expect(result.stdout.hasPrefix("OVERVIEW: Show subcommand help information.\n\nUSAGE: reckon help [<subcommand>] [--man] [--markdown]\n"))
    }
}

@Suite struct ProcessHelperTests {
    /// A child that fills its stderr pipe before it writes stdout would hang
    /// a helper that reads stdout to its end first.
    @Test func aChildThatFillsStderrFirstDoesNotHang() throws {
        let result = try runArray(["-e", #"print STDERR "x" x 300000; print "done";"#], executable: URL(fileURLWithPath: "/usr/bin/perl"))
        #expect(result.code == 0)
        #expect(result.stdout == "done")
        #expect(result.stderr.count == 300_000)
    }
}
