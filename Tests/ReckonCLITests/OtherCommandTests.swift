import Foundation
import Testing

@Suite struct CountsCommandTests {
    @Test func countsFromTheIndex() throws {
        let device = try reckon("counts", "Samples/drift/device", "--json")
        #expect(device.code == 0)
        let counts = try json(device.stdout)
        #expect(counts["active"] as? Int == 4)
        #expect(counts["archived"] as? Int == 1)
        let drive = try reckon("counts", "Samples/drift/drive/60dMemo")
        #expect(drive.code == 0)
        #expect(drive.stdout == "Memos in Samples/drift/drive/60dMemo\n  Active    5\n  Archived  1\n")
    }

    @Test func aDoubleDashEndsTheOptions() throws {
        let result = try reckon("counts", "--", "--json")
        #expect(result.code == 2)
        #expect(result.stderr == "error: --json: the folder does not exist\n")
    }

    @Test func aMissingFolderIsTroubleNotUsage() throws {
        let result = try reckon("counts", "Samples/nowhere")
        #expect(result.code == 2)
        #expect(result.stderr == "error: Samples/nowhere: the folder does not exist\n")
    }
}

@Suite struct UsageTests {
    /// An option that takes one value is refused when given twice, rather than losing one of them.
    @Test func anOptionGivenTwiceIsRefused() throws {
        let result = try reckon("plan", "--local", "a", "--remote", "b", "--out", "c", "--choices", "x.json", "--choices", "y.json")
        #expect(result.code == 64)
        #expect(result.stderr.hasPrefix("Error: The option '--choices' is given twice; give it once\n"), "\(result.stderr)")
    }

