import Foundation
import ReckonCore

/// `reckon export`: one side exported whole into a folder of its own.
struct ExportCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let out = Option<String>(
            "--out", value: "dir", help: "The folder to write memos.json, markdown/, memos.zip and manifest.json into.", required: true,
            completion: .directory)
        let formats = Option<[ExportFormat]>(
            "--format", value: "formats", help: "Comma-separated: json, markdown, zip (default: all three).", expected: "json, markdown or zip",
            completion: .listOf(ExportFormat.allCases.map(\.rawValue))
        ) { text throws(Refused) in
            // Each format named once, in the order first named.
            var formats: [ExportFormat] = []
            for name in text.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
                // An empty piece (`json,`) is named by the whole value: '' alone says nothing.
                guard let format = ExportFormat(rawValue: name) else { throw .init(text: name.isEmpty ? text : name) }
                if !formats.contains(format) { formats.append(format) }
            }
            return formats
        }
        let includeArchived = Flag("--include-archived", help: "Export archived memos too (soft-deleted ones never).")
        let acceptDeletions = Flag(
            "--accept-deletions",
            help: "Replace the earlier export even when this one holds fewer memos than the deletion alarm allows (20% fewer, or none).")
        let refresh = SharedOptions.refresh
        let app = SharedOptions.app
        let passwordFile = SharedOptions.passwordFile
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "export", abstract: "Export one side's memos as JSON, Markdown and zip, atomically.",
        positionals: [SharedOptions.sidePath],
        options: Self.options,
        exitCodes: [
            (0, "exported, every memo"),
            (
                2,
                "the side could not be read whole, a memo could not be exported, the export could not be written (the folder holds files reckon did not write, or a write failed), or it would hold fewer memos than the one it replaces by more than the deletion alarm allows (that one is kept)"
            ),
            (64, "usage error, or the folder lies inside the side; nothing written")
        ])

    var path: String
    var out: String
    var formats: [ExportFormat]
    var includeArchived: Bool
    var acceptDeletions: Bool
    var refresh: Bool
    var app: String?
    var arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws(UsageError) {
        path = arguments.positionals[0]
        out = arguments.required(Self.options.out)
        formats = try arguments.value(Self.options.formats) ?? ExportFormat.allCases
        includeArchived = arguments[Self.options.includeArchived]
        acceptDeletions = arguments[Self.options.acceptDeletions]
        refresh = arguments[Self.options.refresh]
        app = try arguments.value(Self.options.app)
        self.arguments = arguments
    }

    func run(_ console: Console, settings: ProcessSettings) throws(UsageError) -> ExitCode {
        let spec = try lonePathSide(path, name: "local", app: app, refresh: refresh, arguments: arguments, settings: settings)
        let folder = outputURL(out)
        var check = PipelineDefinition(name: "export", local: spec, remotes: [], reportDir: folder)
        check.reportPath = out
        do {
            try check.checkOutputsOutsideSources(file: "--out")
        } catch {
            throw arguments.usage("'--out' \(error.message)")
        }
        // Held until the export is written: apply never writes the side mid-read.
        let locks = SideLocks([spec], process: settings)
        defer { withExtendedLifetime(locks) {} }
        if let refused = locks.refused(spec) {
            for problem in refused.problems { console.err(problem.line(under: spec.path) + "\n") }
            return .trouble
        }
        let store = spec.store(limits: ReadLimits(), process: settings)
        var job = ExportJob(formats: formats, includeArchived: includeArchived, dir: folder, shown: out, destination: .inPlace(given: fileURL(out)))
        job.acceptDeletions = acceptDeletions
        job.process = settings
        let printer = progressPrinter(console, quiet: false)
        let outcome: ExportJob.Outcome
        do {
            // Two exports into one folder take turns: the second is refused.
            let lock = try TargetLock.lock(exportFolder: folder, shown: out, process: settings)
            defer { lock.release() }
            settings.checkpoints.wait(at: "export-locked")
            outcome = try job.run(nil, makeExporter: { Exporter(store: store, process: settings) }, progress: { printer("exporting", $0, $1) })
        } catch {
            console.err("Error: \(error)\n")
            return .trouble
        }
        for problem in outcome.listing.problems {
            console.err(problem.line(under: spec.path) + "\n")
        }
        if let fewer = outcome.fewer {
            guard fewer.alarm.accepted else {
                console.err(
                    "Error: \(escapedForDisplay(out)): \(fewer.words): more gone than the deletion alarm allows, so the earlier export is kept"
                        + " and nothing was published; if the deletions were meant, run again with --accept-deletions.\n")
                return .trouble
            }
            console.err("warning: \(escapedForDisplay(out)): \(fewer.words); it replaced the earlier one, as --accept-deletions asks.\n")
        }
        // Nothing was published when the side could not be read.
        guard let summary = outcome.published?.summary else { return .trouble }
        for record in ExportRecord.records(summary, folder: folder, displayPath: out) {
            console.out(
                "\(escapedForDisplay(record.path))  \(counted(record.memos, "memo")), \(counted(record.bytes, "byte"))\(record.sha256.map { ", sha256 \($0)" } ?? "")\n"
            )
        }
        for missing in summary.missing {
            console.err("error: \(joinPath(path, missing.path)): not exported: \(missing.reason)\n")
        }
        return summary.missing.isEmpty && !outcome.listing.hasTrouble ? .done : .trouble
    }
}

