import Foundation
import TestSupport
import Testing

/// The reference, the man pages and the completion scripts are made from
/// the parser's own definitions: these tests hold the catalog to what the
/// binary prints, and the scripts to what each shell completes.
@Suite struct ReferenceTests {
    static let catalog = packageRoot.appendingPathComponent("Sources/ReckonCore/ReckonCore.docc")
    static let commandsFolder = catalog.appendingPathComponent("Commands")

    /// The subcommands `reckon --help` lists.
    static func subcommands() throws -> [String] {
        let help = try reckon("--help").stdout
        let section = help.components(separatedBy: "SUBCOMMANDS:\n")[1].components(separatedBy: "\n\n")[0]
        return section.split(separator: "\n").compactMap { line in
            line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
        }
    }

    @Test func eachReferencePageIsWhatHelpPrintsAndNoneIsExtra() throws {
        let names = try Self.subcommands()
        #expect(names.contains("export") && names.contains("help") && names.contains("completions"))
        for name in names {
            let page = try reckon("help", name, "--markdown")
            #expect(page.code == 0)
            let file = Self.commandsFolder.appendingPathComponent(name + ".md")
            #expect(
                (try? read(file)) == page.stdout,
                "Commands/\(name).md differs from `reckon help \(name) --markdown`; write it again with that command")
        }
        #expect(try read(Self.commandsFolder.appendingPathComponent("Commands.md")) == reckon("help", "--markdown").stdout)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.commandsFolder.path).sorted()
        #expect(files == (names.map { $0 + ".md" } + ["Commands.md"]).sorted(), "a page for a command the binary lacks, or none for one it has")
    }

    @Test func everyOptionAndExitCodeOfTheHelpIsInTheReference() throws {
        for name in try Self.subcommands() {
            let help = try reckon("help", name).stdout
            let page = try read(Self.commandsFolder.appendingPathComponent(name + ".md"))
            #expect(help.contains("\nEXIT CODES:\n"), "\(name) has no EXIT CODES section")
            for option in help.matches(of: /\n  (--[a-z-]+)/).map({ String($0.1) }) {
                #expect(page.contains("`\(option)"), "\(name): \(option) is not in its reference page")
            }
            for code in help.components(separatedBy: "EXIT CODES:\n")[1].matches(of: /\n?  ([0-9]+) +/).map({ String($0.1) }) {
                #expect(page.contains("| \(code) |"), "\(name): exit code \(code) is not in its reference page")
            }
        }
    }

    @Test func everyOptionTheDocumentsNameIsOneTheBinaryTakes() throws {
        var known: Set<String> = ["--help", "--version"]
        for name in try Self.subcommands() {
            known.formUnion(try reckon("help", name).stdout.matches(of: /\n  (--[a-z-]+)/).map { String($0.1) })
        }
        let pages =
            try FileManager.default.subpathsOfDirectory(atPath: Self.catalog.path).filter { $0.hasSuffix(".md") }
            .map { Self.catalog.appendingPathComponent($0) } + [packageRoot.appendingPathComponent("README.md")]
        for page in pages {
            // Options of reckon's commands, as the pages write them: `reckon … --name`, or `--name` alone in code.
            for line in try read(page).split(separator: "\n") where line.contains("reckon ") {
                for option in line.matches(of: /(?:^|[^\w-])(--[a-z][a-z-]*)/).map({ String($0.1) }) where !Self.otherTools.contains(option) {
                    #expect(known.contains(option), "\(page.lastPathComponent): \(option) is not an option of any command: \(line)")
                }
            }
        }
    }

    /// Options of the other tools the pages show on a line with reckon: GNU parallel's.
    static let otherTools: Set<String> = ["--will-cite"]

    /// groff formats each page without a warning, and mandoc's lint finds
    /// none (a sentence on a line of its own, SEE ALSO in order).
    @Test(.needs(.tool("groff"), .tool("mandoc"))) func manPagesFormatWithoutAWarning() throws {
        let pages = [try reckon("help", "--man")] + (try Self.subcommands().map { try reckon("help", $0, "--man") })
        for page in pages {
            #expect(page.code == 0)
            #expect(page.stdout.hasPrefix(".Dd December 3, 2026\n"), "the date is the version's, never the clock")
            let input = temporaryFolder().appendingPathComponent("page.1")
            try FileManager.default.createDirectory(at: input.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(page.stdout.utf8).write(to: input)
            let groff = try runTool("groff", ["-ww", "-mandoc", "-z", input.path])
            #expect(groff.stderr.isEmpty, "groff: \(groff.stderr)\n\(page.stdout.prefix(200))")
            let mandoc = try runTool("mandoc", ["-T", "lint", "-W", "warning", input.path])
            #expect(mandoc.code == 0 && mandoc.stdout.isEmpty && mandoc.stderr.isEmpty, "mandoc: \(mandoc.stdout)\(mandoc.stderr)")
        }
        #expect(try reckon("help", "export", "--man").stdout.contains(".Dt RECKON-EXPORT 1\n"))
    }

    /// A command's options are declared once and one list drives them all:
    /// every option a command's help lists is taken by its parser, and is
    /// in its man page, its reference page and each shell's completions of
    /// that command; and every option the command line's sources declare is
    /// listed by some command's help, so none is declared and left out.
    @Test func everyDeclaredOptionIsParsedAndInHelpPagesAndCompletions() throws {
        let scripts = try ["bash", "zsh", "fish"].map { try reckon("completions", $0).stdout }
        var listed: Set<String> = []
        for name in try Self.subcommands() {
            let options = try ("\n" + reckon("help", name).stdout.components(separatedBy: "OPTIONS:\n")[1])
                .matches(of: /\n  (--[a-z-]+)/).map { String($0.1) }.filter { $0 != "--help" }
            listed.formUnion(options)
            let man = try reckon("help", name, "--man").stdout
            let markdown = try reckon("help", name, "--markdown").stdout
            // Each shell's part of the script for this command, cut into words.
            let bash = Self.words(scripts[0].components(separatedBy: "\n    \(name))\n")[1].components(separatedBy: "\n        ;;\n")[0])
            let zsh = Self.words(scripts[1].components(separatedBy: "\n        \(name))\n")[1].components(separatedBy: "\n            ;;\n")[0])
            let fish = Self.words(
                scripts[2].split(separator: "\n").filter { $0.hasPrefix("complete -c reckon -n '__reckon_using \(name)'") }
                    .joined(separator: "\n"))
            for option in options {
                let given = try reckon(name, option)
                #expect(!given.stderr.contains("Unknown option"), "\(name) \(option) is not parsed: \(given.stderr)")
                #expect(
                    man.contains("Fl \(option.dropFirst())\n") || man.contains("Fl \(option.dropFirst()) "),
                    "\(name): \(option) is not in its man page")
                #expect(markdown.contains("`\(option)`") || markdown.contains("`\(option) <"), "\(name): \(option) is not in its reference page")
                let shells = [("bash", bash.contains(option)), ("zsh", zsh.contains(option)), ("fish", fish.contains(String(option.dropFirst(2))))]
                let missing = shells.filter { !$0.1 }.map(\.0)
                #expect(missing.isEmpty, "\(name): \(option) is not in the completions of \(missing.joined(separator: ", "))")
            }
        }
        #expect(listed.contains("--memo-ids") && listed.contains("--man"))
        let sources = packageRoot.appendingPathComponent("Sources/reckon")
        for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) where file.hasSuffix(".swift") {
            let text = try read(sources.appendingPathComponent(file))
            for declared in text.matches(of: /(?:Flag|Option<[^\n]*?>)\(\s*"(--[a-z-]+)"/).map({ String($0.1) }) {
                #expect(listed.contains(declared), "\(file): \(declared) is declared, but no command's help lists it")
            }
        }
    }

    /// The words of a piece of a script: runs of letters, digits and dashes.
    static func words(_ text: String) -> Set<String> {
        Set(text.split { !($0.isLetter || $0.isNumber || $0 == "-") }.map(String.init))
    }

    @Test func helpRefusesWhatItDoesNotKnow() throws {
        let option = try reckon("help", "export", "--mna")
        #expect(option.code == 64)
        #expect(option.stderr.hasPrefix("Error: Unknown option '--mna'. Did you mean '--man'?\n"))
        let command = try reckon("help", "exprot")
        #expect(command.code == 64)
        #expect(command.stderr.hasPrefix("Error: Unknown subcommand 'exprot'. Did you mean 'export'?\n"))
        #expect(try reckon("help", "export", "--man", "--markdown").code == 64)
    }

    @Test func aMistypedNameSuggestsTheNearestOneWithinTwoEdits() throws {
        let option = try reckon("reconcile", "--local", "a", "--remot", "b")
        #expect(option.code == 64)
        #expect(option.stderr.hasPrefix("Error: Unknown option '--remot'. Did you mean '--remote'?\n"))
        let command = try reckon("reconcil")
        #expect(command.stderr.hasPrefix("Error: Unknown subcommand 'reconcil'. Did you mean 'reconcile'?\n"))
        let far = try reckon("reconcile", "--local", "a", "--remote", "b", "--colour")
        #expect(far.stderr.hasPrefix("Error: Unknown option '--colour'\n"), "nothing within two edits: no guess")
        let flag = try reckon("run", "Pipelines/sample.json", "--dry-run=")
        #expect(flag.code == 64)
        #expect(flag.stderr.hasPrefix("Error: The option '--dry-run' takes no value\n"))
        #expect(try reckon("help", "run", "--help=").stderr.hasPrefix("Error: The option '--help' takes no value\n"))
        for age in ["87601h", "3651d", "0x10h", "1e3", "0.5s"] {
            let apply = try reckon("apply", "plan.json", "--max-age", age)
            #expect(apply.code == 64)
            #expect(apply.stderr.hasPrefix("Error: The value '\(age)' is invalid for '--max-age <age>'"), "\(age)")
        }
        let missing = try reckon("export", "Samples/drift/device", "--out")
        #expect(missing.stderr.hasPrefix("Error: Missing value for '--out <dir>'\n"))
    }
}

