import Foundation
import ReckonCore
import TestSupport
import Testing

extension Requirement {
    /// Prometheus' own checker, from Debian's `prometheus` package.
    static let promtool = Requirement.tool("promtool")
}

/// A metrics file as Prometheus reads it: accepted by `promtool check
/// metrics` (which reads stdin and exits 3 on a lint warning), then parsed
/// back into each sample's `name{labels}` and value. A sample with a
/// timestamp fails, as node_exporter's textfile collector would refuse it.
func checkedMetrics(_ url: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Double] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["promtool", "check", "metrics"]
    process.standardInput = try FileHandle(forReadingFrom: url)
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "promtool check metrics \(url.lastPathComponent): \(said)", sourceLocation: sourceLocation)
    var samples: [String: Double] = [:]
    for line in try read(url).split(separator: "\n") where !line.hasPrefix("#") {
        let close = try #require(line.lastIndex(of: "}"), "a sample without labels: \(line)", sourceLocation: sourceLocation)
        let value = line[line.index(after: close)...].dropFirst()
        #expect(!value.contains(" "), "a sample with a timestamp: \(line)", sourceLocation: sourceLocation)
        guard let number = Double(String(value)) else {
            Issue.record("not a number: \(line)", sourceLocation: sourceLocation)
            continue
        }
        samples[String(line[...close])] = number
    }
    return samples
}

/// The nightly job nobody watches: `--quiet` prints when the run needs a
/// person, and every run leaves figures for monitoring.
@Suite struct UnattendedRunTests {
    /// A pipeline over copies of the drift sample, in a folder of its own.
    struct Night {
        let folder = temporaryFolder()
        var definition: URL { folder.appendingPathComponent("nightly.json") }
        var metrics: URL { folder.appendingPathComponent("textfile/nightly.prom") }

        init(_ extra: String = "", sample: String = "drift") throws {
            for side in ["device", "drive"] {
                try FileManager.default.copyItem(
                    at: packageRoot.appendingPathComponent("Samples/\(sample)/\(side)"), to: folder.appendingPathComponent(side))
            }
            let text = """
                {"name": "nightly", "local": {"name": "device", "path": "device"},
                 "remotes": [{"name": "drive", "label": "Google Drive", "path": "drive"}],
                 "reports": {"dir": "reports"}, "export": {"dir": "export", "from": "drive"}\(extra)}
                """
            try Data(text.utf8).write(to: definition)
        }

        func run(_ arguments: String...) throws -> RunResult {
            try runArray(["run", definition.path] + arguments, in: folder)
        }

        func removeSides() throws {
            for side in ["device", "drive"] { try FileManager.default.removeItem(at: folder.appendingPathComponent(side)) }
        }
    }

    /// The README's crontab line, run as cron runs it (`sh -c`, no
    /// terminal) with this build's binary and a definition of the test's.
    func cronLine(binary: URL, definition: URL) throws -> String {
        let readme = try read(packageRoot.appendingPathComponent("README.md"))
        let line = try #require(readme.split(separator: "\n").first { $0.hasPrefix("15 3 * * * ") }, "the README's crontab line")
        // Minute, hour, day, month and weekday; the rest is the command.
        let command = line.split(separator: " ", maxSplits: 5)[5]
        let words = command.split(separator: " ").map(String.init)
        #expect(words.count == 4 && words[1] == "run" && words[3] == "--quiet", "the line changed: \(line)")
        return "'\(binary.path)' run '\(definition.path)' --quiet"
    }

