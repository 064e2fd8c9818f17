import Foundation
import ReckonCore

#if canImport(Glibc)
    import Glibc
#endif

/// `reckon plan`: what would make a cloud folder and this device the same, written as plan.json.
struct PlanCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let local = Option<String>("--local", value: "path", help: "This device's memos, as for reconcile (without a pipeline).")
        let remote = Option<String>(
            "--remote", value: "path-or-name", help: "The cloud memo folder, as for reconcile; with a pipeline, the name of its remote to plan for.")
        let out = Option<String>(
            "--out", value: "dir",
            help: "Write plan.json, plan.md and plan.html here (default: the pipeline's state folder). Baselines are read from its state/ folder.",
            completion: .directory)
        let take = Option<(String, ConflictChoices.Take, ChoiceRequest.Seen?)>(
            "--take", value: "id=side[@fingerprint]",
            help:
                "Choose one memo's version: local, remote, or both (the older version is kept as a conflict copy); it wins even over the side that alone changed. The id may be cut to its first 8 or more hex digits. A report's page adds @FINGERPRINT, the memo's fingerprint on this device and on the remote as the report saw them (LOCAL,REMOTE; none where a side had no entry): the choice is then refused for a memo changed since, as with --choices.",
            repeats: true,
            expected:
                "a memo id (or its first 8 or more hex digits), '=', local, remote or both, and optionally '@' and two fingerprints joined by a comma",
            completion: .memoChoice
        ) { text -> (String, ConflictChoices.Take, ChoiceRequest.Seen?)? in
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else { return nil }
            let choice = parts[1].split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
            guard let side = ConflictChoices.Take(rawValue: String(choice[0])) else { return nil }
            guard choice.count == 2 else { return (parts[0], side, nil) }
            guard let seen = ChoiceRequest.Seen(choice[1]) else { return nil }
            return (parts[0], side, seen)
        }
        let choices = Option<String>(
            "--choices", value: "file",
            help:
                "Take the choices saved from a report's page (JSON): each memo's side, and its fingerprints as the report saw them. A memo changed since is refused."
        )
        let prefer = Option<ConflictChoices.Prefer>("--prefer", value: "side", help: "Settle every conflict: newer, local or remote.")
        let json = Flag("--json", help: "Print plan.json instead of the table.")
        let language = SharedOptions.language(
            "The language of the table, plan.md and plan.html, which apply and undo follow: en or ja (default: the pipeline's, else en).")
        let app = SharedOptions.app
        let passwordFile = SharedOptions.passwordFile
        let reportContent = SharedOptions.reportContent
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "plan", abstract: "Plan what would make a cloud folder and this device the same, memo by memo, and write plan.json.",
        optionalPositionals: [.init(name: "pipeline", help: "A pipeline definition (JSON), instead of --local and --remote paths.")],
        options: Self.options,
        exitCodes: [
            (0, "nothing to do"), (1, "actions or conflicts planned"),
            (2, "trouble: a side could not be read, or plan.json could not be written"),
            (64, "usage or definition error, or a choice that cannot be carried out as made; nothing done")
        ])

    var pipeline: String?
    var local: String?
    var remote: String?
    var out: String?
    var app: String?
    var takes: [(id: MemoIDPrefix, take: ConflictChoices.Take, seen: ChoiceRequest.Seen?)] = []
    var prefer: ConflictChoices.Prefer?
    var choicesFile: String?
    var json: Bool
    var reportContent: ReportContent?
    var language: String?
    var arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws(UsageError) {
        reportContent = try arguments.value(Self.options.reportContent)
        for (text, side, seen) in try arguments.values(Self.options.take) {
            do {
                takes.append((try MemoIDPrefix(text), side, seen))
            } catch {
                throw arguments.usage("'--take' \(error)")
            }
        }
        prefer = try arguments.value(Self.options.prefer)
        choicesFile = try arguments.value(Self.options.choices)
        pipeline = arguments.positionals.first
        local = try arguments.value(Self.options.local)
        remote = try arguments.value(Self.options.remote)
        out = try arguments.value(Self.options.out)
        app = try arguments.value(Self.options.app)
        json = arguments[Self.options.json]
        language = try arguments.value(Self.options.language)
        self.arguments = arguments
    }

    /// What to plan: the definition, the remote's name, where plan.json goes
    /// (and that folder as the user spelled it), and the definition's real path.
    struct Target {
        var definition: PipelineDefinition
        var remote: String
        var out: URL
        var outShown: String
        /// The pipeline a report of these sides names: a one-shot pair's is reconcile's.
        var reportedAs: String
    }

    /// The target a pipeline names, or `--local`/`--remote`/`--out`; nil
    /// when the definition could not be read (said on stderr).
    func target(_ console: Console, settings: ProcessSettings) throws(UsageError) -> Target? {
        guard let pipeline else {
            guard let local, let remote else { throw arguments.usage("Give a pipeline definition, or both '--local <path>' and '--remote <path>'") }
            guard let out else {
                throw arguments.usage(
                    "Missing expected argument '--out <dir>': without a pipeline, plan.json goes to --out, and baselines are read from its state/ folder"
                )
            }
            // The sides keep their English labels: plan.json says its reasons in English whatever the language of its pages.
            var definition = try OneShotSides(local: local, remote: remote, out: out, app: app).definition(
                "plan", language: "en", quarantines: false, arguments: arguments, settings: settings)
            definition.language = language ?? "en"
            return Target(
                definition: definition, remote: OneShotSides.remoteName, out: outputURL(out), outShown: out,
                reportedAs: ReconcileCommand.spec.name)
        }
        if local != nil { throw arguments.usage("'--local' is read from the pipeline \(pipeline); give one or the other") }
        guard var definition = checkedDefinition(pipeline, console: console, settings: settings, arguments: arguments) else { return nil }
        if let language { definition.language = language }
        let remoteName = try definition.remoteNamed(remote, pipeline: pipeline, for: "plan for", arguments: arguments)
        guard let state = definition.stateDir else {
            throw arguments.usage("\(pipeline) keeps no state folder (give \"reports\" or \"state\"), so no baseline tells which side changed")
        }
        return Target(
            definition: definition, remote: remoteName, out: out.map(outputURL) ?? state, outShown: out ?? state.path,
            reportedAs: definition.name)
    }

    func run(_ console: Console, settings: ProcessSettings) throws(UsageError) -> ExitCode {
        guard let target = try target(console, settings: settings) else { return .usage }
        var request = ChoiceRequest(takes: takes, prefer: prefer, pipeline: target.reportedAs)
        if let choicesFile {
            do {
                request.file = try ChoicesFile.read(fileURL(choicesFile), shown: choicesFile)
            } catch {
                console.err("Error: \(error)\n")
                return .usage
            }
        }
        let context = RunContext(
            onNote: { [progress = console.progress, err = console.err] note in
                if progress { err("reckon: \(note)\n") }
            }, onWarning: { [err = console.err] warning in err("warning: \(escapedForDisplay(warning))\n") },
            onProgress: progressPrinter(console, quiet: false))
        var made: Plan
        do {
            made = try Pipeline(startedAt: runStart(), process: settings).plan(
                target.definition, remote: target.remote, choices: request, stateDir: target.definition.stateDir!, context: context)
        } catch {
            guard error.refusesChoices else {
                console.err("Error: \(error)\n")
                return .trouble
            }
            guard let advice = error.advice else { throw arguments.usage("'--take' \(error)") }
            console.err("Error: \(error)\n\(advice)\n")
            return .usage
        }
        made.showing(reportContent ?? target.definition.reportContent)
        do {
            try made.write(into: target.out)
        } catch {
            console.err("Error: \(error)\n")
            return .trouble
        }
        if json {
            console.json(made.data)
        } else {
            console.out(RepairReport.table(made, planPath: joinPath(target.outShown, "plan.json"), color: console.color))
        }
        return made.isEmpty ? .done : .drift
    }
}

