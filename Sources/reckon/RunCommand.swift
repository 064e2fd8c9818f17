import Foundation
import ReckonCore
import Synchronization

/// `reckon run`: one pipeline definition, or a fleet of them.
struct RunCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let dryRun = Flag("--dry-run", help: "Read and compare, but write no file.")
        let quiet = Flag(
            "--quiet",
            help:
                "Print nothing when the run ends with exit 0 (warnings still go to stderr); otherwise print the summary as without --quiet, as cron wants: it mails what a job prints."
        )
        let json = Flag("--json", help: "Print the report JSON instead of the summary (for a fleet, an array of reports).")
        let refresh = Flag(
            "--refresh",
            help:
                "Read every memo again: download an rclone remote's memo files, ignoring the cache, and read each memo file the previous export says is unchanged."
        )
        let acceptDeletions = SharedOptions.acceptDeletions
        let jobs = Option<Int>(
            "--jobs", value: "n", help: "How many pipelines of a fleet run at once (default: the number of cores).", expected: "a whole number from 1"
        ) { text in text.allSatisfy(\.isASCIIDigit) ? Int(text).flatMap { $0 >= 1 ? $0 : nil } : nil }
        let shard = Option<FleetShard>(
            "--shard", value: "k/n", help: "Run only the pipelines whose name, hashed with FNV-1a 64, gives k modulo n (k from 0).",
            expected: "k/n with n at least 1 and k from 0 to n-1, such as 0/4", convert: FleetShard.init)
        let metrics = SharedOptions.metrics(
            "path",
            "Write the run's figures for monitoring to this .prom file, in Prometheus' text format, for node_exporter's textfile collector; for a fleet, a folder that gets <pipeline>.prom for each."
        )
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "run", abstract: "Run pipeline definitions: read every side, reconcile, export and write the reports.",
        discussion: """
            One definition file runs as it always has: its summary, or its report JSON. Several files, a folder (every
            *.json file directly in it; other files and subfolders are ignored) or --shard run a fleet: every definition
            is loaded and checked first (a bad one, two with one name, or two sharing a folder: exit 64, nothing run),
            then --jobs of them at once, with one line per pipeline in name order, or with --json one array of reports
            in name order. With --quiet, a fleet prints only the summary of each pipeline that ends with an
            exit code other than 0, headed by its name, and then the tally.
            """,
        positionals: [
            .init(name: "pipeline", help: "A pipeline definition (JSON), or a folder of them. Relative paths in one are relative to its file.")
        ],
        lastPositionalRepeats: true,
        options: Self.options,
        exitCodes: [
            (0, "done, and in sync (or drift, unless the definition says failOnDrift)"),
            (1, "done, drift found and the definition says failOnDrift"),
            (2, "trouble: a side failed or has problems, memos vanished, an output could not be written"),
            (64, "usage or definition error; nothing done")
        ],
        exitCodesNote: "A fleet exits with the worst of its pipelines' codes: 64, then 2, then 1, then 0.")

    var paths: [String]
    var dryRun: Bool
    var quiet: Bool
    var json: Bool
    var refresh: Bool
    var acceptDeletions: Bool
    var jobs: Int
    var shard: FleetShard?
    var metrics: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        jobs = try arguments.value(Self.options.jobs) ?? ProcessInfo.processInfo.activeProcessorCount
        shard = try arguments.value(Self.options.shard)
        paths = arguments.positionals
        dryRun = arguments[Self.options.dryRun]
        quiet = arguments[Self.options.quiet]
        json = arguments[Self.options.json]
        refresh = arguments[Self.options.refresh]
        acceptDeletions = arguments[Self.options.acceptDeletions]
        metrics = try arguments.value(Self.options.metrics)
    }

    func run(_ console: Console, settings: ProcessSettings) -> ExitCode {
        guard paths.count > 1 || shard != nil || FileKind(path: fileURL(paths[0]).path) == .directory else {
            guard var definition = checkedDefinition(paths[0], console: console, settings: settings) else { return .usage }
            if let metrics {
                do {
                    try definition.writeMetrics(
                        to: outputFileURL(metrics, from: FileManager.default.currentDirectoryPath), path: metrics, file: paths[0])
                } catch {
                    console.err("Error: \(error)\n")
                    return .usage
                }
            }
            return run(definition, file: paths[0], console: console, settings: settings, json: json, summary: quiet ? .unlessDone : .always).code
        }
        return runFleet(console, settings: settings)
    }

    /// Runs a checked definition (read from `file`, as given) under its
    /// locks (`RunLocks`: a definition refused is a usage error, a lock held
    /// or not taken is trouble) and prints what `execute` prints; the report
    /// is nil when the run could not start.
    func run(_ loaded: PipelineDefinition, file: String, console: Console, settings: ProcessSettings, json: Bool, summary: SummaryPrinting) -> (
        code: ExitCode, published: Published?
    ) {
        var definition = loaded
        if refresh { definition.refreshCaches() }
        var pipeline = Pipeline(startedAt: runStart(), process: settings)
        pipeline.settings.writeFiles = !dryRun
        pipeline.settings.keepsHistory = true
        pipeline.settings.acceptDeletions = acceptDeletions
        pipeline.settings.readsEveryMemo = refresh
        pipeline.settings.repairCommand = .pipeline(definition)
        let locks: RunLocks
        do {
            locks = try RunLocks(for: definition, file: file, writesFiles: pipeline.settings.writeFiles, process: settings) {
                settings.checkpoints.wait(at: "run-export-locked")
            }
        } catch {
            switch error {
            case .definition(let error):
                console.err("Error: \(error)\n")
                return (.usage, nil)
            case .trouble(let error):
                console.err("Error: \(error)\n")
                return (.trouble, nil)
            }
        }
        defer { locks.release() }
        pipeline.settings.exportRuns = locks.exportRuns
        for warning in locks.warnings { console.err("warning: \(warning)\n") }
        settings.checkpoints.wait(at: "run-locked")
        let published = execute(pipeline, definition, console: console, json: json, summary: summary, failed: locks.failure.map { [$0] } ?? [])
        return (ExitCode(rawValue: published.exitCode(driftFails: definition.failOnDrift))!, published)
    }

    /// What one pipeline of a fleet gave, held until its turn to be
    /// printed: its name and code, its outcome (nil when it could not start), its
    /// line, its summary (with `--quiet`, when its code is not 0), what it
    /// said on stderr, and its report for `--json`.
    struct FleetResult: Sendable {
        var name: String
        var code: ExitCode
        var outcome: Report.Outcome?
        var line: String
        var summary: String
        var errors: String
        var report: Report?
    }

    /// Loads and checks every definition, then runs the shard's pipelines
    /// `jobs` at a time (`Fleet.run`). Each pipeline's output is collected
    /// and printed whole, in name order, so no two pipelines' lines mix.
    func runFleet(_ console: Console, settings: ProcessSettings) -> ExitCode {
        let current = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        let fleet: Fleet
        switch Fleet.load(paths, from: current, environment: ProcessInfo.processInfo.environment, process: settings) {
        case .success(let loaded): fleet = loaded
        case .failure(let errors):
            for error in errors.all { console.err("Error: \(error)\n") }
            console.err("Error: no pipeline was run: the definitions must all be valid, with names and folders of their own\n")
            return .usage
        }
        let chosen = fleet.members.filter { shard?.contains($0.definition.name) ?? true }
        guard let members = metrics.map({ inMetricsFolder(chosen, $0, console: console) }) ?? chosen else { return .usage }
        let (json, quiet, dryRun) = (json, quiet, dryRun)
        let width = members.map { escapedForDisplay($0.definition.name).count }.max() ?? 0
        let results = Fleet.run(
            members.count, jobs: jobs,
            { n in
                var (file, definition) = (members[n].file, members[n].definition)
                // Pipelines run side by side never prompt: each takes the variable or its own password file.
                definition.usePasswords(PasswordSources(environment: Passwords.fromEnvironment))
                let (summary, errors) = (FleetText(), FleetText())
                var collecting = Console(out: { summary.append($0) }, err: { errors.append($0) })
                collecting.color = false
                collecting.progress = false
                let (code, published) = run(
                    definition, file: file, console: collecting, settings: settings, json: false, summary: quiet ? .unlessDone : .never)
                let line = Fleet.line(
                    name: definition.name, width: width, published: published, exitCode: code.rawValue, dryRun: dryRun,
                    reportDir: definition.reportDir, from: current)
                return FleetResult(
                    name: definition.name, code: code, outcome: published?.fleetOutcome, line: line, summary: summary.text, errors: errors.text,
                    report: json ? published?.report : nil)
            },
            deliver: { result in
                if !result.errors.isEmpty {
                    console.err(result.errors.split(separator: "\n").map { "\(result.name): \($0)\n" }.joined())
                }
                if !json && !quiet { console.out(result.line) }
                if !json && quiet && !result.summary.isEmpty {
                    console.out("== \(escapedForDisplay(result.name)) (exit \(result.code.rawValue)) ==\n\(result.summary)\n")
                }
                // What was printed is let go; the code, outcome and report stay.
                var kept = result
                (kept.line, kept.summary, kept.errors) = ("", "", "")
                return kept
            })
        if json {
            // With --quiet, only the pipelines that did not end with 0; nothing at all when none.
            let shown = results.filter { !quiet || $0.code != .done }
            if !shown.isEmpty || !quiet {
                console.json(JSONWriter.data(.array(shown.compactMap { $0.report.map { try! JSONValue(encoding: $0) } })))
            }
        }
        let worst = results.map(\.code).max { $0.rawValue < $1.rawValue } ?? .done
        if !json && (!quiet || worst != .done) {
            console.out(Fleet.tally(results.map(\.outcome), of: fleet.members.count, shard: shard, exitCode: worst.rawValue))
        }
        return worst
    }
}

