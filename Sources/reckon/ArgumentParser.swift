/// A small argument parser with swift-argument-parser's help and error text.
struct CommandSpec {
    struct Option {
        var name: String
        /// The value's placeholder (`path`); nil for a flag.
        var value: String?
        var help: String
        var required = false
        /// May be given more than once; every value is kept, in order.
        var repeats = false
    }

    var name: String
    var abstract: String
    /// Said after the usage (the exit codes of a command that has its own).
    var discussion: String? = nil
    var positionals: [(name: String, help: String)] = []
    /// Positionals after those, which may be left out.
    var optionalPositionals: [(name: String, help: String)] = []
    /// Whether the last positional takes every further argument too (`<pipeline> ...`).
    var lastPositionalRepeats = false
    var options: [Option] = []

    var usage: String {
        var parts = ["reckon", name]
        parts += positionals.map { "<\($0.name)>" } + optionalPositionals.map { "[<\($0.name)>]" }
        if lastPositionalRepeats { parts[parts.count - 1] += " ..." }
        for option in options {
            let text = option.value.map { "\(option.name) <\($0)>" } ?? option.name
            parts.append(option.required ? text : "[\(text)]" + (option.repeats ? " ..." : ""))
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
        for option in options {
            lines.append(helpLine(option.value.map { "\(option.name) <\($0)>" } ?? option.name, option.help))
        }
        lines.append(helpLine("-h, --help", "Show help information."))
        if let discussion { lines += ["", discussion] }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses the arguments after the command name.
    func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
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
                let (name, inline) = argument.split(separator: "=", maxSplits: 1).map(String.init).pairOrSingle
                guard let option = options.first(where: { $0.name == name }) else {
                    throw UsageError(command: self, message: "Unknown option '\(name)'")
                }
                if let valueName = option.value {
                    var value: String
                    if let inline {
                        value = inline
                    } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                        value = arguments[index]
                        index += 1
                    } else {
                        throw UsageError(command: self, message: "Missing value for '\(name) <\(valueName)>'")
                    }
                    guard !value.isEmpty else { throw UsageError(command: self, message: "The value for '\(name) <\(valueName)>' is empty") }
                    parsed.values[name] = value
                    parsed.lists[name, default: []].append(value)
                } else {
                    guard inline == nil else { throw UsageError(command: self, message: "Unknown option '\(argument)'") }
                    parsed.flags.insert(name)
                }
            } else {
                let all = positionals + optionalPositionals
                guard parsed.positionals.count < all.count || lastPositionalRepeats else {
                    throw UsageError(command: self, message: "Unexpected argument '\(argument)'")
                }
                guard !argument.isEmpty else {
                    throw UsageError(command: self, message: "The value for '<\(all[min(parsed.positionals.count, all.count - 1)].name)>' is empty")
                }
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

func helpLine(_ left: String, _ right: String) -> String {
    let indented = "  " + left
    return indented.count < 26
        ? indented + String(repeating: " ", count: 26 - indented.count) + right
        : indented + "\n" + String(repeating: " ", count: 26) + right
}

struct ParsedArguments {
    var positionals: [String] = []
    var values: [String: String] = [:]
    /// Every value of each option, in order (for an option that repeats).
    var lists: [String: [String]] = [:]
    var flags: Set<String> = []
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

extension Array where Element == String {
    fileprivate var pairOrSingle: (String, String?) { (self[0], count > 1 ? self[1] : nil) }
}
