import Foundation
import ReckonCore
import Synchronization
import TestSupport
import Testing

/// Two memo folders alike (`device`, `drive`), a plan that copies every memo
/// from the drive, edited since they last agreed, onto the device, and a
/// second pipeline `r.json` that reads both and exports the device's memos
/// as JSON into `rout/export`: the device as it was (`pristine`) and its
/// state folder are kept aside, so apply can be undone by copying them back.
struct ApplyAndReader {
    var pipeline: BaselinePipeline
    var pristine: URL { pipeline.folder.appendingPathComponent("pristine") }

    init(memos: Int) throws {
        pipeline = try BaselinePipeline(memos: 1...memos)
        #expect(try pipeline.reckon(["run", "p.json"], day: 0).code == 0)
        for n in 1...memos { pipeline.drive.memos[n] = .init(body: "Memo \(n), edited on the drive", modified: "2026-04-19T18:00:00Z") }
        try pipeline.drive.write()
        let (planned, _) = try pipeline.plan()
        #expect(planned.code == 0 || planned.code == 1, "\(planned.stderr)")
        try Data(
            """
            {"name": "reader", "local": {"name": "device", "path": "device"}, "remotes": [{"name": "drive", "path": "drive"}],
             "reports": {"dir": "rout/reports"}, "export": {"from": "local", "formats": ["json"], "dir": "rout/export"}}
            """.utf8
        ).write(to: pipeline.folder.appendingPathComponent("r.json"))
        try FileManager.default.createDirectory(at: pristine, withIntermediateDirectories: true)
        for name in ["device", "out"] { try copy(pipeline.folder.appendingPathComponent(name), to: pristine.appendingPathComponent(name)) }
    }

    /// Puts the device, the state folder and the reader's outputs back as they were before apply.
    func reset() throws {
        for name in ["device", "out", "rout"] { try? FileManager.default.removeItem(at: pipeline.folder.appendingPathComponent(name)) }
        for name in ["device", "out"] { try copy(pristine.appendingPathComponent(name), to: pipeline.folder.appendingPathComponent(name)) }
    }

    /// `cp -a`: times kept, so the plan's change tags still match.
    func copy(_ from: URL, to: URL) throws {
        let result = try runTool("cp", ["-a", from.path, to.path])
        #expect(result.code == 0, "\(result.stderr)")
    }

    func apply(environment: [String: String] = [:]) throws -> BackgroundRun {
        try BackgroundRun(
            ["apply", pipeline.planFile.path, "--yes"],
            environment: ["SOURCE_DATE_EPOCH": String(1_776_600_000 + 86_400)].merging(environment) { _, b in b },
            in: pipeline.folder)
    }

    func reader(_ arguments: [String] = ["run", "r.json"], environment: [String: String] = [:]) throws -> RunResult {
        try pipeline.reckon(arguments, day: 1, environment: environment)
    }

    /// The memos.json of the reader's newest export.
    func exported() throws -> Data {
        try Data(contentsOf: pipeline.folder.appendingPathComponent("rout/export/latest/memos.json"))
    }
}

/// A background run, waited for on a thread of its own, so a test can ask
/// whether it has ended yet.
final class Watched: Sendable {
    private let result = Mutex<RunResult?>(nil)
    private let ended = DispatchSemaphore(value: 0)

    init(_ run: BackgroundRun) {
        DispatchQueue.global().async { [self] in
            let finished = run.wait()
            result.withLock { $0 = finished }
            ended.signal()
        }
    }

    /// Waits up to `seconds` for it to end, or for `file` to appear; true when it ended.
    func ended(within seconds: Double, orWhenExists file: URL) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if ended.wait(timeout: .now() + 0.05) == .success {
                ended.signal()
                return true
            }
            if FileManager.default.fileExists(atPath: file.path) { return false }
        }
        return false
    }

    func wait() -> RunResult {
        ended.wait()
        ended.signal()
        return result.withLock { $0! }
    }
}

@Suite struct ReadLockTests {
    /// A run started while apply writes the memo folder it reads used to read
    /// it half-applied: dozens of "no entry in index.json", once an export of
    /// 2 memos new and 198 old with exit 0. Now apply and the run are started
    /// at random (seeded) offsets, 50 times: every export holds the device
    /// wholly before apply or wholly after it, and both end well.
    @Test func aRunStartedWhileApplyWritesReadsTheFolderWhollyBeforeOrAfter() throws {
        var random = TestSeed.generator()
        let setup = try ApplyAndReader(memos: 60)
        #expect(try setup.reader().code == 0)
        let before = try setup.exported()
        try setup.reset()
        let clock = ContinuousClock()
        let started = clock.now
        let applied = try setup.apply().wait()
        let applyTime = clock.now - started
        #expect(applied.code == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(try setup.reader().code == 0)
        let after = try setup.exported()
        #expect(before != after, "apply changed the device")
        // Bounded in count and in time: a slow machine runs fewer, and says so.
        let seconds = Double(applyTime.components.seconds) + Double(applyTime.components.attoseconds) / 1e18
        let deadline = clock.now + .seconds(300)
        var tries = 0
        while tries < 50 && clock.now < deadline {
            tries += 1
            try setup.reset()
            let offset = Double.random(in: 0...1, using: &random) * seconds + Double.random(in: 0...0.05, using: &random)
            let apply = try setup.apply()
            usleep(UInt32(offset * 1_000_000))
            let read = try setup.reader()
            let applyResult = apply.wait()
            #expect(applyResult.code == 0, "try \(tries) after \(offset) s: apply: \(applyResult.stdout)\(applyResult.stderr)")
            #expect(read.code == 0, "try \(tries) after \(offset) s: run: \(read.stdout)\(read.stderr)")
            let exported = try? setup.exported()
            #expect(exported == before || exported == after, "try \(tries) after \(offset) s: the export holds the device half-applied")
            if exported != before && exported != after || read.code != 0 { break }
        }
        print("apply and a run at once: \(tries) tries, apply alone took \(applyTime)")
        #expect(tries >= 10, "too few tries in the time given")
    }

