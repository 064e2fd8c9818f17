import Foundation

/// The app's SwiftData store: a store file (`default.store`), or an iPhone
/// backup folder to find it in. Read through a private snapshot, never written.
package struct AppStoreSide: SideKind, PasswordSide, Hashable {
    package static let name = "store"
    package static let description = "the app's store"
    package static let japaneseDescription = "アプリのデータベース"
    package static let definitionKeys = [
        DefinitionKey("app", holds: .text), DefinitionKey("model", holds: .object(StoreModel.keys)), DefinitionKey("passwordFile", holds: .path)
    ]

    /// The store file (`default.store`), or the backup folder.
    package var url: URL
    package var isBackup: Bool
    /// The app's bundle or group id, to pick its store in a backup.
    package var app: String?
    package var model: StoreModel
    /// Where an encrypted backup's password comes from; nil: none given
    /// (an encrypted backup then fails, saying how to give one).
    package var password: BackupPassword?
    /// The password file a definition names for this side (`"passwordFile"`,
    /// relative to the definition's folder); `--password-file` wins over it.
    package var passwordFile: PasswordFile?

    package init(
        url: URL, isBackup: Bool, app: String? = nil, model: StoreModel = StoreModel(), password: BackupPassword? = nil,
        passwordFile: PasswordFile? = nil
    ) {
        self.url = url
        self.isBackup = isBackup
        self.app = app
        self.model = model
        self.password = password
        self.passwordFile = passwordFile
    }

    package static func read(_ object: [String: JSONValue], key: String, with reader: DefinitionReader) throws(DefinitionError) -> (
        path: String, kind: Self
    ) {
        let path = try reader.string(object, "path", in: key, required: true)!
        let url = reader.url(path)
        var side = AppStoreSide(
            url: url, isBackup: FileKind(path: url.path) == .directory, app: try reader.string(object, "app", in: key, required: false))
        if let model = object["model"] {
            side.model = try reader.storeModel(model, "\(key).model")
        }
        if let file = try reader.string(object, "passwordFile", in: key, required: false) {
            let passwordFile = PasswordFile(url: reader.url(file), shown: file)
            // Checked now, before any side is read: a file reckon would refuse is a definition error.
            do {
                try passwordFile.check()
            } catch  where error.isUsage {
                throw reader.fail("\(key).passwordFile", "is refused: \(error.message)")
            } catch {}
            side.passwordFile = passwordFile
        }
        return (path, side)
    }

    /// Only an iPhone backup can be encrypted, and only an encrypted one
    /// asks. The command line's password file, when given, becomes the
    /// side's (and `reckon init` writes it into the definition).
    package mutating func usePasswords(_ sources: PasswordSources, shown: String) {
        passwordFile = sources.file ?? passwordFile
        password = sources.password(for: shown, file: passwordFile)
    }

    /// A store file (SQLite's header) or an iPhone backup (`Manifest.db`) named on the command line.
    package static func claim(_ word: String, _ given: CommandLineWord) -> (shown: String, kind: AppStoreSide)? {
        switch FileKind(path: given.url.path) {
        case .regular where CoreDataStore.isStoreFile(given.url.path): (word, AppStoreSide(url: given.url, isBackup: false, app: given.app))
        case .directory where PhoneBackup.isBackup(given.url): (word, AppStoreSide(url: given.url, isBackup: true, app: given.app))
        default: nil
        }
    }

    /// A store file, its `-wal`, or one of its rows (`default.store#Z_PK=12`)
    /// stand beside the store, not inside it.
    package static func join(_ root: String, _ inside: String) -> String? {
        let slash = root.lastIndex(of: "/")
        let name = slash.map { root[root.index(after: $0)...] } ?? root[...]
        guard name.contains("."), inside == name || inside == name + "-wal" || inside.hasPrefix(name + "#") else { return nil }
        return slash.map { root[...$0] + inside } ?? inside
    }

    /// An iPhone backup that holds several apps' stores with memos and no
    /// app chosen, or none of the app chosen while it holds others': the
    /// user must choose, so the command line calls it a usage error.
    /// `process` says where the backup's manifest is copied to be read.
    package func ambiguity(process: ProcessSettings) -> String? {
        guard isBackup, let found = try? PhoneBackup.appStores(in: url, app: app, entity: model.entity, password: password, process: process)
        else { return nil }
        if found.count > 1 { return PhoneBackup.notOne(found, app: app) }
        guard found.isEmpty, app != nil,
            let all = try? PhoneBackup.appStores(in: url, app: nil, entity: model.entity, password: password, process: process),
            !all.isEmpty
        else {
            return nil
        }
        return PhoneBackup.notOne(found, app: app, all: all)
    }

    /// `--app` picks an app's store in an iPhone backup, and means nothing for a store file.
    package var refusingApp: String? { isBackup ? nil : "the app's store file itself" }

    package func open(_ spec: SideSpec, limits: ReadLimits, process: ProcessSettings) -> any MemoStore {
        CoreDataStore(spec, process: process)
    }

    /// A store file's folder, where SQLite keeps its -wal and -shm beside it.
    package func definitionEntry(relativeTo folder: URL) -> [String: JSONValue] {
        var entry: [String: JSONValue] = ["kind": .string(Self.name), "path": .string(relativePath(of: url, from: folder))]
        if let app { entry["app"] = .string(app) }
        if let passwordFile { entry["passwordFile"] = .string(relativePath(of: passwordFile.url, from: folder)) }
        return entry
    }

    package var localURL: URL? { isBackup ? url : url.deletingLastPathComponent() }

    package func sourceFolder(shown path: String) -> String {
        isBackup ? "the source folder \(path)" : "the folder of the store \(path)"
    }

    package var precision: InstantPrecision { .millisecond }

    package func countsFrom(rebuilt: Bool) -> SideReport.CountsFrom { .store }

    package var place: String { realPath(url.path) + (app.map { "#app=" + $0 } ?? "") }

    package static func neverWritten(_ label: String, language: String) -> String? {
        language == "ja" ? "\(label)はアプリ自身のデータベースで、reckon は書き込みません" : "\(label) is the app's own store, which reckon never writes"
    }
}

extension SideKind where Self == AppStoreSide {
    /// The app's store.
    package static func store(_ side: AppStoreSide) -> AppStoreSide { side }
}