/// A tool from the machine, run with arguments as an array.
func runTool(_ name: String, _ arguments: [String], in folder: URL = packageRoot, environment: [String: String] = [:]) throws -> RunResult {
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map { "\($0)/\(name)" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    return try runArray(arguments, environment: environment, in: folder, executable: URL(fileURLWithPath: path ?? "/usr/bin/\(name)"))
}

/// The examples the README and the catalog mark as tested (a
/// `<!-- tested -->` line before the block): each `$ ` line is run by bash,
/// in a copy of `Samples/` and `Pipelines/` (one per page, so a page's
/// later examples see what its earlier ones wrote), with `swift run reckon`
/// and `reckon` the built binary, and what it prints (stdout and stderr)
/// must be the lines that follow it in the block.
@Suite struct DocumentedExampleTests {
    struct Example {
        var command: String
        var output: String
    }

    /// The tested blocks of `page`, each as its commands and their outputs.
    static func examples(in page: URL) throws -> [[Example]] {
        var blocks: [[Example]] = []
        var lines = try read(page).split(separator: "\n", omittingEmptySubsequences: false).map(String.init).makeIterator()
        while let line = lines.next() {
            guard line == "<!-- tested -->" else { continue }
            guard lines.next()?.hasPrefix("```") == true else { continue }
            var block: [Example] = []
            while let line = lines.next(), !line.hasPrefix("```") {
                if line.hasPrefix("$ ") {
                    block.append(Example(command: String(line.dropFirst(2)), output: ""))
                } else if !block.isEmpty {
                    block[block.count - 1].output += line + "\n"
                }
            }
            blocks.append(block)
        }
        return blocks
    }

    static let pages = ["README.md", "Sources/ReckonCore/ReckonCore.docc/CommandLine.md", "Sources/ReckonCore/ReckonCore.docc/Exports.md"]

    @Test(arguments: pages) func theExamplesPrintWhatThePageShows(_ name: String) throws {
        let blocks = try Self.examples(in: packageRoot.appendingPathComponent(name))
        #expect(!blocks.isEmpty, "\(name) marks no example as tested")
        let folder = temporaryFolder()
        let bin = folder.appendingPathComponent(".bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: bin.appendingPathComponent("reckon"), withDestinationURL: reckonBinary)
        for part in ["Samples", "Pipelines"] {
            try FileManager.default.copyItem(at: packageRoot.appendingPathComponent(part), to: folder.appendingPathComponent(part))
        }
        let environment = [
            "PATH": bin.path + ":/usr/bin:/bin", "XDG_CACHE_HOME": folder.appendingPathComponent(".cache").path, "NO_COLOR": "1"
        ]
        for block in blocks {
            // One script per block, so `$?` is the exit code of the command before; a
            // line holding only \u{1} closes each command's output.
            let script = block.map {
                "\($0.command.replacingOccurrences(of: "swift run reckon", with: "reckon")) 2>&1; rc=$?; printf '\\1\\n'; (exit $rc)"
            }
            let result = try runTool("bash", ["--norc", "-c", script.joined(separator: "\n")], in: folder, environment: environment)
            let outputs = result.stdout.components(separatedBy: "\u{1}\n")
            for (example, output) in zip(block, outputs) {
                #expect(output == example.output, "\(name): $ \(example.command)")
            }
        }
    }
}
