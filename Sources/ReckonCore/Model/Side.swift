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

    /// The file or folder on this machine that holds the side, if any:
    /// outputs may never land inside it.
    public var localURL: URL? {
        switch self {
        case .folder(let url): url
        case .store(let source): source.url
        }
    }

    /// Whether the side is a store, whose instants are kept to the millisecond.
    public var isStore: Bool {
        if case .store = self { true } else { false }
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

    /// Whether this side has anything that makes a run "trouble".
    public var hasTrouble: Bool {
        status != .ok || problems.contains { $0.severity == .error }
    }
}
