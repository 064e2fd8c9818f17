import Foundation

/// The pipeline definition `reckon init` writes for one device and one
/// cloud folder: a deep check, every export format from the local side,
/// reports and exports in `out/NAME/` beside the file, in English.
package struct InitialDefinition {
    /// The pipeline's name, and its file's.
    package var name: String
    package var local: SideSpec
    package var remote: SideSpec

    package init(name: String, local: SideSpec, remote: SideSpec) {
        self.name = name
        self.local = local
        self.remote = remote
    }

    /// Where its outputs go, relative to its file's folder.
    package var outputs: String { "out/" + name }
    /// Where its reports go, relative to its file's folder.
    package var reports: String { outputs + "/reports" }
    /// Where its exports go, relative to its file's folder.
    package var exports: String { outputs + "/export" }

    /// The definition as its file holds it, its sides' paths relative to `folder`, the file's.
    package func json(relativeTo folder: URL) -> JSONValue {
        func entry(_ side: SideSpec) -> JSONValue {
            .object(side.kind.definitionEntry(relativeTo: folder).merging(["name": .string(side.name), "label": .string(side.label)]) { a, _ in a })
        }
        return .object([
            "schemaVersion": .integer(1), "name": .string(name), "local": entry(local), "remotes": .array([entry(remote)]),
            "check": .string("deep"), "reports": .object(["dir": .string(reports)]),
            "export": .object([
                "from": .string("local"), "formats": .array(ExportFormat.allCases.map { .string($0.rawValue) }), "includeArchived": .bool(false),
                "dir": .string(exports)
            ]),
            "language": .string("en"), "failOnDrift": .bool(false)
        ])
    }
}

extension SideSpec {
    /// Why this side, when it is on this machine, cannot be read now (its
    /// index only): the first problem, with its path, or "it cannot be read";
    /// nil when it can, or when it is not on this machine. So a definition
    /// that cannot run is never written. Read with what `process` decides.
    package func whyUnreadableHere(process: ProcessSettings) -> String? {
        guard kind.localURL != nil else { return nil }
        let counted = store(limits: ReadLimits(), process: process).count()
        guard counted.status == .failed else { return nil }
        return counted.problems.first.map { "\(joinPath(path, $0.path)): \($0.message)" } ?? "it cannot be read"
    }
}
