import Foundation
import ReckonCore

/// `reckon show`: one memo's two versions side by side, and its body's line diff.
struct ShowCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let local = Option<String>("--local", value: "path", help: "This device's memos, as for reconcile (without a pipeline).")
        let remote = Option<String>(
            "--remote", value: "path-or-name",
            help: "The cloud memo folder, as for reconcile; with a pipeline, the name of its remote to compare with.")
        let out = Option<String>(
            "--out", value: "dir",
            help: "Without a pipeline, the folder reconcile --out wrote: its state/ says which side changed the memo since the sides last agreed.",
            completion: .directory)
        let json = Flag("--json", help: "Print both versions, their fingerprints, the fields that differ and the body's diff as JSON.")
        let app = SharedOptions.app
        let passwordFile = SharedOptions.passwordFile
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "show", abstract: "Show one memo's two versions side by side, and the line diff of its body.",
        discussion: """
            The id may be cut short: at least its first 8 hex digits, in either case, written with
            the id's dashes where they fall or with none. A start that several memos' ids share is
            refused, listing them. The fields that differ are marked with '*'; the body's diff has
            '-' before a line only on the local side and '+' before one only on the remote. --json
            prints each side's fingerprint of the memo, as a choices file for reckon plan holds it.
            With a pipeline's state folder (or --out), it says which side changed the memo since the
            two sides last agreed on it, and when, as reckon plan decides.
            """,
        positionals: [
            .init(
                name: "id", help: "The memo's id, or its first 8 or more hex digits (with the id's dashes or none).",
                completion: .text)
        ],
        optionalPositionals: [.init(name: "pipeline", help: "A pipeline definition (JSON), instead of --local and --remote paths.")],
        options: Self.options,
        exitCodes: [
            (0, "the two versions are the same"), (1, "they differ, or the memo is on one side only"),
            (2, "trouble: a side could not be read, or the memo's file on a side is damaged"),
            (64, "usage error, or the id names no one memo; nothing shown")
        ])

    var id: MemoIDPrefix
    var pipeline: String?
    var local: String?
    var remote: String?
    var out: String?
    var app: String?
    var json: Bool
    var arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws(UsageError) {
        do {
            id = try MemoIDPrefix(arguments.positionals[0])
        } catch {
            throw arguments.usage(error.description)
        }
        pipeline = arguments.positionals.count > 1 ? arguments.positionals[1] : nil
        local = try arguments.value(Self.options.local)
        remote = try arguments.value(Self.options.remote)
        out = try arguments.value(Self.options.out)
        app = try arguments.value(Self.options.app)
        json = arguments[Self.options.json]
        self.arguments = arguments
    }

    func run(_ console: Console, settings: ProcessSettings) throws(UsageError) -> ExitCode {
        let definition: PipelineDefinition
        let remoteName: String
        if let pipeline {
            if local != nil { throw arguments.usage("'--local' is read from the pipeline \(pipeline); give one or the other") }
            if out != nil { throw arguments.usage("'--out' is for --local and --remote; the pipeline \(pipeline) names its own state folder") }
            guard let read = checkedDefinition(pipeline, console: console, settings: settings, arguments: arguments) else { return .usage }
            remoteName = try read.remoteNamed(remote, pipeline: pipeline, for: "compare", arguments: arguments)
            definition = read
        } else {
            guard let local, let remote else { throw arguments.usage("Give a pipeline definition, or both '--local <path>' and '--remote <path>'") }
            // Named as reconcile names the pair, so that `pipeline` is what a choices file of its report says.
            definition = try OneShotSides(local: local, remote: remote, out: out, app: app).definition(
                ReconcileCommand.spec.name, quarantines: false, arguments: arguments, settings: settings)
            remoteName = OneShotSides.remoteName
        }
        let context = RunContext(
            onWarning: { [err = console.err] warning in err("warning: \(escapedForDisplay(warning))\n") },
            onProgress: progressPrinter(console, quiet: false))
        let shown: MemoShow
        do {
            shown = try Pipeline(startedAt: runStart(), process: settings).show(id, definition, remote: remoteName, context: context)
        } catch {
            guard error.isTrouble else { throw arguments.usage(error.description) }
            console.err("Error: \(error)\n")
            return .trouble
        }
        if json {
            console.json(shown.json.jsonData)
        } else {
            console.out(shown.text(color: console.color))
        }
        for line in shown.problemLines { console.err(line + "\n") }
        return shown.hasTrouble ? .trouble : shown.same ? .done : .drift
    }
}
