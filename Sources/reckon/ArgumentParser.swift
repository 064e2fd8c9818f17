/// A small argument parser with swift-argument-parser's help and error
/// text. A command declares its options as typed values (`Flag`,
/// `Option<Value>`); parsing checks the words, and a command reads each
/// option through its declaration, converted, or gets the usage error
/// that says what was expected.
struct CommandSpec: Sendable {
    /// What a shell offers for a value.
    enum Completion: Sendable, Equatable {
        /// Files and folders.
        case path
        /// Folders only.
        case directory
        /// Nothing: a name or a number the shell cannot know.
        case text
        /// One of these words.
        case oneOf([String])
        /// A comma-separated list of these words, each named once.
        case listOf([String])
        /// `ID=SIDE`: the ids of the memos that differ in the latest report, then a side.
        case memoChoice
    }

    /// One option as help shows it.
    struct OptionHelp: Sendable {
        var name: String
        /// The value's placeholder (`path`); nil for a flag.
        var value: String?
        var help: String
        var required = false
        /// May be given more than once; every value is kept, in order.
        var repeats = false
        /// What a shell offers for the value.
        var completion = Completion.path
        /// Names a side to read, whose path is taken as its bytes, UTF-8 or not.
        var namesSide = false

        /// The option as help names it: `--out <dir>`, or `--json`.
        var label: String { value.map { "\(name) <\($0)>" } ?? name }
    }

    /// One positional argument.
    struct Argument: Sendable {
        var name: String
        var help: String
        /// What a shell offers for it.
        var completion = Completion.path
        /// Names a side to read, whose path is taken as its bytes, UTF-8 or not.
        var namesSide = false
    }

    var name: String
    var abstract: String
    /// Said after the options: what the command does beyond its abstract.
    var discussion: String? = nil
    var positionals: [Argument] = []
    /// Positionals after those, which may be left out.
    var optionalPositionals: [Argument] = []
    /// Whether the last positional takes every further argument too (`<pipeline> ...`).
    var lastPositionalRepeats = false
    /// The command's options, as its `OptionList` declares them.
    let options: [OptionHelp]
    /// Each exit code the command gives, and what it means.
    var exitCodes: [(code: Int32, meaning: String)] = []
    /// Said after the exit codes (how a fleet's codes combine).
    var exitCodesNote: String? = nil

    /// A command; its options are those `options` declares.
    init(
        name: String, abstract: String, discussion: String? = nil, positionals: [Argument] = [], optionalPositionals: [Argument] = [],
        lastPositionalRepeats: Bool = false, options: any OptionList = NoOptions(), exitCodes: [(code: Int32, meaning: String)] = [],
        exitCodesNote: String? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.positionals = positionals
        self.optionalPositionals = optionalPositionals
        self.lastPositionalRepeats = lastPositionalRepeats
        self.options = options.declared
        self.exitCodes = exitCodes
        self.exitCodesNote = exitCodesNote
    }

    var usage: String {
        var parts = ["reckon", name]
        parts += positionals.map { "<\($0.name)>" } + optionalPositionals.map { "[<\($0.name)>]" }
        if lastPositionalRepeats { parts[parts.count - 1] += " ..." }
        for option in options {
            parts.append(option.required ? option.label : "[\(option.label)]" + (option.repeats ? " ..." : ""))
        }
        return parts.joined(separator: " ")
    }

