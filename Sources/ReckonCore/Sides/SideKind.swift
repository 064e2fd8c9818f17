import Foundation

/// A kind of side: a memo folder on disk, the app's store, or a folder in an
/// rclone remote. Everything that differs between kinds is answered by the
/// kinds, so outside `Sides/` no code asks which kind a side is, and a
/// fourth kind (a Drive API reader, an S3 bucket) is a new folder beside the
/// three and one line in `SideKinds.all`. What every kind answers is here;
/// what only some kinds can do is a capability they add (`WrittenSide`,
/// `CachedSide`, `PasswordSide`), asked with `as?`.
package protocol SideKind: Sendable, Equatable {
    /// The kind's name in a definition's `"kind"`, a plan and a baseline.
    static var name: String { get }
    /// What a person calls a side of this kind ("memo folder").
    static var description: String { get }
    /// The same in Japanese ("メモフォルダ").
    static var japaneseDescription: String { get }
    /// Why apply never writes a side of this kind, said of the side named
    /// `label` in `language` (`en`, `ja`); nil when it may.
    static func neverWritten(_ label: String, language: String) -> String?
    /// The definition keys that only a side of this kind reads, each with
    /// what it holds and whether it may hold a secret.
    static var definitionKeys: [DefinitionKey] { get }
    /// Reads a side of this kind from its object in a pipeline definition:
    /// the path shown for it (secrets masked) and the side.
    static func read(_ object: [String: JSONValue], key: String, with reader: DefinitionReader) throws(DefinitionError) -> (path: String, kind: Self)
    /// The side a word on the command line names when it is of this kind
    /// ("is this yours?"), with the path shown for it; nil when it is not.
    static func claim(_ word: String, _ given: CommandLineWord) -> (shown: String, kind: Self)?
    /// A path or any text as it may be shown, this kind's secrets in it masked.
    static func shown(_ text: String) -> String
    /// How a path inside a side of this kind is joined to the side's path,
    /// for messages; nil when this kind's rule does not apply.
    static func join(_ root: String, _ inside: String) -> String?
    /// Why a word that is not UTF-8 and names nothing on this machine cannot
    /// name a side of this kind; nil when this kind would not claim it.
    static func notNamedInUTF8(_ word: String) -> String?
    /// Why a definition file cannot keep the side a word names; nil when it can.
    static func notKeptInDefinition(_ word: String) -> String?

    /// The side's keys in a definition written into `folder` (`reckon
    /// init`): its kind and where it is, a path relative to the folder.
    func definitionEntry(relativeTo folder: URL) -> [String: JSONValue]
    /// Why the side cannot be told apart before a run, such as an iPhone
    /// backup holding several apps' stores when no app is named; nil when it
    /// can. `process` says where what is read to tell goes.
    func ambiguity(process: ProcessSettings) -> String?
    /// What the side is, said when `--app` (which picks an app's store in an
    /// iPhone backup) is given for it ("a memo folder"); nil when it takes one.
    var refusingApp: String? { get }
    /// The store that reads the side, in the process `process` describes.
    func open(_ spec: SideSpec, limits: ReadLimits, process: ProcessSettings) -> any MemoStore
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
    /// What `reckon validate` checks of the side without the network;
    /// `process` gives a child program (rclone) its environment.
    func offlineCheck(shown: String, process: ProcessSettings) -> OfflineCheck
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

/// What a kind is told of a word on the command line besides the word
/// itself: the path it names, and what the command's options ask of a side.
package struct CommandLineWord {
    /// The path taken from the current folder, which the command line reads.
    package var url: URL
    /// `--app`: the app whose store to pick in an iPhone backup.
    package var app: String?
    /// `--refresh`: download every memo file again.
    package var refresh: Bool
    /// The one-shot cache, asked only by a kind that keeps one.
    package var cache: () -> (URL, temporary: Bool)

    package init(url: URL, app: String?, refresh: Bool, cache: @escaping () -> (URL, temporary: Bool)) {
        self.url = url
        self.app = app
        self.refresh = refresh
        self.cache = cache
    }
}

extension SideKind {
    package static func neverWritten(_ label: String, language: String) -> String? { nil }
    package static func shown(_ text: String) -> String { text }
    package static func join(_ root: String, _ inside: String) -> String? { nil }
    package static func notNamedInUTF8(_ word: String) -> String? { nil }
    package static func notKeptInDefinition(_ word: String) -> String? { nil }
    package func ambiguity(process: ProcessSettings) -> String? { nil }
    package var refusingApp: String? { "a \(Self.description)" }
    package var precision: InstantPrecision { .exact }
    package func countsFrom(rebuilt: Bool) -> SideReport.CountsFrom { rebuilt ? .memoFiles : .index }
    package func sourceFolder(shown path: String) -> String { "the source folder \(path)" }
    package func offlineCheck(shown: String, process: ProcessSettings) -> OfflineCheck { OfflineCheck() }
}

/// How finely a side keeps instants; two sides of different precision are
/// compared to the coarser one.
package enum InstantPrecision: Sendable {
    case exact
    /// The app's store keeps instants to the millisecond.
    case millisecond
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
