/// How one memo compares between the local side and one remote, with rclone
/// check's sigils. Memos that are the same (`=`) are not listed.
public struct Difference: Sendable, Equatable, Codable {
    public enum Sigil: String, Sendable, Codable {
        case same = "="
        case onlyOnRemote = "-"
        case onlyOnLocal = "+"
        case differs = "*"
        case cannotCompare = "!"
    }

    public enum Kind: String, Sendable, Codable {
        case onlyOnRemote = "only-on-remote"
        case onlyOnLocal = "only-on-local"
        case deletedOnOneSide = "deleted-on-one-side"
        case archivedOnOneSide = "archived-on-one-side"
        case changed
        case cannotCompare = "cannot-compare"
    }

    /// What one side holds for this memo, as far as it could be read.
    public struct SideState: Sendable, Equatable, Codable {
        public var modifiedTime: Timestamp?
        public var archivedAt: Timestamp?
        public var deletedAt: Timestamp?
        public var problem: String?

        public init(_ entry: IndexEntry?, problem: String? = nil) {
            modifiedTime = entry?.modifiedTime
            archivedAt = entry?.archivedAt
            deletedAt = entry?.deletedAt
            self.problem = problem
        }
    }

    /// The name of the remote compared with the local side.
    public var remote: String
    public var id: MemoID
    public var sigil: Sigil
    public var kind: Kind
    /// For `*`: the fields that differ.
    public var fields: [String]
    public var title: String?
    public var local: SideState
    public var remoteState: SideState

    enum CodingKeys: String, CodingKey {
        case remote, id, sigil, kind, fields, title
        case local = "onLocal"
        case remoteState = "onRemote"
    }

    public init(remote: String, id: MemoID, sigil: Sigil, kind: Kind, fields: [String] = [], title: String? = nil,
                local: SideState, remoteState: SideState) {
        self.remote = remote
        self.id = id
        self.sigil = sigil
        self.kind = kind
        self.fields = fields
        self.title = title
        self.local = local
        self.remoteState = remoteState
    }
}
