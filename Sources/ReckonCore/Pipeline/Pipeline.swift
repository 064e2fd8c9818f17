import Foundation

/// The values passed from stage to stage. Each stage adds its own part.
public struct LoadedSides: Sendable {
    public var definition: PipelineDefinition
    public var local: SideListing
    public var remotes: [SideListing]
}

public struct Reconciliation: Sendable {
    public var loaded: LoadedSides
    public var differences: [Difference]
}

public struct Exported: Sendable {
    public var reconciliation: Reconciliation
    public var exports: [ExportRecord]
}

/// The run of one pipeline: load → aggregate → reconcile → export → report.
public struct Pipeline {
    public var folder = MemoFolder()
    /// Whether files may be written (false for `--dry-run`).
    public var writeFiles = true
    public var strings: Strings = .en

    public init() {}

    /// Reads every side on its own: one failing does not discard the others.
    public var load: Stage<PipelineDefinition, LoadedSides> {
        Stage("load") { [folder] definition, context in
            let deep = definition.check == .deep
            func read(_ spec: SideSpec) -> SideListing {
                context.note("reading \(spec.label)")
                return folder.load(spec, deep: deep)
            }
            return LoadedSides(definition: definition, local: read(definition.local), remotes: definition.remotes.map(read))
        }
    }

    public var reconcile: Stage<LoadedSides, Reconciliation> {
        Stage("reconcile") { loaded, _ in
            let deep = loaded.definition.check == .deep
            let differences = loaded.remotes.flatMap { Reconciler.differences(local: loaded.local, remote: $0, deep: deep) }
            return Reconciliation(loaded: loaded, differences: differences)
        }
    }

    /// Writes the definition's export, if it has one, from the chosen side.
    public var export: Stage<Reconciliation, Exported> {
        Stage("export") { [folder, writeFiles] reconciliation, context in
            let loaded = reconciliation.loaded
            guard let spec = loaded.definition.export else { return Exported(reconciliation: reconciliation, exports: []) }
            let side = spec.from == "local" ? loaded.local : loaded.remotes.first { $0.spec.name == spec.from }!
            context.note("exporting \(side.spec.label)")
            let records = try Exporter(folder: folder, writeFiles: writeFiles).export(side, spec: spec)
            return Exported(reconciliation: reconciliation, exports: records)
        }
    }

    /// Builds the report and, when the definition names a folder, writes it.
    public var report: Stage<Exported, Report> {
        Stage("report") { [writeFiles, strings] exported, _ in
            let loaded = exported.reconciliation.loaded
            let differences = exported.reconciliation.differences
            let sides = [loaded.local] + loaded.remotes
            let inSync = differences.isEmpty && sides.allSatisfy { $0.status != .failed }
            let trouble = sides.contains { $0.hasTrouble } || exported.exports.contains { !$0.missing.isEmpty }
            let report = Report(pipeline: loaded.definition.name, check: loaded.definition.check, sides: sides.map(SideReport.init),
                                inSync: inSync, outcome: trouble ? .trouble : differences.isEmpty ? .inSync : .drift,
                                differences: differences, quarantined: [], exports: exported.exports)
            if writeFiles, let dir = loaded.definition.reportDir {
                try AtomicFile.write(try makeJSONEncoder().encode(report) + [0x0A], to: dir.appendingPathComponent("report.json"))
                try AtomicFile.write(Data(MarkdownReport(strings: strings).render(report).utf8), to: dir.appendingPathComponent("report.md"))
                for remote in loaded.remotes {
                    let name = loaded.remotes.count == 1 ? "combined.txt" : "combined-\(remote.spec.name).txt"
                    let listing = CombinedListing.render(local: loaded.local, remote: remote, differences: differences)
                    try AtomicFile.write(Data(listing.utf8), to: dir.appendingPathComponent(name))
                }
            }
            return report
        }
    }

    /// Runs every stage in order.
    public func run(_ definition: PipelineDefinition, context: RunContext) throws -> Report {
        let loaded = try load.run(definition, in: context)
        let reconciled = try reconcile.run(loaded, in: context)
        let exported = try export.run(reconciled, in: context)
        return try report.run(exported, in: context)
    }
}

/// Writes one side's memos in the definition's formats.
struct Exporter {
    var folder: MemoFolder
    var writeFiles: Bool

    func export(_ side: SideListing, spec: ExportSpec) throws -> [ExportRecord] {
        let fileName = "memos.json"
        let path = joinPath(spec.path, fileName)
        guard side.status != .failed else {
            let problem = Problem(.exportFailed, path: "", "\(side.spec.label) could not be read, so nothing was exported")
            return [ExportRecord(format: .json, path: path, memos: 0, bytes: 0, missing: [problem])]
        }
        var memos: [Memo] = []
        var missing: [Problem] = []
        let root = MemoFolder.resolveRoot(side.spec.url)
        for entry in side.entries.values.sorted(by: { $0.id < $1.id }) where !entry.isDeleted && (spec.includeArchived || !entry.isArchived) {
            let name = side.files[entry.id] ?? entry.spelling + ".json"
            do {
                let memo = try side.memos[entry.id] ?? folder.readMemo(root: root, name: name)
                guard memo.id == entry.id else { throw MemoReader.Failure(message: "the file holds id \(memo.id), not the one in its name") }
                if memo.deletedAt == nil { memos.append(memo) }
            } catch {
                let reason = (error as? MemoReader.Failure)?.message ?? (error as? ReadFailure)?.message ?? String(describing: error)
                missing.append(Problem(.exportFailed, path: "memos/" + name, id: entry.id, reason))
            }
        }
        let data = try JSONExport.document(memos: memos, source: side.spec)
        if writeFiles { try AtomicFile.write(data, to: spec.dir.appendingPathComponent(fileName)) }
        return [ExportRecord(format: .json, path: path, memos: memos.count, bytes: data.count, missing: missing)]
    }
}
