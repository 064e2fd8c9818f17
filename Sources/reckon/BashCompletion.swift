import ReckonCore

/// The bash completion script, made from the commands' definitions: one
/// function, `_reckon`, that reads the words as reckon will (joined where
/// bash split them at `=` and `:`, quoting taken off), and replies with the
/// subcommands, a command's options, an option's values, or paths.
enum BashCompletion {
    /// The script for `commands`, as `reckon completions bash` prints it.
    static func script(_ commands: [CommandSpec]) -> String {
        var script = "# bash completion for reckon \(Reckon.version), made by `reckon completions bash`.\n\n"
        script += replies + valueReplies + entry(commands.map(\.name))
        for command in commands {
            script += "    \(command.name))\n        case \"$prev\" in\n"
            for option in command.options where option.value != nil {
                script += "        \(option.name)) \(action(option.completion)); return ;;\n"
            }
            script += "        esac\n"
            script += "        [[ -n $opt ]] && return\n"
            script +=
                "        if [[ $cur == -* ]]; then _reckon_words \"\(CompletionScript.optionNames(command).joined(separator: " "))\"; return; fi\n"
            script += "        \(action(CompletionScript.positionalCompletion(command)))\n        ;;\n"
        }
        script += "    esac\n}\ncomplete -F _reckon reckon\n"
        return script
    }

    /// Replies made from what the word is: `_reckon_reply` (cut to what bash
    /// replaces), `_reckon_words` (one of some words) and `_reckon_paths` (files or folders).
    static let replies = """
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

        """

    /// Replies for the values that are not plain words or paths (a list, `ID=SIDE`),
    /// and `_reckon_dequote`, which takes a word's quoting off.
    static let valueReplies = """
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

        """

    /// `_reckon`, which bash calls, up to the `case` on the subcommand: the
    /// words read as reckon will, and the subcommand `names` completed.
    static func entry(_ names: [String]) -> String {
        """
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
                _reckon_words "\(names.joined(separator: " ")) --help --version"
                return
            fi
            case "${words[1]}" in

        """
    }

    /// What bash offers for a value that completes as `completion`.
    static func action(_ completion: CommandSpec.Completion) -> String {
        switch completion {
        case .path: "_reckon_paths -f"
        case .directory: "_reckon_paths -d"
        case .text: ":"
        case .oneOf(let words): "_reckon_words \"\(words.joined(separator: " "))\""
        case .listOf(let words): "_reckon_list \"\(words.joined(separator: " "))\""
        case .memoChoice: "_reckon_take"
        }
    }
}
