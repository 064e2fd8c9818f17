import Foundation
import ReckonCore

/// One subcommand: its definition (for parsing and help, its options
/// declared once in its `OptionList`), the typed values of one command
/// line, read back through those declarations, and what it does with them.
protocol ReckonCommand {
    static var spec: CommandSpec { get }
    /// Reads the typed option values, or throws the usage error that says what is wrong.
    init(_ arguments: ParsedArguments) throws(UsageError)
    /// Calls the core, prints, and gives the exit code; throws a usage
    /// error found only once the values are looked at (a path that is not
    /// what the option needs), before anything is written.
    func run(_ console: Console, settings: ProcessSettings) throws(UsageError) -> ExitCode
}

enum Commands {
    /// Runs the command `arguments` name, as `main` does; when its output
    /// could not be written, says so and exits with 2 (64 stays 64): the
    /// work is done, but whoever reads the output has not got it.
    /// `settings` is what the process tells the library, handed to the command.
    static func run(_ words: CommandLineWords, settings: ProcessSettings) -> ExitCode {
        let code =
            if let lookalike = words.lookalike {
                Console().usage(
                    UsageError(
                        command: nil,
                        message:
                            "'\(lookalike)' is typed as it is and is also how another word's bytes that are not UTF-8 are shown; "
                            + "the two cannot be told apart (rename the folder)"))
            } else {
                main(words.words, notUTF8: words.notUTF8, settings: settings)
            }
        let failure = outputFailure.load(ordering: .relaxed)
        guard failure != 0 else { return code }
        writeToStandardError("Error: cannot write to standard output: \(String(cString: strerror(failure)))\n")
        return code == .usage ? .usage : .trouble
    }

    static let overview = "Count, reconcile and export a notes app's memos between this device and its cloud folders."

    /// Every subcommand, in the order help lists them.
    static var all: [any ReckonCommand.Type] {
        [
            RunCommand.self, ReconcileCommand.self, ShowCommand.self, CountsCommand.self, ExportCommand.self, ValidateCommand.self,
            VerifyCommand.self, DiffCommand.self, RestoreCommand.self, PlanCommand.self, ApplyCommand.self, UndoCommand.self,
            InitCommand.self, CompletionsCommand.self
        ]
    }

    /// The options of `reckon help`, each declared once.
    struct HelpOptions: OptionList {
        let man = Flag("--man", help: "Print the man page (mdoc): reckon.1, or reckon-SUBCOMMAND.1.")
        let markdown = Flag("--markdown", help: "Print the reference page in Markdown, as the documentation catalog holds it.")
    }
    static let helpOptions = HelpOptions()
    static let help = CommandSpec(
        name: "help", abstract: "Show subcommand help information.",
        optionalPositionals: [
            .init(name: "subcommand", help: "The subcommand to show help for.", completion: .oneOf(all.map { $0.spec.name } + ["help"]))
        ],
        options: helpOptions,
        exitCodes: [(0, "the help was printed"), (64, "an unknown subcommand or option")])

    /// The exit codes every command shares, as `reckon --help` lists them.
    static let exitCodes: [(code: Int32, meaning: String)] = [
        (0, "done, in sync"), (1, "done, drift found"),
        (2, "trouble: a side failed or has problems, or memos vanished (the deletion alarm); whatever could be done was done"),
        (64, "usage or definition error; nothing done")
    ]

