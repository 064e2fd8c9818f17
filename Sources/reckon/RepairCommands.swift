import Foundation
import ReckonCore

#if canImport(Glibc)
    import Glibc
#endif

/// `reckon plan`, `reckon apply` and `reckon undo`: repair what drifted, only as planned, and put it back.
extension Commands {
    static let plan = CommandSpec(
        name: "plan", abstract: "Plan what would make a cloud folder and this device the same, memo by memo, and write plan.json.",
        discussion:
            "EXIT CODES:\n  0  nothing to do\n  1  actions or conflicts planned\n  2  trouble: a side could not be read, or plan.json could not be written\n  64 usage or definition error; nothing done",
        optionalPositionals: [("pipeline", "A pipeline definition (JSON), instead of --local and --remote paths.")],
        options: [
            .init(name: "--local", value: "path", help: "This device's memos, as for reconcile (without a pipeline)."),
            .init(
                name: "--remote", value: "path-or-name",
                help: "The cloud memo folder, as for reconcile; with a pipeline, the name of its remote to plan for."),
            .init(
                name: "--out", value: "dir",
                help: "Write plan.json, plan.md and plan.html here (default: the pipeline's state folder). Baselines are read from its state/ folder."
            ),
            .init(
                name: "--take", value: "id=side",
                help:
                    "Choose one memo's version: local, remote, or both (the older version is kept as a conflict copy); it wins even over the side that alone changed.",
                repeats: true),
            .init(name: "--prefer", value: "side", help: "Settle every conflict: newer, local or remote."),
            .init(name: "--json", help: "Print plan.json instead of the table."),
            appOption
        ])
    static let apply = CommandSpec(
        name: "apply", abstract: "Carry out a plan: re-check each target, back it up, write atomically, and keep a journal.",
        discussion:
            "EXIT CODES:\n  0  everything planned was done\n  1  some actions were skipped: changed since the plan, not confirmed, conflicts, not possible\n  2  trouble: a backup or a write failed\n  64 the plan was refused (its sides, its age, a guard) or usage error; nothing done",
        positionals: [("plan", "The plan.json that reckon plan wrote.")],
        options: [
            .init(
                name: "--yes", help: "Carry out deletions and overwrites without asking. Without it, only a person at a terminal can confirm them."),
            .init(name: "--resume", help: "Finish the interrupted apply of this plan."),
            .init(name: "--max-delete", value: "percent", help: "Refuse a plan that deletes more than this percent of a side's memos (default 50)."),
            .init(name: "--max-age", value: "age", help: "Refuse a plan older than this: hours, or a number with s, m, h or d (default 24h)."),
            .init(name: "--keep-backups", value: "n", help: "Keep the backups of this many apply runs (default 10)."),
            .init(name: "--json", help: "Print the result as JSON.")
        ])
    static let undo = CommandSpec(
        name: "undo", abstract: "Put back, byte for byte, every file an apply run replaced, unless it changed since.",
        discussion:
            "EXIT CODES:\n  0  everything was put back\n  1  something changed after the apply and was left as it is\n  2  trouble: a file could not be read or put back\n  64 usage error, or no such run; nothing done",
        positionals: [("run", "The apply run's id (its UTC start time, such as 20261201T173000Z), which reckon apply prints.")],
        options: [
            .init(name: "--state", value: "dir", help: "The state folder the apply used (reckon apply prints it).", required: true),
            .init(name: "--json", help: "Print the result as JSON.")
        ])