/// The export named on the command line, or nil when it cannot be read
/// (said on stderr). A link the user names (a run folder's `latest`) is
/// followed: it is read by its real path.
func exportOnDisk(_ path: String, console: Console) -> ExportOnDisk? {
    do {
        return try ExportOnDisk(url: outputURL(path), shown: path)
    } catch {
        console.err("Error: \(error)\n")
        return nil
    }
}

/// `reckon verify`: an export checked against its manifest, and perhaps against a side.
struct VerifyCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let against = Option<String>(
            "--against", value: "path", help: "Also check that every memo this side would export is in the export, with equal fields.",
            namesSide: true)
        let json = Flag("--json", help: "Print the result as JSON.")
        let app = SharedOptions.app
        let passwordFile = SharedOptions.passwordFile
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "verify",
        abstract: "Check an export against its manifest.json: every file's size and SHA-256, every zip entry, the memos' counts and ids.",
        positionals: [.init(name: "export", help: "An export folder (holding manifest.json) or a memos.zip.")],
        options: Self.options,
        exitCodes: [
            (0, "the export is whole"), (1, "the export is whole, but the side given with --against has moved on"),
            (2, "the export is damaged, or cannot be read"), (64, "usage error")
        ])

    var path: String
    var against: String?
    var app: String?
    var json: Bool
    var arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws(UsageError) {
        path = arguments.positionals[0]
        against = try arguments.value(Self.options.against)
        app = try arguments.value(Self.options.app)
        json = arguments[Self.options.json]
        self.arguments = arguments
    }

    func run(_ console: Console, settings: ProcessSettings) throws(UsageError) -> ExitCode {
        var side: SideSpec?
        if let against { side = try lonePathSide(against, name: "side", app: app, arguments: arguments, settings: settings) }
        guard let export = exportOnDisk(path, console: console) else { return .trouble }
        let outcome = ExportVerifier.verify(export, against: side, process: settings)
        if let listing = outcome.side {
            for problem in listing.problems { console.err(problem.line(under: listing.spec.path) + "\n") }
        }
        if json {
            console.json(JSONWriter.data(outcome.result.json(shown: path, against: outcome.against)))
        } else {
            console.out(outcome.result.text(shown: path))
            if let against = outcome.against {
                let side = escapedForDisplay(against.side)
                console.out(
                    against.changes.isEmpty
                        ? "\(side): every memo it would export is in the export, with equal fields.\n"
                        : ExportChange.lines(against.changes) + "\(side): moved on since the export: \(ExportChange.totalsText(against.changes)).\n")
            }
        }
        return ExitCode(rawValue: outcome.exitCode)!
    }
}

/// `reckon diff`: the memos changed from one export to a later one.
struct DiffCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let json = Flag("--json", help: "Print the changes as JSON.")
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "diff", abstract: "List the memos added, removed, edited, archived and unarchived from one export to another.",
        positionals: [
            .init(name: "old", help: "The earlier export: a folder or a memos.zip."),
            .init(name: "new", help: "The later export: a folder or a memos.zip.")
        ],
        options: Self.options,
        exitCodes: [(0, "no memo changed"), (1, "some memo changed"), (2, "an export cannot be read, or is damaged"), (64, "usage error")])

    var paths: [String]
    var json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        paths = arguments.positionals
        json = arguments[Self.options.json]
    }

    func run(_ console: Console, settings: ProcessSettings) -> ExitCode {
        var sides: [ExportDiff.Side] = []
        for path in paths {
            guard let export = exportOnDisk(path, console: console) else { return .trouble }
            do {
                sides.append(try ExportDiff.Side(export, shown: path, on: settings.threads))
            } catch {
                console.err("Error: \(errorWords(error))\n")
                return .trouble
            }
        }
        let comparison = ExportDiff.Comparison(old: sides[0], new: sides[1])
        if json {
            console.json(JSONWriter.data(comparison.json))
        } else {
            console.out(comparison.text)
        }
        return comparison.changes.isEmpty ? .done : .drift
    }
}

/// `reckon restore`: a memo folder rebuilt from an export.
struct RestoreCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let to = Option<String>(
            "--to", value: "dir", help: "The folder to rebuild; it must not exist, or be empty.", required: true, completion: .directory)
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "restore", abstract: "Rebuild a memo folder (index.json and memos/) from an export, and check it memo by memo.",
        positionals: [.init(name: "export", help: "An export folder (holding memos.json, or memos.zip) or a memos.zip.")],
        options: Self.options,
        exitCodes: [
            (0, "restored, and read back equal to the export"),
            (2, "the export cannot be read or is damaged, or the folder could not be written; nothing was restored"),
            (64, "usage error, or the folder exists and is not empty; nothing written")
        ])

    var path: String
    var to: String
    var arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws(UsageError) {
        path = arguments.positionals[0]
        to = arguments.required(Self.options.to)
        self.arguments = arguments
    }

    func run(_ console: Console, settings: ProcessSettings) throws(UsageError) -> ExitCode {
        let dir = outputURL(to)
        if let refusal = ExportRestore.refusal(of: dir, given: fileURL(to), shown: to) { throw arguments.usage("'--to' \(refusal)") }
        guard let export = exportOnDisk(path, console: console) else { return .trouble }
        if let refusal = ExportRestore.refusal(of: dir, shown: to, from: export, exportShown: path) { throw arguments.usage("'--to' \(refusal)") }
        do {
            let counts = try ExportRestore.restore(export, to: dir, shownDir: to, process: settings)
            console.out(
                "\(escapedForDisplay(to))  \(counts.inWords) restored from \(escapedForDisplay(path)), read back and equal to the export memo by memo\n"
            )
            return .done
        } catch {
            console.err("Error: \(errorWords(error))\n")
            return .trouble
        }
    }
}
