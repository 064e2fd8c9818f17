import Foundation

/// A kind of side: a memo folder on disk, the app's store, or a folder in an
/// rclone remote. Everything that differs between kinds is answered here, so
/// outside `Sides/` no code asks which kind a side is, and a fourth kind (a
/// Drive API reader, an S3 bucket) is a new folder beside the three.
package protocol SideKind: Sendable, Equatable {
    /// The kind's name in a definition's `"kind"`, a plan and a baseline.
    static var name: String { get }
    /// What a person calls a side of this kind ("memo folder").
    static var description: String { get }
    /// The same in Japanese ("メモフォルダ").
    static var japaneseDescription: String { get }
    /// Why apply never writes a side of this kind, said of the side named
    /// `label` in `language` (`en`, `ja`); nil when apply may write it.
    static func neverWritten(_ label: String, language: String) -> String?
    /// The definition keys that only a side of this kind reads.
    static var definitionKeys: [String] { get }
    /// Reads a side of this kind from its object in a pipeline definition:
    /// the path shown for it (secrets masked) and the side.
    static func read(_ object: [String: JSONValue], key: String, with reader: DefinitionReader) throws(DefinitionError) -> (path: String, kind: Self)
    /// The side a plan names, remade from what the plan keeps; nil when the
    /// plan keeps too little to reach it again (a connection string's secret).
    static func reopen(_ planned: PlanSide) -> Self?
    /// Whether the side's memos are files that a plan tags and apply writes;
    /// false for a side whose memos are rows, read only through its store.
    static var holdsFiles: Bool { get }
    /// How a path inside a side of this kind is joined to the side's path,
    /// for messages; nil when this kind's rule does not apply.
    static func join(_ root: String, _ inside: String) -> String?

    /// The side's keys in a definition written into `folder` (`reckon
    /// init`): its kind and where it is, a path relative to the folder.
    func definitionEntry(relativeTo folder: URL) -> [String: JSONValue]
    /// Why the side cannot be told apart before a run, such as an iPhone
    /// backup holding several apps' stores when no app is named; nil when it can.
    var ambiguity: String? { get }
    /// The store that reads the side.
    func open(_ spec: SideSpec, limits: ReadLimits) -> any MemoStore
    /// The file or folder on this machine that holds the side, if any:
    /// outputs may never land inside it.
    var localURL: URL? { get }
    /// How a refusal names that folder ("the source folder device").
    func sourceFolder(shown path: String) -> String
    /// How finely the side keeps instants.
    var precision: InstantPrecision { get }
    /// Where the side's counts come from, given whether its entries were
    /// rebuilt from the memo files.
    func countsFrom(rebuilt: Bool) -> SideReport.CountsFrom
    /// Where the side is, for baselines and locks: the same place is the
    /// same side. Holds no secret.
    var place: String { get }
    /// Whether the side downloads files into a cache folder.
    var needsCache: Bool { get }
    /// The folder of downloaded files the side keeps between runs, if any.
    var lastingCache: URL? { get }
    /// Points the side's cache at `folder` (a definition's or a one-shot's).
    mutating func useCache(_ folder: URL, temporary: Bool)
    /// Makes the side download every file again, ignoring its cache.
    mutating func refreshCache()
    /// Gives the side, shown as `shown`, the ways to a password it may ask
    /// for (an encrypted iPhone backup's); nothing for a kind that asks none.
    mutating func usePasswords(_ sources: PasswordSources, shown: String)
    /// What a plan keeps to reach the side again, and why apply may never
    /// write it (nil when it may).
    func planned(label: String) -> PlannedPlace
    /// How apply reads and writes the side's files; throws why it cannot.
    func fileAccess(shown: String, limits: ReadLimits) throws(MemoFolderError) -> any FileAccess
    /// What the lock of a target that apply writes is named by; throws why
    /// the side is never a target.
    func lockPlace(shown: String) throws(TargetLock.Refusal) -> String
    /// What `reckon validate` checks of the side without the network.
    func offlineCheck(shown: String) -> OfflineCheck
}

/// What `reckon validate` found of one side without the network: why the
/// definition cannot run, what it checked, and what only a run can tell.
package struct OfflineCheck: Sendable {
    /// What is wrong, said of the side's `key` (or of the side); nil when nothing is.
    package var wrong: String?
    package var key: String?
    package var checked: [String] = []
    package var notChecked: [String] = []
}

extension SideKind {
    package static func join(_ root: String, _ inside: String) -> String? { nil }
    package static func neverWritten(_ label: String, language: String) -> String? { nil }
    package var needsCache: Bool { false }
    package var ambiguity: String? { nil }
    package var lastingCache: URL? { nil }
    package mutating func useCache(_ folder: URL, temporary: Bool) {}
    package mutating func refreshCache() {}
    package mutating func usePasswords(_ sources: PasswordSources, shown: String) {}
    package var precision: InstantPrecision { .exact }
    package func countsFrom(rebuilt: Bool) -> SideReport.CountsFrom { rebuilt ? .memoFiles : .index }
    package func sourceFolder(shown path: String) -> String { "the source folder \(path)" }
    package func offlineCheck(shown: String) -> OfflineCheck { OfflineCheck() }
}

