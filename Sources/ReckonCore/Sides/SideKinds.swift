import Foundation

/// Every kind of side reckon reads: the registry, and the questions asked
/// of all the kinds at once.
package enum SideKinds {
    /// The kinds in the order their rules are tried (a command line's word,
    /// a path inside a side). The last claims every word, and is the kind of
    /// a definition's side that names none. A new kind is one line here.
    package static let all: [any SideKind.Type] = [AppStoreSide.self, RcloneSide.self, MemoFolderSide.self]

    /// The kind a definition, plan or baseline names; nil for one this reckon does not know.
    package static func named(_ name: String) -> (any SideKind.Type)? {
        all.first { $0.name == name }
    }

    /// The kinds' names as a definition spells them, the default first.
    package static var names: [String] { (all.suffix(1) + all.dropLast()).map { $0.name } }

    /// Every key of a definition's side that some kind reads.
    package static var definitionKeys: [DefinitionKey] { all.flatMap { $0.definitionKeys } }

    /// A side named on the command line: the first kind that claims the
    /// word (an rclone remote `name:path`, a store file, an iPhone backup),
    /// else a memo folder.
    package static func fromCommandLine(_ word: String, _ given: CommandLineWord) -> (shown: String, kind: any SideKind) {
        for kind in all {
            if let claimed = kind.claim(word, given) { return (claimed.shown, claimed.kind) }
        }
        // The last kind claims every word.
        return (word, MemoFolderSide(given.url))
    }

    /// A path or any text as it may be shown: every kind's secrets in it masked.
    package static func shown(_ text: String) -> String {
        all.reduce(text) { shown, kind in kind.shown(shown) }
    }

    /// Why a word that is not UTF-8 and names nothing on this machine cannot
    /// name a side of a kind that names its sides by words (a remote); nil
    /// when no kind claims it.
    package static func notNamedInUTF8(_ word: String) -> String? {
        all.lazy.compactMap { $0.notNamedInUTF8(word) }.first
    }

    /// Why a definition file cannot keep the side a word names (a
    /// connection string whose parameters may hold a secret); nil when it can.
    package static func notKeptInDefinition(_ word: String) -> String? {
        all.lazy.compactMap { $0.notKeptInDefinition(word) }.first
    }

    /// Why `--app` does not fit the side named on the command line: it
    /// picks an app's store in an iPhone backup, and means nothing elsewhere.
    package static func misplacedAppOption(_ app: String?, on kind: any SideKind) -> String? {
        guard app != nil, let what = kind.refusingApp else { return nil }
        return "'--app' picks an app's store in an iPhone backup, and this is \(what); leave '--app' out"
    }

    /// The cache of a one-shot command: `$XDG_CACHE_HOME/reckon/`, then
    /// `$HOME/.cache/reckon/`, else a temporary folder (said to be one)
    /// under the temporary root of `process`.
    package static func oneShotCache(environment: [String: String], process: ProcessSettings) -> (URL, temporary: Bool) {
        if let folder = environment["XDG_CACHE_HOME"], folder.hasPrefix("/") {
            return (URL(fileURLWithPath: folder).appendingPathComponent("reckon"), false)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return (URL(fileURLWithPath: home).appendingPathComponent(".cache/reckon"), false)
        }
        let folder = (try? PrivateFolder.make(prefix: "reckon-cache", process: process)) ?? URL(fileURLWithPath: process.temporaryRoot)
        return (folder, true)
    }

    /// Whether two values are the same kind of side at the same place, with the same settings.
    static func same(_ a: any SideKind, _ b: any SideKind) -> Bool {
        func compare<K: SideKind>(_ a: K) -> Bool { (b as? K) == a }
        return compare(a)
    }
}
