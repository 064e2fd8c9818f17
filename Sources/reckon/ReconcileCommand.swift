import Foundation
import ReckonCore

/// `reckon reconcile`: one run of a pipeline made from the command line.
struct ReconcileCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let local = Option<String>(
            "--local", value: "path", help: "This device's memos: a memo folder, the app's store file or an iPhone backup folder.", required: true,
            namesSide: true)
        let remote = Option<String>(
            "--remote", value: "path",
            help: "The cloud memo folder (holding index.json and memos/), on disk or as an rclone remote (gdrive:60dMemo).", required: true,
            namesSide: true)
        let out = Option<String>(
            "--out", value: "dir", help: "Write report.json, report.md, report.html and combined.txt here, and copy damaged files to quarantine/.",
            completion: .directory)
        let json = Flag("--json", help: "Print the report JSON instead of the summary.")
        let quick = Flag("--quick", help: "Compare index.json entries and the folder listing only; do not read memo files.")
        let language = SharedOptions.language("The language of the summary and reports: en or ja.")
        let refresh = SharedOptions.refresh
        let app = SharedOptions.app
        let passwordFile = SharedOptions.passwordFile
        let acceptDeletions = SharedOptions.acceptDeletions
        let reportContent = SharedOptions.reportContent
        let metrics = SharedOptions.metrics(
            "file", "Write the run's figures for monitoring to this .prom file, in Prometheus' text format, for node_exporter's textfile collector.")
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "reconcile", abstract: "Compare the memos on this device with a cloud folder, memo by memo.",
        options: Self.options,
        exitCodes: Commands.exitCodes)

    var sides: OneShotSides
    var json: Bool
    var language: String
    var acceptDeletions: Bool
    var reportContent: ReportContent
    var metrics: String?
    var arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws(UsageError) {
        language = try arguments.value(Self.options.language) ?? "en"
        reportContent = try arguments.value(Self.options.reportContent) ?? .full
        sides = OneShotSides(
            local: arguments.required(Self.options.local), remote: arguments.required(Self.options.remote),
            out: try arguments.value(Self.options.out),
            app: try arguments.value(Self.options.app), refresh: arguments[Self.options.refresh], quick: arguments[Self.options.quick])
        json = arguments[Self.options.json]
        acceptDeletions = arguments[Self.options.acceptDeletions]
        metrics = try arguments.value(Self.options.metrics)
        self.arguments = arguments
    }

    func run(_ console: Console, settings: ProcessSettings) throws(UsageError) -> ExitCode {
        var definition = try sides.definition("reconcile", language: language, quarantines: true, arguments: arguments, settings: settings)
        definition.reportContent = reportContent
        if let metrics {
            do {
                try definition.writeMetrics(
                    to: outputFileURL(metrics, from: FileManager.default.currentDirectoryPath), path: metrics, file: "--metrics")
            } catch {
                throw arguments.usage("'--metrics' \(error.message)")
            }
        }
        var pipeline = Pipeline(startedAt: runStart(), process: settings)
        pipeline.settings.acceptDeletions = acceptDeletions
        // A plan is JSON, which cannot name a path that is not UTF-8: the pages then offer no plan line.
        pipeline.settings.repairCommand = arguments.notUTF8.isEmpty ? sides.repairCommand(definition) : nil
        let published = execute(pipeline, definition, console: console, json: json, summary: .always)
        return ExitCode(rawValue: published.exitCode(driftFails: true))!
    }
}

/// The two sides and the output folder of a one-shot command (`reconcile`, `plan`).
struct OneShotSides {
    /// The remote's name in the definition these make.
    static let remoteName = "remote"

    var local: String
    var remote: String
    var out: String?
    var app: String?
    var refresh = false
    var quick = false

    /// The definition these name: with `out`, the reports go there, the
    /// state to its `state/` and (when `quarantines`) damaged files to its
    /// `quarantine/`. Throws the usage error when an output folder lies in
    /// a source or a backup holds several apps' stores.
    func definition(_ name: String, language: String = "en", quarantines: Bool, arguments: ParsedArguments, settings: ProcessSettings)
        throws(UsageError)
        -> PipelineDefinition
    {
        let strings = Strings.forLanguage(language)
        var definition = PipelineDefinition(
            name: name,
            local: try side(
                .local, name: "local", label: strings.defaultLocalLabel, path: local, app: app, refresh: refresh, arguments: arguments,
                settings: settings),
            remotes: [
                try side(
                    .remote, name: Self.remoteName, label: strings.defaultRemoteLabel, path: remote, app: app, refresh: refresh, arguments: arguments,
                    settings: settings)
            ],
            check: quick ? .quick : .deep, reportDir: out.map(outputURL), language: language, failOnDrift: true)
        if let out {
            definition.reportPath = out
            if quarantines {
                definition.quarantineDir = outputURL(out).appendingPathComponent("quarantine")
                definition.quarantinePath = joinPath(out, "quarantine")
            }
            definition.stateDir = outputURL(out).appendingPathComponent("state")
            definition.statePath = joinPath(out, "state")
        }
        do {
            try definition.checkOutputsOutsideSources(file: "--out")
        } catch {
            throw arguments.usage("'--out' \(error.message)")
        }
        return definition
    }

