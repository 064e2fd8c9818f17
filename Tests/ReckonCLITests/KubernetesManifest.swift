import Foundation

/// A value of the small part of YAML a Kubernetes manifest in the docs is
/// written in: block mappings and sequences, flow `{…}` and `[…]`, plain,
/// double- and single-quoted scalars, `#` comments. Anything else (anchors,
/// tags, multi-line scalars, several documents) is refused with its line,
/// so the test never runs a manifest it read differently from Kubernetes.
indirect enum YAMLValue: Equatable {
    case scalar(String)
    case sequence([YAMLValue])
    case mapping([String: YAMLValue])

    subscript(key: String) -> YAMLValue? {
        if case .mapping(let map) = self { return map[key] }
        return nil
    }

    var string: String? {
        if case .scalar(let text) = self { return text }
        return nil
    }

    var int: Int? { string.flatMap { Int($0) } }

    var bool: Bool? { string.flatMap { ["true": true, "false": false][$0] } }

    var items: [YAMLValue]? {
        if case .sequence(let items) = self { return items }
        return nil
    }
}

struct YAMLError: Error, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "line \(line) of the manifest: \(message)" }
}

/// Reads `text` as the YAML subset `YAMLValue` describes.
func readYAML(_ text: String) throws -> YAMLValue {
    var lines: [(number: Int, indent: Int, text: Substring)] = []
    for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = try withoutComment(raw, line: n + 1)
        let content = line.drop { $0 == " " }
        guard !content.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
        guard !content.hasPrefix("\t"), !["---", "...", "&", "*", "!", "|", ">", "%"].contains(where: { content.hasPrefix($0) }) else {
            throw YAMLError(line: n + 1, message: "uses YAML this reader does not read: \(content)")
        }
        lines.append((n + 1, line.count - content.count, Substring(content.trimmingCharacters(in: .whitespaces))))
    }
    var reader = YAMLBlockReader(lines: lines)
    guard let first = reader.lines.first else { throw YAMLError(line: 1, message: "is empty") }
    let value = try reader.block(indent: first.indent)
    if reader.next < reader.lines.count { throw YAMLError(line: reader.lines[reader.next].number, message: "is indented out of place") }
    return value
}

/// `line` without a `#` comment (a `#` at its start or after a space, outside quotes).
private func withoutComment(_ line: Substring, line number: Int) throws -> Substring {
    var quote: Character?
    var previous: Character = " "
    for index in line.indices {
        let character = line[index]
        if let open = quote {
            if character == open { quote = nil }
        } else if character == "\"" || character == "'" {
            quote = character
        } else if character == "#" && previous == " " {
            return line[..<index]
        }
        previous = character
    }
    return line
}

private struct YAMLBlockReader {
    var lines: [(number: Int, indent: Int, text: Substring)]
    var next = 0

    /// The block that starts at the next line, indented `indent`.
    mutating func block(indent: Int) throws -> YAMLValue {
        let line = lines[next]
        if line.text == "-" || line.text.hasPrefix("- ") { return try sequence(indent: indent) }
        return try mapping(indent: indent)
    }

    mutating func sequence(indent: Int) throws -> YAMLValue {
        var items: [YAMLValue] = []
        while next < lines.count, lines[next].indent == indent, lines[next].text == "-" || lines[next].text.hasPrefix("- ") {
            let line = lines[next]
            let rest = line.text.dropFirst().drop { $0 == " " }
            if rest.isEmpty {
                next += 1
                items.append(try nested(below: indent, line: line.number))
            } else if rest.first == "{" || rest.first == "[" || rest.first == "\"" || rest.first == "'" || keyAndRest(rest) == nil {
                next += 1
                items.append(try flow(rest, line: line.number))
            } else {
                // `- key: value` opens a mapping whose keys line up with `key`.
                lines[next] = (line.number, line.indent + (line.text.count - rest.count), rest)
                items.append(try mapping(indent: lines[next].indent))
            }
        }
        return .sequence(items)
    }