    static var mainHelp: String {
        var lines = [
            "OVERVIEW: \(overview)", "", "USAGE: reckon <subcommand>", "", "OPTIONS:",
            helpLine("--version", "Show the version."), helpLine("-h, --help", "Show help information."), "",
            "SUBCOMMANDS:"
        ]
        for command in all { lines.append(helpLine(command.spec.name, command.spec.abstract)) }
        lines.append(helpLine(help.name, help.abstract))
        lines += ["", "  See 'reckon help <subcommand>' for detailed help.", "", "EXIT CODES:"]
        lines += exitCodes.map(exitCodeLine)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every subcommand's name, `help` last, as help lists them.
    static var names: [String] { all.map { $0.spec.name } + [help.name] }

    /// What `reckon help` prints for its arguments: the help, man page or
    /// reference page of reckon or of one subcommand.
    static func helpText(_ arguments: ParsedArguments) throws(UsageError) -> String {
        let (man, markdown) = (helpOptions.man, helpOptions.markdown)
        if arguments[man] && arguments[markdown] { throw arguments.usage("'--man' and '--markdown' ask for two pages; give one") }
        guard let name = arguments.positionals.first else {
            return arguments[man] ? mainManPage : arguments[markdown] ? commandsPage : mainHelp
        }
        guard let command = name == help.name ? help : all.first(where: { $0.spec.name == name })?.spec else {
            throw UsageError(command: nil, message: "Unknown subcommand '\(name)'" + suggestion(for: name, among: names))
        }
        return arguments[man] ? command.manPage : arguments[markdown] ? command.markdown : command.help
    }

    /// The man page `reckon.1`: what reckon is, and each subcommand.
    static var mainManPage: String {
        var page = ManPage(title: "reckon", summary: overview)
        page.macro("Sh", "SYNOPSIS")
        page.macro("Nm", "reckon")
        page.macro("Ar", "subcommand")
        page.macro("Op", "Ar arguments ...")
        page.macro("Sh", "DESCRIPTION")
        page.text(overview)
        page.text("Each subcommand has a page of its own; see reckon help SUBCOMMAND, or the pages below.")
        page.macro("Bl", "-tag -width 10n")
        for command in all.map({ $0.spec }) + [help] {
            page.macro("It", "Cm \(command.name)")
            page.text(command.abstract)
        }
        page.macro("El")
        page.exitStatus(exitCodes, note: nil)
        page.macro("Sh", "SEE ALSO")
        // In name order, as mandoc expects of a SEE ALSO list.
        let references = all.map { "Xr reckon-\($0.spec.name) 1" }.sorted()
        for (n, reference) in references.enumerated() { page.macro(reference + (n < references.count - 1 ? " ," : "")) }
        return page.text
    }

    /// The catalog's page that lists every subcommand's reference page.
    static var commandsPage: String {
        var page = [
            "# Commands", "", overview + " Each page here is what `reckon help SUBCOMMAND --markdown` prints.", "",
            "## Topics", "", "### Subcommands", ""
        ]
        page += all.map { "- <doc:\($0.spec.name)>" } + ["- <doc:help>", ""]
        page += ["## Exit codes", ""] + exitCodesTable(exitCodes) + [""]
        return page.joined(separator: "\n")
    }

    /// Runs one command line and returns its exit code.
    static func main(
        _ arguments: [String], notUTF8: [String: [UInt8]] = [:], console: Console = Console(), settings: ProcessSettings = ProcessSettings()
    ) -> ExitCode {
        guard let first = arguments.first else {
            return console.usage(UsageError(command: nil, message: "Missing expected argument '<subcommand>'"))
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
            do {
                console.out(try helpText(help.parse(rest)))
                return .done
            } catch {
                if error.message == nil {
                    console.out(error.text)
                    return .done
                }
                return console.usage(error)
            }
        default:
            guard let command = all.first(where: { $0.spec.name == first }) else {
                let message =
                    first.hasPrefix("-")
                    ? "Unknown option '\(first)'" + suggestion(for: first, among: ["--version", "--help"])
                    : "Unknown subcommand '\(first)'" + suggestion(for: first, among: names)
                return console.usage(UsageError(command: nil, message: message))
            }
            do {
                return try command.init(command.spec.parse(rest, notUTF8: notUTF8)).run(console, settings: settings)
            } catch {
                if error.message == nil {
                    console.out(error.text)
                    return .done
                }
                return console.usage(error)
            }
        }
    }
}

/// The options several commands share.
enum SharedOptions {
    /// `--app`, for every command that reads a side.
    static let app = Option<String>(
        "--app", value: "id", help: "The app's bundle or group id, to find its store in an iPhone backup.", completion: .text)
    /// `--password-file`, for every command that takes a local side (where `--app` is).
    static let passwordFile = Option<String>(
        "--password-file", value: "file",
        help:
            "A file holding the password of an encrypted iPhone backup, with mode 0600 (no one else may read it); else RECKON_BACKUP_PASSWORD, else asked at a terminal.",
        completion: .path)
    static let acceptDeletions = Flag(
        "--accept-deletions", help: "For this run, accept the deletions an alarm names: say so in the report and let the baseline move on.")
    static let refresh = Flag("--refresh", help: "Download every memo file of an rclone remote again, ignoring the cache.")
    /// `--report-content`, for the commands that write pages of memos.
    static let reportContent = Option<ReportContent>(
        "--report-content", value: "level",
        help: "How much of the memos the pages show: full (bodies, the default), titles (titles and tags) or none (ids, fields, dates).",
        expected: "one of: full, titles, none", completion: .oneOf(ReportContent.allCases.map(\.rawValue))
    ) { ReportContent(rawValue: $0) }
    /// `--lang`, for every command that writes for people: one declaration, with each command's words for what it sets.
    static func language(_ help: String) -> Option<String> {
        Option<String>(
            "--lang", value: "lang", help: help, expected: "one of: " + Strings.languages.joined(separator: ", "),
            completion: .oneOf(Strings.languages)
        ) { Strings.languages.contains($0) ? $0 : nil }
    }
    /// `--metrics`, for `run` and `reconcile`: one declaration, with each command's words for where it writes.
    static func metrics(_ value: String, _ help: String) -> Option<String> {
        Option<String>("--metrics", value: value, help: help, completion: .path)
    }
    /// A side given as a path, as `counts`, `export` and `verify` take it.
    static let sidePath = CommandSpec.Argument(
        name: "path", help: "A memo folder (holding index.json, or above 60dMemo/), the app's store file or an iPhone backup folder.",
        namesSide: true)
}

/// An output folder named on the command line, by its real path: links
/// and `..` resolved as the kernel resolves them, so that what is
/// checked against the sources is what is written to.
func outputURL(_ path: String) -> URL { outputFolder(path, from: FileManager.default.currentDirectoryPath) }

/// A path named on the command line, from the current folder, links not followed.
func fileURL(_ path: String) -> URL {
    URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)).standardizedFileURL
}

