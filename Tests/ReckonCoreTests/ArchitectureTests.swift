import Foundation
import Testing

/// Keeps the Architecture page (`Sources/ReckonCore/ReckonCore.docc/Architecture.md`)
/// from drifting from the tree. A name in backticks on the page that starts
/// with a capital letter and ends in `.swift` or `/` is a source path: from the
/// package root when it starts with `Sources/` or `Tests/`, else inside
/// `Sources/ReckonCore/`, as the page says. Every such path must exist, and
/// every folder of the core (and every kind of side under `Sides/`) must be
/// named on the page.
@Suite struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let core = root.appendingPathComponent("Sources/ReckonCore")
    static let page = core.appendingPathComponent("ReckonCore.docc/Architecture.md")

    /// Every source path the page names, once each, in the order they first appear.
    static func namedPaths() throws -> [String] {
        let text = try String(contentsOf: page, encoding: .utf8)
        // Fenced code blocks are left out: only inline code names a path.
        var inFence = false
        var prose: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
            } else if !inFence {
                prose.append(line)
            }
        }
        var seen: Set<String> = []
        var paths: [String] = []
        for match in prose.joined(separator: "\n").matches(of: /`([^`\n]+)`/) {
            let name = String(match.1)
            if isSourcePath(name), seen.insert(name).inserted { paths.append(name) }
        }
        return paths
    }

    /// Whether a name in backticks is a source path rather than a file reckon
    /// reads or writes (those are in small letters: `state/`, `memos/<uuid>.json`).
    static func isSourcePath(_ name: String) -> Bool {
        name.first?.isUppercase == true && (name.hasSuffix(".swift") || name.hasSuffix("/"))
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-./".contains($0)) }
    }

    /// The path from the package root.
    static func fromRoot(_ name: String) -> String {
        name.hasPrefix("Sources/") || name.hasPrefix("Tests/") ? name : "Sources/ReckonCore/" + name
    }

    /// The folders directly inside `folder` (a path from the package root), by name.
    static func folders(in folder: String) throws -> [String] {
        let url = root.appendingPathComponent(folder)
        return try FileManager.default.contentsOfDirectory(atPath: url.path).filter { name in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isFolder) && isFolder.boolValue
        }.sorted()
    }

    /// Those of `folder`'s folders that no source path on the page names.
    static func unnamedFolders(in folder: String, except skipped: (String) -> Bool = { _ in false }) throws -> [String] {
        let named = try namedPaths().map(fromRoot)
        return try folders(in: folder).filter { !skipped($0) }.map { folder + "/" + $0 + "/" }.filter { path in
            !named.contains { $0.hasPrefix(path) }
        }
    }

    @Test func everyPathThePageNamesExists() throws {
        let paths = try Self.namedPaths()
        // The page names its files in backticks; finding few means the reading broke.
        #expect(paths.count > 40, "found only \(paths.count) source paths on \(Self.page.path)")
        let missing = paths.filter { name in
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(Self.fromRoot(name)).path, isDirectory: &isFolder)
            return !exists || isFolder.boolValue != name.hasSuffix("/")
        }
        for name in missing { print("Architecture.md names \(name) (\(Self.fromRoot(name))), which does not exist") }
        #expect(missing.isEmpty, "Architecture.md names \(missing.count) source paths that do not exist: \(missing.joined(separator: ", "))")
    }

    @Test func everyFolderOfTheCoreIsNamed() throws {
        let unnamed = try Self.unnamedFolders(in: "Sources/ReckonCore") { $0.hasSuffix(".docc") }
        for folder in unnamed { print("Architecture.md does not name the folder \(folder)") }
        #expect(unnamed.isEmpty, "Architecture.md names no path in \(unnamed.joined(separator: ", "))")
    }

    /// The folders the table of "The folders of the core" gives a row, from
    /// the first cell of each row.
    static func foldersTable() throws -> [String] {
        let text = try String(contentsOf: page, encoding: .utf8)
        guard let start = text.range(of: "## The folders of the core") else { return [] }
        let section = String(text[start.upperBound...]).components(separatedBy: "\n## ").first ?? ""
        return section.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /^\| `([^`]+)` \|/).map { String($0.1) }
        }
    }

    /// Each folder of the core has its own row in the folders table, and each
    /// row names a folder that is there: the table cannot keep a folder that
    /// went or miss one that came.
    @Test func theFoldersTableIsTheTree() throws {
        let rows = try Self.foldersTable()
        let tree = try Self.folders(in: "Sources/ReckonCore").map { $0 + "/" }
        let missing = tree.filter { !rows.contains($0) }
        let gone = rows.filter { !tree.contains($0) }
        for folder in missing { print("Architecture.md's folders table has no row for \(folder)") }
        for folder in gone { print("Architecture.md's folders table has a row for \(folder), which is not a folder of the core") }
        #expect(missing.isEmpty && gone.isEmpty, "rows missing: \(missing), rows for no folder: \(gone)")
    }

    @Test func everyKindOfSideIsNamed() throws {
        let unnamed = try Self.unnamedFolders(in: "Sources/ReckonCore/Sides")
        for folder in unnamed { print("Architecture.md does not name the side kind's folder \(folder)") }
        #expect(unnamed.isEmpty, "Architecture.md names no path in \(unnamed.joined(separator: ", "))")
    }

    /// The rule that tells a source path from a file reckon writes.
    @Test func sourcePathsAreToldApart() {
        for name in ["Sides/AppStore/CoreDataStore.swift", "Pipeline/Stages/", "Sources/reckon/", "Tests/ReckonCoreTests/SideKindRuleTests.swift"] {
            #expect(Self.isSourcePath(name), "\(name)")
        }
        for name in ["state/", "memos/<uuid>.json", "history.jsonl", "60dMemo/", "SideKinds.all", "Stage<Input, Output>", "LoadedSides"] {
            #expect(!Self.isSourcePath(name), "\(name)")
        }
    }
}
