import Foundation
import ReckonCore
import Synchronization

extension Commands {
    static let run = CommandSpec(
        name: "run", abstract: "Run pipeline definitions: read every side, reconcile, export and write the reports.",
        discussion: """
            One definition file runs as it always has: its summary, or its report JSON. Several files, a folder (every
            *.json file directly in it; other files and subfolders are ignored) or --shard run a fleet: every definition
            is loaded and checked first (a bad one, two with one name, or two sharing a folder: exit 64, nothing run),
            then --jobs of them at once, with one line per pipeline in name order, or with --json one array of reports
            in name order.

            EXIT CODES:
              0  done, and in sync (or drift, unless the definition says failOnDrift)
              1  done, drift found and the definition says failOnDrift
              2  trouble: a side failed or has problems, memos vanished, an output could not be written
              64 usage or definition error; nothing done
              A fleet exits with the worst of its pipelines' codes: 64, then 2, then 1, then 0.
            """,
        positionals: [("pipeline", "A pipeline definition (JSON), or a folder of them. Relative paths in one are relative to its file.")],
        lastPositionalRepeats: true,
        options: [
            .init(name: "--dry-run", help: "Read and compare, but write no file."),
            .init(name: "--quiet", help: "Print nothing but errors."),
            .init(name: "--json", help: "Print the report JSON instead of the summary (for a fleet, an array of reports)."),
            .init(
                name: "--refresh",
                help:
                    "Read every memo again: download an rclone remote's memo files, ignoring the cache, and read each memo file the previous export says is unchanged."
            ),
            .init(
                name: "--accept-deletions",
                help: "For this run, accept the deletions an alarm names: say so in the report and let the baseline move on."),
            .init(name: "--jobs", value: "n", help: "How many pipelines of a fleet run at once (default: the number of cores)."),
            .init(name: "--shard", value: "k/n", help: "Run only the pipelines whose name, hashed with FNV-1a 64, gives k modulo n (k from 0).")
        ])

    static func runPipeline(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        var jobs = ProcessInfo.processInfo.activeProcessorCount
        if let text = arguments.values["--jobs"] {
            guard let number = Int(text), number >= 1, text.allSatisfy(\.isASCII) else {
                console.err(UsageError(command: run, message: "The value '\(text)' is invalid for '--jobs <n>'; expected a whole number from 1").text)
                return .usage
            }
            jobs = number
        }
        var shard: FleetShard?
        if let text = arguments.values["--shard"] {
            guard let parsed = FleetShard(text) else {
                console.err(
                    UsageError(
                        command: run,
                        message: "The value '\(text)' is invalid for '--shard <k/n>'; expected k/n with n at least 1 and k from 0 to n-1, such as 0/4"
                    ).text)
                return .usage
            }
            shard = parsed
        }
        let paths = arguments.positionals
        guard paths.count > 1 || shard != nil || FileKind(path: fileURL(paths[0]).path) == .directory else {
            return runOne(path: paths[0], arguments, console: console)
        }
        return runFleet(paths, shard: shard, jobs: jobs, arguments, console: console)
    }

    /// One definition file, as `run` always ran it: its summary or report JSON.
    static func runOne(path: String, _ arguments: ParsedArguments, console: Console) -> ExitCode {
        guard let definition = checkedDefinition(path, console: console) else { return .usage }
        return runLoaded(
            definition, arguments, console: console, json: arguments.flags.contains("--json"),
            quiet: arguments.flags.contains("--quiet")
        ).code
    }

    /// Runs a checked definition under its lock and prints what `execute`
    /// prints; the report is nil when the run could not start.
    static func runLoaded(
        _ loaded: PipelineDefinition, _ arguments: ParsedArguments, console: Console, json: Bool,
        quiet: Bool
    ) -> (code: ExitCode, published: Published?) {
        var definition = loaded
        if arguments.flags.contains("--refresh") { definition.refreshCaches() }
        var pipeline = Pipeline(startedAt: runStart())
        pipeline.settings.writeFiles = !arguments.flags.contains("--dry-run")
        pipeline.settings.keepsHistory = true
        pipeline.settings.acceptDeletions = arguments.flags.contains("--accept-deletions")
        pipeline.settings.readsEveryMemo = arguments.flags.contains("--refresh")
        var lock: RunLock?
        if pipeline.settings.writeFiles, let url = definition.lockURL {
            do {
                lock = try RunLock(at: url)
            } catch let busy as RunLock.Busy {
                console.err("Error: \(busy)\n")
                return (.trouble, nil)
            } catch {
                // The folder cannot hold the lock, so it cannot hold reports
                // either: the run goes on, and its outputs say what failed.
                console.err("warning: running without a lock: \(errorWords(error))\n")
            }
            // The process may have died, or its id been reused by another
            // program: either way it no longer holds the lock.
            if let holder = lock?.staleHolder {
                console.err("warning: took over the lock \(url.path) left by process \(holder), which no longer holds it\n")
            }
        }
        defer { lock?.release() }
        let published = execute(pipeline, definition, console: console, json: json, quiet: quiet)
        return (ExitCode(rawValue: published.exitCode(driftFails: definition.failOnDrift))!, published)
    }