/// When this run started: `SOURCE_DATE_EPOCH` when set (reproducible
/// reports), else the clock. Read here, by the command line only, and
/// handed to the core.
func runStart() -> Timestamp {
    Timestamp(seconds: ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"].flatMap { Int64($0) } ?? Int64(Date().timeIntervalSince1970))
}

/// The password of an encrypted iPhone backup, taken out of the environment
/// first thing (`main.swift`), so that no child and no `ProcessInfo`
/// dictionary ever holds it.
enum Passwords {
    static let fromEnvironment: SecretBytes? = {
        guard let value = getenv(BackupPassword.variable) else { return nil }
        defer { unsetenv(BackupPassword.variable) }
        return BackupPassword.take(from: value)
    }()

    /// Where a side of this command line finds a backup's password: the
    /// variable, `--password-file` (checked now, before any side is read,
    /// so a file reckon refuses is a usage error), a prompt when standard
    /// input is a terminal and `prompts`.
    static func sources(_ arguments: ParsedArguments?, prompts: Bool = true) throws(UsageError) -> PasswordSources {
        var sources = PasswordSources(environment: fromEnvironment, terminal: prompts && isatty(0) == 1)
        sources.aroundPrompt = { PromptSignals.around($0) }
        if let arguments, let path = try arguments.value(SharedOptions.passwordFile) {
            let file = PasswordFile(url: fileURL(path), shown: path)
            do {
                try file.check()
            } catch  where error.isUsage {
                throw arguments.usage(error.message)
            } catch {}
            sources.file = file
        }
        return sources
    }
}

/// A side named on the command line: its kind follows from what the path
/// is. A file starting with SQLite's header is a store, a folder holding
/// `Manifest.db` an iPhone backup, anything else a memo folder. Throws
/// the usage error when `--app` is given for anything but an iPhone
/// backup, or the backup holds several apps' stores with memos and no
/// `--app` says which, or none of the app `--app` names. `settings` is
/// what the process tells the library.
func side(
    _ role: SideRole, name: String, label: String, path: String, app: String?, refresh: Bool = false, arguments: ParsedArguments,
    settings: ProcessSettings
) throws(UsageError) -> SideSpec {
    let environment = ProcessInfo.processInfo.environment
    let passwords = try Passwords.sources(arguments)
    var url = fileURL(path)
    if let bytes = arguments.notUTF8[path] {
        // A path that is not UTF-8 is reached through the folder that holds it, opened by its bytes.
        let (reached, whyNot) = reachablePath(bytes)
        if let whyNot, whyNot != .missing {
            throw arguments.usage("\(path) is \(whyNot.description); a side whose own name is not UTF-8 can only be a folder")
        }
        if let reached {
            url = URL(fileURLWithPath: reached)
        } else if let why = SideKinds.notNamedInUTF8(path) {
            throw arguments.usage("\(path) is not on this machine, and \(why)")
        }
    }
    var (shown, kind) = SideKinds.fromCommandLine(
        path, CommandLineWord(url: url, app: app, refresh: refresh, cache: { SideKinds.oneShotCache(environment: environment, process: settings) }))
    kind.usePasswords(passwords, shown: shown)
    if let misplaced = SideKinds.misplacedAppOption(app, on: kind) { throw arguments.usage("\(shown): \(misplaced)") }
    if let ambiguity = kind.ambiguity(process: settings) { throw arguments.usage("\(shown): \(ambiguity)") }
    return SideSpec(role: role, name: name, label: label, path: shown, kind: kind)
}

/// A side named by a path alone (`counts`, `export`, `verify --against`), labelled by its path.
func lonePathSide(
    _ path: String, name: String, app: String?, refresh: Bool = false, arguments: ParsedArguments, settings: ProcessSettings
) throws(UsageError) -> SideSpec {
    try side(.local, name: name, label: SideKinds.shown(path), path: path, app: app, refresh: refresh, arguments: arguments, settings: settings)
}

/// A definition file read and checked (its outputs outside its sources), or
/// nil with the error said. Its store sides are given the ways to a
/// backup's password, `--password-file` among them when `arguments` has one
/// (it wins over the definition's `"passwordFile"`; refused, it is a usage
/// error, said with the command's usage). `settings` is what the process
/// tells the library.
func checkedDefinition(_ path: String, console: Console, settings: ProcessSettings, arguments: ParsedArguments? = nil) -> PipelineDefinition? {
    do {
        let passwords = try Passwords.sources(arguments)
        var definition = try PipelineDefinition.load(
            from: fileURL(path), displayPath: path, environment: ProcessInfo.processInfo.environment, process: settings)
        try definition.checkOutputsOutsideSources(file: path)
        definition.usePasswords(passwords)
        return definition
    } catch let error as UsageError {
        console.err(error.text)
        return nil
    } catch {
        console.err("Error: \(error)\n")
        return nil
    }
}

extension PipelineDefinition {
    /// The name of the remote `given` by `--remote`, which must be one of
    /// this definition's, read from `pipeline`; without one, its only remote.
    /// `purpose` says what the remote is for ("plan for").
    func remoteNamed(_ given: String?, pipeline: String, for purpose: String, arguments: ParsedArguments) throws(UsageError) -> String {
        let names = remotes.map(\.name)
        if let given {
            guard names.contains(given) else {
                throw arguments.usage("'--remote' \(given) is not a remote of \(pipeline) (its remotes: \(names.joined(separator: ", ")))")
            }
            return given
        }
        guard names.count == 1 else {
            throw arguments.usage(
                "\(pipeline) has \(names.count) remotes; name the one to \(purpose) with '--remote <name>' (\(names.joined(separator: ", ")))")
        }
        return names[0]
    }
}

extension Character {
    /// 0 to 9, and nothing else that Unicode calls a digit.
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// A decimal number as a person writes it (`12`, `0.5`), never hexadecimal or with an exponent.
func decimal(_ text: String) -> Double? {
    guard text.wholeMatch(of: /[0-9]+(\.[0-9]+)?/) != nil else { return nil }
    return Double(text)
}
