import Foundation

/// A folder in an rclone remote (`gdrive:60dMemo`): how rclone reaches it,
/// and where reckon keeps the memo files it downloaded.
package struct RcloneSide: SideKind, WrittenSide, CachedSide, Hashable {
    package static let name = "rclone"
    package static let description = "rclone remote"
    package static let japaneseDescription = "rclone のリモート"
    /// The connection string may hold a secret; the config file and the
    /// flags are kept in a plan, so apply reaches the remote as plan did.
    package static let definitionKeys = [
        DefinitionKey("remote", holds: .text, isSecret: true), DefinitionKey("config", holds: .path, planKey: "rcloneConfig"),
        DefinitionKey("flags", holds: .strings, planKey: "rcloneFlags"), DefinitionKey("timeouts", holds: .object(timeoutKeys)),
        DefinitionKey("transfers", holds: .number)
    ]
    /// The keys of a side's `"timeouts"`.
    package static let timeoutKeys: Set<String> = ["connect", "io", "call"]

    /// `name:path` or `:backend,options:path`, as the user gave it.
    package var remote: String
    /// An rclone config file; nil for rclone's own.
    package var config: String?
    /// Extra rclone flags, each on the read-only list.
    package var flags: [String] = []
    /// The folder holding the caches of remotes, one folder each.
    package var cache: URL
    /// Whether `cache` is a temporary folder, gone after this run.
    package var cacheIsTemporary = false
    /// Ignore what is cached for this run, and download every memo file.
    package var refresh = false
    /// rclone's `--contimeout` and `--timeout`, and reckon's limit on one call, in seconds.
    package var connectTimeout = 15
    package var ioTimeout = 60
    package var callLimit = 600
    /// How many files rclone downloads at once (`--transfers`); nil: a `--transfers`
    /// in `flags`, else reckon's number for the backend (`Rclone.transfers(backend:)`).
    package var transfers: Int?

    /// The most parallel downloads a definition may ask for.
    package static let transfersLimit = 64

    package init(remote: String, cache: URL) {
        self.remote = remote
        self.cache = cache
    }

    package static func read(_ object: [String: JSONValue], key: String, with reader: DefinitionReader) throws(DefinitionError) -> (
        path: String, kind: Self
    ) {
        if object["path"] != nil { throw reader.fail("\(key).path", "is not read for a side of kind \"rclone\"; name the folder with \"remote\"") }
        let remote = try reader.string(object, "remote", in: key, required: true)!
        guard !remote.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }), remote.contains(":") else {
            throw reader.fail("\(key).remote", "must be an rclone remote such as \"gdrive:60dMemo\", with no control character")
        }
        // The cache folder is set once the whole definition is read.
        var side = RcloneSide(remote: remote, cache: reader.base)
        side.config = try reader.string(object, "config", in: key, required: false).map { reader.url($0).path }
        if let value = object["flags"] {
            guard case .array(let items) = value else { throw reader.fail("\(key).flags", "must be an array of strings") }
            for (position, item) in items.enumerated() {
                guard case .string(let flag) = item else { throw reader.fail("\(key).flags[\(position)]", "must be a string") }
                side.flags.append(flag)
            }
            do { _ = try Rclone.checked(side.flags) } catch { throw reader.fail("\(key).flags", error.sentence) }
        }
        if let value = object["transfers"] {
            guard let number = value.double, number == number.rounded(), (1...Double(transfersLimit)).contains(number) else {
                throw reader.fail("\(key).transfers", "must be a whole number of parallel downloads from 1 to \(transfersLimit)")
            }
            guard Rclone.flagValue("--transfers", in: side.flags) == nil else {
                throw reader.fail("\(key).transfers", "is given twice: once here and once as --transfers in \"flags\"; keep one")
            }
            side.transfers = Int(number)
        }
        if let value = object["timeouts"] {
            let timeouts = try reader.object(value, "\(key).timeouts", allowed: timeoutKeys)
            for (field, keyPath) in [("connect", \RcloneSide.connectTimeout), ("io", \.ioTimeout), ("call", \.callLimit)] {
                guard let number = timeouts[field] else { continue }
                guard let seconds = number.double, seconds == seconds.rounded(), (1...86_400).contains(seconds) else {
                    throw reader.fail("\(key).timeouts.\(field)", "must be a whole number of seconds from 1 to 86400")
                }
                side[keyPath: keyPath] = Int(seconds)
            }
        }
        return (Rclone.masked(remote), side)
    }

    /// A remote is reached again only from a plan that keeps it whole: one
    /// whose connection string holds no secret; its cache is the temporary
    /// root of `process`.
    package static func reopen(_ planned: PlanSide, process: ProcessSettings) -> RcloneSide? {
        guard let remote = planned.location else { return nil }
        var side = RcloneSide(remote: remote, cache: URL(fileURLWithPath: process.temporaryRoot))
        side.cacheIsTemporary = true
        if case .text(let config)? = planned.kept["rcloneConfig"] { side.config = config }
        if case .list(let flags)? = planned.kept["rcloneFlags"] { side.flags = flags }
        return side
    }

    /// `gdrive:` + `memos/…` is `gdrive:memos/…`, as rclone names it.
    package static func join(_ root: String, _ inside: String) -> String? {
        root.hasSuffix(":") && isRemote(root) ? root + inside : nil
    }

    package func open(_ spec: SideSpec, limits: ReadLimits, process: ProcessSettings) -> any MemoStore {
        RcloneStore(spec, limits: limits, process: process)
    }

    /// The folder on this machine a `:local:` remote names (`:local:/path`,
    /// `:local,options:/path`): outputs and the cache may not land in it.
    package func definitionEntry(relativeTo folder: URL) -> [String: JSONValue] {
        var entry: [String: JSONValue] = ["kind": .string(Self.name), "remote": .string(remote)]
        if let config { entry["config"] = .string(config) }
        if let transfers { entry["transfers"] = .number(String(transfers)) }
        return entry
    }

    package var localURL: URL? {
        guard remote.hasPrefix(":local:") || remote.hasPrefix(":local,"), let colon = remote.dropFirst().firstIndex(of: ":") else { return nil }
        let path = String(remote[remote.index(after: colon)...])
        return path.hasPrefix("/") ? URL(fileURLWithPath: path) : nil
    }

    /// A hash of the connection string, so no secret shows.
    package var place: String { "sha256:" + Rclone.cacheName(of: remote) }

    package var lastingCache: URL? { cacheIsTemporary ? nil : cache }

    package mutating func useCache(_ folder: URL, temporary: Bool) {
        cache = folder
        cacheIsTemporary = temporary
    }

    package mutating func refreshCache() { refresh = true }

    package func planned() -> PlannedPlace {
        var kept: [String: PlanSide.Kept] = ["rcloneFlags": .list(flags)]
        if let config { kept["rcloneConfig"] = .text(config) }
        return PlannedPlace(location: Rclone.masked(remote) == remote ? remote : nil, kept: kept)
    }

    package func fileAccess(shown: String, limits: ReadLimits, process: ProcessSettings) throws(MemoFolderError) -> any FileAccess {
        try RcloneFileAccess(self, shown: shown, limits: limits, process: process)
    }

    package func lockPlace(shown: String) throws(TargetLock.Refusal) -> String { "rclone " + place }

    /// A remote's connection string with its secrets masked, as any text.
    package static func shown(_ text: String) -> String { Rclone.masked(text) }

    /// A remote named on the command line, its cache the one-shot cache.
    package static func claim(_ word: String, _ given: CommandLineWord) -> (shown: String, kind: RcloneSide)? {
        guard isRemote(word) else { return nil }
        let (folder, temporary) = given.cache()
        var side = RcloneSide(remote: word, cache: folder)
        side.cacheIsTemporary = temporary
        side.refresh = given.refresh
        return (Rclone.masked(word), side)
    }

    /// A remote is named by its name alone, which rclone reads in UTF-8 only.
    package static func notNamedInUTF8(_ word: String) -> String? {
        isRemote(word) ? "an rclone remote is named in UTF-8 only" : nil
    }

    /// A connection string's parameters may hold a secret in any of many
    /// shapes (pass=, a password in a URL, a header): a definition file
    /// keeps none of them.
    package static func notKeptInDefinition(_ word: String) -> String? {
        guard let parameters = word.wholeMatch(of: /:?[^:\/]*,[^:]*:.*/), parameters.output.isEmpty == false else { return nil }
        return
            "a connection string with parameters, which may hold a secret that a definition file must not keep; set the remote up with 'rclone config' and give its name (gdrive:60dMemo)"
    }

    /// Whether a path on the command line names an rclone remote (`name:path`
    /// or `:backend,options:path`) rather than a file: a path that exists
    /// wins, and one starting with `/` or `.` is a path.
    package static func isRemote(_ path: String) -> Bool {
        guard FileKind(path: path) == .missing, !path.hasPrefix("/"), !path.hasPrefix(".") else { return false }
        return path.firstMatch(of: /^(:[A-Za-z0-9_]+(,[^:]*)?|[A-Za-z0-9_][A-Za-z0-9_. -]*):/) != nil
    }
}

extension SideKind where Self == RcloneSide {
    /// A folder in an rclone remote.
    package static func rclone(_ side: RcloneSide) -> RcloneSide { side }
}
