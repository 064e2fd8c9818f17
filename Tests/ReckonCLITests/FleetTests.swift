import Foundation
import ReckonCore
import TestSupport
import Testing

/// A folder holding `fleet/`, the definitions, whose outputs go to `out/<name>/`
/// beside it; `reckon` runs in the folder.
struct FleetFolder {
    let root = temporaryFolder()
    var fleet: URL { root.appendingPathComponent("fleet") }
    var out: URL { root.appendingPathComponent("out") }

    static let samples = packageRoot.appendingPathComponent("Samples").path

    /// Writes `fleet/<file>` naming the pipeline `name`, which compares the
    /// sample folders `local` and `remote` (a missing one fails its side)
    /// and writes its reports to `out/<name>/reports`; `extra` adds keys.
    @discardableResult
    func add(_ file: String, name: String, local: String = "in-sync/device", remote: String = "in-sync/drive", extra: String = "") throws -> URL {
        try FileManager.default.createDirectory(at: fleet, withIntermediateDirectories: true)
        func path(_ side: String) -> String { side.hasPrefix("/") ? side : "\(Self.samples)/\(side)" }
        let text = """
            {"name": "\(name)", "local": {"name": "device", "path": "\(path(local))"},
             "remotes": [{"name": "drive", "path": "\(path(remote))"}],
             "reports": {"dir": "../out/\(name)/reports"}\(extra)}
            """
        let url = fleet.appendingPathComponent(file)
        try Data(text.utf8).write(to: url)
        return url
    }

    func run(_ arguments: String..., environment: [String: String] = [:]) throws -> RunResult {
        try runArray(["run"] + arguments, environment: environment, in: root)
    }

    /// The pipelines whose report folder exists.
    func reported() throws -> Set<String> {
        guard FileManager.default.fileExists(atPath: out.path) else { return [] }
        return Set(
            try FileManager.default.contentsOfDirectory(atPath: out.path).filter {
                FileManager.default.fileExists(atPath: out.appendingPathComponent("\($0)/reports/report.json").path)
            })
    }

    /// How many runs a pipeline's `history.jsonl` records.
    func runs(of name: String) throws -> Int {
        try read(out.appendingPathComponent("\(name)/reports/history.jsonl")).split(separator: "\n").count
    }
}

/// FNV-1a 64 as its authors define it, written out here apart from reckon's.
func fnv1a64(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
    return hash
}

