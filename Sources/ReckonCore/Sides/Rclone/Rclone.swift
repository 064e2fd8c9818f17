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

    /// What the process decides for rclone: the environment it starts with
    /// (`environment` laid over it), and where its list of files goes.
    package var process: ProcessSettings
    /// An explicit path to rclone; nil finds `rclone` on the `PATH` of `environment` merged over the process's child environment.
    package var executable: String?
    /// An rclone config file (`--config`); nil leaves rclone's default.
    package var config: String?
    /// Extra flags, each on the read-only list (`readOnlyFlags`).
    package private(set) var flags: [String]
    /// Variables added to the process's child environment for rclone.
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
        process: ProcessSettings = ProcessSettings(), executable: String? = nil, config: String? = nil, flags: [String] = [],
        environment: [String: String] = [:]
    ) throws(Failure) {
        self.process = process
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
        do { folder = try PrivateFolder.make(prefix: "reckon-rclone", process: process) } catch {
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
}