/// Gives each pipeline of a fleet its `<name>.prom` in the `--metrics`
/// folder; nil, said on stderr, when the folder is a file or a pipeline's
/// name cannot name a file in it.
func inMetricsFolder(_ members: [Fleet.Member], _ folder: String, console: Console) -> [Fleet.Member]? {
    let kind = FileKind(path: fileURL(folder).path)
    // A missing `x.prom` is a file meant for one pipeline, not a folder to make.
    guard kind == .directory || (kind == .missing && !folder.hasSuffix(".prom")) else {
        console.err("Error: '--metrics' is \(folder), which is not a folder: a fleet writes <pipeline>.prom for each pipeline into a folder\n")
        return nil
    }
    var given = members
    for n in given.indices {
        let name = given[n].definition.name
        guard !name.contains("/"), !name.hasPrefix("."), !name.contains("\0") else {
            console.err(
                "Error: \(given[n].file): the pipeline's name '\(escapedForDisplay(name))' cannot name a file in '--metrics' \(folder): give the definition its own \"metrics\" key instead\n"
            )
            return nil
        }
        do {
            let path = joinPath(folder, name + ".prom")
            try given[n].definition.writeMetrics(
                to: outputFileURL(path, from: FileManager.default.currentDirectoryPath), path: path, file: given[n].file)
        } catch {
            console.err("Error: \(error)\n")
            return nil
        }
    }
    return given
}

