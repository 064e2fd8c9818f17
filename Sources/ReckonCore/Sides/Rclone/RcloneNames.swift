import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How rclone names remotes and where their secrets are: cache folders'
/// names, joined paths, connection strings, and masking.
extension Rclone {
    /// The first 16 hex digits of the SHA-256 of a remote string: a cache
    /// folder's name that never holds a secret.
    package static func cacheName(of remote: String) -> String {
        String(SHA256.hex(of: Data(remote.utf8)).prefix(16))
    }

    /// `remote` joined with a relative path: `gdrive:` + `a` → `gdrive:a`, `gdrive:x` + `a` → `gdrive:x/a`.
    package static func joined(_ remote: String, _ relative: String) -> String {
        guard !relative.isEmpty else { return remote }
        return remote.hasSuffix(":") || remote.hasSuffix("/") ? remote + relative : remote + "/" + relative
    }

    /// A connection string as rclone reads one (its `fspath.Parse`):
    /// `name,key=value,…:path` or `:backend,key=value,…:path`, a value in
    /// `"` or `'` when it holds `,` or `:` (a doubled quote inside is one).
    struct ConnectionString: Equatable {
        /// `gdrive`, or `:sftp` for a backend made on the fly.
        var name: String
        /// Each parameter's key, its text as written, and its value (quotes undone; `true` for a bare key).
        var parameters: [Parameter]
        var path: Substring

        struct Parameter: Equatable {
            var key: String
            var written: Substring
            var value: String
        }

