import Foundation

/// Which part a side plays: the local side is rclone's source, a remote its destination.
public enum SideRole: String, Sendable, Codable {
    case local
    case remote
}

/// Where one side is and what to call it.
public struct SideSpec: Sendable, Equatable {
    public var role: SideRole
    /// A short name, used in file names and in the report (`device`, `drive`).
    public var name: String
    /// What a person calls it ("this device", "Google Drive").
    public var label: String
    /// The path as the user wrote it, for reports (never resolved, so
    /// reports do not depend on where the command was run).
    public var path: String
    /// Where the side is and what kind of store holds it.
    public var location: SideLocation
    /// Marked `"readOnly": true`: `reckon apply` never writes it.
    public var readOnly = false

    public init(role: SideRole, name: String, label: String, path: String, location: SideLocation) {
        self.role = role
        self.name = name
        self.label = label
        self.path = path
        self.location = location
    }
}

/// Where a side is, and so which kind of store reads it.
public enum SideLocation: Sendable, Equatable {
    /// A memo folder on disk, or the folder above its `60dMemo/`, resolved.
    case folder(URL)
    /// The app's SQLite store, or an iPhone backup holding it.
    case store(StoreSource)
    /// A folder in an rclone remote (`gdrive:60dMemo`).
    case rclone(RcloneSource)

    /// The file or folder on this machine that holds the side, if any:
    /// outputs may never land inside it.
    public var localURL: URL? {
        switch self {
        case .folder(let url): url
        // A store file's folder, where SQLite keeps its -wal and -shm beside it.
        case .store(let source): source.isBackup ? source.url : source.url.deletingLastPathComponent()
        case .rclone(let source): source.localFolder
        }
    }

    /// Whether the side is a store, whose instants are kept to the millisecond.
    public var isStore: Bool {
        if case .store = self { true } else { false }
    }
}

/// Where an rclone remote's memo folder is, how rclone reaches it, and
/// where reckon keeps the memo files it downloaded.
public struct RcloneSource: Sendable, Hashable {
    /// `name:path` or `:backend,options:path`, as the user gave it.
    public var remote: String
    /// An rclone config file; nil for rclone's own.
    public var config: String?
    /// Extra rclone flags, each on the read-only list.
    public var flags: [String] = []
    /// The folder holding the caches of remotes, one folder each.
    public var cache: URL
    /// Whether `cache` is a temporary folder, gone after this run.
    public var cacheIsTemporary = false
    /// Ignore what is cached for this run, and download every memo file.
    public var refresh = false
    /// rclone's `--contimeout` and `--timeout`, and reckon's limit on one call, in seconds.
    public var connectTimeout = 15
    public var ioTimeout = 60
    public var callLimit = 600

    public init(remote: String, cache: URL) {
        self.remote = remote
        self.cache = cache
    }

    /// The folder on this machine a `:local:` remote names (`:local:/path`,
    /// `:local,options:/path`): outputs and the cache may not land in it.
    public var localFolder: URL? {
        guard remote.hasPrefix(":local:") || remote.hasPrefix(":local,"), let colon = remote.dropFirst().firstIndex(of: ":") else { return nil }
        let path = String(remote[remote.index(after: colon)...])
        return path.hasPrefix("/") ? URL(fileURLWithPath: path) : nil
    }

    /// The cache of a one-shot command: `$XDG_CACHE_HOME/reckon/`, then
    /// `$HOME/.cache/reckon/`, else a temporary folder (said to be one).
    public static func oneShotCache() -> (URL, temporary: Bool) {
        let environment = ProcessInfo.processInfo.environment
        if let folder = environment["XDG_CACHE_HOME"], folder.hasPrefix("/") {
            return (URL(fileURLWithPath: folder).appendingPathComponent("reckon"), false)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return (URL(fileURLWithPath: home).appendingPathComponent(".cache/reckon"), false)
        }
        let folder = (try? PrivateFolder.make(prefix: "reckon-cache")) ?? URL(fileURLWithPath: PrivateFolder.temporaryRoot)
        return (folder, true)
    }

