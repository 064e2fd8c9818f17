import Foundation

/// A memo folder on disk: `60dMemo/` itself, or the folder above it.
package struct MemoFolderSide: SideKind, WrittenSide, Hashable {
    package static let name = "folder"
    package static let description = "memo folder"
    package static let japaneseDescription = "メモフォルダ"
    package static let definitionKeys: [DefinitionKey] = []

    /// The folder the side's path names, resolved.
    package var url: URL

    package init(_ url: URL) { self.url = url }

    package static func read(_ object: [String: JSONValue], key: String, with reader: DefinitionReader) throws(DefinitionError) -> (
        path: String, kind: Self
    ) {
        let path = try reader.string(object, "path", in: key, required: true)!
        return (path, MemoFolderSide(reader.url(path)))
    }

    /// Any word on the command line names a memo folder: this kind is tried last.
    package static func claim(_ word: String, _ given: CommandLineWord) -> (shown: String, kind: MemoFolderSide)? {
        (word, MemoFolderSide(given.url))
    }

    package static func reopen(_ planned: PlanSide, process: ProcessSettings) -> MemoFolderSide? {
        planned.location.map { MemoFolderSide(URL(fileURLWithPath: $0)) }
    }

    package func open(_ spec: SideSpec, limits: ReadLimits, process: ProcessSettings) -> any MemoStore {
        MemoFolder(spec, limits: limits, process: process)
    }

    package func definitionEntry(relativeTo folder: URL) -> [String: JSONValue] {
        ["kind": .string(Self.name), "path": .string(relativePath(of: url, from: folder))]
    }

    package var localURL: URL? { url }

    package var place: String { realPath(url.path) }

    package func planned() -> PlannedPlace { PlannedPlace(location: realPath(url.path)) }

    package func fileAccess(shown: String, limits: ReadLimits, process: ProcessSettings) throws(MemoFolderError) -> any FileAccess {
        DiskFileAccess(url, shown: shown, limits: limits, checkpoints: process.checkpoints)
    }

    package func lockPlace(shown: String) throws(TargetLock.Refusal) -> String {
        "folder " + realPath(MemoFolder.resolveRoot(url).path)
    }
}

extension SideKind where Self == MemoFolderSide {
    /// A memo folder on disk.
    package static func folder(_ url: URL) -> MemoFolderSide { MemoFolderSide(url) }
}
