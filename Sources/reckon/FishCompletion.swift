import ReckonCore

/// The fish completion script, made from the commands' definitions: one
/// `complete` line for each subcommand and each of its options.
enum FishCompletion {
    /// The script for `commands`, as `reckon completions fish` prints it.
    static func script(_ commands: [CommandSpec]) -> String {
        var script = """
            # fish completion for reckon \(Reckon.version), made by `reckon completions fish`.

            function __reckon_needs_subcommand
                test (count (commandline -opc)) -eq 1
            end
            function __reckon_using -a name
                set -l tokens (commandline -opc)
                test (count $tokens) -gt 1; and test "$tokens[2]" = $name
            end
            # A comma-separated list: the words not yet named after the last comma.
            function __reckon_list
                set -l parts (string split , -- (commandline -ct))
                set -l named $parts[1..-2]
                for word in $argv
                    contains -- $word $named; and continue
                    string join , $named $word
                end
            end
            # ID=SIDE: the ids of the memos that differ in the latest report, then the side.
            function __reckon_take
                set -l token (commandline -ct)
                if string match -q '*=*' -- $token
                    set -l id (string split -m1 = -- $token)[1]
                    printf '%s\\n' $id=local $id=remote $id=both
                else
                    for id in (reckon completions --memo-ids -- (commandline -opc) 2>/dev/null)
                        echo $id=
                    end
                end
            end

            complete -c reckon -f
            complete -c reckon -n __reckon_needs_subcommand -l help -d 'Show help information.'
            complete -c reckon -n __reckon_needs_subcommand -l version -d 'Show the version.'

            """
        for command in commands {
            script += "complete -c reckon -n __reckon_needs_subcommand -a \(command.name) -d '\(quoted(command.abstract))'\n"
        }
        for command in commands {
            let using = "complete -c reckon -n '__reckon_using \(command.name)'"
            for option in command.options {
                let value = option.value.map { _ in " " + action(option.completion) } ?? ""
                script += "\(using) -l \(option.name.dropFirst(2))\(value) -d '\(quoted(option.help))'\n"
            }
            script += "\(using) -s h -l help -d 'Show help information.'\n"
            let positional = CompletionScript.positionalCompletion(command)
            if positional != .text { script += "\(using) \(action(positional, forOption: false))\n" }
        }
        return script
    }

    /// What fish offers for a value that completes as `completion`.
    static func action(_ completion: CommandSpec.Completion, forOption: Bool = true) -> String {
        let requires = forOption ? "-r " : ""
        return switch completion {
        case .path: requires + "-F"
        case .directory: requires + "-f -a '(__fish_complete_directories)'"
        case .text: requires + "-f"
        case .oneOf(let words): requires + "-f -a '\(words.joined(separator: " "))'"
        case .listOf(let words): requires + "-f -a '(__reckon_list \(words.joined(separator: " ")))'"
        case .memoChoice: requires + "-f -a '(__reckon_take)'"
        }
    }

    /// Text inside a fish single-quoted string.
    static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }
}