@Suite struct FleetTests {
    /// The example on the Operations page: files named out of name order, one
    /// pipeline in each outcome, and files in the folder that are not definitions.
    func documentedFleet() throws -> FleetFolder {
        let folder = FleetFolder()
        try folder.add("1.json", name: "gamma", local: "drift/device", remote: "no-such-folder")
        try folder.add("2.json", name: "alpha", local: "drift/device", remote: "drift/drive", extra: #", "failOnDrift": true"#)
        try folder.add("3.json", name: "beta")
        try Data("not a definition\n".utf8).write(to: folder.fleet.appendingPathComponent("notes.txt"))
        try FileManager.default.createDirectory(at: folder.fleet.appendingPathComponent("old"), withIntermediateDirectories: true)
        try Data("{not read}".utf8).write(to: folder.fleet.appendingPathComponent("old/broken.json"))
        try Data("{not read}".utf8).write(to: folder.fleet.appendingPathComponent(".hidden.json"))
        return folder
    }

    static let documentedLines = """
        alpha  drift: 1 difference; reports in out/alpha/reports
        beta   in sync: 2 active, 1 archived; reports in out/beta/reports
        gamma  trouble: drive failed, 1 problem; reports in out/gamma/reports
        3 pipelines: 1 in sync, 1 drift, 1 trouble; exit 2

        """

    @Test func aFolderRunsEveryDefinitionInItWithOneLineEachInNameOrder() throws {
        let folder = try documentedFleet()
        let result = try folder.run("fleet/", "--jobs", "2")
        #expect(result.code == 2, "the worst of 1 (alpha's drift under failOnDrift), 0 and 2 (gamma's failed side)")
        #expect(result.stdout == Self.documentedLines)
        #expect(result.stderr.isEmpty)
        #expect(try folder.reported() == ["alpha", "beta", "gamma"])
        for name in ["alpha", "beta", "gamma"] { #expect(try folder.runs(of: name) == 1) }
        let alpha = try json(read(folder.out.appendingPathComponent("alpha/reports/report.json")))
        #expect(alpha["pipeline"] as? String == "alpha" && alpha["outcome"] as? String == "drift")
    }

    @Test func severalFilesGiveTheSameLinesWhateverTheirOrderAndJobs() throws {
        let folder = try documentedFleet()
        let result = try folder.run("fleet/3.json", "fleet/1.json", "fleet/2.json", "--jobs", "1")
        #expect(result.code == 2)
        #expect(result.stdout == Self.documentedLines)
        let again = try folder.run("fleet/2.json", "fleet/3.json", "fleet/1.json", "--jobs", "3", "--quiet")
        #expect(again.code == 2)
        // --quiet prints only the pipelines that did not end with 0 (alpha's drift fails it), each whole
        // and headed by its name, in name order, then the total.
        #expect(again.stdout.hasPrefix("== alpha (exit 1) ==\nMemos on this device\n"), "\(again.stdout)")
        #expect(again.stdout.contains("\n\n== gamma (exit 2) ==\nMemos on this device\n"))
        #expect(again.stdout.contains("Google Drive could not be read"))
        #expect(!again.stdout.contains("beta"))
        #expect(again.stdout.hasSuffix("\n\n" + Self.documentedLines.split(separator: "\n").last! + "\n"))
        for name in ["alpha", "beta", "gamma"] { #expect(try folder.runs(of: name) == 2) }
    }

    @Test func jsonIsAnArrayOfTheReportsInNameOrder() throws {
        let folder = try documentedFleet()
        let result = try folder.run("fleet", "--json")
        #expect(result.code == 2)
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(reports.map { $0["pipeline"] as? String } == ["alpha", "beta", "gamma"])
        #expect(reports.map { $0["outcome"] as? String } == ["drift", "in-sync", "trouble"])
        for report in reports {
            let name = report["pipeline"] as! String
            let written = try json(read(folder.out.appendingPathComponent("\(name)/reports/report.json")))
            func canonical(_ value: [String: Any]) throws -> Data { try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) }
            #expect(try canonical(report) == canonical(written), "\(name): the array holds the report.json it wrote")
        }
    }

    @Test func theExitCodeIsTheWorstOfThePipelines() throws {
        // Each fleet's pipelines, by the sample pair they compare and whether drift fails them.
        let drift = (local: "drift/device", remote: "drift/drive")
        let cases: [(pipelines: [(local: String, remote: String, failOnDrift: Bool)], code: Int32)] = [
            ([("in-sync/device", "in-sync/drive", false), ("in-sync/device", "in-sync/drive", true)], 0),
            ([(drift.local, drift.remote, false), ("in-sync/device", "in-sync/drive", false)], 0),
            ([("in-sync/device", "in-sync/drive", false), (drift.local, drift.remote, true)], 1),
            ([(drift.local, drift.remote, true), ("in-sync/device", "no-such-folder", false), ("in-sync/device", "in-sync/drive", false)], 2)
        ]
        for (pipelines, code) in cases {
            let folder = FleetFolder()
            for (n, pipeline) in pipelines.enumerated() {
                try folder.add(
                    "p\(n).json", name: "p\(n)", local: pipeline.local, remote: pipeline.remote,
                    extra: pipeline.failOnDrift ? #", "failOnDrift": true"# : "")
            }
            let result = try folder.run("fleet")
            #expect(result.code == code, "\(pipelines)")
            #expect(result.stdout.hasSuffix("; exit \(code)\n"))
        }
    }

    @Test func twoDefinitionsWithOneNameAreRefusedAndNothingRuns() throws {
        let folder = FleetFolder()
        try folder.add("a.json", name: "alice")
        try folder.add("b.json", name: "bob")
        try folder.add("c.json", name: "alice")
        let result = try folder.run("fleet")
        #expect(result.code == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("Error: fleet/c.json: 'name' is 'alice', as in fleet/a.json; each pipeline needs a name of its own"))
        #expect(result.stderr.hasSuffix("Error: no pipeline was run: the definitions must all be valid, with names and folders of their own\n"))
        #expect(!FileManager.default.fileExists(atPath: folder.out.path), "no report folder was made")
        // The same file given twice would run twice: refused too.
        let twice = try folder.run("fleet/b.json", "fleet/b.json")
        #expect(twice.code == 64)
        #expect(twice.stderr.hasPrefix("Error: fleet/b.json: is given twice; each definition runs once\n"))
        #expect(!FileManager.default.fileExists(atPath: folder.out.path))
    }

    @Test func definitionsThatShareAFolderAreRefusedNamingBothFiles() throws {
        let rclone = #", "remotes": [{"name": "drive", "kind": "rclone", "remote": "gdrive:60dMemo"}], "cache": {"dir": "../shared-cache"}"#
        let cases: [(second: String, message: String)] = [
            (
                #", "export": {"dir": "../out/a/reports"}"#,
                "Error: fleet/b.json: 'export.dir' is ../out/a/reports, which is also the 'reports.dir' of fleet/a.json"
            ),
            (
                #", "state": {"dir": "../out/a/reports/state/b"}"#,
                "Error: fleet/b.json: 'state.dir' is ../out/a/reports/state/b, inside the 'state.dir' of fleet/a.json (../out/a/reports/state)"
            ),
            (
                #", "quarantine": {"dir": "../drive/quarantine"}"#,
                "Error: fleet/b.json: 'quarantine.dir' is ../drive/quarantine, inside the source folder DRIVE of fleet/a.json; reckon never writes into a source"
            )
        ]
        for (second, message) in cases {
            let folder = FleetFolder()
            // a's remote is a copy, so that no test can ever write into the samples.
            let drive = folder.root.appendingPathComponent("drive")
            try FileManager.default.copyItem(atPath: "\(FleetFolder.samples)/drift/drive", toPath: drive.path)
            try folder.add("a.json", name: "a", local: "drift/device", remote: drive.path)
            try folder.add("b.json", name: "b", extra: second)
            let result = try folder.run("fleet")
            #expect(result.code == 64)
            #expect(result.stderr.hasPrefix(message.replacingOccurrences(of: "DRIVE", with: drive.path)), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder.out.path), "nothing ran")
        }
        // Two rclone pipelines with one cache folder (never reached: nothing runs).
        let folder = FleetFolder()
        try FileManager.default.createDirectory(at: folder.fleet, withIntermediateDirectories: true)
        for name in ["a", "b"] {
            try Data(
                #"{"name": "\#(name)", "local": {"path": "\#(FleetFolder.samples)/drift/device"}\#(rclone), "reports": {"dir": "../out/\#(name)"}}"#
                    .utf8
            )
            .write(to: folder.fleet.appendingPathComponent("\(name).json"))
        }
        let result = try folder.run("fleet")
        #expect(result.code == 64)
        #expect(result.stderr.contains("which is also the 'cache.dir' of fleet/a.json"), "\(result.stderr)")
    }

    @Test func oneInvalidDefinitionStopsEveryOne() throws {
        let folder = FleetFolder()
        try folder.add("a.json", name: "a")
        try folder.add("b.json", name: "b", extra: #", "lcal": {}"#)
        try folder.add("c.json", name: "c")
        for arguments in [["fleet"], ["fleet", "--shard", "0/2"], ["fleet", "--shard", "1/2"], ["fleet/a.json", "fleet/b.json"]] {
            let result = try runArray(["run"] + arguments, in: folder.root)
            #expect(result.code == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix("Error: fleet/b.json: 'lcal' is not a known key"), "\(arguments): every shard refuses the same fleet")
            #expect(!FileManager.default.fileExists(atPath: folder.out.path), "\(arguments): nothing ran")
        }
    }

    @Test func fnv1aOfANameIsThePlainOne() {
        // The published test vectors of FNV-1a 64.
        #expect(FleetShard.hash("") == 0xcbf2_9ce4_8422_2325)
        #expect(FleetShard.hash("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(FleetShard.hash("foobar") == 0x8594_4171_f739_67e8)
        for name in ["alice", "京都", "user-0042"] { #expect(FleetShard.hash(name) == fnv1a64(name)) }
    }

    @Test func everyDefinitionRunsExactlyOnceOverFourShards() throws {
        var random = TestSeed.generator()
        let seed = TestSeed.value
        let folder = FleetFolder()
        var names: Set<String> = []
        while names.count < 20 { names.insert("user-\(random.next() % 1_000_000)") }
        for name in names { try folder.add("\(name).json", name: name) }
        var seen: [String: Int] = [:]
        for shard in 0..<4 {
            let before = try folder.reported()
            let result = try folder.run("--shard", "\(shard)/4", "fleet")
            #expect(result.code == 0, "seed \(seed)")
            let ran = try folder.reported().subtracting(before)
            let expected = Set(names.filter { fnv1a64($0) % 4 == UInt64(shard) })
            #expect(ran == expected, "seed \(seed): shard \(shard)/4 ran the pipelines whose FNV-1a gives \(shard) modulo 4")
            #expect(
                result.stdout.hasSuffix(
                    "\(expected.count) of 20 pipelines (shard \(shard)/4)\(expected.isEmpty ? "" : ": \(expected.count) in sync"); exit 0\n"))
            for name in ran { seen[name, default: 0] += 1 }
        }
        #expect(Set(seen.keys) == names, "seed \(seed)")
        for name in names { #expect(try folder.runs(of: name) == 1, "seed \(seed): \(name) ran once") }
    }

    @Test func aBadShardOrJobsIsAUsageError() throws {
        let folder = FleetFolder()
        try folder.add("a.json", name: "a")
        for bad in ["4/4", "1/0", "-1/4", "a/b", "1/4/2", "1", "+1/4", "٣/4"] {
            let result = try folder.run("fleet", "--shard", bad)
            #expect(result.code == 64, "\(bad)")
            #expect(result.stderr.hasPrefix("Error: The value '\(bad)' is invalid for '--shard <k/n>'"), "\(bad): \(result.stderr)")
        }
        for bad in ["0", "-2", "two"] {
            let result = try folder.run("fleet", "--jobs", bad)
            #expect(result.code == 64, "\(bad)")
            #expect(result.stderr.hasPrefix("Error: The value '\(bad)' is invalid for '--jobs <n>'"))
        }
        let empty = FleetFolder()
        try FileManager.default.createDirectory(at: empty.fleet, withIntermediateDirectories: true)
        let none = try empty.run("fleet")
        #expect(none.code == 64)
        #expect(none.stderr.hasPrefix("Error: fleet: holds no pipeline definition (no *.json file directly in it)\n"))
        #expect(!FileManager.default.fileExists(atPath: folder.out.path))
    }

    @Test func aSubfolderNamedLikeADefinitionIsSkippedAndALinkIsRefused() throws {
        let folder = FleetFolder()
        try folder.add("a.json", name: "a")
        let manager = FileManager.default
        try manager.createDirectory(at: folder.fleet.appendingPathComponent("dir.json"), withIntermediateDirectories: true)
        try Data("{not read}".utf8).write(to: folder.fleet.appendingPathComponent("dir.json/b.json"))
        let result = try folder.run("fleet", "--quiet")
        #expect(result.code == 0, "fleet/dir.json is a subfolder and must not be read: \(result.stderr)")
        #expect(result.stderr.isEmpty, "a skipped subfolder must not be reported: \(result.stderr)")
        #expect(try folder.reported() == ["a"])

        try Data(read(folder.fleet.appendingPathComponent("a.json")).replacing("\"a\"", with: "\"c\"").utf8)
            .write(to: folder.root.appendingPathComponent("c.json"))
        for (link, target) in [("file.json", "../c.json"), ("folder.json", "dir.json"), ("dangling.json", "missing.json")] {
            let path = folder.fleet.appendingPathComponent(link).path
            try manager.createSymbolicLink(atPath: path, withDestinationPath: target)
            let refused = try folder.run("fleet")
            #expect(refused.code == 64, "the link fleet/\(link) must stop the fleet, not be followed or skipped")
            #expect(
                refused.stderr.hasPrefix("Error: fleet/\(link): is a link; links are not followed\n"),
                "the message must name the link: \(refused.stderr)")
            try manager.removeItem(atPath: path)
        }
        #expect(try folder.runs(of: "a") == 1, "a refused fleet runs nothing")
    }

    @Test func dryRunWritesNothingForAnyPipeline() throws {
        let folder = try documentedFleet()
        let result = try folder.run("fleet", "--dry-run")
        #expect(result.code == 2)
        #expect(result.stdout.hasPrefix("alpha  drift: 1 difference; nothing written (dry run)\n"))
        #expect(!FileManager.default.fileExists(atPath: folder.out.path))
    }

    @Test func aPipelinesErrorsComeWholeAndNamed() throws {
        let folder = FleetFolder()
        try folder.add("a.json", name: "a")
        try folder.add("b.json", name: "b")
        // b's report folder cannot be made: a file stands where it should be.
        try FileManager.default.createDirectory(at: folder.out.appendingPathComponent("b"), withIntermediateDirectories: true)
        try Data("a file\n".utf8).write(to: folder.out.appendingPathComponent("b/reports"))
        let result = try folder.run("fleet")
        #expect(result.code == 2)
        let written = try #require(result.stdout.split(separator: "\n").dropFirst().first)
        #expect(written.hasPrefix("b  trouble: ") && written.hasSuffix(" not written; see its errors"), "\(written)")
        #expect(result.stdout.hasPrefix("a  in sync: 2 active, 1 archived; reports in out/a/reports\n"))
        #expect(result.stdout.hasSuffix("\n2 pipelines: 1 in sync, 1 trouble; exit 2\n"))
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count >= 2)
        #expect(lines.allSatisfy { $0.hasPrefix("b: ") }, "\(result.stderr)")
        #expect(lines.first?.hasPrefix("b: warning: running without a lock") == true)
    }

    /// The Operations page, where the fleet's examples are written out.
    static let operationsPage = packageRoot.appendingPathComponent("Sources/ReckonCore/ReckonCore.docc/Operations.md")

    @Test func theOperationsPageShowsTheLinesTheFleetPrints() throws {
        let page = try read(Self.operationsPage)
        let start = try #require(page.range(of: "$ reckon run fleet/\n"), "the page shows `reckon run fleet/` and what it prints")
        let end = try #require(page.range(of: "```", range: start.upperBound..<page.endIndex))
        #expect(String(page[start.upperBound..<end.lowerBound]) == Self.documentedLines)
    }

    @Test(.needs(.parallel))
    func theOperationsPagesParallelExampleRunsEachPipelineOnce() throws {
        let page = try read(Self.operationsPage)
        let line = try #require(page.split(separator: "\n").first { $0.hasPrefix("parallel ") }.map(String.init))
        let folder = FleetFolder()
        let names = (1...12).map { "user\($0)" }
        for name in names { try folder.add("\(name).json", name: name) }
        let path = reckonBinary.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try runArray(["-c", line], environment: ["PATH": path], in: folder.root, executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.code == 0, "\(line): \(result.stderr)")
        #expect(try folder.reported() == Set(names))
        for name in names { #expect(try folder.runs(of: name) == 1, "\(name) ran once over the four shards") }
    }
}