    /// What one pipeline of a fleet gave, held until its turn to be
    /// printed: its name and code, its outcome (nil when it could not start), its
    /// line, what it said on stderr, and its report for `--json`.
    struct FleetResult: Sendable {
        var name: String
        var code: ExitCode
        var outcome: Report.Outcome?
        var line: String
        var errors: String
        var report: Report?
    }

    /// Loads and checks every definition, then runs the shard's pipelines
    /// `jobs` at a time on threads of their own. Each pipeline's output is
    /// collected and printed whole, in name order, as soon as every
    /// pipeline before it has finished, so no two pipelines' lines mix.
    static func runFleet(_ paths: [String], shard: FleetShard?, jobs: Int, _ arguments: ParsedArguments, console: Console) -> ExitCode {
        let current = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let fleet: Fleet
        switch Fleet.load(paths, from: current, environment: ProcessInfo.processInfo.environment) {
        case .success(let loaded): fleet = loaded
        case .failure(let errors):
            for error in errors.all { console.err("Error: \(error)\n") }
            console.err("Error: no pipeline was run: the definitions must all be valid, with names and folders of their own\n")
            return .usage
        }
        let members = fleet.members.filter { shard?.contains($0.definition.name) ?? true }
        let json = arguments.flags.contains("--json")
        let quiet = arguments.flags.contains("--quiet")
        let dryRun = arguments.flags.contains("--dry-run")
        let width = members.map { escapedForDisplay($0.definition.name).count }.max() ?? 0
        let results = Fleet.run(
            members.count, jobs: jobs,
            { n in
                let definition = members[n].definition
                let errors = FleetText()
                var collecting = Console(out: { _ in }, err: { errors.append($0) })
                collecting.color = false
                collecting.progress = false
                let (code, published) = runLoaded(definition, arguments, console: collecting, json: false, quiet: true)
                // The line: the name, the outcome in a few words, where the reports are.
                let name = escapedForDisplay(definition.name)
                var line = name + String(repeating: " ", count: width - name.count) + "  "
                if let published {
                    let reports =
                        if dryRun { "nothing written (dry run)" } else if !published.failures.isEmpty {
                            "see its errors"
                        } else if let folder = definition.reportDir {
                            "reports in " + escapedForDisplay(published.report.shownPath(folder, from: current))
                        } else { "no report folder" }
                    line += escapedForDisplay(published.fleetWords) + "; " + reports
                } else {
                    line += "not run: see its error; exit \(code.rawValue)"
                }
                return FleetResult(
                    name: definition.name, code: code, outcome: published?.fleetOutcome, line: line + "\n", errors: errors.text,
                    report: json ? published?.report : nil)
            },
            deliver: { result in
                if !result.errors.isEmpty {
                    console.err(result.errors.split(separator: "\n").map { "\(result.name): \($0)\n" }.joined())
                }
                if !json && !quiet { console.out(result.line) }
                // What was printed is let go; the code, outcome and report stay.
                var kept = result
                (kept.line, kept.errors) = ("", "")
                return kept
            })
        if json {
            let reports = results.compactMap { $0.report.map { try! JSONValue(encoding: $0) } }
            console.out(escapedJSONForDisplay(JSONWriter.data(.array(reports))) + "\n")
        }
        let worst = results.map(\.code).max { $0.rawValue < $1.rawValue } ?? .done
        if !json && !quiet {
            var tally: [String] = []
            for (word, outcome) in [("in sync", Report.Outcome.inSync), ("drift", .drift), ("trouble", .trouble)] {
                let count = results.filter { $0.outcome == outcome }.count
                if count > 0 { tally.append("\(count) \(word)") }
            }
            let notRun = results.filter { $0.outcome == nil }.count
            if notRun > 0 { tally.append("\(notRun) not run") }
            let of = shard.map { "\(members.count) of \(fleet.members.count) pipelines (shard \($0))" } ?? "\(members.count) pipelines"
            console.out("\(of)\(tally.isEmpty ? "" : ": " + tally.joined(separator: ", ")); exit \(worst.rawValue)\n")
        }
        return worst
    }
}

/// What one pipeline said on stderr, kept until its turn to be printed.
final class FleetText: Sendable {
    private let collected = Mutex("")

    func append(_ more: String) { collected.withLock { $0 += more } }
    var text: String { collected.withLock { $0 } }
}