    var help: String {
        var lines = ["OVERVIEW: \(abstract)", "", "USAGE: \(usage)", ""]
        if !(positionals + optionalPositionals).isEmpty {
            lines.append("ARGUMENTS:")
            for positional in positionals + optionalPositionals { lines.append(helpLine("<\(positional.name)>", positional.help)) }
            lines.append("")
        }
        lines.append("OPTIONS:")
        for option in options { lines.append(helpLine(option.label, option.help)) }
        lines.append(helpLine("-h, --help", "Show help information."))
        if let discussion { lines += ["", discussion] }
        if !exitCodes.isEmpty {
            lines += ["", "EXIT CODES:"] + exitCodes.map(exitCodeLine)
            if let exitCodesNote { lines.append("  " + exitCodesNote) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses the arguments after the command name; `notUTF8` holds the
    /// bytes of each word that is not UTF-8, by the text that stands for it.
    func parse(_ arguments: [String], notUTF8: [String: [UInt8]] = [:]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments(command: self)
        /// A value that is not UTF-8 is taken, as its bytes, only where it names a side.
        func checkBytes(_ value: String, of word: String, namesSide: Bool, for label: String) throws(UsageError) {
            guard let bytes = notUTF8[word] else { return }
            guard namesSide else {
                throw UsageError(
                    command: self,
                    message: "The value '\(value)' for '\(label)' is not UTF-8; only a side to read may be named by a path that is not UTF-8")
            }
            // `--local=VALUE`: the value's bytes follow the first `=`, which the shown text keeps where the bytes have it.
            parsed.notUTF8[value] = value == word ? bytes : Array(bytes[(bytes.firstIndex(of: UInt8(ascii: "="))! + 1)...])
        }
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if !optionsEnded && argument == "--" {
                optionsEnded = true
                continue
            }
            if !optionsEnded && (argument == "-h" || argument == "--help") { throw UsageError(command: self, message: nil) }
            if !optionsEnded && argument.hasPrefix("-") && argument != "-" {
                // `--name=value` (the value may be empty, and is then refused), or `--name`.
                let equals = argument.firstIndex(of: "=")
                let name = String(argument[..<(equals ?? argument.endIndex)])
                let inline = equals.map { String(argument[argument.index(after: $0)...]) }
                if name == "--help" { throw UsageError(command: self, message: "The option '--help' takes no value") }
                guard let option = options.first(where: { $0.name == name }) else {
                    throw UsageError(
                        command: self, message: "Unknown option '\(name)'" + suggestion(for: name, among: options.map(\.name) + ["--help"]))
                }
                if let valueName = option.value {
                    var value: String
                    if let inline {
                        value = inline
                        try checkBytes(value, of: argument, namesSide: option.namesSide, for: option.label)
                    } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                        value = arguments[index]
                        index += 1
                        try checkBytes(value, of: value, namesSide: option.namesSide, for: option.label)
                    } else {
                        throw UsageError(command: self, message: "Missing value for '\(name) <\(valueName)>'")
                    }
                    guard !value.isEmpty else { throw UsageError(command: self, message: "The value for '\(name) <\(valueName)>' is empty") }
                    // An option that takes one value, given twice, would lose one of them without a word.
                    guard option.repeats || parsed.values[name] == nil else {
                        throw UsageError(command: self, message: "The option '\(name)' is given twice; give it once")
                    }
                    parsed.values[name, default: []].append(value)
                } else {
                    guard inline == nil else { throw UsageError(command: self, message: "The option '\(name)' takes no value") }
                    parsed.flags.insert(name)
                }
            } else {
                let all = positionals + optionalPositionals
                guard parsed.positionals.count < all.count || lastPositionalRepeats else {
                    throw UsageError(command: self, message: "Unexpected argument '\(argument)'")
                }
                let positional = all[min(parsed.positionals.count, all.count - 1)]
                guard !argument.isEmpty else { throw UsageError(command: self, message: "The value for '<\(positional.name)>' is empty") }
                try checkBytes(argument, of: argument, namesSide: positional.namesSide, for: "<\(positional.name)>")
                parsed.positionals.append(argument)
            }
        }
        if parsed.positionals.count < positionals.count {
            throw UsageError(command: self, message: "Missing expected argument '<\(positionals[parsed.positionals.count].name)>'")
        }
        for option in options where option.required && parsed.values[option.name] == nil {
            throw UsageError(command: self, message: "Missing expected argument '\(option.name) <\(option.value ?? "")>'")
        }
        return parsed
    }
}

/// One option a command declares: a `Flag` or an `Option`.
protocol DeclaredOption: Sendable {
    /// The option as the parser, help and completions know it.
    var help: CommandSpec.OptionHelp { get }
}

/// A command's options, each declared once as a stored property of one
/// value (`struct Options: OptionList { let json = Flag(...) }`), as
/// swift-argument-parser's commands declare theirs: the command reads each
/// back through its property, and the parser, help, man page, Markdown page
/// and completions all take `declared`, so none can be left out of one.
protocol OptionList: Sendable {}

extension OptionList {
    /// Every option declared, in the order declared, which is the order help lists them.
    var declared: [CommandSpec.OptionHelp] { Mirror(reflecting: self).children.compactMap { ($0.value as? any DeclaredOption)?.help } }
}

/// The options of a command that has none but `--help`.
struct NoOptions: OptionList {}

/// An option without a value: given or not.
struct Flag: DeclaredOption {
    var help: CommandSpec.OptionHelp

    init(_ name: String, help: String) { self.help = .init(name: name, help: help) }
}

/// The text of an option's value (or the part of one) that its conversion refused.
struct Refused: Error {
    var text: String
}

/// An option that takes a value, read as a `Value`: `convert` throws
/// `Refused` for a value (or the part of one) it does not take, and the
/// usage error then names that and says what was `expected`.
struct Option<Value>: DeclaredOption {
    var help: CommandSpec.OptionHelp
    var expected: String
    var convert: @Sendable (String) throws(Refused) -> Value

    init(
        _ name: String, value: String, help: String, required: Bool = false, repeats: Bool = false, expected: String = "",
        completion: CommandSpec.Completion = .text, convert: @escaping @Sendable (String) throws(Refused) -> Value
    ) {
        self.help = .init(name: name, value: value, help: help, required: required, repeats: repeats, completion: completion)
        self.expected = expected
        self.convert = convert
    }

