import Foundation
import TestSupport
import Testing

/// Each shell's script, loaded into that shell from Debian's packages, and
/// asked what it completes: bash through COMP_WORDS/COMPREPLY, fish
/// through `complete -C`, zsh through a pseudo-terminal (zpty).
@Suite struct CompletionTests {
    /// A folder holding the script for `shell`, a `reckon` on PATH (the
    /// built binary), and a report whose differing memos `--take` offers.
    static func setUp(_ shell: String) throws -> (folder: URL, script: URL, environment: [String: String]) {
        let folder = temporaryFolder()
        let bin = folder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: bin.appendingPathComponent("reckon"), withDestinationURL: reckonBinary)
        let script = folder.appendingPathComponent("reckon." + shell)
        let printed = try reckon("completions", shell)
        #expect(printed.code == 0)
        try Data(printed.stdout.utf8).write(to: script)
        let reports = folder.appendingPathComponent("out")
        let run = try runArray(
            ["reconcile", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--out", reports.path])
        #expect(run.code == 1, "the sample drifts: \(run.stderr)")
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return (folder, script, ["PATH": path, "HOME": folder.path])
    }

    /// The ids of the `*`, `-` and `+` memos in a report.
    static func differingIDs(_ folder: URL) throws -> [String] {
        let report = try json(read(folder.appendingPathComponent("out/report.json")))
        let differences = report["differences"] as! [[String: Any]]
        return differences.filter { ["*", "-", "+"].contains($0["sigil"] as! String) }.map { $0["id"] as! String }
    }

    /// What bash completes for `line`, its words split as bash splits them
    /// (at blanks, and at `=` and `:`, which become words of their own).
    static func bash(_ line: String, _ setup: (folder: URL, script: URL, environment: [String: String])) throws -> [String] {
        var words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let last = words.removeLast()
        var pieces: [String] = []
        var piece = ""
        for character in last {
            if character == "=" || character == ":" {
                if !piece.isEmpty { pieces.append(piece) }
                pieces.append(String(character))
                piece = ""
            } else {
                piece.append(character)
            }
        }
        if !piece.isEmpty || pieces.isEmpty { pieces.append(piece) }
        words += pieces
        let driver = """
            source "$1"; COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}; shift 2
            COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            _reckon; printf '%s\\0' "${COMPREPLY[@]}"
            """
        let result = try runTool(
            "bash", ["--norc", "-c", driver, "bash", setup.script.path, line] + words, in: setup.folder, environment: setup.environment)
        #expect(result.stderr.isEmpty, "bash: \(result.stderr)")
        return result.stdout.split(separator: "\0").map(String.init)
    }

    @Test func bashCompletesCommandsOptionsValuesAndPaths() throws {
        let setup = try Self.setUp("bash")
        let ids = try Self.differingIDs(setup.folder)
        #expect(!ids.isEmpty)
        #expect(try Self.bash("reckon ex", setup) == ["export"])
        #expect(try Self.bash("reckon export --fo", setup) == ["--format"])
        #expect(try Self.bash("reckon export --format json,", setup) == ["json,markdown", "json,zip"])
        #expect(try Self.bash("reckon export --format zip,json,m", setup) == ["zip,json,markdown"])
        #expect(try Self.bash("reckon reconcile --lang ", setup) == ["en", "ja"])
        #expect(try Self.bash("reckon plan --prefer ", setup) == ["newer", "local", "remote"])
        #expect(try Self.bash("reckon plan --take ", setup) == ids.map { $0 + "=" })
        // bash's own word after '=' is what it replaces: the side alone.
        #expect(try Self.bash("reckon plan --take \(ids[0])=", setup) == ["=local", "=remote", "=both"])
        #expect(try Self.bash("reckon plan --take \(ids[0])=re", setup) == ["remote"])
        #expect(try Self.bash("reckon counts ou", setup) == ["out"])
        #expect(try Self.bash("reckon completions ", setup) == ["bash", "zsh", "fish"])
        // A path bash splits at : or = is completed after it, a folder with its /.
        try FileManager.default.createDirectory(at: setup.folder.appendingPathComponent("c:d/x"), withIntermediateDirectories: true)
        #expect(try Self.bash("reckon counts c:", setup) == [":d/"])
        #expect(try Self.bash("reckon counts c:d", setup) == ["d/"])
    }

    /// `--option=value` completes the value as the option's, and a file
    /// name holding a newline is one candidate, not two.
    @Test func bashCompletesJoinedOptionValuesAndNamesWithANewline() throws {
        let setup = try Self.setUp("bash")
        try Data().write(to: setup.folder.appendingPathComponent("new\nline.json"))
        #expect(try Self.bash("reckon reconcile --local=ou", setup) == ["out/"])
        #expect(try Self.bash("reckon reconcile --local=", setup) == ["=bin/", "$'=new\\nline.json'", "=out/", "=reckon.bash"])
        #expect(try Self.bash("reckon reconcile --lang=j", setup) == ["ja"])
        #expect(try Self.bash("reckon export --format=json,", setup) == ["json,markdown", "json,zip"])
        #expect(try Self.bash("reckon reconcile --quick=", setup) == [])
        #expect(try Self.bash("reckon counts new", setup) == ["new\nline.json"])
        #expect(try Self.bash("reckon counts --local=new", setup) == [])
        #expect(try Self.bash("reckon reconcile --local=new", setup) == ["$'new\\nline.json'"])
    }

    @Test(.needs(.tool("fish"))) func fishCompletesCommandsOptionsValuesAndPaths() throws {
        let setup = try Self.setUp("fish")
        let ids = try Self.differingIDs(setup.folder)
        func complete(_ line: String) throws -> [String] {
            let result = try runTool(
                "fish", ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", setup.script.path, line], in: setup.folder,
                environment: setup.environment)
            #expect(result.stderr.isEmpty, "fish: \(result.stderr)")
            return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        }
        #expect(try complete("reckon ex") == ["export"])
        #expect(try complete("reckon export --format json,").sorted() == ["json,markdown", "json,zip"])
        #expect(try complete("reckon reconcile --lang ").sorted() == ["en", "ja"])
        #expect(try complete("reckon plan --take ").sorted() == ids.map { $0 + "=" }.sorted())
        #expect(try complete("reckon plan --take \(ids[0])=").sorted() == ["both", "local", "remote"].map { "\(ids[0])=" + $0 })
        #expect(try complete("reckon counts ou") == ["out/"])
    }

    @Test(.needs(.tool("zsh"), .tool("timeout"))) func zshCompletesCommandsOptionsValuesAndPaths() throws {
        let setup = try Self.setUp("zsh")
        let ids = try Self.differingIDs(setup.folder)
        // A shell on a pseudo-terminal completes the line once, each match
        // printed (with what zsh puts before and after it) by a `compadd`
        // that also adds it; then the shell exits. `timeout` bounds the run.
        let driver = """
            zmodload zsh/zpty
            zpty z zsh -f -i
            zpty -w z 'PROMPT=; autoload -U compinit; compinit -u -D; source $SCRIPT'
            zpty -w z 'bindkey "^I" complete-word; zstyle ":completion:*" list-grouped false; zstyle ":completion:*" insert-tab false'
            zpty -w z '__mark () { print -r -- "<mark>" }; compprefuncs=(__mark); comppostfuncs=(__mark exit)'
            zpty -w z 'compadd () {
                if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return; fi
                local -a hits; local -A o; zparseopts -E -A o P: p: S: s:
                builtin compadd -A hits "$@"
                local h; for h in $hits; do print -r -- "<hit>$IPREFIX${o[-P]}${o[-p]}$h${o[-s]}${o[-S]}"; done
                builtin compadd "$@"
            }'
            zpty -w z "$LINE"$'\\t'
            while zpty -r z chunk; do print -rn -- "$chunk"; done
            """
        func complete(_ line: String) throws -> [String] {
            var environment = setup.environment
            environment["SCRIPT"] = setup.script.path
            environment["LINE"] = line
            let result = try runTool("timeout", ["30", "zsh", "-f", "-c", driver], in: setup.folder, environment: environment)
            return result.stdout.replacingOccurrences(of: "\r", with: "").split(separator: "\n")
                .compactMap { line in line.hasPrefix("<hit>") ? String(line.dropFirst(5)) : nil }
        }
        #expect(try complete("reckon ex") == ["export"])
        // The comma after each is zsh's own suffix, taken away again by what is typed next.
        #expect(try complete("reckon export --format json,").sorted() == ["json,markdown,", "json,zip,"])
        #expect(try complete("reckon plan --prefer ").sorted() == ["local", "newer", "remote"])
        #expect(try complete("reckon plan --take ").sorted() == ids.map { $0 + "=" }.sorted())
        #expect(try complete("reckon plan --take \(ids[0])=").sorted() == ["both", "local", "remote"].map { "\(ids[0])=" + $0 })
    }

    @Test func onlyMemoIDsOfADamagedReportReachTheShell() throws {
        let folder = temporaryFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let id = "e4eaaaf2-d142-11e1-b3e4-080027620cdd"
        let report =
            #"{"differences": [{"sigil": "-", "id": "x\u001b[31mred"}, {"sigil": "*", "id": "a\nb"}, {"sigil": "+", "id": "E4EAAAF2-D142-11E1-B3E4-080027620CDD"}, {"sigil": "=", "id": "0f8fad5b-d9cb-469f-a165-70867728950e"}]}"#
        try Data(report.utf8).write(to: folder.appendingPathComponent("report.json"))
        let result = try runArray(["completions", "--memo-ids"], in: folder)
        #expect(result.code == 0)
        #expect(result.stdout == id + "\n")
    }

    @Test func anUnknownShellIsAUsageError() throws {
        let result = try reckon("completions", "tcsh")
        #expect(result.code == 64)
        #expect(result.stderr.hasPrefix("Error: The value 'tcsh' is invalid for '<shell>'; expected one of: bash, zsh, fish\n"))
    }
}
