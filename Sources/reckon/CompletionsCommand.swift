import Foundation
import ReckonCore

/// `reckon completions`: a completion script for bash, zsh or fish, made
/// from the same definitions as the parser; and, for the scripts, the ids
/// `--take` can name.
struct CompletionsCommand: ReckonCommand {
    enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    /// Its options, each declared once: the parser, help, pages and completions take them in this order.
    struct Options: OptionList {
        let memoIDs = Flag(
            "--memo-ids",
            help:
                "Print the ids of the memos that differ (*, - and +) in the latest report.json found from the words given: a pipeline's reports, --out, or the current folder. The scripts call this for --take."
        )
    }
    static let options = Options()

    static let spec = CommandSpec(
        name: "completions", abstract: "Print a shell completion script for bash, zsh or fish.",
        discussion: """
            Install the script where the shell looks for completions: for bash, reckon completions bash > \
            /etc/bash_completion.d/reckon (or ~/.local/share/bash-completion/completions/reckon); for zsh, reckon completions \
            zsh > ~/.zfunc/_reckon with fpath+=(~/.zfunc) before compinit in ~/.zshrc; for fish, reckon completions fish > \
            ~/.config/fish/completions/reckon.fish.
            """,
        optionalPositionals: [
            .init(name: "shell", help: "bash, zsh or fish.", completion: .oneOf(Shell.allCases.map(\.rawValue))),
            .init(name: "words", help: "With --memo-ids: the command line being completed.", completion: .text)
        ],
        lastPositionalRepeats: true,
        options: Self.options,
        exitCodes: [(0, "the script (or the ids) printed"), (64, "an unknown shell, or usage error")])

    var words: [String]
    var shell: Shell?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        words = arguments.positionals
        guard !arguments[Self.options.memoIDs] else { return }
        guard let name = words.first else { throw arguments.usage("Missing expected argument '<shell>'") }
        guard words.count == 1, let shell = Shell(rawValue: name) else {
            throw arguments.usage(
                "The value '\(words.joined(separator: " "))' is invalid for '<shell>'; expected one of: "
                    + Shell.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.shell = shell
    }

    func run(_ console: Console, settings: ProcessSettings) -> ExitCode {
        guard let shell else {
            for id in Self.differingIDs(words, settings: settings) { console.out(id + "\n") }
            return .done
        }
        let commands = Commands.all.map { $0.spec } + [Commands.help]
        switch shell {
        case .bash: console.out(BashCompletion.script(commands))
        case .zsh: console.out(ZshCompletion.script(commands))
        case .fish: console.out(FishCompletion.script(commands))
        }
        return .done
    }

    /// The ids of the `*`, `-` and `+` memos in the newest report.json that
    /// the command line `words` leads to (`LatestReport`): its pipeline's
    /// report folder, its `--out`, else the current folder and the folders up
    /// to three below it.
    static func differingIDs(_ words: [String], settings: ProcessSettings) -> [String] {
        var folders: [URL] = []
        for (n, word) in words.enumerated() {
            if word == "--out", n + 1 < words.count { folders.append(fileURL(words[n + 1])) }
            if word.hasPrefix("--out=") { folders.append(fileURL(String(word.dropFirst(6)))) }
            if word.hasSuffix(".json"), !word.hasPrefix("-"),
                let definition = try? PipelineDefinition.load(from: fileURL(word), displayPath: word, environment: [:], process: settings),
                let reports = definition.reportDir
            {
                folders.append(reports)
            }
        }
        return LatestReport.differingIDs(in: folders, fallback: fileURL("."))
    }
}
