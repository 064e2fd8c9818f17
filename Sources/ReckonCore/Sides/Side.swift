import Foundation

/// Where one side is and what to call it.
package struct SideSpec: Sendable, Equatable {
    package var role: SideRole
    /// A short name, used in file names and in the report (`device`, `drive`).
    package var name: String
    /// What a person calls it ("this device", "Google Drive").
    package var label: String
    /// The path as the user wrote it, for reports (never resolved, so
    /// reports do not depend on where the command was run).
    package var path: String
    /// Which kind of side it is and where: everything that differs by kind.
    package var kind: any SideKind
    /// Marked `"readOnly": true`: `reckon apply` never writes it.
    package var readOnly = false

    package init(role: SideRole, name: String, label: String, path: String, kind: some SideKind) {
        self.role = role
        self.name = name
        self.label = label
        self.path = path
        self.kind = kind
    }

    package static func == (a: SideSpec, b: SideSpec) -> Bool {
        a.role == b.role && a.name == b.name && a.label == b.label && a.path == b.path && a.readOnly == b.readOnly
            && SideKinds.same(a.kind, b.kind)
    }

    /// The side's path as it may be shown, its secrets masked.
    package var shownPath: String { SideKinds.shown(path) }

    /// The store that reads this side, in the process `process` describes.
    package func store(limits: ReadLimits, process: ProcessSettings = ProcessSettings()) -> any MemoStore {
        kind.open(self, limits: limits, process: process)
    }

    /// Why `reckon apply` may never write this side (a side marked
    /// read-only, the app's own store), as a case each language says; nil
    /// when it may.
    package var whyNotWritable: NotWritable? {
        if readOnly { return .readOnly }
        let kind = type(of: kind)
        return kind.holdsFiles ? nil : .kind(SideKindName(kind))
    }
}

/// How a remote's memo files were had in one run.
package struct CacheUse: Sendable, Equatable {
    package var fetched: Int
    package var fromCache: Int
    /// Whether the cache was a temporary folder, so the next run downloads everything again.
    package var temporary: Bool
}

package enum SideStatus: String, Sendable, Codable, CaseIterable {
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
package struct SideListing: Sendable {
    package var spec: SideSpec
    package var status: SideStatus
    /// Usable index entries by id (the first entry of a duplicated id).
    package var entries: IDMap<IndexEntry>
    /// Regular memo files by id, with how their names spell the id.
    package var files: IDMap<IDSpelling>
    /// What the deep check read of each memo file.
    package var memos: IDMap<MemoSummary>
    package var problems: [Problem]
    /// Counts taken by the fast path, which builds no entries.
    package var precounted: MemoCounts?
    /// Whether the entries were rebuilt from the memo files because
    /// `index.json` could not be used.
    package var rebuiltFromMemoFiles = false
    /// The bytes of every file judged damaged, as they were read, for the quarantine.
    package var damaged: [DamagedFile] = []
    /// For a remote read through a cache: how many memo files were downloaded and how many came from the cache.
    package var cacheUse: CacheUse?
    /// Steps of reading the side that a person sees timed beside the stages
    /// (an encrypted backup's key derivation), recorded by the load stage.
    package var stepTimings: [RunContext.Timing] = []

    package init(
        spec: SideSpec, status: SideStatus = .ok, entries: IDMap<IndexEntry> = IDMap(), files: IDMap<IDSpelling> = IDMap(),
        memos: IDMap<MemoSummary> = IDMap(), problems: [Problem] = [], precounted: MemoCounts? = nil
    ) {
        self.precounted = precounted
        self.spec = spec
        self.status = status
        self.entries = entries
        self.files = files
        self.memos = memos
        self.problems = problems
    }

    /// Counts from the index entries; nil when the side failed.
    package var counts: MemoCounts? {
        status == .failed ? nil : precounted ?? MemoCounts.aggregate(entries.values)
    }

    /// Ids that cannot be compared on this side, with the reasons.
    package var brokenIDs: [MemoID: [String]] {
        var result: [MemoID: [String]] = [:]
        // An entry that disagrees with its file leaves the memo comparable: the file is read.
        for problem in problems where problem.severity == .error && problem.kind != .indexDisagrees {
            if let id = problem.id { result[id, default: []].append(problem.message) }
        }
        return result
    }

    /// Whether the side failed only because `index.json` itself cannot be
    /// used (damaged, not a regular file, too large), so its memo files can
    /// stand in. A missing index or a newer schema is never guessed around.
    package var indexUnusable: Bool {
        status == .failed
            && problems.contains { problem in
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
    package var hasTrouble: Bool {
        status != .ok || problems.contains { $0.severity == .error }
    }
}

extension SideListing {
    /// The fingerprint of one memo as this listing holds it; nil when the side has no entry for it.
    package func fingerprint(of id: MemoID) -> Fingerprint? {
        entries[id].map { Fingerprint($0, digest: memos[id].map(Fingerprint.digest)) }
    }

    /// What `counts --json` prints: the counts (null when the index could
    /// not be read), the side's path, its status and its problems, each
    /// named under `given`, the path as the user gave it.
    package func countsJSON(given: String) -> JSONValue {
        .object([
            "active": counts.map { .integer($0.active) } ?? .null,
            "archived": counts.map { .integer($0.archived) } ?? .null,
            "path": .string(spec.path),
            "status": .string(status.rawValue),
            "problems": .array(problems.map { .string(joinPath(given, $0.path) + ": " + $0.message) })
        ])
    }
}