    /// Whether a path on the command line names an rclone remote (`name:path`
    /// or `:backend,options:path`) rather than a file: a path that exists
    /// wins, and one starting with `/` or `.` is a path.
    public static func isRemote(_ path: String) -> Bool {
        guard FileKind(path: path) == .missing, !path.hasPrefix("/"), !path.hasPrefix(".") else { return false }
        return path.firstMatch(of: /^(:[A-Za-z0-9_]+(,[^:]*)?|[A-Za-z0-9_][A-Za-z0-9_. -]*):/) != nil
    }
}

/// Where the app's store is: a store file, or an iPhone backup folder to find it in.
public struct StoreSource: Sendable, Hashable {
    /// The store file (`default.store`), or the backup folder.
    public var url: URL
    public var isBackup: Bool
    /// The app's bundle or group id, to pick its store in a backup.
    public var app: String?
    public var model: StoreModel

    public init(url: URL, isBackup: Bool, app: String? = nil, model: StoreModel = StoreModel()) {
        self.url = url
        self.isBackup = isBackup
        self.app = app
        self.model = model
    }
}

/// How a remote's memo files were had in one run.
public struct CacheUse: Sendable, Equatable {
    public var fetched: Int
    public var fromCache: Int
    /// Whether the cache was a temporary folder, so the next run downloads everything again.
    public var temporary: Bool
}

public enum SideStatus: String, Sendable, Codable {
    /// Read whole.
    case ok
    /// Read, but not as it should be: its index could not be used, so its
    /// entries were rebuilt from the memo files.
    case degraded
    /// Could not be read at all; it has no counts.
    case failed
}

/// Everything read from one side: its index entries, its memo files and the
/// problems met. In a deep check it also holds the parsed memos.
public struct SideListing: Sendable {
    public var spec: SideSpec
    public var status: SideStatus
    /// Usable index entries by id (the first entry of a duplicated id).
    public var entries: IDMap<IndexEntry>
    /// Regular memo files by id, with how their names spell the id.
    public var files: IDMap<IDSpelling>
    /// What the deep check read of each memo file.
    public var memos: IDMap<MemoSummary>
    public var problems: [Problem]
    /// Counts taken by the fast path, which builds no entries.
    public var precounted: MemoCounts?
    /// Whether the entries were rebuilt from the memo files because
    /// `index.json` could not be used.
    public var rebuiltFromMemoFiles = false
    /// The bytes of every file judged damaged, as they were read, for the quarantine.
    public var damaged: [DamagedFile] = []
    /// For a remote read through a cache: how many memo files were downloaded and how many came from the cache.
    public var cacheUse: CacheUse?

    public init(spec: SideSpec, status: SideStatus = .ok, entries: IDMap<IndexEntry> = IDMap(), files: IDMap<IDSpelling> = IDMap(),
                memos: IDMap<MemoSummary> = IDMap(), problems: [Problem] = [], precounted: MemoCounts? = nil) {
        self.precounted = precounted
        self.spec = spec
        self.status = status
        self.entries = entries
        self.files = files
        self.memos = memos
        self.problems = problems
    }

    /// Counts from the index entries; nil when the side failed.
    public var counts: MemoCounts? {
        status == .failed ? nil : precounted ?? MemoCounts.aggregate(entries.values)
    }

    /// Ids that cannot be compared on this side, with the reasons.
    public var brokenIDs: [MemoID: [String]] {
        var result: [MemoID: [String]] = [:]
        for problem in problems where problem.severity == .error {
            if let id = problem.id { result[id, default: []].append(problem.message) }
        }
        return result
    }

    /// Whether the side failed only because `index.json` itself cannot be
    /// used (damaged, not a regular file, too large), so its memo files can
    /// stand in. A missing index or a newer schema is never guessed around.
    public var indexUnusable: Bool {
        status == .failed && problems.contains { problem in
            problem.isAboutIndex && [.corruptIndex, .notRegularFile, .link, .unreadableFile].contains(problem.kind)
        }
    }

    /// The listing with every problem's and damaged file's path taken from
    /// one folder further out (`60dMemo/…` when the files are nested there).
    func inside(_ folder: String) -> SideListing {
        var moved = self
        moved.problems = problems.map { $0.inside(folder) }
        moved.damaged = damaged.map { DamagedFile(path: joinPath(folder, $0.path), bytes: $0.bytes) }
        return moved
    }

    /// Whether this side has anything that makes a run "trouble".
    public var hasTrouble: Bool {
        status != .ok || problems.contains { $0.severity == .error }
    }
}