    mutating func mapping(indent: Int) throws -> YAMLValue {
        var map: [String: YAMLValue] = [:]
        while next < lines.count, lines[next].indent == indent, !(lines[next].text == "-" || lines[next].text.hasPrefix("- ")) {
            let line = lines[next]
            guard let (key, rest) = keyAndRest(line.text) else {
                throw YAMLError(line: line.number, message: "is not `key: value`: \(line.text)")
            }
            guard map[key] == nil else { throw YAMLError(line: line.number, message: "repeats the key '\(key)'") }
            next += 1
            if !rest.isEmpty {
                map[key] = try flow(rest, line: line.number)
            } else if next < lines.count, lines[next].indent == indent, lines[next].text.hasPrefix("- ") {
                map[key] = try sequence(indent: indent)
            } else {
                map[key] = try nested(below: indent, line: line.number)
            }
        }
        return .mapping(map)
    }

    /// The block indented deeper than `indent` on the next lines.
    mutating func nested(below indent: Int, line: Int) throws -> YAMLValue {
        guard next < lines.count, lines[next].indent > indent else {
            throw YAMLError(line: line, message: "has no value (an empty value is written {} or \"\")")
        }
        return try block(indent: lines[next].indent)
    }
}

/// `key: rest` split at the first `: ` (or a final `:`) outside quotes and brackets.
private func keyAndRest(_ text: Substring) -> (String, Substring)? {
    var depth = 0
    var quote: Character?
    for index in text.indices {
        let character = text[index]
        if let open = quote {
            if character == open { quote = nil }
            continue
        }
        switch character {
        case "\"", "'": quote = character
        case "{", "[": depth += 1
        case "}", "]": depth -= 1
        case ":" where depth == 0:
            let after = text.index(after: index)
            guard after == text.endIndex || text[after] == " " else { continue }
            let key = text[..<index].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, !key.hasPrefix("\""), !key.hasPrefix("'") else { return nil }
            return (key, text[after...].drop { $0 == " " })
        default: break
        }
    }
    return nil
}

/// A value written on one line: `{a: b, c: [d]}`, `[x, "y"]` or a scalar.
private func flow(_ text: Substring, line: Int) throws -> YAMLValue {
    var parser = YAMLFlowParser(text: Array(text), line: line)
    let value = try parser.value(inFlow: false)
    parser.skipSpaces()
    guard parser.at == parser.text.count else { throw YAMLError(line: line, message: "has more after its value: \(text)") }
    return value
}

private struct YAMLFlowParser {
    let text: [Character]
    let line: Int
    var at = 0

    mutating func skipSpaces() { while at < text.count, text[at] == " " { at += 1 } }

    mutating func value(inFlow: Bool) throws -> YAMLValue {
        skipSpaces()
        guard at < text.count else { throw YAMLError(line: line, message: "ends where a value should be") }
        switch text[at] {
        case "{":
            at += 1
            var map: [String: YAMLValue] = [:]
            for (key, value) in try entries(closing: "}", keyed: true) {
                guard let key, map[key] == nil else { throw YAMLError(line: line, message: "repeats a key or misses one in {…}") }
                map[key] = value
            }
            return .mapping(map)
        case "[":
            at += 1
            return .sequence(try entries(closing: "]", keyed: false).map(\.1))
        case "\"", "'": return .scalar(try quoted())
        case "&", "*", "!", "|", ">", "%", "@", "`":
            throw YAMLError(line: line, message: "uses YAML this reader does not read: \(String(text[at...]))")
        default: return .scalar(plain(inFlow: inFlow))
        }
    }

