import Foundation
import ReckonCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Exit codes, as DESIGN §3 gives them.
enum ExitCode: Int32 {
    case done = 0
    case drift = 1
    case trouble = 2
    case usage = 64
}

/// Where output goes; tests of the commands could swap these.
struct Console {
    /// Standard output. A write that fails (a full disk, `/dev/full`) is
    /// noted in `outputFailure`, and the command goes on to its end.
    var out: @Sendable (String) -> Void = { text in
        guard !Array(text.utf8).withUnsafeBytes({ writeAll(STDOUT_FILENO, $0) }) else { return }
        _ = outputFailure.compareExchange(expected: 0, desired: errno == 0 ? EIO : errno, ordering: .relaxed)
    }
    /// Diagnostics, each line escaped: they name files and paths, and
    /// nothing read from a source may reach a terminal raw.
    var err: @Sendable (String) -> Void = { text in
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { escapedForDisplay(String($0)) }
        writeToStandardError(lines.joined(separator: "\n"))
    }
    /// Colour only on a terminal and only without NO_COLOR.
    var color = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"].map(\.isEmpty) ?? true
    var progress = isatty(STDERR_FILENO) == 1
}

/// The `errno` of the first write to standard output that failed; 0 while none has.
let outputFailure = Atomic<Int32>(0)

/// Writes to standard error; when even that fails, there is no one left to tell.
func writeToStandardError(_ text: String) {
    _ = Array(text.utf8).withUnsafeBytes { writeAll(STDERR_FILENO, $0) }
}

enum Commands {
    /// Runs the command `arguments` name, as `main` does; when its output
    /// could not be written, says so and exits with 2 (64 stays 64): the
    /// work is done, but whoever reads the output has not got it.
    static func run(_ arguments: [String]) -> ExitCode {
        let code = main(arguments)
        let failure = outputFailure.load(ordering: .relaxed)
        guard failure != 0 else { return code }
        writeToStandardError("Error: cannot write to standard output: \(String(cString: strerror(failure)))\n")
        return code == .usage ? .usage : .trouble
    }

    /// `--app`, for every command that reads a side.
    static let appOption = CommandSpec.Option(
        name: "--app", value: "id", help: "The app's bundle or group id, to find its store in an iPhone backup.")

    static let overview = "Count, reconcile and export a notes app's memos between this device and its cloud folders."

    static let reconcile = CommandSpec(
        name: "reconcile", abstract: "Compare the memos on this device with a cloud folder, memo by memo.",
        options: [
            .init(
                name: "--local", value: "path", help: "This device's memos: a memo folder, the app's store file or an iPhone backup folder.",
                required: true),
            .init(
                name: "--remote", value: "path",
                help: "The cloud memo folder (holding index.json and memos/), on disk or as an rclone remote (gdrive:60dMemo).", required: true),
            .init(
                name: "--out", value: "dir",
                help: "Write report.json, report.md, report.html and combined.txt here, and copy damaged files to quarantine/."),
            .init(name: "--json", help: "Print the report JSON instead of the summary."),
            .init(name: "--quick", help: "Compare index.json entries and the folder listing only; do not read memo files."),
            .init(name: "--lang", value: "lang", help: "The language of the summary and reports: en or ja."),
            .init(name: "--refresh", help: "Download every memo file of an rclone remote again, ignoring the cache."),
            appOption,
            .init(
                name: "--accept-deletions",
                help: "For this run, accept the deletions an alarm names: say so in the report and let the baseline move on.")
        ])
    static let counts = CommandSpec(
        name: "counts", abstract: "Count Active and Archived memos on one side, from its index alone.",
        positionals: [("path", "A memo folder (holding index.json, or above 60dMemo/), the app's store file or an iPhone backup folder.")],
        options: [
            .init(name: "--json", help: "Print {\"active\": N, \"archived\": M, …} as JSON."),
            appOption
        ])
    static let export = CommandSpec(
        name: "export", abstract: "Export one side's memos as JSON, Markdown and zip, atomically.",
        positionals: [("path", "A memo folder (holding index.json, or above 60dMemo/), the app's store file or an iPhone backup folder.")],
        options: [
            .init(name: "--out", value: "dir", help: "The folder to write memos.json, markdown/, memos.zip and manifest.json into.", required: true),
            .init(name: "--format", value: "formats", help: "Comma-separated: json, markdown, zip (default: all three)."),
            .init(name: "--include-archived", help: "Export archived memos too (soft-deleted ones never)."),
            .init(name: "--refresh", help: "Download every memo file of an rclone remote again, ignoring the cache."),
            appOption
        ])
    static let validate = CommandSpec(
        name: "validate", abstract: "Check a pipeline definition and name any key that is wrong.",
        positionals: [("pipeline", "The pipeline definition (JSON).")])

