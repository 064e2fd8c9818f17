import ReckonCore

/// Completion scripts for bash, zsh and fish, made from the commands'
/// definitions: subcommands, options, the values an option takes, and
/// paths. `--take` asks reckon itself for the ids (`completions --memo-ids`).
/// One generator per shell, each in a file of its own (`BashCompletion`,
/// `ZshCompletion`, `FishCompletion`); here, what they share.
enum CompletionScript {
    /// What a command's words complete to when they are not an option's
    /// value: its first positional's kind (paths for most).
    static func positionalCompletion(_ command: CommandSpec) -> CommandSpec.Completion {
        (command.positionals + command.optionalPositionals).first?.completion ?? .text
    }

    static func optionNames(_ command: CommandSpec) -> [String] { command.options.map(\.name) + ["--help"] }
}