    /// The entries of a flow collection up to `closing`, each `key: value` when `keyed`.
    mutating func entries(closing: Character, keyed: Bool) throws -> [(String?, YAMLValue)] {
        var entries: [(String?, YAMLValue)] = []
        skipSpaces()
        if at < text.count, text[at] == closing {
            at += 1
            return []
        }
        while true {
            var key: String?
            if keyed {
                skipSpaces()
                key = at < text.count && (text[at] == "\"" || text[at] == "'") ? try quoted() : plain(inFlow: true, stopAtColon: true)
                skipSpaces()
                guard at < text.count, text[at] == ":" else { throw YAMLError(line: line, message: "has a {…} entry that is not `key: value`") }
                at += 1
            }
            entries.append((key, try value(inFlow: true)))
            skipSpaces()
            guard at < text.count else { throw YAMLError(line: line, message: "does not close its \(closing)") }
            at += 1
            if text[at - 1] == closing { return entries }
            guard text[at - 1] == "," else { throw YAMLError(line: line, message: "has '\(text[at - 1])' where ',' or '\(closing)' should be") }
        }
    }

    mutating func quoted() throws -> String {
        let open = text[at]
        at += 1
        var result = ""
        while at < text.count {
            let character = text[at]
            at += 1
            if character == open {
                // '' is a quote inside single quotes.
                if open == "'", at < text.count, text[at] == "'" {
                    result.append("'")
                    at += 1
                    continue
                }
                return result
            }
            if open == "\"" && character == "\\" {
                guard at < text.count, let escaped = ["\"": "\"", "\\": "\\", "n": "\n", "t": "\t", "/": "/"][text[at]] else {
                    throw YAMLError(line: line, message: "has an escape this reader does not read")
                }
                result += escaped
                at += 1
                continue
            }
            result.append(character)
        }
        throw YAMLError(line: line, message: "does not close its quote")
    }

    /// A plain scalar: to the end of the line, or in a flow collection to
    /// the next `,`, `}` or `]` (and `:` before a key's value).
    mutating func plain(inFlow: Bool, stopAtColon: Bool = false) -> String {
        let start = at
        while at < text.count {
            let character = text[at]
            if inFlow && [",", "}", "]"].contains(character) { break }
            if stopAtColon && character == ":" { break }
            at += 1
        }
        return String(text[start..<at]).trimmingCharacters(in: .whitespaces)
    }
}

/// `$(NAME)` in `text` replaced by `NAME`'s value in `environment`, as
/// Kubernetes expands a container's `command` and `args`: `$$` is one `$`,
/// and a reference to a name not in `environment` is left as written.
func expandKubernetesReferences(_ text: String, _ environment: [String: String]) -> String {
    var result = ""
    var rest = Substring(text)
    while let dollar = rest.firstIndex(of: "$") {
        result += rest[..<dollar]
        let after = rest[rest.index(after: dollar)...]
        if after.hasPrefix("$") {
            result += "$"
            rest = after.dropFirst()
        } else if after.hasPrefix("("), let close = after.firstIndex(of: ")"),
            let value = environment[String(after[after.index(after: after.startIndex)..<close])]
        {
            result += value
            rest = after[after.index(after: close)...]
        } else {
            result += "$"
            rest = after
        }
    }
    return result + rest
}

/// How each completion of an Indexed Job runs, read from a manifest (a
/// `CronJob` whose `jobTemplate` is the Job, or a `Job`): the one container's
/// image, arguments, environment, user and mounts.
struct IndexedJob {
    struct Mount {
        var volume: String
        var path: String
        var subPath: String?
        var readOnly: Bool
    }

    enum Volume: Equatable {
        case claim(String)
        case emptyDir
    }

