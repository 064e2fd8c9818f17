/// One entry of `index.json`: a memo's metadata, without its body.
public struct IndexEntry: Sendable, Equatable {
    public var id: MemoID
    public var modifiedTime: Timestamp
    public var archivedAt: Timestamp?
    public var deletedAt: Timestamp?
    public var changeTag: String?
    /// How the index writes the id. Kept without a string when its letters
    /// are all capitals (as the app writes ids) or all small.
    private var letters: Letters

    private enum Letters: Sendable, Equatable {
        case small, capital
        case mixed(String)
    }

    public init(id: MemoID, spelling: String? = nil, modifiedTime: Timestamp, archivedAt: Timestamp? = nil, deletedAt: Timestamp? = nil, changeTag: String? = nil) {
        if var spelling, MemoID(spelling) == id {
            self = spelling.withUTF8 { IndexEntry(id: id, checkedSpelling: UnsafeRawBufferPointer($0), modifiedTime: modifiedTime,
                                                  archivedAt: archivedAt, deletedAt: deletedAt, changeTag: changeTag) }
            return
        }
        self.id = id
        letters = spelling.map { .mixed($0) } ?? .small
        self.modifiedTime = modifiedTime
        self.archivedAt = archivedAt
        self.deletedAt = deletedAt
        self.changeTag = changeTag
    }

    /// An entry whose spelling (UTF-8) a reader has already found to be `id`.
    init(id: MemoID, checkedSpelling spelling: UnsafeRawBufferPointer, modifiedTime: Timestamp, archivedAt: Timestamp?, deletedAt: Timestamp?, changeTag: String?) {
        let capitals = spelling.contains { (0x41...0x46).contains($0) }
        let smalls = spelling.contains { (0x61...0x66).contains($0) }
        self.id = id
        letters = capitals && smalls ? .mixed(String(decoding: spelling, as: UTF8.self)) : capitals ? .capital : .small
        self.modifiedTime = modifiedTime
        self.archivedAt = archivedAt
        self.deletedAt = deletedAt
        self.changeTag = changeTag
    }

    /// The id as the index spells it; the memo's file name uses this spelling.
    public var spelling: String {
        switch letters {
        case .small: id.value
        case .capital: id.value.uppercased()
        case .mixed(let text): text
        }
    }

    /// Whether `name` is this id spelled as the index spells it (`name` must
    /// hold this id, in any case), without building the spelling.
    public func isSpelled(as name: Substring) -> Bool {
        switch letters {
        case .small: !name.utf8.contains { (0x41...0x46).contains($0) }
        case .capital: !name.utf8.contains { (0x61...0x66).contains($0) }
        case .mixed(let text): name == text
        }
    }

    public var isDeleted: Bool { deletedAt != nil }
    public var isArchived: Bool { archivedAt != nil }
}

/// The readable part of one `index.json`: the entries that could be used
/// (first of each id) and the problems met on the way.
public struct MemoIndex: Sendable, Equatable {
    public static let supportedSchemaVersion = 1

    public var entries: [IndexEntry]
    public var problems: [Problem]

    public init(entries: [IndexEntry], problems: [Problem] = []) {
        self.entries = entries
        self.problems = problems
    }
}

extension IndexEntry {
    /// Adds everything but the id to a record for sorting.
    func add(to record: inout Record) {
        switch letters {
        case .small: record.bytes.append(0)
        case .capital: record.bytes.append(1)
        case .mixed(let text):
            record.bytes.append(2)
            record.add(text)
        }
        record.add(modifiedTime)
        record.add(archivedAt)
        record.add(deletedAt)
        record.add(changeTag)
    }

    /// The entry `add(to:)` wrote, with its id.
    init(id: MemoID, from reader: inout RecordReader) {
        self.id = id
        switch reader.byte() {
        case 0: letters = .small
        case 1: letters = .capital
        default: letters = .mixed(reader.text()!)
        }
        modifiedTime = reader.timestamp()!
        archivedAt = reader.timestamp()
        deletedAt = reader.timestamp()
        changeTag = reader.text()
    }
}