    /// While apply holds the side, every command that reads it waits the
    /// bound (here 1 s, `RECKON_TEST_LOCK_WAIT`; 30 s by default), then
    /// fails the side in words naming apply's process, and writes no export.
    @Test func aReaderWaitsTheBoundThenFailsTheSideNamingApply() throws {
        let setup = try ApplyAndReader(memos: 5)
        try setup.reset()
        let folder = setup.pipeline.folder
        let gate = folder.appendingPathComponent("gate")
        try Data().write(to: gate)
        let apply = try setup.apply(environment: ["RECKON_TEST_WAIT_AT": "apply-locked", "RECKON_TEST_WAIT_FILE": gate.path])
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: gate.path + ".reached") { usleep(50_000) }
        #expect(FileManager.default.fileExists(atPath: gate.path + ".reached"), "apply holds its locks")
        let short = ["RECKON_TEST_LOCK_WAIT": "1"]
        let words = /is being changed by reckon apply or undo \(process [0-9]+\); tried for 1 s, run again when it has finished/
        for command in [
            ["run", "r.json"], ["reconcile", "--local", "device", "--remote", "drive"], ["counts", "device"],
            ["export", "device", "--out", "e"], ["plan", "p.json"], ["show", "00000001", "p.json"]
        ] {
            let result = try setup.reader(command, environment: short)
            #expect(result.code == 2, "\(command): \(result.stdout)\(result.stderr)")
            #expect((result.stdout + result.stderr).contains(words), "\(command): \(result.stdout)\(result.stderr)")
        }
        #expect(FileKind(path: folder.appendingPathComponent("e").path) == .missing, "no export written")
        #expect(FileKind(path: folder.appendingPathComponent("rout/export/latest").path) == .missing, "no export written")
        try FileManager.default.removeItem(at: gate)
        #expect(apply.wait().code == 0)
        #expect(try setup.reader(["counts", "device"], environment: short).code == 0)
    }

    /// apply waits for a command reading the side to finish (30 s at most),
    /// and past the bound refuses, writing nothing.
    @Test func applyWaitsForAReaderThenRefusesPastTheBound() throws {
        let setup = try ApplyAndReader(memos: 5)
        try setup.reset()
        let folder = setup.pipeline.folder
        let held = try heldRun(["export", "device", "--out", "e"], at: "export-locked", in: folder)
        let device = try fingerprint(folder.appendingPathComponent("device"))
        let refused = try setup.apply(environment: ["RECKON_TEST_LOCK_WAIT": "1"]).wait()
        #expect(refused.code == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("reckon commands reading it hold the lock "), "\(refused.stderr)")
        #expect(refused.stderr.contains("; tried for 1 s, try again when they have finished"), "\(refused.stderr)")
        #expect(try fingerprint(folder.appendingPathComponent("device")) == device, "nothing written")
        // Started while the export reads, it waits, and carries the plan out once the export is done.
        let waiting = try setup.apply()
        usleep(500_000)
        try FileManager.default.removeItem(at: held.gate)
        #expect(held.run.wait().code == 0)
        let applied = waiting.wait()
        #expect(applied.code == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(try fingerprint(folder.appendingPathComponent("device")) != device)
    }

    /// A definition refused with 64 for an export folder holding another
    /// pipeline's runs used to take that folder's lock first: a good run of
    /// the other pipeline started at that moment failed with "another reckon
    /// run holds the lock". Now it is refused before any lock, and the good
    /// run goes on.
    @Test func aDefinitionRefusedForASharedExportFolderTakesNoLock() throws {
        let pipelines = try TwoPipelines(keep: 2)
        #expect(try pipelines.run("first").code == 0)
        let gate = pipelines.folder.appendingPathComponent("gate")
        try Data().write(to: gate)
        let bad = Watched(
            try BackgroundRun(
                ["run", "second.json", "--quiet"], environment: ["RECKON_TEST_WAIT_AT": "run-export-locked", "RECKON_TEST_WAIT_FILE": gate.path],
                in: pipelines.folder))
        // The refused run ends, or (as it used to) stops holding the lock.
        _ = bad.ended(within: 30, orWhenExists: URL(fileURLWithPath: gate.path + ".reached"))
        let good = try pipelines.run("first")
        try FileManager.default.removeItem(at: gate)
        let refused = bad.wait()
        #expect(good.code == 0, "\(good.stderr)")
        #expect(!good.stderr.contains("holds the lock"), "\(good.stderr)")
        #expect(refused.code == 64)
        #expect(refused.stderr.contains("'export.dir' is exports, which holds a run of the pipeline 'first'"), "\(refused.stderr)")
    }
}