    var completions: Int
    var parallelism: Int?
    var image: String
    var args: [String]
    var workingDir: String?
    var environment: [(name: String, value: String)]
    var user: Int
    var group: Int
    var runAsNonRoot: Bool
    var readOnlyRootFilesystem: Bool
    var allowPrivilegeEscalation: Bool
    var dropsAllCapabilities: Bool
    var mounts: [Mount]
    var volumes: [String: Volume]

    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    init(_ manifest: YAMLValue) throws {
        func need<T>(_ value: T?, _ what: String) throws -> T {
            guard let value else { throw Unreadable(description: "the manifest has no \(what) of the expected kind") }
            return value
        }
        let kind = try need(manifest["kind"]?.string, "kind")
        let job = try need(kind == "CronJob" ? manifest["spec"]?["jobTemplate"]?["spec"] : kind == "Job" ? manifest["spec"] : nil, "Job spec")
        guard job["completionMode"]?.string == "Indexed" else { throw Unreadable(description: "the Job's completionMode is not Indexed") }
        completions = try need(job["completions"]?.int, "spec.completions")
        parallelism = job["parallelism"]?.int
        let pod = try need(job["template"]?["spec"], "pod template")
        let containers = try need(pod["containers"]?.items, "containers")
        guard containers.count == 1, let container = containers.first else {
            throw Unreadable(description: "the pod has \(containers.count) containers, and the test runs one")
        }
        guard container["command"] == nil else { throw Unreadable(description: "the container sets a command; the image's entrypoint is reckon") }
        image = try need(container["image"]?.string, "image")
        args = try need(container["args"]?.items, "args").map { try need($0.string, "args as strings") }
        workingDir = container["workingDir"]?.string
        environment = try (container["env"]?.items ?? []).map {
            (try need($0["name"]?.string, "env name"), try need($0["value"]?.string, "env value (valueFrom is not run)"))
        }
        // The container's securityContext wins over the pod's, key by key.
        let podSecurity = pod["securityContext"]
        let security = container["securityContext"]
        func setting(_ key: String) -> YAMLValue? { security?[key] ?? podSecurity?[key] }
        user = try need(setting("runAsUser")?.int, "runAsUser")
        group = setting("runAsGroup")?.int ?? 0
        runAsNonRoot = setting("runAsNonRoot")?.bool ?? false
        readOnlyRootFilesystem = security?["readOnlyRootFilesystem"]?.bool ?? false
        allowPrivilegeEscalation = security?["allowPrivilegeEscalation"]?.bool ?? true
        dropsAllCapabilities = security?["capabilities"]?["drop"]?.items?.contains(.scalar("ALL")) ?? false
        mounts = try (container["volumeMounts"]?.items ?? []).map {
            Mount(
                volume: try need($0["name"]?.string, "volumeMount name"), path: try need($0["mountPath"]?.string, "mountPath"),
                subPath: $0["subPath"]?.string, readOnly: $0["readOnly"]?.bool ?? false)
        }
        var volumes: [String: Volume] = [:]
        for volume in try need(pod["volumes"]?.items, "volumes") {
            let name = try need(volume["name"]?.string, "volume name")
            if let claim = volume["persistentVolumeClaim"]?["claimName"]?.string {
                volumes[name] = .claim(claim)
            } else if volume["emptyDir"] != nil {
                volumes[name] = .emptyDir
            } else {
                throw Unreadable(description: "the volume '\(name)' is neither a persistentVolumeClaim nor an emptyDir")
            }
        }
        self.volumes = volumes
        for mount in mounts where volumes[mount.volume] == nil {
            throw Unreadable(description: "the mount at \(mount.path) names the volume '\(mount.volume)', which the pod does not have")
        }
    }

    /// The environment of completion `index`: the container's `env` and the
    /// `JOB_COMPLETION_INDEX` the Job controller adds.
    func environment(index: Int) -> [String: String] {
        var result = ["JOB_COMPLETION_INDEX": String(index)]
        for (name, value) in environment { result[name] = value }
        return result
    }

    /// The arguments of completion `index`, `$(…)` expanded as Kubernetes does.
    func arguments(index: Int) -> [String] {
        args.map { expandKubernetesReferences($0, environment(index: index)) }
    }
}
