import ReckonCore

/// The help of a command in the reference's two other forms, made from the
/// same definition as the parser and `--help`: a man page (mdoc) and the
/// reference page in Markdown (`Commands/NAME.md` in the catalog).
extension CommandSpec {
    /// The reference page: what `reckon help NAME --markdown` prints.
    var markdown: String {
        var page = ["# reckon \(name)", "", abstract, "", "## Usage", "", "```", usage, "```", ""]
        let arguments = positionals + optionalPositionals
        if !arguments.isEmpty {
            page += ["## Arguments", ""] + arguments.map { "- `<\($0.name)>`: \($0.help)" } + [""]
        }
        page += ["## Options", ""]
        page += options.map { option in "- `\(option.label)`: \(option.help)" }
        page += ["- `-h, --help`: Show help information.", ""]
        if let discussion { page += ["## Discussion", "", discussion.split(separator: "\n").joined(separator: " "), ""] }
        page += ["## Exit codes", ""] + exitCodesTable(exitCodes)
        if let exitCodesNote { page += ["", exitCodesNote] }
        page += ["", "The man page of this command is `reckon help \(name) --man`; see <doc:Commands> for every command.", ""]
        return page.joined(separator: "\n")
    }

    /// The man page `reckon-NAME.1`, in mdoc: what `reckon help NAME --man` prints.
    var manPage: String {
        var page = ManPage(title: "reckon-\(name)", summary: abstract)
        page.macro("Sh", "SYNOPSIS")
        page.macro("Nm", "reckon")
        page.macro("Cm", name)
        for positional in positionals { page.macro("Ar", positional.name + (lastPositionalRepeats ? " ..." : "")) }
        for positional in optionalPositionals { page.macro("Op", "Ar \(positional.name)") }
        for option in options {
            if option.required { page.macro(option.mdoc) } else { page.macro("Op", option.mdoc + (option.repeats ? " ..." : "")) }
        }
        page.macro("Sh", "DESCRIPTION")
        page.text(abstract)
        if let discussion { page.text(discussion.split(separator: "\n").joined(separator: " ")) }
        page.macro("Bl", "-tag -width 6n")
        for argument in positionals + optionalPositionals {
            page.macro("It", "Ar \(argument.name)")
            page.text(argument.help)
        }
        for option in options {
            page.macro("It", option.mdoc)
            page.text(option.help)
        }
        page.macro("It", "Fl h , Fl -help")
        page.text("Show help information.")
        page.macro("El")
        page.exitStatus(exitCodes, note: exitCodesNote)
        page.macro("Sh", "SEE ALSO")
        page.macro("Xr", "reckon 1")
        return page.text
    }
}

/// An mdoc page, written a macro or a line of text at a time.
struct ManPage {
    private(set) var text: String

    /// The page's head: the date of this version (never the clock), its name and one line on what it is.
    init(title: String, summary: String) {
        text = ""
        macro("Dd", Reckon.versionDate)
        macro("Dt", "\(title.uppercased()) 1")
        macro("Os", "reckon \(Reckon.version)")
        macro("Sh", "NAME")
        macro("Nm", title)
        macro("Nd", ManPage.escaped(summary.hasSuffix(".") ? String(summary.dropLast()) : summary))
    }

    /// A macro line; its arguments are written as given (already mdoc).
    mutating func macro(_ name: String, _ arguments: String? = nil) {
        text += "." + name + (arguments.map { " " + $0 } ?? "") + "\n"
    }

    /// A paragraph of plain words, each sentence on a line of its own (mdoc's
    /// "new sentence, new line", so roff knows where sentences end).
    mutating func text(_ words: String) {
        for sentence in ManPage.sentences(words) { text += ManPage.escaped(sentence) + "\n" }
    }

    /// `words` cut after each `.`, `?` or `!` that a space follows and two
    /// letters or digits come before (as mandoc finds a sentence's end; so
    /// "e.g. " is not one).
    static func sentences(_ words: String) -> [String] {
        var sentences: [String] = []
        var current: [Character] = []
        for character in words {
            if character == " ", let last = current.last, ".?!".contains(last), current.count >= 3,
                current[current.count - 2].isLetter || current[current.count - 2].isNumber,
                current[current.count - 3].isLetter || current[current.count - 3].isNumber
            {
                sentences.append(String(current))
                current = []
            } else if !(character == " " && current.isEmpty && !sentences.isEmpty) {
                current.append(character)
            }
        }
        return sentences + [String(current)]
    }

    /// The EXIT STATUS section: each code and what it means.
    mutating func exitStatus(_ codes: [(code: Int32, meaning: String)], note: String?) {
        macro("Sh", "EXIT STATUS")
        macro("Bl", "-tag -width 4n")
        for (code, meaning) in codes {
            macro("It", String(code))
            text(meaning)
        }
        macro("El")
        if let note { text(note) }
    }

    /// Text made safe for a roff line: a backslash written as `\e`, and a
    /// line that would start with a control character guarded by `\&`.
    static func escaped(_ words: String) -> String {
        var text = ""
        for scalar in words.unicodeScalars {
            switch scalar {
            case "\\": text += "\\e"
            case _ where !scalar.isASCII: text += "\\[u" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) + "]"
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text.hasPrefix(".") || text.hasPrefix("'") ? "\\&" + text : text
    }
}

extension CommandSpec.OptionHelp {
    /// The option in mdoc: `Fl -out Ar dir` (`Fl` writes one dash itself).
    var mdoc: String { "Fl " + name.dropFirst() + (value.map { " Ar \($0)" } ?? "") }
}

/// Exit codes as a Markdown table.
func exitCodesTable(_ codes: [(code: Int32, meaning: String)]) -> [String] {
    ["| Code | Meaning |", "| --- | --- |"] + codes.map { "| \($0.code) | \($0.meaning) |" }
}

extension String {
    /// The string with zeros before it, to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