/// Every kind of side reckon reads, in the order their path rules are tried.
package enum SideKinds {
    package static let all: [any SideKind.Type] = [AppStoreSide.self, RcloneSide.self, MemoFolderSide.self]

    /// The kind a definition, plan or baseline names; nil for one this reckon does not know.
    package static func named(_ name: String) -> (any SideKind.Type)? {
        all.first { $0.name == name }
    }

    /// The kinds' names as a definition spells them, the default first.
    package static var names: [String] { [MemoFolderSide.name, AppStoreSide.name, RcloneSide.name] }

    /// A side named on the command line: an rclone remote (`name:path`), a
    /// store file (SQLite's header) or an iPhone backup (`Manifest.db`), else
    /// a memo folder. A path that exists on disk is never a remote. `url`
    /// is the path taken from the current folder, which the command line
    /// reads; `cache` is asked only for a remote.
    package static func fromCommandLine(_ path: String, url: URL, app: String?, refresh: Bool, cache: () -> (URL, temporary: Bool)) -> (
        shown: String, kind: any SideKind
    ) {
        if RcloneSide.isRemote(path) {
            let (folder, temporary) = cache()
            var side = RcloneSide(remote: path, cache: folder)
            side.cacheIsTemporary = temporary
            side.refresh = refresh
            return (Rclone.masked(path), side)
        }
        let kind: any SideKind =
            switch FileKind(path: url.path) {
            case .regular where CoreDataStore.isStoreFile(url.path): AppStoreSide(url: url, isBackup: false, app: app)
            case .directory where PhoneBackup.isBackup(url): AppStoreSide(url: url, isBackup: true, app: app)
            default: MemoFolderSide(url)
            }
        return (path, kind)
    }

    /// The cache of a one-shot command: `$XDG_CACHE_HOME/reckon/`, then
    /// `$HOME/.cache/reckon/`, else a temporary folder (said to be one).
    package static func oneShotCache(environment: [String: String]) -> (URL, temporary: Bool) {
        if let folder = environment["XDG_CACHE_HOME"], folder.hasPrefix("/") {
            return (URL(fileURLWithPath: folder).appendingPathComponent("reckon"), false)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return (URL(fileURLWithPath: home).appendingPathComponent(".cache/reckon"), false)
        }
        let folder = (try? PrivateFolder.make(prefix: "reckon-cache")) ?? URL(fileURLWithPath: PrivateFolder.temporaryRoot)
        return (folder, true)
    }

    /// Whether two values are the same kind of side at the same place, with the same settings.
    static func same(_ a: any SideKind, _ b: any SideKind) -> Bool {
        func compare<K: SideKind>(_ a: K) -> Bool { (b as? K) == a }
        return compare(a)
    }
}

/// How finely a side keeps instants; two sides of different precision are
/// compared to the coarser one.
package enum InstantPrecision: Sendable {
    case exact
    /// The app's store keeps instants to the millisecond.
    case millisecond
}

/// What a plan keeps of a side's place, and why apply may never write it.
package struct PlannedPlace: Sendable {
    /// A memo folder's real path, or a remote with no secret in it.
    package var location: String?
    package var rcloneConfig: String?
    package var rcloneFlags: [String]?
    package var notWritable: String?
}

/// The name of a side's kind in a plan or a baseline, decoded once: the kind
/// itself, or a name this reckon does not know, kept as it was read.
package struct SideKindName: Sendable, Equatable, Codable, CustomStringConvertible {
    package let name: String

    package init(_ kind: any SideKind.Type) { name = kind.name }
    package init(decoding name: String) { self.name = name }

    /// The kind, when this reckon knows it.
    package var kind: (any SideKind.Type)? { SideKinds.named(name) }
    /// What a person calls the kind.
    package var words: String { kind?.description ?? name }
    package var description: String { name }

    package init(from decoder: any Decoder) throws {
        name = try decoder.singleValueContainer().decode(String.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// `url`'s path from `folder` (both absolute): `../Samples/store` from `Pipelines/`.
package func relativePath(of url: URL, from folder: URL) -> String {
    let target = url.standardizedFileURL.pathComponents
    let base = folder.standardizedFileURL.pathComponents
    var common = 0
    while common < min(target.count, base.count) && target[common] == base[common] { common += 1 }
    let path = Array(repeating: "..", count: base.count - common) + target[common...]
    return path.isEmpty ? "." : path.joined(separator: "/")
}
