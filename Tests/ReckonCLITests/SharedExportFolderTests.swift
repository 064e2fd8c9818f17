import Foundation
import ReckonCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every entry under a folder, links not followed: a file's mode and
/// SHA-256, a link's target, a folder as such. Equal trees are the same
/// bytes, modes and links.
func tree(_ folder: URL) throws -> [String: String] {
    var result: [String: String] = [:]
    for relative in try FileManager.default.subpathsOfDirectory(atPath: folder.path) {
        let url = folder.appendingPathComponent(relative)
        var info = stat()
        lstat(url.path, &info)
        switch FileKind(path: url.path) {
        case .link: result[relative] = "link to " + (try FileManager.default.destinationOfSymbolicLink(atPath: url.path))
        case .directory: result[relative] = "folder"
        default: result[relative] = String(info.st_mode & 0o7777, radix: 8) + " " + SHA256.hex(of: try Data(contentsOf: url))
        }
    }
    return result
}

/// Starts reckon held at the step `step` (`RECKON_TEST_WAIT_AT`) until the
/// gate file it is given is removed; returns once it is there.
func heldRun(_ arguments: [String], at step: String, in folder: URL) throws -> (run: BackgroundRun, gate: URL) {
    let gate = folder.appendingPathComponent("gate-\(UUID().uuidString)")
    try Data().write(to: gate)
    let run = try BackgroundRun(arguments, environment: ["RECKON_TEST_WAIT_AT": step, "RECKON_TEST_WAIT_FILE": gate.path], in: folder)
    for _ in 0..<600 where !FileManager.default.fileExists(atPath: gate.path + ".reached") { usleep(50_000) }
    #expect(FileManager.default.fileExists(atPath: gate.path + ".reached"), "the run reached \(step)")
    return (run, gate)
}

/// Two pipeline definitions (two cron lines), each with reports of its
/// own, naming one `export.dir`.
struct TwoPipelines {
    let folder = temporaryFolder()
    var exports: URL { folder.appendingPathComponent("exports") }

    init(keep: Int) throws {
        let samples = packageRoot.appendingPathComponent("Samples/drift").path
        for name in ["first", "second"] {
            let text = """
                {"name": "\(name)", "local": {"path": "\(samples)/device"}, "remotes": [{"name": "drive", "path": "\(samples)/drive"}],
                 "reports": {"dir": "reports-\(name)"}, "export": {"dir": "exports", "keep": \(keep)}}
                """
            try Data(text.utf8).write(to: folder.appendingPathComponent("\(name).json"))
        }
    }

    func run(_ name: String, _ options: [String] = ["--quiet"]) throws -> RunResult {
        try runArray(["run", "\(name).json"] + options, in: folder)
    }

    /// Waits until every file under the export folder was last changed a
    /// second ago by the real clock, 5 s at most. Only then may a run record
    /// a manifest's identity (`FileIdentity`: the file system's clock moves
    /// in ticks), and `SOURCE_DATE_EPOCH` does not move that clock, so a
    /// test of the record waits for this, not for a run's start.
    func letTheExportsAge() {
        var newest: Int64 = 0
        for relative in FileManager.default.subpaths(atPath: exports.path) ?? [] {
            var info = stat()
            guard lstat(exports.appendingPathComponent(relative).path, &info) == 0 else { continue }
            newest = max(newest, Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
        }
        for _ in 0..<100 {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            if Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - newest > 1_000_000_000 { return }
            usleep(50_000)
        }
        Issue.record("the export folder's files did not age a second in 5 s")
    }

    /// The pipeline a run folder's manifest names.
    func pipeline(of run: String) throws -> String? {
        try json(read(exports.appendingPathComponent("\(run)/manifest.json")))["pipeline"] as? String
    }
}

@Suite struct SharedExportFolderTests {
    /// The second of two cron lines sharing `export.dir` used to delete the
    /// first's export by retention, with exit 0. Now it is refused before it
    /// writes anything, naming the other pipeline and its run.
    @Test func aPipelineIsRefusedAnExportFolderHoldingAnotherPipelinesRun() throws {
        let pipelines = try TwoPipelines(keep: 1)
        #expect(try pipelines.run("first").code == 0)
        let run = try #require(ExportFolder.runFolders(in: pipelines.exports).first)
        #expect(try pipelines.pipeline(of: run) == "first")
        let before = try tree(pipelines.exports)
        for options in [["--quiet"], ["--dry-run"]] {
            let refused = try pipelines.run("second", options)
            #expect(refused.code == 64)
            #expect(
                refused.stderr
                    == "Error: second.json: 'export.dir' is exports, which holds a run of the pipeline 'first' (exports/\(run)); each pipeline needs folders of its own, so nothing was run\n"
            )
            #expect(refused.stdout.isEmpty)
        }
        #expect(try tree(pipelines.exports) == before, "the first pipeline's export is untouched")
        #expect(FileKind(path: pipelines.folder.appendingPathComponent("reports-second").path) == .missing, "nothing written")
        #expect(try runArray(["verify", pipelines.exports.appendingPathComponent(run).path]).code == 0)
    }

