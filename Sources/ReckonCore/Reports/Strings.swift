/// Every sentence a person reads, in one table per language. Renderers for
/// the terminal, Markdown and HTML all take their words from here.
public struct Strings: Sendable {
    public static let en = Strings()

    public static func forLanguage(_ code: String) -> Strings { .en }

    func memos(_ n: Int) -> String { n == 1 ? "1 memo" : "\(n) memos" }
    func isAre(_ n: Int) -> String { n == 1 ? "is" : "are" }
    func itThem(_ n: Int) -> String { n == 1 ? "it" : "them" }

    public func memosOn(_ label: String) -> String { "Memos on \(label)" }
    public var active: String { "Active" }
    public var archived: String { "Archived" }
    /// A remote count that differs from the local one: `5 (local 4)`.
    public func drifted(_ remote: Int, local: Int) -> String { "\(remote) (local \(local))" }
    public var notRead: String { "not read" }

    public func onlyOnRemote(_ n: Int, local: String, remote: String) -> String {
        "\(capitalized(remote)) has \(memos(n)) that \(isAre(n)) not on \(local). Sync \(local) to bring \(itThem(n)) in."
    }
    public func onlyOnLocal(_ n: Int, local: String, remote: String) -> String {
        "\(capitalized(local)) has \(memos(n)) that \(isAre(n)) not on \(remote). Sync \(local) to upload \(itThem(n)) to \(remote)."
    }
    public func archivedOnOneSide(_ n: Int, local: String, remote: String) -> String {
        "\(capitalized(memos(n))) \(isAre(n)) archived on one side only. Sync \(local) so that \(local) and \(remote) agree which memos are archived."
    }
    public func deletedOnOneSide(_ n: Int, local: String, remote: String) -> String {
        "\(capitalized(memos(n))) \(n == 1 ? "was" : "were") deleted on one side only. Sync to carry the deletion over, or restore \(itThem(n)) from the side that still has \(itThem(n))."
    }
    public func changed(_ n: Int, local: String, remote: String) -> String {
        "\(capitalized(memos(n))) \(n == 1 ? "differs" : "differ") between \(local) and \(remote). Open \(itThem(n)) on both sides and choose which version to keep; reckon never chooses for you."
    }
    public func cannotCompare(_ n: Int, remote: String) -> String {
        "\(capitalized(memos(n))) could not be compared with \(remote) because a file is damaged, missing or duplicated. The problems are listed below; nothing was changed."
    }
    public func sideFailed(_ label: String, reason: String) -> String {
        "\(capitalized(label)) could not be read: \(reason). Its counts are left out; fix the folder and run again."
    }
    public func sideHasProblems(_ label: String, count: Int) -> String {
        "\(capitalized(label)) has \(count == 1 ? "1 problem" : "\(count) problems") that need a look; see below."
    }
    public func inSync(local: String, remotes: [String]) -> String {
        "\(capitalized(local)) and \(remotes.joined(separator: ", ")) agree: every memo is the same on each side."
    }
    public func empty(local: String, remotes: [String]) -> String {
        "There are no memos yet, on \(local) or on \(remotes.joined(separator: ", "))."
    }
    public func rebuiltFromMemoFiles(_ label: String, reason: String) -> String {
        "The index.json of \(label) could not be used (\(reason)), so its counts were rebuilt from the memo files."
    }
    public func quarantined(_ n: Int) -> String {
        "\(n == 1 ? "1 file" : "\(n) files") could not be used and \(n == 1 ? "was" : "were") copied aside (listed below); the \(n == 1 ? "original was" : "originals were") left exactly as \(n == 1 ? "it was" : "they were")."
    }
    public func quarantineFailed(_ n: Int) -> String {
        "\(n == 1 ? "1 damaged file" : "\(n) damaged files") could not be copied aside; the \(n == 1 ? "original is" : "originals are") untouched. See the problems below."
    }
    public func exportFailed(_ reason: String) -> String { "The export could not be written in full: \(reason)." }

    public var differencesHeading: String { "Differences" }
    public var problemsHeading: String { "Problems" }
    public var sourcesHeading: String { "Sources" }
    public var exportsHeading: String { "Exports" }
    public var quarantinedHeading: String { "Set aside" }
    public func andMore(_ n: Int, file: String) -> String { "… and \(n) more (see \(file))" }

    public func kind(_ kind: Difference.Kind, remote: String) -> String {
        switch kind {
        case .onlyOnRemote: "only on \(remote)"
        case .onlyOnLocal: "not on \(remote)"
        case .deletedOnOneSide: "deleted on one side"
        case .archivedOnOneSide: "archived on one side"
        case .changed: "changed"
        case .cannotCompare: "cannot be compared"
        }
    }

    func capitalized(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }
}
