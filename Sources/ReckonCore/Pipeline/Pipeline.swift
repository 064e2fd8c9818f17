import Foundation
import Synchronization

/// The values passed from stage to stage. Each stage adds its own part.
public struct LoadedSides: Sendable {
    public var definition: PipelineDefinition
    public var local: SideListing
    public var remotes: [SideListing]
    /// Files set aside by the quarantine stage.
    public var quarantined: [QuarantineRecord] = []
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
    /// Whether files may be written (false for `--dry-run`).
    public var writeFiles = true
    /// The run's start time; names the run's export and quarantine folders.
    /// `SOURCE_DATE_EPOCH`, when set, fixes it, for reproducible reports.
    public var startedAt = Timestamp(seconds: ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"].flatMap { Int64($0) }
                                     ?? Int64(Date().timeIntervalSince1970))
    /// Whether the run appends to `history.jsonl` (pipeline runs do).
    public var keepsHistory = false

    public init() {}

    /// Reads every side on its own, all at once: one failing does not
    /// discard the others.
    public var load: Stage<PipelineDefinition, LoadedSides> {
        Stage("load") { definition, context in
            let folder = definition.limits
            let deep = definition.check == .deep
            let specs = [definition.local] + definition.remotes
            for spec in specs { context.note("reading \(spec.label)") }
            let read = Mutex([Int: SideListing]())
            DispatchQueue.concurrentPerform(iterations: specs.count) { position in
                let side = folder.load(specs[position], deep: deep)
                read.withLock { $0[position] = side }
            }
            let sides = read.withLock { all in specs.indices.map { all[$0]! } }
            return LoadedSides(definition: definition, local: sides[0], remotes: Array(sides.dropFirst()))
        }
    }

    /// Copies every unusable file aside before anything goes on without it.
    public var quarantine: Stage<LoadedSides, LoadedSides> {
        Stage("quarantine") { [writeFiles, startedAt] loaded, context in
            guard writeFiles, let dir = loaded.definition.quarantineDir, let path = loaded.definition.quarantinePath else { return loaded }
            var quarantine = Quarantine(dir: dir, path: path, run: ExportFolder.runName(startedAt))
            quarantine.folder = loaded.definition.limits
            let (sides, records) = quarantine.setAside([loaded.local] + loaded.remotes)
            for record in records { context.note("set aside \(record.source) as \(record.copy)") }
            var result = loaded
            result.local = sides[0]
            result.remotes = Array(sides.dropFirst())
            result.quarantined = records
            return result
        }
    }

    public var reconcile: Stage<LoadedSides, Reconciliation> {
        Stage("reconcile") { loaded, _ in
            let deep = loaded.definition.check == .deep
            let differences = loaded.remotes.flatMap { Reconciler.differences(local: loaded.local, remote: $0, deep: deep) }
            return Reconciliation(loaded: loaded, differences: differences)
        }
    }

    /// Writes the definition's export, if it has one, from the chosen side,
    /// into a new folder named by the run's start time.
    public var export: Stage<Reconciliation, Exported> {
        Stage("export") { [writeFiles, startedAt] reconciliation, context in
            let loaded = reconciliation.loaded
            guard let spec = loaded.definition.export, writeFiles else { return Exported(reconciliation: reconciliation, exports: []) }
            let side = spec.from == "local" ? loaded.local : loaded.remotes.first { $0.spec.name == spec.from }!
            guard side.status != .failed else {
                let problem = Problem(.exportFailed, path: "", "\(side.spec.label) could not be read, so nothing was exported")
                return Exported(reconciliation: reconciliation, exports: [ExportRecord(format: spec.formats[0], path: spec.path, memos: 0, bytes: 0, missing: [problem])])
            }
            context.note("exporting \(side.spec.label)")
            var exporter = Exporter()
            exporter.folder = loaded.definition.limits
            let staging = try ExportFolder.makeStaging(in: spec.dir, kind: "run")
            let summary = try exporter.export(side, formats: spec.formats, includeArchived: spec.includeArchived, into: staging) {
                context.progress("exporting", done: $0, total: $1)
            }
            let (run, removed) = try ExportFolder.publishRun(staging, in: spec.dir, startedAt: startedAt, keep: spec.keep)
            for name in removed { context.note("removed the old export \(name)") }
            let records = ExportRecord.records(summary, folder: run, displayPath: "")
            return Exported(reconciliation: reconciliation, exports: records)
        }
    }

    /// Builds the report and, when the definition names a folder, writes
    /// `report.json`, `report.md`, `report.html`, the combined listings and
    /// (for pipeline runs) a line of `history.jsonl`.
    public var report: Stage<Exported, Report> {
        Stage("report") { [writeFiles, startedAt, keepsHistory] exported, context in
            let loaded = exported.reconciliation.loaded
            let definition = loaded.definition
            let differences = exported.reconciliation.differences
            let sides = [loaded.local] + loaded.remotes
            let inSync = differences.isEmpty && sides.allSatisfy { $0.status != .failed }
            let trouble = sides.contains { $0.hasTrouble } || exported.exports.contains { !$0.missing.isEmpty }
            var report = Report(pipeline: definition.name, check: definition.check, sides: sides.map(SideReport.init),
                                inSync: inSync, outcome: trouble ? .trouble : differences.isEmpty ? .inSync : .drift,
                                differences: differences, quarantined: loaded.quarantined, exports: exported.exports)
            report.startedAt = startedAt
            report.timeZone = definition.timeZone
            report.timings = context.timings.map { StageTiming(stage: $0.stage, seconds: Double($0.duration.components.seconds) + Double($0.duration.components.attoseconds) / 1e18) }
            guard writeFiles, let dir = definition.reportDir else { return report }
            if keepsHistory {
                let entry = HistoryEntry(time: startedAt, sides: report.sides.map { .init(name: $0.name, label: $0.label, counts: $0.counts) },
                                         differences: differences.count, exitCode: report.exitCode(driftFails: definition.failOnDrift))
                report.history = try History.append(entry, in: dir)
            }
            let strings = Strings.forLanguage(definition.language)
            try AtomicFile.write(try makeJSONEncoder().encode(report) + [0x0A], to: dir.appendingPathComponent("report.json"))
            try AtomicFile.write(Data(MarkdownReport(strings: strings).render(report).utf8), to: dir.appendingPathComponent("report.md"))
            try AtomicFile.write(Data(HTMLReport(strings: strings).render(report).utf8), to: dir.appendingPathComponent("report.html"))
            for remote in loaded.remotes {
                let name = loaded.remotes.count == 1 ? "combined.txt" : "combined-\(remote.spec.name).txt"
                let listing = CombinedListing.render(local: loaded.local, remote: remote, differences: differences)
                try AtomicFile.write(Data(listing.utf8), to: dir.appendingPathComponent(name))
            }
            return report
        }
    }

    /// Runs every stage in order.
    public func run(_ definition: PipelineDefinition, context: RunContext) throws -> Report {
        let loaded = try quarantine.run(try load.run(definition, in: context), in: context)
        let reconciled = try reconcile.run(loaded, in: context)
        let exported = try export.run(reconciled, in: context)
        return try report.run(exported, in: context)
    }
}