    /// One pipeline's runs are its own: retention goes on as before.
    @Test func aPipelineRunningAgainKeepsItsNewestRuns() throws {
        let pipelines = try TwoPipelines(keep: 2)
        var made: [String] = []
        for _ in 0..<3 {
            #expect(try pipelines.run("first").code == 0)
            made.append(try FileManager.default.destinationOfSymbolicLink(atPath: pipelines.exports.appendingPathComponent("latest").path))
        }
        #expect(ExportFolder.runFolders(in: pipelines.exports) == [made[2], made[1]])
        #expect(try made.dropFirst().allSatisfy { try pipelines.pipeline(of: $0) == "first" })
    }

    /// A run folder is one whose manifest is one whole JSON object naming
    /// reckon its generator, read without making values of the rest: a
    /// name written twice, a manifest that is not whole JSON, or one that is
    /// no object makes no run folder (so neither retention nor a fleet acts
    /// on it), and a pipeline that is not a string is no pipeline.
    @Test func onlyAWholeManifestNamingReckonOnceMakesARunFolder() throws {
        let exports = temporaryFolder()
        let manifests: [(String, String)] = [
            ("20200101T000000Z", #"{"files": [{"path": "a"}], "generator": "reckon", "pipeline": "first"}"#),
            ("20200102T000000Z", #"{"generator": "reckon", "generator": "other"}"#),
            ("20200103T000000Z", #"{"generator": "reckon", "pipeline": 7}"#),
            ("20200104T000000Z", "\u{FEFF}" + #"{"generator": "reckon"}"#),
            ("20200105T000000Z", #"{"generator": "reckon",}"#),
            ("20200106T000000Z", #"["generator", "reckon"]"#),
            ("20200107T000000Z", #"{"files": [1 2], "generator": "reckon", "pipeline": "first"}"#),
            ("20200108T000000Z", #"{"generator": "reckon", "pipeline": "first", "pipeline": "second"}"#),
            ("20200109T000000Z", #"{"generator": "Reckon"}"#),
            ("not-a-run", #"{"generator": "reckon"}"#)
        ]
        for (name, text) in manifests {
            try FileManager.default.createDirectory(at: exports.appendingPathComponent(name), withIntermediateDirectories: false)
            try Data(text.utf8).write(to: exports.appendingPathComponent("\(name)/manifest.json"))
        }
        let runs = ExportFolder.runs(in: exports)
        #expect(runs.map(\.name) == ["20200104T000000Z", "20200103T000000Z", "20200101T000000Z"])
        #expect(runs.map(\.pipeline) == [nil, nil, "first"])
    }

    /// A run an older reckon wrote names no pipeline: it is taken as the
    /// folder's own, so an upgrade breaks no one, and the first run that
    /// names a pipeline claims the folder.
    @Test func aRunThatNamesNoPipelineBelongsToWhicheverUsesTheFolder() throws {
        let pipelines = try TwoPipelines(keep: 1)
        #expect(try pipelines.run("first").code == 0)
        let old = try #require(ExportFolder.runFolders(in: pipelines.exports).first)
        let manifest = pipelines.exports.appendingPathComponent("\(old)/manifest.json")
        let text = try read(manifest)
        #expect(text.contains(#""pipeline" : "first","#))
        #expect(chmod(manifest.path, 0o644) == 0)
        try Data(text.replacingOccurrences(of: #""pipeline" : "first","#, with: "").utf8).write(to: manifest)
        #expect(chmod(manifest.path, 0o444) == 0)
        #expect(try pipelines.pipeline(of: old) == nil)

        #expect(try pipelines.run("second").code == 0)
        let runs = ExportFolder.runFolders(in: pipelines.exports)
        #expect(runs.count == 1 && !runs.contains(old), "keep: 1 removed the older run, as before")
        let refused = try pipelines.run("first")
        #expect(refused.code == 64)
        #expect(refused.stderr.contains("which holds a run of the pipeline 'second' (exports/\(runs[0]))"), "\(refused.stderr)")
    }

    /// Two runs at once into one `export.dir`, of one pipeline or of two:
    /// the second is refused by the export folder's lock while the first
    /// holds it (another pipeline's, with 64, before it takes any lock) (which used to give both a warning about a vanished index
    /// file), and writes nothing; the first finishes, warning of nothing.
    @Test(arguments: ["first", "second"])
    func aSecondRunIntoTheExportFolderWhileOneIsGoingIsRefused(_ second: String) throws {
        let pipelines = try TwoPipelines(keep: 2)
        #expect(try pipelines.run("first").code == 0)
        let old = try #require(ExportFolder.runFolders(in: pipelines.exports).first)
        let oldTree = try tree(pipelines.exports.appendingPathComponent(old))
        let held = try heldRun(["run", "first.json", "--quiet"], at: "run-locked", in: pipelines.folder)
        let during = try tree(pipelines.exports)
        let refused = try pipelines.run(second)
        if second == "first" {
            #expect(refused.code == 2)
            #expect(refused.stderr.hasPrefix("Error: another reckon run (process "), "\(refused.stderr)")
            #expect(refused.stderr.hasSuffix("; try again when it has finished\n"), "\(refused.stderr)")
            #expect(refused.stderr.contains(") holds the lock of the export folder exports ("), "\(refused.stderr)")
        } else {
            // The folder holds the first pipeline's run: the definition is refused before any lock.
            #expect(refused.code == 64)
            #expect(refused.stderr.contains("'export.dir' is exports, which holds a run of the pipeline 'first'"), "\(refused.stderr)")
        }
        #expect(try tree(pipelines.exports) == during, "the refused run wrote nothing")
        try FileManager.default.removeItem(at: held.gate)
        let first = held.run.wait()
        #expect(first.code == 0)
        #expect(first.stderr.isEmpty, "no warning: \(first.stderr)")
        let runs = ExportFolder.runFolders(in: pipelines.exports)
        #expect(runs.count == 2 && runs[1] == old)
        #expect(try tree(pipelines.exports.appendingPathComponent(old)) == oldTree, "nothing lost")
        for run in runs { #expect(try runArray(["verify", pipelines.exports.appendingPathComponent(run).path]).code == 0) }
    }

    /// Two `reckon export` into one folder at once, even spelled through a
    /// link: the second is refused while the first holds the folder's lock,
    /// and leaves the folder and its parent as they were.
    @Test func aSecondExportIntoTheFolderWhileOneIsGoingIsRefused() throws {
        let folder = temporaryFolder()
        let device = packageRoot.appendingPathComponent("Samples/drift/device").path
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("alias").path, withDestinationPath: folder.path)
        let out = folder.appendingPathComponent("out")
        #expect(try runArray(["export", device, "--out", "out"], in: folder).code == 0)
        let held = try heldRun(["export", device, "--out", "out"], at: "export-locked", in: folder)
        let before = try tree(out)
        let parent = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let refused = try runArray(["export", device, "--out", "alias/out"], in: folder)
        #expect(refused.code == 2)
        #expect(refused.stderr.hasPrefix("Error: another reckon run (process "), "\(refused.stderr)")
        #expect(refused.stderr.contains(") holds the lock of the export folder alias/out ("), "\(refused.stderr)")
        #expect(refused.stdout.isEmpty)
        #expect(try tree(out) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == parent, "no staging folder left")
        try FileManager.default.removeItem(at: held.gate)
        let first = held.run.wait()
        #expect(first.code == 0, "\(first.stderr)")
        #expect(try runArray(["verify", out.path]).code == 0)
    }
}

/// What a run records of the run folders it found (`.reckon-runs`), so the
/// next run reads again only the manifests that changed: a manifest is
/// recorded once it is a second old, since only then does its identity
/// prove what it holds, so each test waits a second before each run whose
/// record it looks at.
@Suite struct KnownRunsTests {
    func latest(_ pipelines: TwoPipelines) throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: pipelines.exports.appendingPathComponent("latest").path)
    }

    /// How many times a run of `first` opens each run folder's manifest, from strace's record of its calls.
    func manifestOpens(_ pipelines: TwoPipelines, of runs: [String]) throws -> [Int] {
        let trace = pipelines.folder.appendingPathComponent("trace-\(UUID().uuidString).txt")
        let result = try runArray(
            ["-f", "-y", "-e", "trace=open,openat,openat2", "-o", trace.path, reckonBinary.path, "run", "first.json", "--quiet"],
            in: pipelines.folder, executable: URL(fileURLWithPath: "/usr/bin/strace"))
        #expect(result.code == 0, "\(result.stderr)")
        let calls = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
        return runs.map { run in calls.filter { $0.contains("/exports/\(run)>, \"manifest.json\"") }.count }
    }

    /// The third run reads the second run's manifest, which no run has
    /// recorded yet, and not the first's, which the second run recorded;
    /// with the record gone, it reads both.
    @Test(.needs(.tool("/usr/bin/strace")))
    func aManifestRecordedUnchangedIsNotReadAgain() throws {
        let pipelines = try TwoPipelines(keep: 5)
        #expect(try pipelines.run("first").code == 0)
        let first = try latest(pipelines)
        pipelines.letTheExportsAge()
        #expect(try pipelines.run("first").code == 0)
        let second = try latest(pipelines)
        let record = pipelines.exports.appendingPathComponent(KnownRuns.fileName)
        #expect(FileKind(path: record.path).isRegular)
        pipelines.letTheExportsAge()
        let opens = try manifestOpens(pipelines, of: [first, second])
        #expect(opens[0] == 0, "the first run's manifest is recorded unchanged")
        #expect(opens[1] >= 1, "the second run's manifest was not recorded")
        try FileManager.default.removeItem(at: record)
        #expect(try manifestOpens(pipelines, of: [first, second]).allSatisfy { $0 >= 1 }, "without the record, each is read")
    }

    /// A recorded manifest changed in place (the same file and size, now
    /// naming another pipeline) is read again, and the run is refused.
    @Test func aRecordedManifestThatChangedIsReadAgain() throws {
        let pipelines = try TwoPipelines(keep: 5)
        #expect(try pipelines.run("first").code == 0)
        let first = try latest(pipelines)
        pipelines.letTheExportsAge()
        #expect(try pipelines.run("first").code == 0)
        let manifest = pipelines.exports.appendingPathComponent("\(first)/manifest.json")
        let text = try read(manifest)
        #expect(text.contains(#""pipeline" : "first","#))
        #expect(chmod(manifest.path, 0o644) == 0)
        let handle = try FileHandle(forWritingTo: manifest)
        try handle.write(contentsOf: Data(text.replacingOccurrences(of: #""pipeline" : "first","#, with: #""pipeline" : "other","#).utf8))
        try handle.close()
        #expect(chmod(manifest.path, 0o444) == 0)
        pipelines.letTheExportsAge()
        let refused = try pipelines.run("first")
        #expect(refused.code == 64)
        #expect(refused.stderr.contains("which holds a run of the pipeline 'other' (exports/\(first))"), "\(refused.stderr)")
    }

    /// A record whose bytes were changed without sealing them again is not
    /// used: here it says the first run is another pipeline's, and the run
    /// goes on. A record that is a link is not followed: it is replaced, and
    /// the file it led to keeps its bytes.
    @Test func aDamagedOrLinkedRecordIsNotUsed() throws {
        let pipelines = try TwoPipelines(keep: 5)
        #expect(try pipelines.run("first").code == 0)
        pipelines.letTheExportsAge()
        #expect(try pipelines.run("first").code == 0)
        let record = pipelines.exports.appendingPathComponent(KnownRuns.fileName)
        var bytes = [UInt8](try Data(contentsOf: record))
        let name = Array("first".utf8)
        let at = try #require(bytes.indices.first { bytes[$0...].starts(with: name) })
        bytes.replaceSubrange(at..<(at + name.count), with: Array("other".utf8))
        try Data(bytes).write(to: record)
        pipelines.letTheExportsAge()
        #expect(try pipelines.run("first").code == 0, "the damaged record was not used")

        let outside = pipelines.folder.appendingPathComponent("outside.txt")
        try Data("not a record\n".utf8).write(to: outside)
        try FileManager.default.removeItem(at: record)
        try FileManager.default.createSymbolicLink(at: record, withDestinationURL: outside)
        pipelines.letTheExportsAge()
        #expect(try pipelines.run("first").code == 0)
        #expect(try read(outside) == "not a record\n")
        #expect(FileKind(path: record.path).isRegular)
    }
}

extension KnownRunsTests {
    /// A run killed while it wrote the record leaves its temporary file; the
    /// next run into the folder removes it, and a file of the user's with a
    /// name like it stays.
    @Test func theTemporaryRecordOfARunThatDiedIsRemoved() throws {
        let pipelines = try TwoPipelines(keep: 5)
        #expect(try pipelines.run("first").code == 0)
        let leftover = pipelines.exports.appendingPathComponent(".\(KnownRuns.fileName).999999999.7.tmp")
        let users = pipelines.exports.appendingPathComponent(".\(KnownRuns.fileName).notes.tmp")
        for file in [leftover, users] { try Data("half a record".utf8).write(to: file) }
        #expect(try pipelines.run("first").code == 0)
        #expect(FileKind(path: leftover.path) == .missing)
        #expect(try read(users) == "half a record")
    }
}
