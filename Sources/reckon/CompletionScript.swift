import ReckonCore

/// Completion scripts for bash, zsh and fish, made from the commands'
/// definitions: subcommands, options, the values an option takes, and
/// paths. `--take` asks reckon itself for the ids (`completions --memo-ids`).
enum CompletionScript {
    /// What a command's words complete to when they are not an option's
    /// value: its first positional's kind (paths for most).
    static func positionalCompletion(_ command: CommandSpec) -> CommandSpec.Completion {
        (command.positionals + command.optionalPositionals).first?.completion ?? .text
    }

    static func optionNames(_ command: CommandSpec) -> [String] { command.options.map(\.name) + ["--help"] }

    // MARK: bash

    static func bash(_ commands: [CommandSpec]) -> String {
        var script = """
            # bash completion for reckon \(Reckon.version), made by `reckon completions bash`.

            # Replies made from $cur (the word as reckon reads it: joined where
            # bash split it at = and :, quoting taken off, after --option= in
            # $opt), cut to what bash replaces: its own word, after $pre.
            _reckon_reply() {
                local c
                COMPREPLY=()
                for c in "$@"; do c="$opt$c"; COMPREPLY+=("${c#"$pre"}"); done
            }
            _reckon_words() {
                local w out=()
                for w in $1; do [[ $w == "$cur"* ]] && out+=("$w"); done
                _reckon_reply "${out[@]}"
            }
            # Files (-f) or folders (-d) that start with $cur, one a NUL-ended
            # name from a glob (a name may hold a newline); a leading ~ or ~user
            # is expanded for the glob and kept in the reply. bash quotes them
            # itself unless the word was split at = or :, where a folder gets
            # its / here.
            _reckon_paths() {
                local out=() c path="$cur" tilde="" home=""
                if [[ $cur =~ ^(~[[:alnum:]._-]*)/ ]]; then
                    tilde="${BASH_REMATCH[1]}"
                    eval "home=$tilde"
                    path="$home${cur#"$tilde"}"
                fi
                mapfile -d '' out < <(shopt -s nullglob dotglob; for c in "$path"*; do
                    [[ $1 == -d && ! -d $c ]] || printf '%s\\0' "$c"; done)
                if [[ -z $pre && -z $opt ]]; then
                    compopt -o filenames 2>/dev/null
                    for c in "${!out[@]}"; do out[c]="$tilde${out[c]#"$home"}"; done
                    _reckon_reply "${out[@]}"
                    return
                fi
                COMPREPLY=()
                for c in "${out[@]}"; do
                    [[ -d $c ]] && c+=/
                    c="$opt$tilde${c#"$home"}"
                    printf -v c '%q' "${c#"$pre"}"
                    COMPREPLY+=("$c")
                done
                compopt -o nospace 2>/dev/null
            }
            # A comma-separated list: the words not yet named after the last comma.
            _reckon_list() {
                local named="" last="$cur" w out=()
                if [[ $cur == *,* ]]; then named="${cur%,*}"; last="${cur##*,}"; fi
                for w in $1; do
                    [[ ",$named," == *",$w,"* ]] && continue
                    [[ $w == "$last"* ]] && out+=("${named:+$named,}$w")
                done
                _reckon_reply "${out[@]}"
                compopt -o nospace 2>/dev/null
            }
            # ID=SIDE: the ids of the memos that differ in the latest report, then the side.
            _reckon_take() {
                local w out=()
                if [[ $cur == *=* ]]; then
                    for w in local remote both; do [[ $w == "${cur#*=}"* ]] && out+=("${cur%%=*}=$w"); done
                else
                    while IFS= read -r w; do [[ $w == "$cur"* ]] && out+=("$w="); done < <(reckon completions --memo-ids -- "${words[@]:0:${#words[@]}-1}" 2>/dev/null)
                    compopt -o nospace 2>/dev/null
                fi
                _reckon_reply "${out[@]}"
            }
            # A word with its quoting taken off (backslashes, '…' and "…"), in REPLY.
            _reckon_dequote() {
                local text="$1" c quote=""
                REPLY=""
                while [[ -n $text ]]; do
                    c="${text:0:1}" text="${text:1}"
                    if [[ -z $quote && $c == \\\\ ]]; then
                        REPLY+="${text:0:1}" text="${text:1}"
                    elif [[ -z $quote && ( $c == "'" || $c == '"' ) ]]; then
                        quote="$c"
                    elif [[ -n $quote && $c == "$quote" ]]; then
                        quote=""
                    else
                        REPLY+="$c"
                    fi
                done
            }
            _reckon() {
                local words=() cur prev pre="" opt="" i
                for (( i = 0; i <= COMP_CWORD; i++ )); do
                    _reckon_dequote "${COMP_WORDS[i]}"
                    if (( i > 0 )) && [[ ${COMP_WORDS[i]} == [=:] || ${COMP_WORDS[i-1]} == [=:] ]]; then
                        (( i == COMP_CWORD )) && pre="${words[${#words[@]}-1]}"
                        words[${#words[@]}-1]+="$REPLY"
                    else
                        words+=("$REPLY")
                    fi
                done
                cur="${words[${#words[@]}-1]}"
                prev="${words[${#words[@]}-2]}"
                # --option=value: the value completes as the option's.
                if [[ $cur == --*=* ]]; then
                    opt="${cur%%=*}=" prev="${cur%%=*}" cur="${cur#*=}"
                fi
                COMPREPLY=()
                if (( ${#words[@]} <= 2 )); then
                    _reckon_words "\(commands.map(\.name).joined(separator: " ")) --help --version"
                    return
                fi
                case "${words[1]}" in

            """
        for command in commands {
            script += "    \(command.name))\n        case \"$prev\" in\n"
            for option in command.options where option.value != nil {
                script += "        \(option.name)) \(bashAction(option.completion)); return ;;\n"
            }
            script += "        esac\n"
            script += "        [[ -n $opt ]] && return\n"
            script += "        if [[ $cur == -* ]]; then _reckon_words \"\(optionNames(command).joined(separator: " "))\"; return; fi\n"
            script += "        \(bashAction(positionalCompletion(command)))\n        ;;\n"
        }
        script += "    esac\n}\ncomplete -F _reckon reckon\n"
        return script
    }

