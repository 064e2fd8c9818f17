import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The one wrapper around the `rclone` binary. It runs rclone with an
/// argument array (never a shell), stdin from /dev/null, read-safe global
/// flags and a time limit per call, and turns every failure into a
/// `Failure` with a sentence and rclone's own last line, secrets masked.
/// `run` runs only read commands: `cat`, `lsjson`, `config dump`,
/// `listremotes`, and `copy` from the remote into a local folder. A command that writes to a
/// remote runs only with a `WriteGrant`, which only apply and undo hold.
package struct Rclone: Sendable {
    /// A failed call: what went wrong in words, and rclone's last line.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package enum Kind: Sendable, Equatable {
            /// rclone ran and exited with this code (or was ended by a signal: 128 + signal).
            case exit(Int32)
            /// No rclone binary where reckon looked.
            case notInstalled
            /// The call took longer than `callLimit`; rclone was stopped.
            case timedOut
            /// rclone logged `errorLimit` errors in the call; it was stopped.
            case tooManyErrors
            /// A flag not on the read-only list, or a name rclone cannot be given.
            case refused
            /// reckon's own side failed: a temporary file, an output it cannot read.
            case local
        }

        package var kind: Kind
        /// The sentence without rclone's line, e.g. "rclone could not reach the remote (exit 5: …)".
        package var sentence: String
        /// rclone's last non-empty stderr line (masked), or "".
        package var lastLine: String
        /// The last error rclone logged for each file it named (masked), e.g.
        /// `a.json`: "Failed to copy: corrupted on transfer: sizes differ 10 vs 12".
        package var objectErrors: [String: String] = [:]

        /// Whether reckon stopped rclone, or a signal ended it, rather than rclone ending by itself.
        package var wasStopped: Bool {
            switch kind {
            case .timedOut, .tooManyErrors: true
            case .exit(let code): code >= 128
            default: false
            }
        }

        /// rclone's exit code, when it ran to an exit.
        package var exitCode: Int32? {
            if case .exit(let code) = kind { code } else { nil }
        }

        /// The sentence, then rclone's own last line.
        package var message: String { lastLine.isEmpty ? sentence : "\(sentence): \(lastLine)" }
        package var description: String { message }

        package init(_ kind: Kind, _ sentence: String, lastLine: String = "") {
            self.kind = kind
            self.sentence = sentence
            self.lastLine = lastLine
        }
    }

    /// One entry of `rclone lsjson`.
    package struct Entry: Sendable, Equatable {
        package var name: String
        /// Relative to the listed folder.
        package var path: String
        /// -1 when the backend does not know (a Google Doc).
        package var size: Int64
        /// Exactly as rclone gives it (sftp: seconds; Drive: milliseconds).
        package var modTime: String
        package var isDir: Bool
        /// Small hex letters, when asked for and the backend gave one.
        package var md5: String?
        /// The backend's own ID (Drive), which tells two entries of one name apart.
        package var id: String?
    }

    /// What one `copy` fetched.
    package struct Transfer: Sendable, Equatable {
        /// Names rclone logged as copied ("Copied (new)" / "(replaced existing)"), in its order.
        package var fetched: [String]
        /// rclone's own final count of transfers (its stats), which equals `fetched.count`.
        package var transfers: Int
        /// Bytes rclone counted as transferred.
        package var bytes: Int64
        /// Files rclone found already equal in the local folder (size and time) and skipped.
        package var checks: Int
    }

    /// An explicit path to rclone; nil finds `rclone` on the `PATH` of `environment` merged over this process's.
    package var executable: String?
    /// An rclone config file (`--config`); nil leaves rclone's default.
    package var config: String?
    /// Extra flags, each on the read-only list (`readOnlyFlags`).
    package private(set) var flags: [String]
    /// Variables added to this process's environment for rclone.
    package var environment: [String: String]
    /// rclone's `--contimeout`.
    package var connectTimeout: Duration = .seconds(15)
    /// rclone's `--timeout` (idle time on an open connection).
    package var ioTimeout: Duration = .seconds(60)
    /// The longest one call may take before reckon stops rclone.
    package var callLimit: Duration = .seconds(600)
    /// How long rclone has after SIGTERM before SIGKILL.
    package var grace: Duration = .seconds(3)
    /// rclone's `--low-level-retries` (one HTTP or SSH operation).
    package var lowLevelRetries = 3
    /// rclone's `--retries` (a whole command); 1 means one attempt, and the next run resumes.
    package var retries = 1
    /// rclone's `--transfers` for `copy`: how many files it downloads at once.
    /// nil leaves rclone's own (4), or the one in `flags`, which always wins.
    package var transfers: Int?
    /// Stops a call once rclone has logged this many errors: after a
    /// connection drops, rclone 1.60 goes on trying each remaining file
    /// (tens of seconds each over sftp), so without it only `callLimit`
    /// ends the call. nil: no such limit.
    package var errorLimit: Int?

    /// Checks `flags` against the read-only list; refuses any other with a sentence naming it.
    package init(
        executable: String? = nil, config: String? = nil, flags: [String] = [],
        environment: [String: String] = [:]
    ) throws(Failure) {
        self.executable = executable
        self.config = config
        self.flags = try Self.checked(flags)
        self.environment = environment
    }

    // MARK: - Flags

    /// Flags reckon passes on, each of which only changes how rclone reads:
    /// the value tells whether it takes a value.
    package static let readOnlyFlags: [String: Bool] = [
        "--fast-list": false,
        "--tpslimit": true,
        "--tpslimit-burst": true,
        "--bwlimit": true,
        "--checkers": true,
        "--transfers": true,
        "--user-agent": true,
        "--buffer-size": true,
        "--ca-cert": true,
        "--drive-shared-with-me": false,
        "--drive-root-folder-id": true,
        "--drive-scope": true,
        "--drive-team-drive": true,
        "--drive-impersonate": true,
        "--drive-service-account-file": true,
        "--drive-client-id": true,
        "--drive-skip-shortcuts": false,
        "--drive-skip-gdocs": false,
        "--drive-acknowledge-abuse": false,
        "--drive-pacer-min-sleep": true,
        "--drive-pacer-burst": true,
        "--s3-provider": true,
        "--s3-region": true,
        "--s3-endpoint": true,
        "--sftp-known-hosts-file": true,
        "--sftp-key-file": true
    ]

    /// The flags unchanged, or the first one not on the read-only list, or
    /// with a value rclone would not take (`checkValue`), refused.
    package static func checked(_ flags: [String]) throws(Failure) -> [String] {
        var index = 0
        while index < flags.count {
            let flag = flags[index]
            let name = flag.split(separator: "=", maxSplits: 1).first.map(String.init) ?? flag
            guard flag.hasPrefix("--"), let takesValue = readOnlyFlags[name] else {
                let allowed = readOnlyFlags.keys.sorted().joined(separator: ", ")
                throw Failure(
                    .refused, "reckon does not pass the rclone flag \(masked(name)): only flags that change how rclone reads are allowed (\(allowed))"
                )
            }
            if takesValue && !flag.contains("=") {
                guard index + 1 < flags.count else {
                    throw Failure(.refused, "the rclone flag \(name) needs a value after it")
                }
                index += 1
                try checkValue(flags[index], of: name)
            } else if flag.contains("=") {
                try checkValue(String(flag.dropFirst(name.count + 1)), of: name)
            }
            index += 1
        }
        return flags
    }

    /// The value given to `flag` in `flags` (`--transfers 8` or `--transfers=8`), the last one if
    /// given twice, as rclone reads them; nil when it is not given.
    package static func flagValue(_ flag: String, in flags: [String]) -> String? {
        var found: String?
        var index = 0
        while index < flags.count {
            let name = flags[index].split(separator: "=", maxSplits: 1).first.map(String.init) ?? flags[index]
            let inline = flags[index].count > name.count
            if name == flag && inline { found = String(flags[index].dropFirst(flag.count + 1)) }
            // A flag's value is never read as a flag.
            if readOnlyFlags[name] == true && !inline {
                if name == flag && index + 1 < flags.count { found = flags[index + 1] }
                index += 1
            }
            index += 1
        }
        return found
    }

    /// How many files reckon has rclone download at once from a backend
    /// when neither the definition nor its flags say: what a careful rclone
    /// user would pick. sftp: 8, under OpenSSH's default `MaxStartups` of 10
    /// connections being opened at once (rclone opens one per transfer).
    /// Drive: rclone's 4, since its pacer allows about 10 calls a second
    /// whatever the count, and more only brings 403 rate-limit errors. A
    /// folder on this machine (`local`, `alias`): 8. Any other: rclone's 4.
    package static func transfers(backend: String?) -> Int {
        switch backend {
        case "sftp", "local", "alias": 8
        default: 4
        }
    }

    /// The flags reckon puts before every command.
    package var globalFlags: [String] {
        var result = [
            "--contimeout", Self.text(connectTimeout), "--timeout", Self.text(ioTimeout),
            "--low-level-retries", String(lowLevelRetries), "--retries", String(retries),
            "--ask-password=false", "--use-json-log"
        ]
        if let config { result += ["--config", config] }
        return result + flags
    }

    /// A duration as rclone reads one, in whole milliseconds.
    static func text(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)ms"
    }

    // MARK: - Commands

    /// The first `limit + 1` bytes of a remote file, so that a caller can
    /// tell a file over the limit. (A remote folder given here is every file
    /// in it, as `rclone cat` does.)
    package func cat(_ path: String, limit: Int64) throws(Failure) -> Data {
        try run(["cat", "--count", String(limit < Int64.max ? limit + 1 : -1), "--", path]).stdout
    }

    /// One folder's entries (`rclone lsjson`, not recursive), with MD5 when
    /// `hash` is set: pass it only where `listingCarriesMD5` says it is free.
    package func lsjson(_ path: String, filesOnly: Bool, hash: Bool) throws(Failure) -> [Entry] {
        var arguments = ["lsjson", "--no-mimetype"]
        if filesOnly { arguments.append("--files-only") }
        if hash { arguments += ["--hash-type", "MD5"] }
        let output = try run(arguments + ["--", path])
        return try Self.entries(from: output.stdout)
    }

    /// Reads `rclone lsjson` output with reckon's strict parser.
    package static func entries(from data: Data) throws(Failure) -> [Entry] {
        func bad(_ reason: String) -> Failure { Failure(.local, "rclone lsjson gave a listing reckon cannot read", lastLine: reason) }
        let document: JSONDocument
        do { document = try JSONParser.parse(data) } catch { throw bad(error.reason) }
        guard case .array(let items) = document.value else { throw bad("it is \(document.value.typeName), not an array") }
        var entries: [Entry] = []
        entries.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard case .object(let fields) = item,
                case .string(let path)? = fields["Path"], case .string(let name)? = fields["Name"],
                case .number(let sizeText)? = fields["Size"], let size = Int64(sizeText),
                case .string(let modTime)? = fields["ModTime"], case .bool(let isDir)? = fields["IsDir"]
            else { throw bad("entry \(index) lacks Path, Name, Size, ModTime or IsDir") }
            var md5: String?
            if case .object(let hashes)? = fields["Hashes"], case .string(let value)? = hashes["md5"] ?? hashes["MD5"], !value.isEmpty {
                md5 = value.lowercased()
            }
            var id: String?
            if case .string(let value)? = fields["ID"] { id = value }
            entries.append(Entry(name: name, path: path, size: size, modTime: modTime, isDir: isDir, md5: md5, id: id))
        }
        return entries
    }

    /// Fetches the named files (relative to `remoteFolder`, one level or
    /// deeper) into `localFolder` with ONE `rclone copy --files-from-raw`.
    /// `--files-from-raw`, not `--files-from`, so that a name starting with
    /// `#` or `;` or with spaces at either end is taken as it is; a name
    /// holding a line break cannot be written in the list and is refused.
    /// Names rclone does not find are skipped by rclone without an error:
    /// compare `fetched` with what was asked. A file already in
    /// `localFolder` with the same size and time is skipped (`checks`), so
    /// give it an empty staging folder. On a Failure, what was fetched
    /// before it stays in `localFolder`.
    /// `checksum: false` passes `--ignore-checksum`: rclone then skips its
    /// own hash check after each file, which over sftp is one remote
    /// `md5sum` per file; the caller checks size and MD5 itself.
    /// `maxTransfer` stops the copy once that many bytes came (`--max-transfer`;
    /// rclone 1.60 takes no size filter beside `--files-from-raw`).
    /// `traverse: false` (`--no-traverse`) has rclone look each name up on its
    /// own (an sftp `stat`, a Drive query); `true` has it list the folder once
    /// and pick the names from the listing, which costs less when many of the
    /// folder's files are asked for. `copied` is told each name as soon as
    /// rclone logs it copied whole, while the rest are still downloading.
    /// `childRecord` is given rclone's pid (`ChildProcess.record`).
    package func copy(
        from remoteFolder: String, files: [String], into localFolder: URL,
        checksum: Bool = true, maxTransfer: Int64? = nil, traverse: Bool = false, childRecord: URL? = nil, copied: ((String) -> Void)? = nil
    ) throws(Failure) -> Transfer {
        for name in files where name.isEmpty || name.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\0" }) {
            throw Failure(.refused, "reckon cannot ask rclone for a file whose name is empty or holds a line break: \(name.debugDescription)")
        }
        guard !files.isEmpty else { return Transfer(fetched: [], transfers: 0, bytes: 0, checks: 0) }
        let folder: URL
        do { folder = try PrivateFolder.make(prefix: "reckon-rclone") } catch {
            throw Failure(.local, "reckon could not write the list of files for rclone", lastLine: error.description)
        }
        defer { PrivateFolder.remove(folder) }
        let list = folder.appendingPathComponent("files-from.txt")
        do { try Data(files.map { $0 + "\n" }.joined().utf8).write(to: list) } catch {
            throw Failure(.local, "reckon could not write the list of files for rclone", lastLine: errorWords(error))
        }
        // The folder starts empty: rclone need not list it or look for each file in it.
        // The definition's count, unless the flags name one (they come first, and rclone takes the last).
        let parallel = transfers.flatMap { Self.flagValue("--transfers", in: flags) == nil ? ["--transfers", String($0)] : nil } ?? []
        let arguments =
            ["copy", "--files-from-raw", list.path] + (traverse ? [] : ["--no-traverse"]) + ["--no-check-dest", "-v"] + parallel
            + (checksum ? [] : ["--ignore-checksum"]) + (maxTransfer.map { ["--max-transfer", "\($0)B"] } ?? []) + [
                "--", remoteFolder, localFolder.path
            ]
        let marker = Data(#""Copied ("#.utf8)
        let output = try run(
            arguments, childRecord: childRecord,
            eachLine: copied.map { copied in
                { line in
                    guard Self.firstIndex(of: marker, in: line, from: 0) != nil else { return }
                    let logged = Self.split(line, secrets: []).info
                    if let object = logged.first?.object, logged.first?.message.hasPrefix("Copied (") == true { copied(object) }
                }
            })
        var transfer = Transfer(fetched: [], transfers: 0, bytes: 0, checks: 0)
        var stats: [String: JSONValue]?
        for line in output.info {
            if line.message.contains("Copied ("), let object = line.object { transfer.fetched.append(object) }
            if let found = line.stats { stats = found }
        }
        transfer.transfers = stats.flatMap { Self.integer($0["transfers"]) } ?? transfer.fetched.count
        transfer.bytes = stats.flatMap { Self.integer($0["bytes"]) }.map(Int64.init) ?? 0
        transfer.checks = stats.flatMap { Self.integer($0["checks"]) } ?? 0
        return transfer
    }

    private static func integer(_ value: JSONValue?) -> Int? {
        if case .number(let text)? = value { Int(text) } else { nil }
    }

    // MARK: - Backends

    /// The backend type of a remote: the part after `:` in a connection
    /// string (`:sftp,host=h:` → `sftp`); for a named remote, its
    /// `RCLONE_CONFIG_<NAME>_TYPE` variable, else its `type` in
    /// `rclone config dump` (one call). nil when rclone does not know it.
    package func backendType(of remote: String) throws(Failure) -> String? {
        if remote.hasPrefix(":") {
            let rest = remote.dropFirst()
            return String(rest.prefix { $0 != "," && $0 != ":" })
        }
        let name = String(remote.prefix { $0 != "," && $0 != ":" })
        if let type = mergedEnvironment[Self.configVariable(name, "type")], !type.isEmpty { return type }
        let output = try run(["config", "dump"])
        guard case .object(let remotes)? = try? JSONParser.parse(output.stdout).value,
            case .object(let fields)? = remotes[name], case .string(let type)? = fields["type"]
        else { return nil }
        return type
    }

    /// Whether a backend's listing carries MD5 at no cost. sftp and local
    /// compute it by reading every file; others give none or another hash.
    package static func listingCarriesMD5(backend: String) -> Bool {
        ["drive", "s3", "google cloud storage", "gcs", "azureblob", "swift", "jottacloud"].contains(backend)
    }

    // MARK: - Names

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

    // MARK: - Running

    /// One line of rclone's log: JSON (`--use-json-log`) or plain text.
    package struct LogLine: Sendable {
        package var level: String
        package var message: String
        package var object: String?
        package var stats: [String: JSONValue]?

        /// The line as a person reads it.
        package var text: String { object.map { $0.isEmpty ? message : "\($0): \(message)" } ?? message }
    }

    /// What a finished call gave.
    package struct Output: Sendable {
        package var stdout: Data
        /// Lines of level notice and above, and lines that are not JSON, masked.
        package var log: [String]
        /// Lines of level info and below (with `-v`), not masked: they carry
        /// names and statistics, and rclone puts no parameters in them.
        package var info: [LogLine]
    }

    /// This process's environment with `environment` laid over it.
    package var mergedEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }

    /// Finds the binary: `executable`, else `rclone` in PATH's absolute
    /// folders (a relative entry such as `.` is skipped).
    package func resolvedExecutable() throws(Failure) -> String {
        let install = "install rclone (apt-get install rclone)"
        if let executable {
            guard access(executable, X_OK) == 0, FileKind(path: URL(fileURLWithPath: executable).resolvingSymlinksInPath().path).isRegular else {
                throw Failure(.notInstalled, "rclone is not at \(executable): \(install)")
            }
            return executable
        }
        for folder in (mergedEnvironment["PATH"] ?? "").split(separator: ":") where folder.hasPrefix("/") {
            let candidate = String(folder) + "/rclone"
            if access(candidate, X_OK) == 0, FileKind(path: URL(fileURLWithPath: candidate).resolvingSymlinksInPath().path).isRegular {
                return candidate
            }
        }
        throw Failure(.notInstalled, "rclone is not installed (no rclone on PATH): \(install)")
    }

    /// The commands that only read a remote; `copy` only into a local folder.
    package static let readCommands: Set<String> = ["cat", "lsjson", "config", "copy", "listremotes"]
    /// The commands that write to a remote, run only with a `WriteGrant`.
    package static let writeCommands: Set<String> = ["copyto", "moveto", "deletefile"]

    /// Whether `arguments` only read the remote: a read command, `config`
    /// only as `config dump`, and `copy` only into an absolute local path.
    static func onlyReads(_ arguments: [String]) -> Bool {
        guard let command = arguments.first, readCommands.contains(command) else { return false }
        switch command {
        case "config": return arguments.dropFirst().first == "dump"
        case "copy": return arguments.last?.hasPrefix("/") == true
        default: return true
        }
    }

    /// Runs rclone with the global flags and `arguments`, which must only
    /// read the remote (`onlyReads`): anything else is refused. stdout is
    /// kept in memory, or written to `stdoutFile` (made with mode 0600) for
    /// big outputs. Throws a Failure for any exit but 0, and stops rclone's
    /// process group (SIGTERM, then SIGKILL after `grace`) at `callLimit`.
    /// `eachLine` is given each whole line of rclone's stderr as it comes.
    /// rclone dies with the calling thread (`ChildProcess`), which waits for
    /// it; its pid is added to `childRecord`.
    @discardableResult
    package func run(
        _ arguments: [String], stdoutFile: URL? = nil, childRecord: URL? = nil, eachLine: ((Data) -> Void)? = nil
    ) throws(Failure) -> Output {
        guard Self.onlyReads(arguments) else {
            throw Failure(
                .refused,
                "reckon does not run rclone \(Self.masked(arguments.first ?? "")) here: it only reads remotes, and writes to one only in reckon apply and undo"
            )
        }
        return try launch(arguments, stdoutFile: stdoutFile, childRecord: childRecord, eachLine: eachLine)
    }

    /// Runs a command that writes to a remote (`writeCommands`, and what
    /// `run` runs), as `run` does; only apply and undo hold a grant.
    @discardableResult
    package func run(_ arguments: [String], grant: WriteGrant) throws(Failure) -> Output {
        guard let command = arguments.first, Self.writeCommands.contains(command) || Self.onlyReads(arguments) else {
            throw Failure(
                .refused,
                "reckon does not run rclone \(Self.masked(arguments.first ?? "")): it writes to a remote only with copyto, moveto and deletefile")
        }
        return try launch(arguments, stdoutFile: nil, childRecord: nil, eachLine: nil)
    }

    private func launch(_ arguments: [String], stdoutFile: URL?, childRecord: URL?, eachLine: ((Data) -> Void)?) throws(Failure) -> Output {
        // No secret on the command line: every local user can read it.
        let secretsMoved = Self.secretsMoved(arguments)
        // Flags are on the read-only list, which takes no secret; a local path starts with `/`.
        if let left = secretsMoved.arguments.first(where: { !$0.hasPrefix("-") && !$0.hasPrefix("/") && Self.masked($0) != $0 }) {
            throw Failure(
                .refused,
                "reckon puts no secret on rclone's command line, and cannot pass the one in \(Self.masked(left)) otherwise: give it as name,key=value:path or in an rclone config file"
            )
        }
        let path = try resolvedExecutable()
        // The pipes' ends are closed on exec: no other child started meanwhile holds one.
        let errPipe: (read: Int32, write: Int32)
        var outPipe: (read: Int32, write: Int32) = (-1, -1)
        do throws(ChildProcess.Failure) {
            errPipe = try ChildProcess.pipe()
            if stdoutFile == nil {
                do throws(ChildProcess.Failure) { outPipe = try ChildProcess.pipe() } catch {
                    close(errPipe.read)
                    close(errPipe.write)
                    throw error
                }
            }
        } catch {
            throw Failure(.local, "reckon could not make a pipe for rclone", lastLine: error.reason)
        }
        defer {
            close(errPipe.read)
            if outPipe.read >= 0 { close(outPipe.read) }
        }
        if let stdoutFile {
            outPipe.write = open(stdoutFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard outPipe.write >= 0 else {
                let reason = "\(stdoutFile.path): \(String(cString: strerror(errno)))"
                close(errPipe.write)
                throw Failure(.local, "reckon could not write rclone's output", lastLine: reason)
            }
        }
        let child: ChildProcess
        do {
            defer {
                close(errPipe.write)
                close(outPipe.write)
            }
            child = try ChildProcess.start(
                path, arguments: globalFlags + secretsMoved.arguments,
                environment: mergedEnvironment.merging(secretsMoved.environment) { _, secret in secret },
                stdout: outPipe.write, stderr: errPipe.write)
        } catch {
            throw Failure(.notInstalled, "rclone at \(path) could not be started (\(error.reason)): install rclone (apt-get install rclone)")
        }
        if let childRecord { child.record(in: childRecord, executable: ChildProcess.realPath(path)) }

        var reading: [Int32] = [errPipe.read]
        if stdoutFile == nil { reading.append(outPipe.read) }
        var stdout = Data()
        var stderr = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        let clock = ContinuousClock()
        let deadline = clock.now + callLimit
        var termAt: ContinuousClock.Instant?
        var killAt: ContinuousClock.Instant?
        var timedOut = false
        var ending: ChildProcess.Ending?
        var tooManyErrors = false
        var errors = 0
        let errorMarks = [Data(#""level":"error""#.utf8), Data(#""level":"critical""#.utf8)]
        let newline = Data([UInt8(ascii: "\n")])
        var scanned = 0
        // One loop reads both pipes and watches the clock: it ends when rclone
        // has exited and closed its pipes, or a bounded time after SIGKILL
        // (a child that left the group may hold a pipe open forever).
        while true {
            if ending == nil { ending = child.ended(waiting: false) }
            if ending != nil && reading.isEmpty { break }
            let now = clock.now
            if termAt == nil, let errorLimit, errors >= errorLimit {
                tooManyErrors = true
                termAt = now
                child.signalGroup(SIGTERM)
            }
            if termAt == nil, now >= deadline {
                timedOut = true
                termAt = now
                child.signalGroup(SIGTERM)
            }
            if let termAt, killAt == nil, now >= termAt + grace {
                killAt = now
                child.signalGroup(SIGKILL)
            }
            if let killAt, now >= killAt + .seconds(2) { break }
            var fds = reading.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), 50)
            guard ready > 0 else { continue }
            for entry in fds where entry.revents != 0 {
                let count = read(entry.fd, &buffer, buffer.count)
                if count > 0 {
                    if entry.fd == errPipe.read {
                        stderr.append(contentsOf: buffer[0..<count])
                        if errorLimit != nil || eachLine != nil {
                            // Counts whole error lines as they come (over the raw bytes: Foundation's
                            // range(of:in:) copies the whole buffer on each call). A file that changed
                            // while rclone read it says nothing of the connection: it is not counted.
                            while let end = Self.firstIndex(of: newline, in: stderr, from: scanned) {
                                let line = stderr.subdata(in: scanned..<end)
                                eachLine?(line)
                                if errorLimit != nil, errorMarks.contains(where: { Self.firstIndex(of: $0, in: line, from: 0) != nil }),
                                    !Self.saysTheSourceChanged(String(decoding: line, as: UTF8.self))
                                {
                                    errors += 1
                                }
                                scanned = end + 1
                            }
                        }
                    } else {
                        stdout.append(contentsOf: buffer[0..<count])
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    reading.removeAll { $0 == entry.fd }
                }
            }
        }
        for _ in 0..<20 where ending == nil {
            usleep(50_000)
            ending = child.ended(waiting: false)
        }
        guard let ending else {
            throw Failure(.timedOut, "rclone did not stop after SIGKILL within the time limit reckon gives one call")
        }

        let secrets = arguments.flatMap(Self.secretValues(in:))
        let (shownLog, info, objectErrors) = Self.split(stderr, secrets: secrets)
        var log = shownLog
        // rclone names a remote as it was run: shown as the user gave it, masked.
        for (given, run) in zip(arguments, secretsMoved.arguments) where given != run {
            let pathLength = ConnectionString(given)?.path.count ?? 0
            let shown = Self.masked(String(given.dropLast(pathLength)))
            log = log.map { $0.replacingOccurrences(of: String(run.dropLast(pathLength)), with: shown) }
        }
        func failure(_ kind: Failure.Kind, _ sentence: String) -> Failure {
            var failure = Failure(kind, sentence, lastLine: log.last ?? "")
            failure.objectErrors = objectErrors
            return failure
        }
        if tooManyErrors {
            throw failure(.tooManyErrors, "rclone was stopped after \(counted(errors, "error")) in one call (the remote may have stopped answering)")
        }
        if timedOut {
            throw failure(.timedOut, "rclone took longer than the \(Self.seconds(callLimit)) reckon gives one call, and was stopped")
        }
        guard ending == .exited(0) else {
            let signalled = if case .signalled = ending { true } else { false }
            throw failure(.exit(ending.status), Self.sentence(exit: ending.status, signalled: signalled))
        }
        return Output(stdout: stdout, log: log, info: info)
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? "\(seconds) s" : String(format: "%.3f s", Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Whether rclone's error for a file says the file changed while rclone
    /// read it (rclone 1.60's size check after a copy, and its local backend's check).
    package static func saysTheSourceChanged(_ error: String) -> Bool {
        ["corrupted on transfer", "source file is being updated"].contains { error.contains($0) }
    }

    /// stderr split into lines a problem may show (masked), info lines, and
    /// the last error rclone logged for each object (file) it named (masked).
    package static func split(_ stderr: Data, secrets: [String]) -> (log: [String], info: [LogLine], objectErrors: [String: String]) {
        var log: [String] = []
        var info: [LogLine] = []
        var objectErrors: [String: String] = [:]
        for raw in stderr.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { continue }
            if text.hasPrefix("{"), case .object(let fields)? = try? JSONParser.parse(Data(raw)).value,
                case .string(let level)? = fields["level"], case .string(let message)? = fields["msg"]
            {
                var line = LogLine(level: level, message: message.trimmingCharacters(in: .whitespacesAndNewlines))
                if case .string(let object)? = fields["object"] { line.object = object }
                if case .object(let stats)? = fields["stats"] { line.stats = stats }
                if ["info", "debug"].contains(level) {
                    info.append(line)
                } else {
                    log.append(mask(line.text, secrets))
                    if ["error", "critical"].contains(level), let object = line.object { objectErrors[object] = mask(line.message, secrets) }
                }
            } else {
                // A plain line (a fatal error): drop Go's "2026/12/01 11:54:12 " prefix.
                log.append(mask(text.replacing(#/^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(\.\d+)? /#, with: ""), secrets))
            }
        }
        return (log, info, objectErrors)
    }

    private static func mask(_ text: String, _ secrets: [String]) -> String {
        secrets.reduce(masked(text)) { $0.replacingOccurrences(of: $1, with: "***") }
    }

    /// rclone 1.60's exit codes in words (lib/exitcode). Note that 1.60
    /// also exits 1 when it cannot open the remote at all (a refused login,
    /// an unknown remote name), through Go's log.Fatal.
    package static func sentence(exit code: Int32, signalled: Bool = false) -> String {
        switch code {
        case 0: "rclone succeeded (exit 0)"
        case 1: "rclone refused the command or could not open the remote (exit 1: a syntax or usage error, or a remote that could not be opened)"
        case 2: "rclone failed (exit 2: an error rclone does not put in a category)"
        case 3: "rclone did not find the folder (exit 3: directory not found)"
        case 4: "rclone did not find the file (exit 4: file not found)"
        case 5: "rclone could not reach the remote (exit 5: a temporary error; trying again later may work)"
        case 6: "rclone met errors it does not retry (exit 6: less serious errors, like Dropbox's 461 errors)"
        case 7: "rclone met a fatal error (exit 7: one that more tries will not fix, like a suspended account)"
        case 8: "rclone stopped at its transfer limit (exit 8: the limit set by --max-transfer was reached)"
        case 9: "rclone transferred no files (exit 9: the operation succeeded but no files were transferred)"
        default:
            signalled
                ? "rclone was ended by signal \(code - 128) (exit \(code))"
                : "rclone failed (exit \(code): a code rclone 1.60 does not document)"
        }
    }
}