/// `reckon apply`: a plan carried out, with backups and a journal.
struct ApplyCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let yes = Flag(
            "--yes", help: "Carry out deletions and overwrites without asking. Without it, only a person at a terminal can confirm them.")
        let resume = Flag("--resume", help: "Finish the interrupted apply of this plan.")
        let maxDelete = Option<Double>(
            "--max-delete", value: "percent", help: "Refuse a plan that deletes more than this percent of a side's memos (default 50).",
            expected: "a number from 0 to 100"
        ) { text in decimal(text).flatMap { $0 <= 100 ? $0 : nil } }
        let maxAge = Option<Int64>(
            "--max-age", value: "age", help: "Refuse a plan older than this: hours, or a number with s, m, h or d (default 24h).",
            expected: "hours, or a number with s, m, h or d (such as 90m), more than 0 and at most 3650 days", convert: seconds(inAge:))
        let keepBackups = Option<Int>(
            "--keep-backups", value: "n", help: "Keep the backups of this many apply runs (default 10).", expected: "a whole number from 1 to 10000"
        ) { text in Int(text).flatMap { (1...10_000).contains($0) ? $0 : nil } }
        let json = Flag("--json", help: "Print the result as JSON.")
        let language = SharedOptions.language("The language of the text, report.md and report.html: en or ja (default: the plan's).")
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "apply", abstract: "Carry out a plan: re-check each target, back it up, write atomically, and keep a journal.",
        discussion: """
            apply holds each side it writes locked. A reckon command that reads the side meanwhile (run, reconcile, plan, show,
            counts, export, verify --against) waits up to 30 s, then fails that side; apply waits up to 30 s for such commands
            to finish, then refuses. Another apply of the side is refused at once. The locks are per host.
            """,
        positionals: [.init(name: "plan", help: "The plan.json that reckon plan wrote.")],
        options: Self.options,
        exitCodes: [
            (0, "everything planned was done"), (1, "some actions were skipped: changed since the plan, not confirmed, conflicts, not possible"),
            (2, "trouble: a backup or a write failed"), (64, "the plan was refused (its sides, its age, a guard) or usage error; nothing done")
        ])

    var path: String
    var options: Applier.Options
    var json: Bool
    var language: String?

    /// The options, in the process `settings` describes.
    func withProcess(_ settings: ProcessSettings) -> Applier.Options {
        var options = options
        options.process = settings
        return options
    }

    init(_ arguments: ParsedArguments) throws(UsageError) {
        path = arguments.positionals[0]
        options = Applier.Options(now: runStart(), environment: ProcessInfo.processInfo.environment)
        options.confirmed = arguments[Self.options.yes]
        options.resume = arguments[Self.options.resume]
        if let percent = try arguments.value(Self.options.maxDelete) { options.maxDeletePercent = percent }
        if let seconds = try arguments.value(Self.options.maxAge) { options.maxAge = seconds }
        if let keep = try arguments.value(Self.options.keepBackups) { options.keepBackups = keep }
        json = arguments[Self.options.json]
        language = try arguments.value(Self.options.language)
    }

    func run(_ console: Console, settings: ProcessSettings) -> ExitCode {
        let planData: Data
        let plan: Plan
        do {
            plan = try Plan.read(fileURL(path), shown: path)
            planData = try readRegularFile(atPath: fileURL(path).path, limit: 1 << 30)
        } catch {
            console.err("Error: \(error)\n")
            return .usage
        }
        var result: ApplyResult
        var wroteReport = false
        do {
            result = try Applier(plan: plan, planData: planData, options: withProcess(settings)).run(
                confirm: { confirmAtTerminal(plan, language: language ?? plan.languageCode, console: console) },
                publish: { [language] run in
                    var run = run
                    if let language { run.language = language }
                    wroteReport = writeReports(run, stateDir: plan.stateDir, console: console)
                })
        } catch {
            console.err("Error: \(path): \(error.description)\n")
            return error.isTrouble ? .trouble : .usage
        }
        if let language { result.language = language }
        return show(result, wroteReport: wroteReport, json: json, console: console)
    }
}