    static func runPlan(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        func usage(_ message: String) -> ExitCode {
            console.err(UsageError(command: plan, message: message).text)
            return .usage
        }
        var choices = ConflictChoices()
        for take in arguments.lists["--take"] ?? [] {
            let parts = take.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let id = MemoID(parts[0]), let side = ConflictChoices.Take(rawValue: parts[1]) else {
                return usage("The value '\(take)' is invalid for '--take <id=side>'; expected a memo id, '=', and local, remote or both")
            }
            if let earlier = choices.take[id], earlier != side {
                return usage("'--take' names the memo \(id) twice, as \(earlier.rawValue) and as \(side.rawValue); choose one")
            }
            choices.take[id] = side
        }
        if let prefer = arguments.values["--prefer"] {
            guard let value = ConflictChoices.Prefer(rawValue: prefer) else {
                return usage("The value '\(prefer)' is invalid for '--prefer <side>'; expected one of: newer, local, remote")
            }
            choices.prefer = value
        }
        var definition: PipelineDefinition
        var definitionPath: String?
        let remoteName: String
        let out: URL
        let outShown: String
        if let path = arguments.positionals.first {
            if arguments.values["--local"] != nil { return usage("'--local' is read from the pipeline \(path); give one or the other") }
            guard let checked = checkedDefinition(path, console: console) else { return .usage }
            definition = checked
            definitionPath = realPath(fileURL(path).path)
            if let name = arguments.values["--remote"] {
                guard definition.remotes.contains(where: { $0.name == name }) else {
                    return usage(
                        "'--remote' \(name) is not a remote of \(path) (its remotes: \(definition.remotes.map(\.name).joined(separator: ", ")))")
                }
                remoteName = name
            } else {
                guard definition.remotes.count == 1 else {
                    return usage(
                        "\(path) has \(definition.remotes.count) remotes; name the one to plan for with '--remote <name>' (\(definition.remotes.map(\.name).joined(separator: ", ")))"
                    )
                }
                remoteName = definition.remotes[0].name
            }
            guard let state = definition.stateDir else {
                return usage("\(path) keeps no state folder (give \"reports\" or \"state\"), so no baseline tells which side changed")
            }
            out = arguments.values["--out"].map(outputURL) ?? state
            outShown = arguments.values["--out"] ?? definition.statePath ?? state.path
        } else {
            guard arguments.values["--local"] != nil, arguments.values["--remote"] != nil else {
                return usage("Give a pipeline definition, or both '--local <path>' and '--remote <path>'")
            }
            guard let outPath = arguments.values["--out"] else {
                return usage(
                    "Missing expected argument '--out <dir>': without a pipeline, plan.json goes to --out, and baselines are read from its state/ folder"
                )
            }
            guard let made = oneShot("plan", arguments, command: plan, quarantines: false, console: console) else { return .usage }
            definition = made
            remoteName = "remote"
            out = outputURL(outPath)
            outShown = outPath
        }
        let context = RunContext(
            onNote: { [progress = console.progress, err = console.err] note in
                if progress { err("reckon: \(note)\n") }
            }, onProgress: progressPrinter(console, quiet: false))
        let made: Plan
        do {
            made = try Pipeline(startedAt: runStart()).plan(
                definition, remote: remoteName, choices: choices, definitionPath: definitionPath,
                stateDir: definition.stateDir!, context: context)
        } catch {
            console.err("Error: \(error)\n")
            return .trouble
        }
        let differing = Set(made.actions.map(\.id))
        if let unknown = choices.take.keys.sorted().first(where: { !differing.contains($0) }) {
            return usage("'--take' names the memo \(unknown), which does not differ between the sides; nothing was written")
        }
        if let broken = made.actions.first(where: { choices.take[$0.id] != nil && $0.sigil == .cannotCompare }) {
            return usage("'--take' names the memo \(broken.id), which cannot be compared (\(broken.reason)); mend it first; nothing was written")
        }
        do {
            try made.write(into: out)
        } catch {
            console.err("Error: \(error)\n")
            return .trouble
        }
        if arguments.flags.contains("--json") {
            console.out(escapedJSONForDisplay(made.data) + "\n")
        } else {
            console.out(RepairReport.table(made, planPath: joinPath(outShown, "plan.json"), color: console.color))
        }
        return made.isEmpty ? .done : .drift
    }

