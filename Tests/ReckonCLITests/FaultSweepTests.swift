import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every file-system call a command makes, failed in turn (issue 33), as
/// SQLite's tests fail every I/O call: the counting preload
/// (`Tests/FaultInjection/faults.c`) counts a clean run's calls on regular
/// files and folders, then each call N is failed alone, with EIO and again
/// with ENOSPC. After each failed run:
/// - the sources and the earlier exports are byte-identical, and every other
///   file is as it was before the run or as a clean run leaves it, never a
///   third thing;
/// - the command exited 2 and named the file and the system's words (exit 0
///   only where the failed call removed a file of reckon's own), and a
///   failed flush was never retried on the same descriptor;
/// - the same command run again without a fault (an apply: `--resume`,
///   then a fresh apply) leaves exactly what a clean run leaves.
///
/// One failure prints the command, the call and its function, to replay it
/// alone: `RECKON_FAULT_AT=N RECKON_FAULT_ERRNO=E LD_PRELOAD=…/libReckonFaults.so reckon …`.
@Suite(.serialized) struct FaultSweepTests {
    @Test(arguments: FaultCase.all)
    func everyCallFailingInTurnLosesNothing(_ sweep: FaultCase) throws {
        let report = try FaultSweep(sweep).run()
        print("fault sweep \(sweep.name): \(report.points) calls, \(report.runs) failed runs")
        #expect(report.points > 10, "the preload counted the command's calls")
        #expect(report.failures.isEmpty, "\(report.failures.prefix(12).joined(separator: "\n"))")
    }
}

/// A command swept by `FaultSweepTests`: the state it starts from and how it
/// is run.
struct FaultCase: Sendable, CustomTestStringConvertible {
    /// The command's name in messages.
    var name: String
    /// The commands that make the starting state, each at its own time.
    var setUp: [(epoch: Int, arguments: [String])]
    /// The command swept.
    var arguments: [String]
    /// Paths under the work folder that must stay byte-identical.
    var untouched: [String]
    /// What finishes a run a fault stopped, in turn, until one exits as the
    /// clean run did; the swept command itself when empty.
    var recovery: [[String]] = []
    /// An apply's record of its run (journal, backups, reports): what a run
    /// stopped part way leaves there is what `--resume` and `undo` read, so
    /// it is neither as before nor as a clean run; the targets are.
    var journaled: [String] = []
    /// What the run after a failed one must leave exactly as a clean run
    /// does: an apply's or an undo's targets; the whole folder when empty.
    var compared: [String] = []
    /// The time the swept command runs at.
    var epoch = FaultCase.day(2)

    var testDescription: String { name }

    static func day(_ n: Int) -> Int { 1_764_547_200 + 86_400 * n }

    static let storePipeline = "Pipelines/store.json"
    static let pairPipeline = "Pipelines/pair.json"
    static let plan = "out/pair/reports/state/plan.json"
    static let journaled = ["out/pair/reports/state/apply", "out/pair/reports/state/backups"]