    static func bashAction(_ completion: CommandSpec.Completion) -> String {
        switch completion {
        case .path: "_reckon_paths -f"
        case .directory: "_reckon_paths -d"
        case .text: ":"
        case .oneOf(let words): "_reckon_words \"\(words.joined(separator: " "))\""
        case .listOf(let words): "_reckon_list \"\(words.joined(separator: " "))\""
        case .memoChoice: "_reckon_take"
        }
    }

    // MARK: zsh

    static func zsh(_ commands: [CommandSpec]) -> String {
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
            script += "        '\(zshQuoted(command.name.replacingOccurrences(of: ":", with: "\\:") + ":" + command.abstract))'\n"
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
                let head = (option.repeats ? "*" : "") + option.name + "[" + zshEscaped(option.help) + "]"
                specs.append(option.value.map { head + ":" + zshEscaped($0) + ":" + zshAction(option.completion) } ?? head)
            }
            specs.append("(-h --help)--help[Show help information.]")
            let positionals = command.positionals + command.optionalPositionals
            for (n, positional) in positionals.enumerated() {
                let position = command.lastPositionalRepeats && n == positionals.count - 1 ? "*" : String(n + 1)
                specs.append(position + ":" + zshEscaped(positional.name) + ":" + zshAction(positional.completion))
            }
            script += "        \(command.name))\n            _arguments -s \\\n"
            script += specs.map { "                '\(zshQuoted($0))'" }.joined(separator: " \\\n") + "\n            ;;\n"
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

    static func zshAction(_ completion: CommandSpec.Completion) -> String {
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
    static func zshEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "[]:\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// Text inside a single-quoted shell word.
    static func zshQuoted(_ text: String) -> String { text.replacingOccurrences(of: "'", with: "'\\''") }

    // MARK: fish

    static func fish(_ commands: [CommandSpec]) -> String {
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
            script += "complete -c reckon -n __reckon_needs_subcommand -a \(command.name) -d '\(fishQuoted(command.abstract))'\n"
        }
        for command in commands {
            let using = "complete -c reckon -n '__reckon_using \(command.name)'"
            for option in command.options {
                let value = option.value.map { _ in " " + fishAction(option.completion) } ?? ""
                script += "\(using) -l \(option.name.dropFirst(2))\(value) -d '\(fishQuoted(option.help))'\n"
            }
            script += "\(using) -s h -l help -d 'Show help information.'\n"
            let positional = positionalCompletion(command)
            if positional != .text { script += "\(using) \(fishAction(positional, forOption: false))\n" }
        }
        return script
    }

    static func fishAction(_ completion: CommandSpec.Completion, forOption: Bool = true) -> String {
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
    static func fishQuoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }
}