    /// The plan and apply lines for the choices made in the report of
    /// `definition` (made by `definition(…)`), each side by its absolute
    /// path; nil without `out`.
    func repairCommand(_ definition: PipelineDefinition) -> RepairCommand? {
        guard let reports = definition.reportDir else { return nil }
        func shown(_ spec: SideSpec) -> String { spec.kind.localURL == nil ? spec.path : realPath(fileURL(spec.path).path) }
        return .sides(local: shown(definition.local), remote: shown(definition.remotes[0]), out: realPath(reports.path), app: app)
    }
}

/// When a run's summary is printed.
enum SummaryPrinting {
    /// After every run.
    case always
    /// Only after a run that ends with an exit code other than 0, as cron
    /// wants it (`--quiet`): cron mails what a job prints, and nothing else.
    case unlessDone
    /// Never: a fleet prints its own line per pipeline.
    case never
}

/// Runs a pipeline, writes its metrics file when the definition names
/// one, prints its summary or JSON (as `summary` says), then says which
/// outputs could not be written (`failed` before the run, and the run's):
/// the summary is printed whatever failed.
func execute(
    _ pipeline: Pipeline, _ definition: PipelineDefinition, console: Console, json: Bool, summary: SummaryPrinting, failed: [OutputError] = []
) -> Published {
    let quiet = summary != .always
    let context = RunContext(
        onNote: { [progress = console.progress, err = console.err] note in
            if progress && !quiet { err("reckon: \(note)\n") }
        },
        onWarning: { [err = console.err] warning in
            err("warning: \(escapedForDisplay(warning))\n")
        }, onProgress: progressPrinter(console, quiet: quiet))
    let started = ContinuousClock.now
    var published = pipeline.run(definition, context: context)
    published.failures = failed + published.failures
    if pipeline.settings.writeFiles, let file = definition.metricsFile {
        let metrics = RunMetrics(
            report: published.report, exitCode: published.exitCode(driftFails: definition.failOnDrift), startedAt: pipeline.settings.startedAt,
            duration: (ContinuousClock.now - started).inSeconds, previous: file)
        do {
            try metrics.write(to: file)
        } catch {
            published.failures.append(error)
        }
    }
    let printsSummary =
        switch summary {
        case .always: true
        case .unlessDone: published.exitCode(driftFails: definition.failOnDrift) != 0
        case .never: false
        }
    if printsSummary && json {
        console.json(JSONWriter.data(try! JSONValue(encoding: published.report)))
    } else if printsSummary {
        let written = pipeline.settings.writeFiles && published.failures.isEmpty
        console.out(
            TextSummary(
                strings: .forLanguage(definition.language), color: console.color,
                reportFolder: written ? definition.reportDir : nil
            ).render(published.report))
    }
    for failure in published.failures {
        console.err("error: \(failure.description)\n")
    }
    return published
}

/// `reckon counts`: one side's Active and Archived memos, from its index alone.
struct CountsCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let json = Flag("--json", help: "Print {\"active\": N, \"archived\": M, …} as JSON.")
        let app = SharedOptions.app
        let passwordFile = SharedOptions.passwordFile
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "counts", abstract: "Count Active and Archived memos on one side, from its index alone.",
        positionals: [SharedOptions.sidePath], options: Self.options,
        exitCodes: [(0, "counted"), (2, "the side could not be read whole"), (64, "usage error")])

    var path: String
    var app: String?
    var json: Bool
    var arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws(UsageError) {
        path = arguments.positionals[0]
        app = try arguments.value(Self.options.app)
        json = arguments[Self.options.json]
        self.arguments = arguments
    }

    func run(_ console: Console, settings: ProcessSettings) throws(UsageError) -> ExitCode {
        let spec = try lonePathSide(path, name: "side", app: app, arguments: arguments, settings: settings)
        let locks = SideLocks([spec], process: settings)
        let side = locks.refused(spec) ?? spec.store(limits: ReadLimits(), process: settings).count()
        if json {
            console.json(side.countsJSON(given: path).jsonData)
        } else if let counts = side.counts {
            console.out("Memos in \(escapedForDisplay(spec.path))\n  Active    \(counts.active)\n  Archived  \(counts.archived)\n")
        }
        for problem in side.problems {
            console.err(problem.line(under: spec.path) + "\n")
        }
        return side.hasTrouble ? .trouble : .done
    }
}
