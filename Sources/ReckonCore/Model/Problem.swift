/// Something wrong inside one side, found while reading it. Problems are
/// values: they are collected and reported, and a run goes on past them.
package struct Problem: Error, Sendable, Equatable, Codable {
    package enum Severity: String, Sendable, Codable, CaseIterable {
        /// Worth knowing; does not make the run "trouble".
        case warning
        /// Makes the run exit 2.
        case error
    }

    package enum Kind: String, Sendable, Codable, CaseIterable {
        case unreadableFolder = "unreadable-folder"
        case missingIndex = "missing-index"
        case corruptIndex = "corrupt-index"
        case unsupportedSchema = "unsupported-schema"
        case badEntry = "bad-entry"
        case invalidID = "invalid-id"
        case duplicateID = "duplicate-id"
        case danglingEntry = "dangling-entry"
        case orphanFile = "orphan-file"
        /// An index entry whose modification time, archived or deleted state
        /// is not its memo file's (found in a deep check). The memo is still
        /// compared, by its file; a plan sets the entry from the file.
        case indexDisagrees = "index-disagrees"
        case notRegularFile = "not-regular-file"
        case link
        case unreadableFile = "unreadable-file"
        /// The disk failed a read, a copy or the private copy of a store (an
        /// I/O error, a full disk): it says nothing of the side's data, and
        /// an export does not go on past it.
        case diskTrouble = "disk-trouble"
        case corruptMemo = "corrupt-memo"
        case idMismatch = "id-mismatch"
        case nameSpelling = "name-spelling"
        case exportFailed = "export-failed"
        case quarantineFailed = "quarantine-failed"
        case corruptStore = "corrupt-store"
        case storeModel = "store-model"
        case unreachable
    }

    package var severity: Severity
    package var kind: Kind
    /// The file inside the side's folder as the user gave it (`index.json`,
    /// `memos/<id>.json`, or `60dMemo/…` when the files are nested there).
    package var path: String
    /// The memo this problem makes uncomparable, when there is one.
    package var id: MemoID?
    package var message: String

    package init(_ kind: Kind, path: String, id: MemoID? = nil, _ message: String, severity: Severity = .error) {
        self.severity = severity
        self.kind = kind
        self.path = path
        self.id = id
        self.message = message
    }
}