    static let all: [FaultCase] = [
        FaultCase(
            name: "run", setUp: [], arguments: ["run", storePipeline],
            untouched: ["Samples", "Pipelines"]),
        FaultCase(
            name: "nightly export", setUp: [(day(1), ["run", storePipeline])], arguments: ["run", storePipeline],
            untouched: ["Samples", "Pipelines", "out/store/export/20251202T000000Z"]),
        FaultCase(
            name: "encrypted backup", setUp: [],
            arguments: ["reconcile", "--local", "Samples/backup/iphone-encrypted", "--remote", "Samples/drift/drive", "--out", "out/encrypted"],
            untouched: ["Samples", "Pipelines"]),
        FaultCase(
            name: "export", setUp: [(day(1), ["export", "Samples/store/default.store", "--out", "out/export"])],
            arguments: ["export", "Samples/drift/device", "--out", "out/export"],
            untouched: ["Samples", "Pipelines"]),
        FaultCase(
            name: "plan", setUp: [(day(1), ["run", pairPipeline])], arguments: ["plan", pairPipeline, "--prefer", "newer"],
            untouched: ["Samples", "Pipelines", "out/pair/export"]),
        FaultCase(
            name: "apply",
            setUp: [(day(1), ["run", pairPipeline]), (day(2), ["plan", pairPipeline, "--prefer", "newer"])],
            arguments: ["apply", plan, "--yes"],
            untouched: ["Samples/store", "Pipelines", "out/pair/export"],
            recovery: [["apply", plan, "--yes", "--resume"], ["apply", plan, "--yes"]], journaled: journaled, compared: ["Samples/drift"]),
        FaultCase(
            name: "undo",
            setUp: [
                (day(1), ["run", pairPipeline]), (day(2), ["plan", pairPipeline, "--prefer", "newer"]),
                (day(2), ["apply", plan, "--yes"])
            ],
            arguments: ["undo", "20251203T000000Z", "--state", "out/pair/reports/state"],
            untouched: ["Samples/store", "Pipelines", "out/pair/export"], journaled: journaled, compared: ["Samples/drift"], epoch: day(3)),
        FaultCase(
            name: "restore", setUp: [(day(1), ["export", "Samples/drift/device", "--out", "out/export"])],
            arguments: ["restore", "out/export", "--to", "out/restored"],
            untouched: ["Samples", "Pipelines", "out/export"])
    ]
}

/// One case swept: its work folder, the clean run it is held to, and the
/// failures found.
struct FaultSweep {
    struct Report {
        var points: Int
        var runs: Int
        var failures: [String]
    }

    /// A counted call: its number, function and path.
    struct Call {
        var number: Int
        var function: String
        var path: String
    }

    let sweep: FaultCase
    let scratch = scratchFolder("fault")
    /// Where every run happens: the absolute path is the same for each, as
    /// the baselines record it.
    var work: URL { scratch.appendingPathComponent("work") }
    var template: URL { scratch.appendingPathComponent("template") }

    static let preload = reckonBinary.deletingLastPathComponent().appendingPathComponent("libReckonFaults.so")
    static let errnos: [(Int32, String)] = [(EIO, "EIO"), (ENOSPC, "ENOSPC")]

    init(_ sweep: FaultCase) { self.sweep = sweep }

    func run() throws -> Report {
        try makeTemplate()
        let before = try Self.comparable(fingerprint(template))
        // The clean run, counted.
        try stage(1)
        try use(copy: 0)
        let log = scratch.appendingPathComponent("count.log")
        let clean = try reckonRun(sweep.arguments, fault: nil, log: log)
        let cleanTree = try Self.comparable(fingerprint(work))
        let calls = try Self.calls(in: log)
        let points = sampled(calls.count)
        try stage(points.count * Self.errnos.count)
        var failures: [String] = []
        var copy = 0
        for (number, name) in Self.errnos {
            for point in points {
                try use(copy: copy)
                copy += 1
                let runLog = scratch.appendingPathComponent("run.log")
                let result = try reckonRun(sweep.arguments, fault: (point, number), log: runLog)
                // The call as this run made it: its paths hold this run's process id.
                let call = try Self.calls(in: runLog).first { $0.number == point } ?? calls[point - 1]
                let replay = "\(sweep.name): call \(point) of \(calls.count), \(call.function) \(call.path) failing with \(name)"
                let found = try check(result, call: call, errno: number, before: before, clean: cleanTree, cleanCode: clean.code, log: runLog)
                if !found.isEmpty {
                    failures.append(
                        "\(replay): " + found.prefix(3).joined(separator: "; ") + (found.count > 3 ? " (and \(found.count - 3) more)" : ""))
                }
            }
        }
        return Report(points: calls.count, runs: points.count * Self.errnos.count, failures: failures)
    }

    /// The calls to fail: every one, unless `RECKON_FAULT_SAMPLE` asks for a
    /// seeded sample of that many (the seed printed).
    func sampled(_ count: Int) -> [Int] {
        let every = Array(1...max(count, 1))
        guard let wanted = ProcessInfo.processInfo.environment["RECKON_FAULT_SAMPLE"].flatMap(Int.init), wanted < count else {
            return every
        }
        var random = TestSeed.generator(for: "fault sweep \(sweep.name), a sample of \(wanted) of \(count) calls")
        return Array(every.shuffled(using: &random).prefix(wanted)).sorted()
    }