    static let verify = CommandSpec(
        name: "verify",
        abstract: "Check an export against its manifest.json: every file's size and SHA-256, every zip entry, the memos' counts and ids.",
        discussion:
            "EXIT CODES:\n  0  the export is whole\n  1  the export is whole, but the side given with --against has moved on\n  2  the export is damaged, or cannot be read\n  64 usage error",
        positionals: [("export", "An export folder (holding manifest.json) or a memos.zip.")],
        options: [
            .init(name: "--against", value: "path", help: "Also check that every memo this side would export is in the export, with equal fields."),
            .init(name: "--json", help: "Print the result as JSON."),
            appOption
        ])
    static let diff = CommandSpec(
        name: "diff", abstract: "List the memos added, removed, edited, archived and unarchived from one export to another.",
        discussion: "EXIT CODES:\n  0  no memo changed\n  1  some memo changed\n  2  an export cannot be read, or is damaged\n  64 usage error",
        positionals: [("old", "The earlier export: a folder or a memos.zip."), ("new", "The later export: a folder or a memos.zip.")],
        options: [.init(name: "--json", help: "Print the changes as JSON.")])
    static let restore = CommandSpec(
        name: "restore", abstract: "Rebuild a memo folder (index.json and memos/) from an export, and check it memo by memo.",
        discussion:
            "EXIT CODES:\n  0  restored, and read back equal to the export\n  2  the export cannot be read or is damaged, or the folder could not be written; nothing was restored\n  64 usage error, or the folder exists and is not empty; nothing written",
        positionals: [("export", "An export folder (holding memos.json, or memos.zip) or a memos.zip.")],
        options: [.init(name: "--to", value: "dir", help: "The folder to rebuild; it must not exist, or be empty.", required: true)])

    static let help = CommandSpec(
        name: "help", abstract: "Show subcommand help information.",
        positionals: [("subcommand", "The subcommand to show help for.")])

    /// Each subcommand and what runs it.
    static let all: [(spec: CommandSpec, perform: @Sendable (ParsedArguments, Console) -> ExitCode)] = [
        (run, runPipeline), (reconcile, runReconcile), (counts, runCounts), (export, runExport), (validate, runValidate),
        (verify, runVerify), (diff, runDiff), (restore, runRestore), (plan, runPlan), (apply, runApply), (undo, runUndo)
    ]