/// What one pipeline said on stderr, kept until its turn to be printed.
final class FleetText: Sendable {
    private let collected = Mutex("")

    func append(_ more: String) { collected.withLock { $0 += more } }
    var text: String { collected.withLock { $0 } }
}

/// `reckon validate`: a definition checked, nothing run.
struct ValidateCommand: ReckonCommand {
    static let spec = CommandSpec(
        name: "validate", abstract: "Check a pipeline definition and name any key that is wrong.",
        discussion: """
            Checks what it can without the network: every key, rclone flags and their values against the read-only list, and a
            named rclone remote against rclone listremotes. It says what only a run can tell (whether a remote can be reached).
            """,
        positionals: [.init(name: "pipeline", help: "The pipeline definition (JSON).")],
        exitCodes: [(0, "the definition is valid"), (64, "the definition is not valid, or usage error")])

    var path: String

    init(_ arguments: ParsedArguments) throws(UsageError) { path = arguments.positionals[0] }

    func run(_ console: Console, settings: ProcessSettings) -> ExitCode {
        guard let definition = checkedDefinition(path, console: console, settings: settings) else { return .usage }
        let offline = definition.checkOffline(file: path, process: settings)
        if let wrong = offline.wrong {
            console.err("Error: \(wrong)\n")
            return .usage
        }
        var parts = [
            "local '\(definition.local.name)'",
            "remotes " + definition.remotes.map { "'\($0.name)'" }.joined(separator: ", "),
            "\(definition.check.rawValue) check"
        ]
        if let export = definition.export {
            parts.append("export \(export.formats.map(\.rawValue).joined(separator: ",")) from '\(export.from)'")
        }
        console.out("\(escapedForDisplay(path)) is valid: \(parts.joined(separator: "; ")).\n")
        for line in offline.checked { console.out(escapedForDisplay("  checked: \(line)") + "\n") }
        for line in offline.notChecked { console.out(escapedForDisplay("  not checked: \(line)") + "\n") }
        return .done
    }
}