    @Test func theReadmeCrontabLineMailsTroubleAndStaysSilentWhenDone() throws {
        let healthy = try Night(sample: "in-sync")
        let command = try cronLine(binary: reckonBinary, definition: healthy.definition)
        let done = try runArray(["-c", command], in: healthy.folder, executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(done.code == 0)
        #expect(done.stdout.isEmpty, "cron would mail a run that needs no one: \(done.stdout)")

        try healthy.removeSides()
        let trouble = try runArray(["-c", command], in: healthy.folder, executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(trouble.code == 2)
        #expect(!trouble.stdout.isEmpty, "cron mails output, not exit codes: trouble must print")
        #expect(trouble.stdout.contains("error: device: the folder does not exist"), "\(trouble.stdout)")
        #expect(trouble.stdout.contains("This device could not be read"))
        let unquiet = try Night(sample: "in-sync")
        try unquiet.removeSides()
        #expect(trouble.stdout == (try unquiet.run()).stdout, "the same summary as without --quiet")
    }

    /// A deletion alarm is trouble, and `--quiet` prints it.
    @Test func quietPrintsADeletionAlarm() throws {
        let night = try Night()
        #expect(try night.run("--quiet").stdout.isEmpty)
        let memos = night.folder.appendingPathComponent("drive/60dMemo/memos")
        for name in try FileManager.default.contentsOfDirectory(atPath: memos.path) {
            try FileManager.default.removeItem(at: memos.appendingPathComponent(name))
        }
        try Data(#"{"schemaVersion": 1, "entries": []}"#.utf8).write(to: night.folder.appendingPathComponent("drive/60dMemo/index.json"))
        let alarmed = try night.run("--quiet")
        #expect(alarmed.code == 2)
        #expect(alarmed.stdout.hasPrefix("Alarm: Google Drive holds no memo, but held 6 memos at the last run"), "\(alarmed.stdout)")
        #expect(alarmed.stdout.contains("run again with --accept-deletions"))
    }

    @Test(.needs(.promtool)) func aRunWritesItsFiguresForPrometheus() throws {
        let night = try Night(#", "metrics": "textfile/nightly.prom""#)
        let result = try night.run("--quiet")
        #expect(result.code == 0 && result.stdout.isEmpty, "drift does not fail this run: \(result.stdout)")
        let samples = try checkedMetrics(night.metrics)
        let pipeline = #"pipeline="nightly""#
        #expect(samples["reckon_run_exit_code{\(pipeline)}"] == 0)
        #expect(samples[#"reckon_memos{\#(pipeline),side="device",role="local",state="active"}"#] == 4)
        #expect(samples[#"reckon_memos{\#(pipeline),side="device",role="local",state="archived"}"#] == 1)
        #expect(samples[#"reckon_memos{\#(pipeline),side="drive",role="remote",state="active"}"#] == 5)
        #expect(samples[#"reckon_differences{\#(pipeline),remote="drive",sigil="-"}"#] == 1)
        #expect(samples[#"reckon_differences{\#(pipeline),remote="drive",sigil="*"}"#] == 0)
        #expect(samples[#"reckon_deletion_alarm{\#(pipeline),side="drive",role="remote"}"#] == 0)
        #expect(samples[#"reckon_side_failed{\#(pipeline),side="device",role="local"}"#] == 0)
        let report = try json(read(night.folder.appendingPathComponent("reports/report.json")))
        let exports = try #require(report["exports"] as? [[String: Any]])
        for export in exports {
            let format = try #require(export["format"] as? String)
            #expect(samples[#"reckon_export_memos{\#(pipeline),format="\#(format)"}"#] == Double(export["memos"] as? Int ?? -1))
            #expect(samples[#"reckon_export_bytes{\#(pipeline),format="\#(format)"}"#] == Double(export["bytes"] as? Int ?? -1))
        }
        #expect(exports.count == 3)
        for stage in ["load", "quarantine", "reconcile", "export"] {
            #expect(samples[#"reckon_stage_duration_seconds{\#(pipeline),stage="\#(stage)"}"#] != nil, "stage \(stage)")
        }
        let started = try #require(samples["reckon_run_start_timestamp_seconds{\(pipeline)}"])
        let duration = try #require(samples["reckon_run_duration_seconds{\(pipeline)}"])
        #expect(abs(started - Date().timeIntervalSince1970) < 3600, "a time in seconds since 1970")
        #expect(abs(try #require(samples["reckon_last_success_timestamp_seconds{\(pipeline)}"]) - (started + duration)) < 0.001)
        // No memo's id, title or path in a label.
        let text = try read(night.metrics)
        for secret in ["e4eaaaf2", "Idea from the train", "memos/", night.folder.path] { #expect(!text.contains(secret), "\(secret)") }
        // Every family says what it is, and the folder holds the file alone: its temporary file was renamed.
        let names = Set(samples.keys.map { String($0.prefix { $0 != "{" }) })
        for name in names {
            #expect(text.contains("# HELP \(name) ") && text.contains("# TYPE \(name) gauge\n"), "\(name)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: night.metrics.deletingLastPathComponent().path) == ["nightly.prom"])
    }

    /// A run that fails says so, and keeps the time of the last success
    /// from the file it replaces; a pair with a side that failed has no
    /// count of differences rather than a 0 that reads as in sync.
    @Test(.needs(.promtool)) func aFailingRunKeepsTheLastSuccess() throws {
        let night = try Night(#", "metrics": "textfile/nightly.prom""#)
        #expect(try night.run().code == 0)
        let success = try #require(try checkedMetrics(night.metrics)[#"reckon_last_success_timestamp_seconds{pipeline="nightly"}"#])
        try night.removeSides()
        for _ in 0..<2 {
            #expect(try night.run().code == 2)
            let samples = try checkedMetrics(night.metrics)
            #expect(samples[#"reckon_run_exit_code{pipeline="nightly"}"#] == 2)
            #expect(samples[#"reckon_last_success_timestamp_seconds{pipeline="nightly"}"#] == success)
            #expect(samples[#"reckon_side_failed{pipeline="nightly",side="drive",role="remote"}"#] == 1)
            #expect(!samples.keys.contains { $0.hasPrefix("reckon_differences") || $0.hasPrefix("reckon_memos") })
        }
        // A pipeline that never succeeded has no time of success at all.
        let fresh = try Night(#", "metrics": "textfile/nightly.prom""#)
        try fresh.removeSides()
        #expect(try fresh.run().code == 2)
        #expect(!(try checkedMetrics(fresh.metrics)).keys.contains { $0.hasPrefix("reckon_last_success") })
    }

    @Test(.needs(.promtool)) func reconcileAndAFleetTakeMetricsFromTheCommandLine() throws {
        let drift = packageRoot.appendingPathComponent("Samples/drift").path
        let folder = temporaryFolder()
        let file = folder.appendingPathComponent("one.prom")
        let result = try runArray(["reconcile", "--local", "\(drift)/device", "--remote", "\(drift)/drive", "--metrics", file.path], in: folder)
        #expect(result.code == 1)
        #expect(try checkedMetrics(file)[#"reckon_run_exit_code{pipeline="reconcile"}"#] == 1)

        let fleet = FleetFolder()
        try fleet.add("1.json", name: "alpha", local: "drift/device", remote: "drift/drive")
        try fleet.add("2.json", name: "beta", extra: #", "metrics": "beta-own.prom""#)
        #expect(try fleet.run("fleet").code == 0)
        #expect(try checkedMetrics(fleet.fleet.appendingPathComponent("beta-own.prom"))[#"reckon_run_exit_code{pipeline="beta"}"#] == 0)
        #expect(try fleet.run("fleet", "--metrics", "textfile").code == 0)
        for name in ["alpha", "beta"] {
            let samples = try checkedMetrics(fleet.root.appendingPathComponent("textfile/\(name).prom"))
            #expect(samples[#"reckon_memos{pipeline="\#(name)",side="device",role="local",state="active"}"#] != nil)
        }
        #expect(try runArray(["run", "--dry-run", fleet.fleet.appendingPathComponent("1.json").path, "--metrics", "dry.prom"], in: folder).code == 0)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("dry.prom").path), "--dry-run writes no file")
    }

    @Test func aMetricsPathThatCannotServeIsRefusedBeforeAnythingRuns() throws {
        let drift = packageRoot.appendingPathComponent("Samples/drift").path
        let folder = temporaryFolder()
        let wrongName = try runArray(["reconcile", "--local", "\(drift)/device", "--remote", "\(drift)/drive", "--metrics", "out.txt"], in: folder)
        #expect(wrongName.code == 64)
        #expect(wrongName.stderr.contains("'--metrics' must name a file ending in .prom"), "\(wrongName.stderr)")
        let inSource = try runArray(
            ["reconcile", "--local", "\(drift)/device", "--remote", "\(drift)/drive", "--metrics", "\(drift)/drive/x.prom"], in: folder)
        #expect(inSource.code == 64)
        #expect(inSource.stderr.contains("reckon never writes into a source"), "\(inSource.stderr)")

        let night = try Night(#", "metrics": "textfile/nightly.txt""#)
        let invalid = try runArray(["validate", night.definition.path])
        #expect(invalid.code == 64)
        #expect(invalid.stderr.contains("'metrics' must name a file ending in .prom"), "\(invalid.stderr)")
        let fleet = FleetFolder()
        try fleet.add("1.json", name: "alpha")
        try Data().write(to: fleet.root.appendingPathComponent("plain"))
        let notFolder = try fleet.run("fleet", "--metrics", "plain")
        #expect(notFolder.code == 64 && notFolder.stderr.contains("which is not a folder"), "\(notFolder.stderr)")
        #expect(try fleet.reported().isEmpty)
    }

    /// A pipeline's name is free text: the label escapes it, and a fleet's
    /// `--metrics DIR` refuses one that is not a plain file name.
    @Test(.needs(.promtool)) func anyPipelineNameMakesAValidLabel() throws {
        let night = try Night()
        var text = try read(night.definition)
        text = text.replacing(#""name": "nightly""#, with: #""name": "say \"hi\" \\ then\nbreak""#)
        try Data(text.utf8).write(to: night.definition)
        #expect(try night.run("--metrics", "named.prom").code == 0)
        let samples = try checkedMetrics(night.folder.appendingPathComponent("named.prom"))
        #expect(samples[#"reckon_run_exit_code{pipeline="say \"hi\" \\ then\nbreak"}"#] == 0, "\(samples.keys.sorted())")

        let fleet = FleetFolder()
        try fleet.add("1.json", name: "../escape")
        let refused = try fleet.run("fleet", "--metrics", "textfile")
        #expect(refused.code == 64 && refused.stderr.contains("cannot name a file in '--metrics' textfile"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fleet.root.appendingPathComponent("escape.prom").path))
    }

    /// A link where the metrics file goes is refused, never followed: the
    /// collector's folder may be writable by others, and a link there must
    /// not lead reckon to replace another file.
    @Test func aMetricsFileThatIsALinkIsRefusedAndItsTargetKept() throws {
        let night = try Night(#", "metrics": "textfile/nightly.prom""#)
        let victim = night.folder.appendingPathComponent("authorized_keys")
        try Data("precious\n".utf8).write(to: victim)
        try FileManager.default.createDirectory(at: night.metrics.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: night.metrics.path, withDestinationPath: "../authorized_keys")
        for arguments in [[], ["--metrics", "textfile/nightly.prom"]] {
            let result = try runArray(["run", night.definition.path] + arguments, in: night.folder)
            #expect(result.code == 2)
            #expect(result.stderr.contains("nightly.prom: is a link; reckon writes no file through a link"), "\(result.stderr)")
            #expect(try read(victim) == "precious\n")
            #expect(FileKind(path: night.metrics.path) == .link)
        }
    }

    /// The export folder's run folders are reckon's to write and remove
    /// whole, and the definition is not an output: a metrics file in
    /// either is refused before anything runs.
    @Test func aMetricsFileInTheExportFolderOrOverTheDefinitionIsRefused() throws {
        let night = try Night()
        #expect(try night.run().code == 0)
        for (path, words) in [
            ("export/latest/x.prom", "inside export.dir export, whose run folders reckon writes and removes whole"),
            ("nightly.json.prom", nil), ("./nightly.prom", nil)
        ] {
            let result = try night.run("--metrics", path)
            if let words {
                #expect(result.code == 64 && result.stderr.contains(words), "\(path): \(result.stderr)")
            } else {
                #expect(result.code == 0, "\(path): \(result.stderr)")
            }
        }
        let selfNamed = night.folder.appendingPathComponent("self.prom")
        try Data(try read(night.definition).replacing("\"reports\": {", with: "\"metrics\": \"self.prom\", \"reports\": {").utf8).write(to: selfNamed)
        let refused = try runArray(["run", selfNamed.path], in: night.folder)
        #expect(refused.code == 64 && refused.stderr.contains("the definition itself"), "\(refused.stderr)")
        // A fleet's --metrics names a folder: a missing .prom name is a file meant for one pipeline.
        let fleet = FleetFolder()
        try fleet.add("1.json", name: "alpha")
        let fileForFolder = try fleet.run("fleet", "--metrics", "nightly.prom")
        #expect(fileForFolder.code == 64 && fileForFolder.stderr.contains("which is not a folder"), "\(fileForFolder.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fleet.root.appendingPathComponent("nightly.prom").path))
    }

    /// The last success is this pipeline's own: a file another pipeline
    /// wrote, or a sample that carries a timestamp, lends it none.
    @Test(.needs(.promtool)) func theLastSuccessIsTakenOnlyFromThePipelinesOwnPlainSample() throws {
        let night = try Night(#", "metrics": "textfile/nightly.prom""#)
        try night.removeSides()
        try FileManager.default.createDirectory(at: night.metrics.deletingLastPathComponent(), withIntermediateDirectories: true)
        for previous in [
            "reckon_last_success_timestamp_seconds{pipeline=\"other\"} 1796502963\n",
            "reckon_last_success_timestamp_seconds{pipeline=\"nightly\"} 1796502963 1796502963000\n"
        ] {
            try Data(previous.utf8).write(to: night.metrics)
            #expect(try night.run().code == 2)
            #expect(!(try checkedMetrics(night.metrics)).keys.contains { $0.hasPrefix("reckon_last_success") }, "\(previous)")
        }
    }

    /// `--quiet` with `--json` prints nothing after exit 0, and the report
    /// otherwise; a fleet's array holds only the pipelines that did not end with 0.
    @Test func quietJSONPrintsOnlyWhatDidNotEndWithZero() throws {
        let night = try Night(sample: "in-sync")
        let done = try night.run("--quiet", "--json")
        #expect(done.code == 0 && done.stdout.isEmpty, "\(done.stdout.prefix(200))")
        try night.removeSides()
        let trouble = try night.run("--quiet", "--json")
        #expect(trouble.code == 2)
        #expect(try json(trouble.stdout)["outcome"] as? String == "trouble")

        let fleet = FleetFolder()
        try fleet.add("1.json", name: "alpha")
        #expect(try fleet.run("fleet", "--quiet", "--json").stdout.isEmpty)
        try fleet.add("2.json", name: "beta", remote: "no-such-folder")
        let failing = try fleet.run("fleet", "--quiet", "--json")
        #expect(failing.code == 2)
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(failing.stdout.utf8)) as? [[String: Any]])
        #expect(reports.map { $0["pipeline"] as? String } == ["beta"])
    }

    /// Operations.md's example alert rules are rules Prometheus loads.
    @Test(.needs(.promtool)) func theDocumentedAlertRulesLoad() throws {
        let page = try read(packageRoot.appendingPathComponent("Sources/ReckonCore/ReckonCore.docc/Operations.md"))
        let start = try #require(page.range(of: "```yaml\ngroups:\n"))
        let end = try #require(page.range(of: "```\n", range: start.upperBound..<page.endIndex))
        let rules = String(page[page.index(start.lowerBound, offsetBy: "```yaml\n".count)..<end.lowerBound])
        #expect(rules.contains("alert: ReckonDrift") && rules.contains("alert: ReckonFailing"))
        let file = temporaryFolder().appendingPathComponent("reckon.rules.yml")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(rules.utf8).write(to: file)
        let (code, said) = try tool("/usr/bin/env", ["promtool", "check", "rules", file.path])
        #expect(code == 0, "\(said)")
        #expect(said.contains("SUCCESS: 2 rules found"), "\(said)")
    }
}