    static var mainHelp: String {
        var lines = [
            "OVERVIEW: \(overview)", "", "USAGE: reckon <subcommand>", "", "OPTIONS:",
            helpLine("--version", "Show the version."), helpLine("-h, --help", "Show help information."), "",
            "SUBCOMMANDS:"
        ]
        for command in all { lines.append(helpLine(command.spec.name, command.spec.abstract)) }
        lines.append(helpLine(help.name, help.abstract))
        lines += [
            "", "  See 'reckon help <subcommand>' for detailed help.", "",
            "EXIT CODES:", "  0  done, in sync", "  1  done, drift found",
            "  2  trouble: a side failed or has problems, or memos vanished (the deletion alarm); whatever could be done was done",
            "  64 usage or definition error; nothing done"
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Runs one command line and returns its exit code.
    static func main(_ arguments: [String], console: Console = Console()) -> ExitCode {
        guard let first = arguments.first else {
            console.err(UsageError(command: nil, message: "Missing expected argument '<subcommand>'").text)
            return .usage
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "--version":
            console.out(Reckon.version + "\n")
            return .done
        case "-h", "--help":
            console.out(mainHelp)
            return .done
        case "help":
            guard let name = rest.first else {
                console.out(mainHelp)
                return .done
            }
            guard let command = name == help.name ? help : all.first(where: { $0.spec.name == name })?.spec else {
                console.err(UsageError(command: nil, message: "Unknown subcommand '\(name)'").text)
                return .usage
            }
            console.out(command.help)
            return .done
        default:
            guard let command = all.first(where: { $0.spec.name == first }) else {
                let message = first.hasPrefix("-") ? "Unknown option '\(first)'" : "Unknown subcommand '\(first)'"
                console.err(UsageError(command: nil, message: message).text)
                return .usage
            }
            do {
                return command.perform(try command.spec.parse(rest), console)
            } catch {
                if error.message == nil {
                    console.out(error.text)
                    return .done
                }
                console.err(error.text)
                return .usage
            }
        }
    }

    /// An output folder named on the command line, by its real path: links
    /// and `..` resolved as the kernel resolves them, so that what is
    /// checked against the sources is what is written to.
    static func outputURL(_ path: String) -> URL { outputFolder(path, from: FileManager.default.currentDirectoryPath) }

    static func fileURL(_ path: String) -> URL {
        URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)).standardizedFileURL
    }

    /// A side named on the command line: its kind follows from what the
    /// path is. A file starting with SQLite's header is a store, a folder
    /// holding `Manifest.db` an iPhone backup, anything else a memo folder.
    static func side(_ role: SideRole, name: String, label: String, path: String, app: String?, refresh: Bool = false) -> SideSpec {
        let environment = ProcessInfo.processInfo.environment
        let (shown, kind) = SideKinds.fromCommandLine(
            path, url: fileURL(path), app: app, refresh: refresh, cache: { SideKinds.oneShotCache(environment: environment) })
        return SideSpec(role: role, name: name, label: label, path: shown, kind: kind)
    }

    /// The definition of a one-shot command (`reconcile`, `plan`) named by
    /// `--local`, `--remote` and `--out`: with `--out`, the reports go there,
    /// the state to its `state/` and (when `quarantines`) damaged files to
    /// its `quarantine/`. Nil, with the usage error said, when an output
    /// folder lies in a source or a backup holds several apps' stores.
    static func oneShot(
        _ name: String, _ arguments: ParsedArguments, command: CommandSpec, language: String = "en", quarantines: Bool,
        console: Console
    ) -> PipelineDefinition? {
        let strings = Strings.forLanguage(language)
        let (app, refresh) = (arguments.values["--app"], arguments.flags.contains("--refresh"))
        var definition = PipelineDefinition(
            name: name,
            local: side(.local, name: "local", label: strings.defaultLocalLabel, path: arguments.values["--local"]!, app: app, refresh: refresh),
            remotes: [
                side(.remote, name: "remote", label: strings.defaultRemoteLabel, path: arguments.values["--remote"]!, app: app, refresh: refresh)
            ],
            check: arguments.flags.contains("--quick") ? .quick : .deep,
            reportDir: arguments.values["--out"].map(outputURL),
            language: language, failOnDrift: true)
        if let out = arguments.values["--out"] {
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
            console.err(UsageError(command: command, message: "'--out' \(error.message)").text)
            return nil
        }
        if let several = severalStores([definition.local] + definition.remotes, command: command) {
            console.err(several.text)
            return nil
        }
        return definition
    }

    /// The usage error for an iPhone backup among `sides` that holds several
    /// apps' stores with memos, when no `--app` says which.
    static func severalStores(_ sides: [SideSpec], command: CommandSpec) -> UsageError? {
        for side in sides {
            guard let ambiguity = side.kind.ambiguity else { continue }
            return UsageError(command: command, message: "\(side.path): \(ambiguity)")
        }
        return nil
    }