    /// The samples, and the state the set-up commands leave, in `template`.
    func makeTemplate() throws {
        try FileManager.default.createDirectory(at: template.appendingPathComponent("Samples/backup"), withIntermediateDirectories: true)
        for sample in ["store", "drift", "backup/iphone-encrypted"] {
            try FileManager.default.copyItem(
                at: packageRoot.appendingPathComponent("Samples/\(sample)"), to: template.appendingPathComponent("Samples/\(sample)"))
        }
        let pipelines = template.appendingPathComponent("Pipelines")
        try FileManager.default.createDirectory(at: pipelines, withIntermediateDirectories: true)
        try Data(Self.pipeline(name: "store", local: #""kind": "store", "path": "../Samples/store/default.store""#).utf8)
            .write(to: pipelines.appendingPathComponent("store.json"))
        try Data(Self.pipeline(name: "pair", local: #""path": "../Samples/drift/device""#).utf8)
            .write(to: pipelines.appendingPathComponent("pair.json"))
        try FileManager.default.createDirectory(at: template.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        // Set up in the work folder's own path: baselines record it.
        try FileManager.default.moveItem(at: template, to: work)
        for (epoch, arguments) in sweep.setUp {
            let result = try runArray(arguments, environment: environment(epoch: epoch), in: work)
            guard result.code <= 1 else { throw SetUpFailed(arguments: arguments, result: result) }
        }
        try FileManager.default.moveItem(at: work, to: template)
    }

    static func pipeline(name: String, local: String) -> String {
        """
        {
          "schemaVersion": 1,
          "name": "\(name)",
          "local": { "name": "phone", "label": "this device", \(local) },
          "remotes": [ { "name": "drive", "label": "Google Drive", "path": "../Samples/drift/drive" } ],
          "check": "deep",
          "reports": { "dir": "../out/\(name)/reports" },
          "export": { "from": "local", "formats": ["json", "markdown", "zip"], "dir": "../out/\(name)/export" }
        }
        """
    }

    /// Copies of the template for `count` runs, made before any is used and
    /// a second older than the first run: reckon trusts a file's identity
    /// only once it is a second old, and every run must find the same.
    func stage(_ count: Int) throws {
        let copies = scratch.appendingPathComponent("copies")
        removeTree(copies.path)
        try FileManager.default.createDirectory(at: copies, withIntermediateDirectories: true)
        for index in 0..<count {
            let copied = try runArray(
                ["-a", template.path, copies.appendingPathComponent("\(index)").path], executable: URL(fileURLWithPath: "/bin/cp"))
            guard copied.code == 0 else { throw SetUpFailed(arguments: ["cp"], result: copied) }
        }
        sleep(1)
    }

    /// Puts staged copy `index` (counted from the first staged) in place as the work folder.
    func use(copy index: Int) throws {
        removeTree(work.path)
        try FileManager.default.moveItem(at: scratch.appendingPathComponent("copies/\(index)"), to: work)
    }

    func environment(epoch: Int) -> [String: String] {
        [
            "SOURCE_DATE_EPOCH": String(epoch), "RECKON_TEST_WORKERS": "1", "TMPDIR": work.appendingPathComponent("tmp").path,
            // The encrypted sample's, for the decrypting read; the other cases read no encrypted backup.
            "RECKON_BACKUP_PASSWORD": "reckon sample"
        ]
    }

    func reckonRun(_ arguments: [String], fault: (Int, Int32)?, log: URL?) throws -> RunResult {
        var environment = environment(epoch: sweep.epoch)
        if let log {
            environment["LD_PRELOAD"] = Self.preload.path
            environment["RECKON_FAULT_LOG"] = log.path
        }
        if let (point, number) = fault {
            environment["RECKON_FAULT_AT"] = String(point)
            environment["RECKON_FAULT_ERRNO"] = String(number)
        }
        return try runArray(arguments, environment: environment, in: work)
    }

    static func calls(in log: URL) throws -> [Call] {
        try read(log).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3, let number = Int(fields[0]), number > 0 else { return nil }
            return Call(number: number, function: String(fields[1]), path: String(fields[2]))
        }
    }

    /// Whether a call removes a file (reckon's own temporary or retention
    /// file: it removes nothing else), or empties a lock file as the lock is
    /// let go (what the file says is only which process held it).
    static func removes(_ call: Call) -> Bool {
        ["unlink", "unlinkat", "rmdir", "remove"].contains(call.function) || (call.function == "ftruncate" && call.path.hasSuffix(".lock"))
    }

    /// The promises held to after run `result` failed `call` with `errno`
    /// (a full disk: no call, and ENOSPC); `beforeRecovery` readies the
    /// disk for the run after it.
    func check(
        _ result: RunResult, call: Call?, errno number: Int32, before: [String: String], clean: [String: String], cleanCode: Int32, log: URL?,
        beforeRecovery: () throws -> Void = {}
    ) throws -> [String] {
        var failures: [String] = []
        let removal = call.map(Self.removes) ?? false
        let after = try Self.comparable(fingerprint(work))
        // SQLite opens a file of the store's private copy that it cannot
        // open for writing again to read it only, and goes on: such a run,
        // exiting as the clean run did and leaving every file as the clean
        // run leaves it, hid nothing. No other failed call may pass unsaid.
        // A full disk a run happens to fit on harms nothing either.
        let unharmed =
            (call.map { $0.function.hasPrefix("open") && $0.path.contains("/reckon-store-") } ?? true) && result.code == cleanCode
            && after.filter { !Self.isReport($0.key) } == clean.filter { !Self.isReport($0.key) }
        if result.code != 2 && !(removal && result.code == cleanCode) && !unharmed {
            failures.append("exit \(result.code), not 2: \(result.stderr.prefix(300))")
        }
        if result.code == 2 {
            let words = String(cString: strerror(number))
            let said = result.stderr + result.stdout
            if let call {
                // A part of the zip, deflated into a file of its own (or
                // libzip's temporary copy of one), is told as the zip.
                let file = URL(fileURLWithPath: call.path).lastPathComponent
                let name = file.hasPrefix(ZipBuilder.partPrefix) ? Exporter.zipName : file
                let folder = URL(fileURLWithPath: call.path).deletingLastPathComponent().lastPathComponent
                // SQLite, refused a file of the private copy, tries it again to
                // read only, and reports that try's error in place of the first.
                let saysWhy = said.contains(words) || (call.function.hasPrefix("open") && call.path.contains("/reckon-store-"))
                if !saysWhy || !(said.contains(name) || said.contains(folder)) {
                    failures.append("did not name the file and say \"\(words)\": \(said.suffix(400))")
                }
            } else if !said.contains(words) && !said.contains("bytes free") {
                // A full disk: the system's words, or apply's own check of
                // the room it needs, made before it writes anything.
                failures.append("did not say \"\(words)\": \(said.suffix(400))")
            }
        }
        if let log, try read(log).contains("retried a failed flush") { failures.append("a failed flush was retried on the same descriptor") }
        for path in Set(before.keys).union(after.keys).union(clean.keys).sorted() {
            if sweep.untouched.contains(where: { path == "/" + $0 || path.hasPrefix("/" + $0 + "/") }) {
                if after[path] != before[path] {
                    failures.append("\(path) changed (\(before[path] ?? "absent") → \(after[path] ?? "absent")); it is a source or an earlier export")
                }
            } else if !Self.isReport(path), !sweep.journaled.contains(where: { path.hasPrefix("/" + $0 + "/") }),
                before[path] != nil || clean[path] != nil, after[path] != before[path], after[path] != clean[path]
            {
                failures.append("\(path) is neither as before the run nor as a clean run leaves it")
            }
        }
        // A run that failed only to remove a file of its own may have
        // finished: then it is compared as it stands.
        let finished = (removal || unharmed) && result.code == cleanCode
        try beforeRecovery()
        failures += try recover(clean: clean, cleanCode: cleanCode, runAgain: !finished, leftoversAllowed: removal)
        return failures
    }

    /// The reports a failed run writes too: they say what failed, and the
    /// history keeps the failed run, which the next report shows.
    static func isReport(_ path: String) -> Bool {
        ["report.json", "report.md", "report.html", "combined.txt", "history.jsonl"].contains(URL(fileURLWithPath: path).lastPathComponent)
    }

    /// Runs the recovery commands without a fault, and compares the work
    /// folder with the clean run's: every file but the reports, which show
    /// the failed run in their history.
    func recover(clean: [String: String], cleanCode: Int32, runAgain: Bool, leftoversAllowed: Bool) throws -> [String] {
        if runAgain {
            var last: RunResult?
            for arguments in sweep.recovery.isEmpty ? [sweep.arguments] : sweep.recovery {
                last = try runArray(arguments, environment: environment(epoch: sweep.epoch), in: work)
                if last?.code == cleanCode { break }
            }
            guard let last, last.code == cleanCode else {
                return ["the run after it exited \(last?.code ?? -1), not \(cleanCode): \(last?.stderr.prefix(300) ?? "")"]
            }
        }
        let after = Self.asLatest(try Self.comparable(fingerprint(work)))
        let cleanLatest = Self.asLatest(clean)
        var failures: [String] = []
        let compared = { (path: String) in sweep.compared.isEmpty || sweep.compared.contains { path.hasPrefix("/" + $0 + "/") } }
        for path in Set(after.keys).union(cleanLatest.keys).sorted()
        where after[path] != cleanLatest[path] && !Self.isReport(path) && compared(path) {
            if cleanLatest[path] == nil && leftoversAllowed { continue }
            failures.append("after a clean run again, \(path) is not as a clean run leaves it")
        }
        return failures
    }

    /// A tree without the Markdown index and the record of known runs of a
    /// runs' folder, which record the files' identities (inode, times) that
    /// differ between any two copies, and without lock files, which name the
    /// process holding them.
    static func comparable(_ tree: [String: String]) -> [String: String] {
        tree.filter {
            !$0.key.hasSuffix("/" + MarkdownIndex.fileName) && !$0.key.hasSuffix("/" + KnownRuns.fileName) && !$0.key.hasSuffix(".lock")
        }
    }

    /// A tree with each runs' folder's newest run (the one `latest` leads
    /// to) named `latest`, and its other runs left out: a run that failed
    /// after publishing its export leaves a whole export, and the run after
    /// it publishes its own beside it (`…-2`), as a clean run at that time would.
    static func asLatest(_ tree: [String: String]) -> [String: String] {
        var result: [String: String] = [:]
        let links = tree.filter { $0.key.hasSuffix("/latest") && $0.value.hasPrefix("link to ") }
        let runs = try! Regex(#"^[0-9]{8}T[0-9]{6}Z(-[0-9]+)?$"#)
        for (path, value) in tree {
            var path = path
            for (link, target) in links {
                let folder = String(link.dropLast("latest".count))
                guard path.hasPrefix(folder) else { continue }
                let rest = path.dropFirst(folder.count)
                let first = rest.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
                if first == String(target.dropFirst("link to ".count)) {
                    // The run folder itself goes: `latest` stands for it.
                    path = rest.count == first.count ? "" : folder + "latest" + rest.dropFirst(first.count)
                } else if first.wholeMatch(of: runs) != nil {
                    path = ""
                }
            }
            if !path.isEmpty { result[path] = value.hasPrefix("link to ") && path.hasSuffix("/latest") ? "link" : value }
        }
        return result
    }
}

struct SetUpFailed: Error, CustomStringConvertible {
    var arguments: [String]
    var result: RunResult
    var description: String { "set-up command \(arguments.joined(separator: " ")) exited \(result.code): \(result.stderr)" }
}