    @Test func unknownOptionIsUsageError() throws {
        let result = try reckon("reconcile", "--local", "a", "--remote", "b", "--foo")
        #expect(result.code == 64)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr == """
                Error: Unknown option '--foo'
                Usage: reckon reconcile --local <path> --remote <path> [--out <dir>] [--json] [--quick] [--lang <lang>] [--refresh] [--app <id>] [--password-file <file>] [--accept-deletions] [--report-content <level>] [--metrics <file>]
                  See 'reckon reconcile --help' for more information.

                """)
    }

    @Test(arguments: [
        (["reconcile", "--local", "a", "--remote"], "Error: Missing value for '--remote <path>'"),
        (["reconcile", "--local", "a"], "Error: Missing expected argument '--remote <path>'"),
        (["counts"], "Error: Missing expected argument '<path>'"),
        (["counts", "a", "b"], "Error: Unexpected argument 'b'"),
        (["export", "a", "--out", ""], "Error: The value for '--out <dir>' is empty"),
        (["counts", ""], "Error: The value for '<path>' is empty"),
        (["frobnicate"], "Error: Unknown subcommand 'frobnicate'"),
        ([], "Error: Missing expected argument '<subcommand>'"),
        (["reconcile", "--local", "a", "--remote", "b", "--lang", "xx"], "Error: The value 'xx' is invalid for '--lang <lang>'"),
        (["run", "Pipelines/sample.json", "--json=yes"], "Error: The option '--json' takes no value")
    ])
    func usageErrorsExit64(_ arguments: [String], _ message: String) throws {
        let process = try runArray(arguments)
        #expect(process.code == 64)
        #expect(process.stderr.hasPrefix(message), "\(process.stderr)")
        #expect(process.stderr.contains("\nUsage: reckon"))
    }

    @Test func helpAndVersionGoToStdout() throws {
        let help = try reckon("--help")
        #expect(help.code == 0)
        #expect(help.stdout.hasPrefix("OVERVIEW: "))
        #expect(help.stdout.contains("USAGE: reckon <subcommand>"))
        #expect(help.stdout.contains("SUBCOMMANDS:\n  run "))
        let sub = try reckon("help", "reconcile")
        #expect(sub.code == 0)
        #expect(sub.stdout.contains("USAGE: reckon reconcile --local <path> --remote <path>"))
        #expect(try reckon("reconcile", "--help").stdout == sub.stdout)
        let version = try reckon("--version")
        #expect(version.code == 0)
        #expect(version.stdout == "0.1.0\n")
    }
}

@Suite struct PipelineCommandTests {
    /// A definition in a temporary folder that points at the samples by absolute path.
    func definition(_ extra: String = "", export: String = #""export": {"dir": "export"},"#) throws -> URL {
        let folder = temporaryFolder()
        let samples = packageRoot.appendingPathComponent("Samples/drift").path
        let text = """
            {"name": "test", "local": {"name": "device", "path": "\(samples)/device"},
             "remotes": [{"name": "drive", "label": "Google Drive", "path": "\(samples)/drive"}],
             \(export) "reports": {"dir": "reports"} \(extra)}
            """
        let url = folder.appendingPathComponent("pipeline.json")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func runWritesReportsAndAJSONExportBesideTheDefinition() throws {
        let url = try definition()
        let result = try runArray(["run", url.path])
        #expect(result.code == 0, "drift does not fail a run unless failOnDrift says so")
        #expect(result.stdout.contains("  Active    5 (local 4)\n"))
        let folder = url.deletingLastPathComponent()
        #expect(try read(folder.appendingPathComponent("reports/combined.txt")).contains("- e4eaaaf2-d142-11e1-b3e4-080027620cdd\n"))
        let export = try json(read(folder.appendingPathComponent("export/latest/memos.json")))
        let memos = try #require(export["memos"] as? [[String: Any]])
        #expect(memos.map { $0["title"] as? String } == ["Groceries", "京都旅行", "Book list", "Meeting notes"], "active only, by creation time")
        #expect(memos.allSatisfy { $0["deletedAt"] is NSNull && $0["archivedAt"] is NSNull })
        let report = try json(read(folder.appendingPathComponent("reports/report.json")))
        let exports = try #require(report["exports"] as? [[String: Any]])
        #expect(exports.first?["memos"] as? Int == 4)
    }

    @Test func includeArchivedExportsArchivedMemosButNeverDeletedOnes() throws {
        let url = try definition(export: #""export": {"dir": "export", "includeArchived": true, "from": "drive"},"#)
        #expect(try runArray(["run", url.path, "--quiet"]).code == 0)
        let export = try json(read(url.deletingLastPathComponent().appendingPathComponent("export/latest/memos.json")))
        let titles = (export["memos"] as? [[String: Any]] ?? []).map { $0["title"] as? String ?? "" }
        #expect(titles == ["Old recipes", "Groceries", "京都旅行", "Book list", "Meeting notes", "Idea from the train"])
        #expect(!titles.contains("Draft I threw away"))
    }

    /// Drift that `failOnDrift` makes exit 1 is printed whole even with
    /// `--quiet`: cron mails what a job prints, not its exit code.
    @Test func failOnDriftMakesDriftExitOneAndQuietStillPrintsIt() throws {
        let url = try definition(#", "failOnDrift": true"#)
        let result = try runArray(["run", url.path, "--quiet"])
        #expect(result.code == 1)
        // The summary as without --quiet, up to the export's folder, named by the time of the run.
        let unquiet = try runArray(["run", try definition(#", "failOnDrift": true"#).path])
        #expect(result.stdout.prefix { $0 != "/" } == unquiet.stdout.prefix { $0 != "/" })
        #expect(result.stdout.contains("\nExports:\n"))
        #expect(result.stdout.contains("  Active    5 (local 4)\n"))
        #expect(result.stdout.contains("  - e4eaaaf2-d142-11e1-b3e4-080027620cdd"))
    }

    @Test func dryRunWritesNothing() throws {
        let url = try definition()
        let result = try runArray(["run", url.path, "--dry-run"])
        #expect(result.code == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) == ["pipeline.json"])
    }

    @Test func theSamplePipelineRunsFromAnotherFolder() throws {
        let result = try runArray(["run", packageRoot.appendingPathComponent("Pipelines/sample.json").path, "--json"], in: temporaryFolder())
        #expect(result.code == 0)
        let report = try json(result.stdout)
        #expect(report["pipeline"] as? String == "sample")
        #expect(FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent("out/sample/reports/report.json").path))
    }

    @Test func validateNamesTheWrongKey() throws {
        let good = try runArray(["validate", "Pipelines/sample.json"])
        #expect(good.code == 0)
        #expect(
            good.stdout == "Pipelines/sample.json is valid: local 'device'; remotes 'drive'; deep check; export json,markdown,zip from 'local'.\n")
        let url = temporaryFolder().appendingPathComponent("bad.json")
        try Data(#"{"local": {"path": "a"}, "remotes": [{"path": "x", "lable": "Drive"}]}"#.utf8).write(to: url)
        let bad = try runArray(["validate", url.path])
        #expect(bad.code == 64)
        #expect(bad.stderr.contains("'remotes[0].lable' is not a known key"))
        #expect(try runArray(["run", url.path]).code == 64)
        let missing = try runArray(["validate", "Pipelines/none.json"])
        #expect(missing.code == 64)
        #expect(missing.stderr == "Error: Pipelines/none.json: no such file\n")
    }
}

@Suite struct SeveralRemotesTests {
    @Test func aFailingRemoteDoesNotDiscardTheOthers() throws {
        let folder = temporaryFolder()
        let samples = packageRoot.appendingPathComponent("Samples").path
        let text = """
            {"local": {"path": "\(samples)/drift/device"},
             "remotes": [{"name": "drive", "label": "Google Drive", "path": "\(samples)/drift/drive"},
                         {"name": "backup", "label": "Backup disk", "path": "\(samples)/no-such-folder"},
                         {"name": "mirror", "label": "Mirror", "path": "\(samples)/drift/device"}],
             "reports": {"dir": "reports"}}
            """
        try Data(text.utf8).write(to: folder.appendingPathComponent("p.json"))
        let result = try runArray(["run", folder.appendingPathComponent("p.json").path])
        #expect(result.code == 2)
        #expect(result.stdout.contains("Memos on Google Drive\n  Active    5 (local 4)\n"))
        #expect(result.stdout.contains("Memos on Backup disk\n  not read\n"))
        #expect(result.stdout.contains("Memos on Mirror\n  Active    4\n  Archived  1\n"))
        #expect(result.stdout.contains("Backup disk could not be read: the folder does not exist."))
        let reports = folder.appendingPathComponent("reports")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: reports.path).sorted()
                == [
                    ".reckon.lock", "combined-backup.txt", "combined-drive.txt", "combined-mirror.txt", "history.jsonl", "report.html", "report.json",
                    "report.md", "state"
                ])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: reports.appendingPathComponent("state").path).sorted()
                == ["agreement-drive.json", "agreement-mirror.json", "baseline-drive.txt", "baseline-local.txt", "baseline-mirror.txt"],
            "the side that failed has no baseline, and no agreement with the local side")
        #expect(try read(reports.appendingPathComponent("combined-mirror.txt")).split(separator: "\n").allSatisfy { $0.hasPrefix("= ") })
    }
}