    static func runReconcile(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        let language = arguments.values["--lang"] ?? "en"
        guard Strings.languages.contains(language) else {
            console.err(
                UsageError(
                    command: reconcile,
                    message: "The value '\(language)' is invalid for '--lang <lang>'; expected one of: \(Strings.languages.joined(separator: ", "))"
                ).text)
            return .usage
        }
        guard let definition = oneShot("reconcile", arguments, command: reconcile, language: language, quarantines: true, console: console) else {
            return .usage
        }
        var pipeline = Pipeline(startedAt: runStart())
        pipeline.settings.acceptDeletions = arguments.flags.contains("--accept-deletions")
        let published = execute(pipeline, definition, console: console, json: arguments.flags.contains("--json"), quiet: false)
        return ExitCode(rawValue: published.exitCode(driftFails: true))!
    }

    /// Runs a pipeline, prints its summary or JSON, then says which outputs
    /// could not be written: the summary is printed whatever failed.
    static func execute(_ pipeline: Pipeline, _ definition: PipelineDefinition, console: Console, json: Bool, quiet: Bool) -> Published {
        let context = RunContext(
            onNote: { [progress = console.progress, err = console.err] note in
                if progress && !quiet { err("reckon: \(note)\n") }
            },
            onWarning: { [err = console.err] warning in
                err("warning: \(escapedForDisplay(warning))\n")
            }, onProgress: progressPrinter(console, quiet: quiet))
        let published = pipeline.run(definition, context: context)
        if json {
            console.out(escapedJSONForDisplay(JSONWriter.data(try! JSONValue(encoding: published.report))) + "\n")
        } else if !quiet {
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

    /// A progress line on a terminal only, redrawn in place (its carriage
    /// return is the one control character reckon writes to stderr); silent in cron.
    static func progressPrinter(_ console: Console, quiet: Bool) -> @Sendable (String, Int, Int) -> Void {
        guard console.progress && !quiet else { return { _, _, _ in } }
        return { what, done, total in
            guard done == total || done % 100 == 0 else { return }
            writeToStandardError("\rreckon: \(what) \(done)/\(total) memos" + (done == total ? "\n" : ""))
        }
    }

    static func runExport(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        let path = arguments.positionals[0]
        let outPath = arguments.values["--out"]!
        var formats: [ExportFormat] = []
        for name in (arguments.values["--format"] ?? "json,markdown,zip").split(separator: ",", omittingEmptySubsequences: false) {
            guard let format = ExportFormat(rawValue: String(name)) else {
                console.err(
                    UsageError(command: export, message: "The value '\(name)' is invalid for '--format <formats>'; expected json, markdown or zip")
                        .text)
                return .usage
            }
            if !formats.contains(format) { formats.append(format) }
        }
        let spec = side(
            .local, name: "local", label: Rclone.masked(path), path: path, app: arguments.values["--app"],
            refresh: arguments.flags.contains("--refresh"))
        if let several = severalStores([spec], command: export) {
            console.err(several.text)
            return .usage
        }
        let out = outputURL(outPath)
        var check = PipelineDefinition(name: "export", local: spec, remotes: [], reportDir: out)
        check.reportPath = outPath
        do {
            try check.checkOutputsOutsideSources(file: "--out")
        } catch {
            console.err(UsageError(command: export, message: "'--out' \(error.message)").text)
            return .usage
        }
        let export = FolderExport(
            store: spec.store(limits: ReadLimits()), formats: formats, includeArchived: arguments.flags.contains("--include-archived"),
            out: out, outPath: outPath, given: fileURL(outPath))
        let printer = progressPrinter(console, quiet: false)
        let outcome: FolderExport.Outcome
        do {
            outcome = try export.run { printer("exporting", $0, $1) }
        } catch {
            console.err("Error: \(error)\n")
            return .trouble
        }
        for problem in outcome.listing.problems {
            console.err(problem.line(under: spec.path) + "\n")
        }
        guard let summary = outcome.summary else { return .trouble }
        for record in ExportRecord.records(summary, folder: out, displayPath: outPath) {
            console.out(
                "\(escapedForDisplay(record.path))  \(record.memos) memos, \(record.bytes) bytes\(record.sha256.map { ", sha256 \($0)" } ?? "")\n")
        }
        for missing in summary.missing {
            console.err("error: \(joinPath(path, missing.path)): not exported: \(missing.reason)\n")
        }
        return summary.missing.isEmpty && !outcome.listing.hasTrouble ? .done : .trouble
    }

    static func runCounts(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        let path = arguments.positionals[0]
        let spec = side(.local, name: "side", label: Rclone.masked(path), path: path, app: arguments.values["--app"])
        if let several = severalStores([spec], command: counts) {
            console.err(several.text)
            return .usage
        }
        let side = spec.store(limits: ReadLimits()).count()
        let counts = side.counts
        if arguments.flags.contains("--json") {
            let value: JSONValue = .object([
                "active": counts.map { .integer($0.active) } ?? .null,
                "archived": counts.map { .integer($0.archived) } ?? .null,
                "path": .string(spec.path),
                "status": .string(side.status.rawValue),
                "problems": .array(side.problems.map { .string(joinPath(path, $0.path) + ": " + $0.message) })
            ])
            console.out(escapedJSONForDisplay(value.jsonData) + "\n")
        } else if let counts {
            console.out("Memos in \(escapedForDisplay(spec.path))\n  Active    \(counts.active)\n  Archived  \(counts.archived)\n")
        }
        for problem in side.problems {
            console.err(problem.line(under: spec.path) + "\n")
        }
        return side.hasTrouble ? .trouble : .done
    }

    /// A definition file read and checked (its outputs outside its sources), or nil with the error said.
    static func checkedDefinition(_ path: String, console: Console) -> PipelineDefinition? {
        do {
            let definition = try PipelineDefinition.load(from: fileURL(path), displayPath: path, environment: ProcessInfo.processInfo.environment)
            try definition.checkOutputsOutsideSources(file: path)
            return definition
        } catch {
            console.err("Error: \(error)\n")
            return nil
        }
    }

    static func runValidate(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        let path = arguments.positionals[0]
        guard let definition = checkedDefinition(path, console: console) else { return .usage }
        var parts = [
            "local '\(definition.local.name)'",
            "remotes " + definition.remotes.map { "'\($0.name)'" }.joined(separator: ", "),
            "\(definition.check.rawValue) check"
        ]
        if let export = definition.export {
            parts.append("export \(export.formats.map(\.rawValue).joined(separator: ",")) from '\(export.from)'")
        }
        console.out("\(escapedForDisplay(path)) is valid: \(parts.joined(separator: "; ")).\n")
        return .done
    }
}

extension Commands {
    /// The export named on the command line, or nil when it cannot be read
    /// (said on stderr). A link the user names (a run folder's `latest`) is
    /// followed: it is read by its real path.
    static func exportOnDisk(_ path: String, console: Console) -> ExportOnDisk? {
        do {
            return try ExportOnDisk(url: outputURL(path), shown: path)
        } catch {
            console.err("Error: \(error)\n")
            return nil
        }
    }

    static func runVerify(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        let path = arguments.positionals[0]
        var sideSpec: SideSpec?
        if let sidePath = arguments.values["--against"] {
            let spec = side(.local, name: "side", label: Rclone.masked(sidePath), path: sidePath, app: arguments.values["--app"])
            if let several = severalStores([spec], command: verify) {
                console.err(several.text)
                return .usage
            }
            sideSpec = spec
        }
        guard let export = exportOnDisk(path, console: console) else { return .trouble }
        let result = ExportVerifier(export, keepMemos: sideSpec != nil).verify()
        var against: (side: String, changes: [ExportChange])?
        var sideFailed = false
        if let spec = sideSpec, let memos = result.memos, let manifest = result.manifest {
            let listing = spec.store(limits: ReadLimits()).load(deep: true)
            for problem in listing.problems { console.err(problem.line(under: spec.path) + "\n") }
            sideFailed = listing.hasTrouble
            if listing.status != .failed { against = (spec.path, ExportVerifier.changes(since: memos, manifest: manifest, side: listing)) }
        }
        if arguments.flags.contains("--json") {
            console.out(escapedJSONForDisplay(JSONWriter.data(result.json(shown: path, against: against))) + "\n")
        } else {
            console.out(result.text(shown: path))
            if let against {
                let side = escapedForDisplay(against.side)
                console.out(
                    against.changes.isEmpty
                        ? "\(side): every memo it would export is in the export, with equal fields.\n"
                        : ExportChange.lines(against.changes) + "\(side): moved on since the export: \(ExportChange.totalsText(against.changes)).\n")
            }
        }
        if result.damaged || sideFailed { return .trouble }
        return against.map { $0.changes.isEmpty } == false ? .drift : .done
    }

    static func runDiff(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        var sides: [(shown: String, manifest: ExportManifest, memos: [MemoID: MemoState])] = []
        for path in arguments.positionals {
            guard let export = exportOnDisk(path, console: console) else { return .trouble }
            var memos: [MemoID: MemoState] = [:]
            do {
                let (manifest, _) = try export.readMemos { memos[$0.id] = MemoState($0) }
                sides.append((path, manifest, memos))
            } catch {
                console.err("Error: \(errorWords(error))\n")
                return .trouble
            }
        }
        let changes = ExportDiff.changes(from: sides[0].memos, to: sides[1].memos)
        if arguments.flags.contains("--json") {
            let value = ExportDiff.json(
                old: ExportDiff.side(sides[0].shown, sides[0].manifest), new: ExportDiff.side(sides[1].shown, sides[1].manifest),
                changes: changes)
            console.out(escapedJSONForDisplay(JSONWriter.data(value)) + "\n")
        } else if changes.isEmpty {
            console.out("No memo changed: \(sides[1].memos.count) memos in both.\n")
        } else {
            console.out(
                ExportChange.lines(changes)
                    + "\n\(ExportChange.totalsText(changes)) (\(sides[0].memos.count) memos before, \(sides[1].memos.count) after).\n")
        }
        return changes.isEmpty ? .done : .drift
    }

    static func runRestore(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        let path = arguments.positionals[0]
        let toPath = arguments.values["--to"]!
        // A link, even one to nothing yet, is never written through.
        if FileKind(path: fileURL(toPath).path) == .link {
            console.err(
                UsageError(command: restore, message: "'--to' \(toPath) is a link; reckon does not write through links, so nothing was written").text)
            return .usage
        }
        let dir = outputURL(toPath)
        switch FileKind(path: dir.path) {
        case .missing: break
        case .directory:
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? ["?"]
            guard names.isEmpty else {
                console.err(
                    UsageError(
                        command: restore,
                        message: "'--to' \(toPath) is not empty; reckon restores only into a new or empty folder, so nothing was written"
                    ).text)
                return .usage
            }
        case let other:
            console.err(UsageError(command: restore, message: "'--to' \(toPath) is \(other.description), not a folder; nothing was written").text)
            return .usage
        }
        guard let export = exportOnDisk(path, console: console) else { return .trouble }
        // A memos.zip inside an export folder: the folder is the export.
        let folderOfZip = export.url.deletingLastPathComponent()
        let protected = export.isZip && FileKind(path: folderOfZip.appendingPathComponent("manifest.json").path).isRegular ? folderOfZip : export.url
        if isWithin(dir.path, realPath(protected.path)) {
            console.err(UsageError(command: restore, message: "'--to' \(toPath) is inside the export \(path), which reckon never writes into").text)
            return .usage
        }
        do {
            let counts = try ExportRestore.restore(export, to: dir, shownDir: toPath)
            console.out(
                "\(escapedForDisplay(toPath))  \(counts.inWords) restored from \(escapedForDisplay(path)), read back and equal to the export memo by memo\n"
            )
            return .done
        } catch {
            console.err("Error: \(errorWords(error))\n")
            return .trouble
        }
    }
}

/// When this run started: `SOURCE_DATE_EPOCH` when set (reproducible
/// reports), else the clock. Read here, by the command line only, and
/// handed to the core.
func runStart() -> Timestamp {
    Timestamp(seconds: ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"].flatMap { Int64($0) } ?? Int64(Date().timeIntervalSince1970))
}