        /// nil for a text that is not a remote with parameters (a plain
        /// `gdrive:path`, a local path, a flag) or that rclone would refuse.
        init?(_ text: String) {
            let nameStart = text.hasPrefix(":") ? text.index(after: text.startIndex) : text.startIndex
            guard let comma = text[nameStart...].firstIndex(where: { $0 == "," || $0 == ":" }), text[comma] == ",", comma > nameStart,
                text[nameStart..<comma].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == " ") }),
                text[nameStart] != "-"
            else { return nil }
            name = String(text[..<comma])
            parameters = []
            var rest = text[text.index(after: comma)...]
            while true {
                guard let stop = rest.firstIndex(where: { $0 == "=" || $0 == "," || $0 == ":" }) else { return nil }
                let key = rest[..<stop]
                guard !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else { return nil }
                var end = stop
                var value = "true"
                if rest[stop] == "=" {
                    let start = rest.index(after: stop)
                    if let quote = rest[start...].first, quote == "\"" || quote == "'" {
                        value = ""
                        var index = rest.index(after: start)
                        while true {
                            guard index < rest.endIndex else { return nil }
                            let next = rest.index(after: index)
                            if rest[index] == quote {
                                guard next < rest.endIndex, rest[next] == quote else {
                                    end = next
                                    break
                                }
                                value.append(quote)
                                index = rest.index(after: next)
                                continue
                            }
                            value.append(rest[index])
                            index = next
                        }
                        guard end < rest.endIndex, rest[end] == "," || rest[end] == ":" else { return nil }
                    } else {
                        guard let found = rest[start...].firstIndex(where: { $0 == "," || $0 == ":" }) else { return nil }
                        end = found
                        value = String(rest[start..<end])
                    }
                }
                parameters.append(Parameter(key: String(key), written: rest[..<end], value: value))
                let after = rest.index(after: end)
                if rest[end] == ":" {
                    path = rest[after...]
                    return
                }
                rest = rest[after...]
            }
        }
    }

    /// Whether a parameter's key names a secret, as `masked` finds them.
    static func isSecret(key: String) -> Bool {
        ("," + key + "=").firstMatch(of: secretName) != nil
    }

    /// The arguments with every secret parameter of a connection string
    /// taken out, and the variables that give them to rclone instead: a
    /// process's arguments are readable by any local user (`ps`), its
    /// environment only by its owner. `gdrive,token=T:path` becomes
    /// `gdrive:path` with `RCLONE_CONFIG_GDRIVE_TOKEN=T`; a backend made on
    /// the fly, which has no such variables, becomes a remote named for the
    /// hash of its other parameters: `:sftp,host=h,pass=P:path` is
    /// `reckon1a2b…,host=h:path` with `RCLONE_CONFIG_RECKON1A2B…_TYPE=sftp`
    /// and `…_PASS=P`.
    package static func secretsMoved(_ arguments: [String]) -> (arguments: [String], environment: [String: String]) {
        var environment: [String: String] = [:]
        let moved = arguments.map { argument -> String in
            guard !argument.hasPrefix("-"), let parsed = ConnectionString(argument), parsed.parameters.contains(where: { isSecret(key: $0.key) })
            else { return argument }
            let kept = ([parsed.name] + parsed.parameters.filter { !isSecret(key: $0.key) }.map { String($0.written) }).joined(separator: ",")
            var name = parsed.name
            if name.hasPrefix(":") {
                // Named for what stays on the command line, never for a secret.
                name = "reckon" + SHA256.hex(of: Data(kept.utf8)).prefix(16)
                environment[configVariable(name, "type")] = String(parsed.name.dropFirst())
            }
            for parameter in parsed.parameters where isSecret(key: parameter.key) {
                environment[configVariable(name, parameter.key)] = parameter.value
            }
            return name + kept.dropFirst(parsed.name.count) + ":" + parsed.path
        }
        return (moved, environment)
    }

    /// rclone's variable for one key of a named remote (its `ConfigToEnv`).
    static func configVariable(_ remote: String, _ key: String) -> String {
        "RCLONE_CONFIG_" + (remote + "_" + key).uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// Text with the value of every secret parameter masked: `pass=`,
    /// `password=`, `token=`, `key=`, `secret=`, `client_secret=` and
    /// any name ending in `_pass`, `_key`, `_token`, `_secret` …, quoted
    /// or not (`:sftp,host=h,pass=xyz:p` → `:sftp,host=h,pass=***:p`).
    package static func masked(_ text: String) -> String {
        var result = ""
        var rest = text[...]
        while let match = rest.firstMatch(of: secretName) {
            result += rest[..<match.range.upperBound]
            result += "***"
            rest = rest[match.range.upperBound...]
            rest = rest[valueEnd(in: rest)...]
        }
        return result + rest
    }

    /// The values of secret parameters in a text, to be masked wherever they turn up.
    static func secretValues(in text: String) -> [String] {
        var values: [String] = []
        var rest = text[...]
        while let match = rest.firstMatch(of: secretName) {
            rest = rest[match.range.upperBound...]
            let end = valueEnd(in: rest)
            var value = rest[..<end]
            if let quote = value.first, quote == "\"" || quote == "'" {
                value = value.dropFirst()
                if value.last == quote { value = value.dropLast() }
            }
            if value.count >= 3 { values.append(String(value)) }
            rest = rest[end...]
        }
        return values
    }

    /// A secret parameter's name and `=`, after the start or a `,` `:` `-` space, quote or brace.
    private static var secretName: Regex<Substring> {
        /(?i)(?:^|[,:\s"'{-])(?:[a-z0-9]+[_-])*(?:pass|password|token|key|secret|credentials|pem|sas_url)[0-9]*=/
    }

    /// Where a parameter's value ends: its closing quote (a doubled quote
    /// stays inside), or the next `,`, `:`, space or quote.
    private static func valueEnd(in text: Substring) -> Substring.Index {
        if text.first == "{" {
            // An unquoted JSON token: up to its closing brace.
            var depth = 0
            for index in text.indices {
                if text[index] == "{" { depth += 1 }
                if text[index] == "}" { depth -= 1 }
                if depth == 0 { return text.index(after: index) }
            }
            return text.endIndex
        }
        guard let quote = text.first, quote == "\"" || quote == "'" else {
            return text.firstIndex { $0 == "," || $0 == ":" || $0 == "\"" || $0 == "'" || $0.isWhitespace } ?? text.endIndex
        }
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            if text[index] == quote {
                let next = text.index(after: index)
                if next < text.endIndex, text[next] == quote {
                    index = text.index(after: next)
                    continue
                }
                return next
            }
            index = text.index(after: index)
        }
        return text.endIndex
    }

    /// Where `mark` first starts in `data` at or after `from`.
    static func firstIndex(of mark: Data, in data: Data, from: Int) -> Int? {
        data.withUnsafeBytes { haystack in
            mark.withUnsafeBytes { needle in
                guard let first = needle.first, let base = haystack.baseAddress else { return nil }
                var at = from
                while at + needle.count <= haystack.count {
                    guard let start = haystack[at...].firstIndex(of: first), start + needle.count <= haystack.count else { return nil }
                    if memcmp(base + start, needle.baseAddress!, needle.count) == 0 { return start }
                    at = start + 1
                }
                return nil
            }
        }
    }
}