/// `reckon undo`: an apply run's replaced files put back.
struct UndoCommand: ReckonCommand {
    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let state = Option<String>(
            "--state", value: "dir", help: "The state folder the apply used (reckon apply prints it).", required: true, completion: .directory)
        let json = Flag("--json", help: "Print the result as JSON.")
        let language = SharedOptions.language(
            "The language of the text, undo-report.md and undo-report.html: en or ja (default: the language of the run's plan).")
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "undo", abstract: "Put back, byte for byte, every file an apply run replaced, unless it changed since.",
        positionals: [
            .init(
                name: "run", help: "The apply run's id (its UTC start time, such as 20261201T173000Z), which reckon apply prints.", completion: .text)
        ],
        options: Self.options,
        exitCodes: [
            (0, "everything was put back"), (1, "something changed after the apply and was left as it is"),
            (2, "trouble: a file could not be read or put back"), (64, "usage error, or no such run; nothing done")
        ])

    var run: String
    var state: String
    var json: Bool
    var language: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        run = arguments.positionals[0]
        state = arguments.required(Self.options.state)
        json = arguments[Self.options.json]
        language = try arguments.value(Self.options.language)
    }

    func run(_ console: Console, settings: ProcessSettings) -> ExitCode {
        let stateDir = outputURL(state)
        var result: ApplyResult
        do {
            result = try Undoer.undo(run: run, stateDir: stateDir, environment: ProcessInfo.processInfo.environment, process: settings)
        } catch {
            console.err("Error: \(error.description)\n")
            return error.isTrouble ? .trouble : .usage
        }
        if let language { result.language = language }
        return show(result, wroteReport: writeReports(result, stateDir: stateDir.path, console: console), json: json, console: console)
    }
}

