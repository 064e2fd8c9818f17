import ReckonCore

/// The zsh completion script, made from the commands' definitions: one
/// `_arguments` spec for each subcommand's options and positionals.
enum ZshCompletion {
    /// The script for `commands`, as `reckon completions zsh` prints it.
    static func script(_ commands: [CommandSpec]) -> String {
        var script = """
            #compdef reckon
            # zsh completion for reckon \(Reckon.version), made by `reckon completions zsh`.

            # ID=SIDE: the ids of the memos that differ in the latest report, then the side.
            _reckon_take() {
                if compset -P '*='; then
                    compadd local remote both
                else
                    local -a ids
                    ids=(${(f)"$(reckon completions --memo-ids -- ${(Q)words[1,CURRENT-1]} 2>/dev/null)"})
                    compadd -S '=' -a ids
                fi
            }

            _reckon() {
                local -a subcommands
                subcommands=(

            """
        for command in commands {
            script += "        '\(quoted(command.name.replacingOccurrences(of: ":", with: "\\:") + ":" + command.abstract))'\n"
        }
        script += """
                )
                if (( CURRENT == 2 )); then
                    if [[ $PREFIX == -* ]]; then
                        compadd -- --help --version
                    else
                        _describe -t subcommands 'reckon subcommand' subcommands
                    fi
                    return
                fi
                local command=$words[2]
                shift words
                (( CURRENT-- ))
                case $command in

            """
        for command in commands {
            var specs: [String] = []
            for option in command.options {
                let head = (option.repeats ? "*" : "") + option.name + "[" + escaped(option.help) + "]"
                specs.append(option.value.map { head + ":" + escaped($0) + ":" + action(option.completion) } ?? head)
            }
            specs.append("(-h --help)--help[Show help information.]")
            let positionals = command.positionals + command.optionalPositionals
            for (n, positional) in positionals.enumerated() {
                let position = command.lastPositionalRepeats && n == positionals.count - 1 ? "*" : String(n + 1)
                specs.append(position + ":" + escaped(positional.name) + ":" + action(positional.completion))
            }
            script += "        \(command.name))\n            _arguments -s \\\n"
            script += specs.map { "                '\(quoted($0))'" }.joined(separator: " \\\n") + "\n            ;;\n"
        }
        script += """
                esac
            }

            if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
                _reckon "$@"
            else
                compdef _reckon reckon
            fi

            """
        return script
    }

    /// What zsh offers for a value that completes as `completion`.
    static func action(_ completion: CommandSpec.Completion) -> String {
        switch completion {
        case .path: "_files"
        case .directory: "_files -/"
        case .text: " "
        case .oneOf(let words): "(\(words.joined(separator: " ")))"
        case .listOf(let words): "_sequence compadd - \(words.joined(separator: " "))"
        case .memoChoice: "_reckon_take"
        }
    }

    /// Text inside `_arguments`' brackets and colons.
    static func escaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "[]:\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// Text inside a single-quoted shell word.
    static func quoted(_ text: String) -> String { text.replacingOccurrences(of: "'", with: "'\\''") }
}