    /// An option whose `convert` gives nil for a value it refuses.
    init(
        _ name: String, value: String, help: String, repeats: Bool = false, expected: String, completion: CommandSpec.Completion = .text,
        convert: @escaping @Sendable (String) -> Value?
    ) {
        self.init(name, value: value, help: help, repeats: repeats, expected: expected, completion: completion) { text throws(Refused) in
            guard let value = convert(text) else { throw Refused(text: text) }
            return value
        }
    }
}

extension Option where Value == String {
    /// An option whose value is taken as it is written (a path, a name).
    /// `namesSide`: the value names a side to read, taken as its bytes, UTF-8 or not.
    init(
        _ name: String, value: String, help: String, required: Bool = false, repeats: Bool = false, completion: CommandSpec.Completion = .path,
        namesSide: Bool = false
    ) {
        self.init(name, value: value, help: help, required: required, repeats: repeats, completion: completion) { text throws(Refused) in text }
        self.help.namesSide = namesSide
    }
}

extension Option where Value: RawRepresentable & CaseIterable & Sendable, Value.RawValue == String {
    /// An option whose value is one of `Value`'s cases, by name.
    init(_ name: String, value: String, help: String) {
        let names = Value.allCases.map(\.rawValue)
        self.init(name, value: value, help: help, expected: "one of: " + names.joined(separator: ", "), completion: .oneOf(names)) {
            Value(rawValue: $0)
        }
    }
}

/// The words of one command line, checked against its command's options.
struct ParsedArguments {
    var command: CommandSpec
    var positionals: [String] = []
    /// The bytes of each value that names a side by a path that is not UTF-8, by the text that stands for it.
    var notUTF8: [String: [UInt8]] = [:]
    fileprivate var values: [String: [String]] = [:]
    fileprivate var flags: Set<String> = []

    /// Whether `flag` was given.
    subscript(flag: Flag) -> Bool { flags.contains(flag.help.name) }

    /// The value of `option`, or nil when it was not given (an option that does not repeat is refused when given twice).
    func value<Value>(_ option: Option<Value>) throws(UsageError) -> Value? {
        guard let text = values[option.help.name]?.last else { return nil }
        return try converted(text, by: option)
    }

    /// Every value of `option`, in order.
    func values<Value>(_ option: Option<Value>) throws(UsageError) -> [Value] {
        var all: [Value] = []
        for text in values[option.help.name] ?? [] { all.append(try converted(text, by: option)) }
        return all
    }

    private func converted<Value>(_ text: String, by option: Option<Value>) throws(UsageError) -> Value {
        do {
            return try option.convert(text)
        } catch {
            throw invalid(error.text, for: option)
        }
    }

    /// The value of an option the parser requires.
    func required(_ option: Option<String>) -> String { values[option.help.name]!.last! }

    /// The usage error for `text`, refused as a value of `option`.
    func invalid<Value>(_ text: String, for option: Option<Value>) -> UsageError {
        usage("The value '\(text)' is invalid for '\(option.help.name) <\(option.help.value!)>'; expected \(option.expected)")
    }

    /// A usage error of this command.
    func usage(_ message: String) -> UsageError { UsageError(command: command, message: message) }
}

/// ". Did you mean 'NAME'?" for the name among `names` nearest to
/// `word`, when it is within two edits (the first in `names` on a tie); else "".
func suggestion(for word: String, among names: [String]) -> String {
    let scored = names.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= 2 && $0.0 != word }
    guard let best = scored.min(by: { $0.1 < $1.1 }) else { return "" }
    return ". Did you mean '\(best.0)'?"
}

/// The Levenshtein distance: how many characters must be inserted, deleted or replaced to make `a` into `b`.
func editDistance(_ a: String, _ b: String) -> Int {
    let b = Array(b)
    var previous = Array(0...b.count)
    for (i, x) in a.enumerated() {
        var current = [i + 1] + Array(repeating: 0, count: b.count)
        for (j, y) in b.enumerated() {
            current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

/// One exit code as help lists it: `  64 usage error`.
func exitCodeLine(_ code: (code: Int32, meaning: String)) -> String {
    "  " + String(code.code).padding(toLength: 3, withPad: " ", startingAt: 0) + code.meaning
}

func helpLine(_ left: String, _ right: String) -> String {
    let indented = "  " + left
    return indented.count < 26
        ? indented + String(repeating: " ", count: 26 - indented.count) + right
        : indented + "\n" + String(repeating: " ", count: 26) + right
}

/// A usage mistake (exit 64), or a request for help (message nil, exit 0).
struct UsageError: Error {
    var command: CommandSpec?
    var message: String?

    var text: String {
        guard let message else { return command?.help ?? "" }
        let usage = command?.usage ?? "reckon <subcommand>"
        let helpHint = command.map { "reckon \($0.name) --help" } ?? "reckon --help"
        return "Error: \(message)\nUsage: \(usage)\n  See '\(helpHint)' for more information.\n"
    }
}