    static func runApply(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        func usage(_ message: String) -> ExitCode {
            console.err(UsageError(command: apply, message: message).text)
            return .usage
        }
        let path = arguments.positionals[0]
        var options = Applier.Options(now: runStart(), environment: ProcessInfo.processInfo.environment)
        options.confirmed = arguments.flags.contains("--yes")
        options.resume = arguments.flags.contains("--resume")
        if let text = arguments.values["--max-delete"] {
            guard let percent = Double(text), percent >= 0, percent <= 100 else {
                return usage("The value '\(text)' is invalid for '--max-delete <percent>'; expected a number from 0 to 100")
            }
            options.maxDeletePercent = percent
        }
        if let text = arguments.values["--max-age"] {
            guard let seconds = age(text) else {
                return usage("The value '\(text)' is invalid for '--max-age <age>'; expected hours, or a number with s, m, h or d (such as 90m)")
            }
            options.maxAge = seconds
        }
        if let text = arguments.values["--keep-backups"] {
            guard let keep = Int(text), keep >= 1, keep <= 10_000 else {
                return usage("The value '\(text)' is invalid for '--keep-backups <n>'; expected a whole number from 1 to 10000")
            }
            options.keepBackups = keep
        }
        let planData: Data
        let readPlan: Plan
        do {
            readPlan = try Plan.read(fileURL(path), shown: path)
            planData = try readRegularFile(atPath: fileURL(path).path, limit: 1 << 30)
        } catch {
            console.err("Error: \(error)\n")
            return .usage
        }
        let result: ApplyResult
        var wroteReport = false
        do {
            result = try Applier(plan: readPlan, planData: planData, options: options).run(
                confirm: {
                    confirmAtTerminal(readPlan, console: console)
                }, publish: { wroteReport = writeReports($0, stateDir: readPlan.stateDir, console: console) })
        } catch {
            console.err("Error: \(path): \(error.description)\n")
            return error.isTrouble ? .trouble : .usage
        }
        return show(result, wroteReport: wroteReport, arguments: arguments, console: console)
    }

    static func runUndo(_ arguments: ParsedArguments, console: Console) -> ExitCode {
        let state = outputURL(arguments.values["--state"]!)
        let result: ApplyResult
        do {
            result = try Undoer.undo(run: arguments.positionals[0], stateDir: state, environment: ProcessInfo.processInfo.environment)
        } catch {
            console.err("Error: \(error.description)\n")
            return error.isTrouble ? .trouble : .usage
        }
        return show(result, wroteReport: writeReports(result, stateDir: state.path, console: console), arguments: arguments, console: console)
    }

    /// Writes the run's report.json, report.md and report.html beside its
    /// journal; false, with the error said, when they could not be written.
    static func writeReports(_ result: ApplyResult, stateDir: String, console: Console) -> Bool {
        do {
            try result.writeReports(stateDir: URL(fileURLWithPath: stateDir))
            return true
        } catch {
            console.err("error: \(error)\n")
            return false
        }
    }

    /// Prints the result; a run whose report could not be written is trouble all the same.
    static func show(_ result: ApplyResult, wroteReport: Bool, arguments: ParsedArguments, console: Console) -> ExitCode {
        if arguments.flags.contains("--json") {
            console.out(escapedJSONForDisplay(result.data) + "\n")
        } else {
            console.out(RepairReport.text(result, color: console.color))
        }
        return wroteReport ? ExitCode(rawValue: result.exitCode)! : .trouble
    }

    /// "yes" typed at a terminal, after the destructive actions are listed; false in cron.
    static func confirmAtTerminal(_ plan: Plan, console: Console) -> Bool {
        guard isatty(STDIN_FILENO) == 1 else { return false }
        let destructive = plan.actions.filter(\.needsConfirmation)
        var text = "These actions delete or overwrite:\n"
        for action in destructive {
            text += "  \(action.action.rawValue) \(action.id) on \(plan.side(action.to ?? .remote).label): \(action.reason)\n"
        }
        console.err(text + "Type yes to carry them out (anything else skips them): ")
        return readLine()?.trimmingCharacters(in: .whitespaces).lowercased() == "yes"
    }

    /// `--max-age`: hours, or a number with s, m, h or d.
    static func age(_ text: String) -> Int64? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let unit = text.last.flatMap { units[$0] }
        guard let number = Double(unit == nil ? text : String(text.dropLast())), number > 0, number <= 3_650 * 24 else { return nil }
        return Int64(number * (unit ?? 3600))
    }
}