/// Writes the run's report.json, report.md and report.html beside its
/// journal; false, with the error said, when they could not be written.
private func writeReports(_ result: ApplyResult, stateDir: String, console: Console) -> Bool {
    do {
        try result.writeReports(stateDir: URL(fileURLWithPath: stateDir))
        return true
    } catch {
        console.err("error: \(error)\n")
        return false
    }
}

/// Prints the result; a run whose report could not be written is trouble all the same.
private func show(_ result: ApplyResult, wroteReport: Bool, json: Bool, console: Console) -> ExitCode {
    if json {
        console.json(result.data)
    } else {
        console.out(RepairReport.text(result, color: console.color))
    }
    return wroteReport ? ExitCode(rawValue: result.exitCode)! : .trouble
}

/// "yes" typed at a terminal, after the destructive actions are listed; false in cron.
private func confirmAtTerminal(_ plan: Plan, language: String, console: Console) -> Bool {
    guard isatty(STDIN_FILENO) == 1 else { return false }
    console.err(RepairReport.confirmation(plan, language: language))
    return readLine()?.trimmingCharacters(in: .whitespaces).lowercased() == "yes"
}

/// `--max-age`: hours, or a number with s, m, h or d, in whole seconds:
/// at least one, and at most 3650 days.
private func seconds(inAge text: String) -> Int64? {
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
    let unit = text.last.flatMap { units[$0] }
    guard let number = decimal(unit == nil ? text : String(text.dropLast())) else { return nil }
    let seconds = (number * (unit ?? 3600)).rounded(.down)
    return seconds >= 1 && seconds <= 3_650 * 86_400 ? Int64(seconds) : nil
}
