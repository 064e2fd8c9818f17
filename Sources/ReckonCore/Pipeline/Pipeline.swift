import Foundation

/// How one run goes, as the command line sets it: the run's start time
/// (which the command line reads from the clock, or from
/// `SOURCE_DATE_EPOCH` for reproducible reports) and what the run may do.
public struct RunSettings: Sendable {
    /// Names the run's export and quarantine folders.
    public var startedAt: Timestamp
    /// Whether files may be written (false for `--dry-run`).
    public var writeFiles = true
    /// Whether the run appends to `history.jsonl` (pipeline runs do).
    public var keepsHistory = false
    /// Whether a person agreed, for this run, to the deletions an alarm
    /// names (`--accept-deletions`): the run is not held back by it, and the
    /// baseline moves on.
    public var acceptDeletions = false
    /// Whether the export reads every memo, even one whose file the
    /// previous run read and is unchanged (`--refresh`).
    public var readsEveryMemo = false

    public init(startedAt: Timestamp) { self.startedAt = startedAt }
}

/// What every stage of one run shares and none changes: the definition,
/// the settings, and the context that records timings, notes and warnings.
public struct PipelineRun: Sendable {
    public var definition: PipelineDefinition
    public var settings: RunSettings
    public var context: RunContext
}

/// The sides as Load read them, each with the store that read it, and the
/// files the quarantine set aside. Later stages read memos through these
/// stores, so a side is opened, and a store's snapshot taken, once a run.
public struct LoadedSides: Sendable {
    public var local: SideListing
    public var remotes: [SideListing]
    /// The store that read each side, the local one first.
    package var stores: [any MemoStore]
    /// Files set aside by the quarantine stage.
    public var quarantined: [QuarantineRecord] = []

    /// Every side, the local one first.
    public var sides: [SideListing] { [local] + remotes }

    /// The side an export reads, with its store.
    func side(_ source: ExportSource) -> (SideListing, any MemoStore) {
        switch source {
        case .local: (local, stores[0])
        case .remote(let name):
            remotes.indices.first { remotes[$0].spec.name == name }.map { (remotes[$0], stores[$0 + 1]) }!
        }
    }
}

/// What Reconcile found: every memo that differs, and each side's baseline
/// and what moved since, in the order of `LoadedSides.sides`.
public struct Reconciliation: Sendable {
    public var differences: [Difference]
    public var baselines: [SideBaseline] = []

    /// When the oldest deletion alarm that still holds was raised: the
    /// export keeps the last run before it.
    var alarmSince: Timestamp? { baselines.filter(\.alarmHolds).compactMap { $0.alarm?.since }.min() }
}

/// What Export wrote.
public struct Exported: Sendable {
    /// The files written, or one record saying why the export failed.
    public var exports: [ExportRecord] = []
    /// What the export published but could not tidy as asked: old run
    /// folders whose removal stopped part of the way.
    public var failures: [OutputError] = []
}

/// What the last stage wrote: the report, the run's history, and every
/// output that could not be written.
public struct Published: Sendable {
    public var report: Report
    public var failures: [OutputError]

    /// The exit code: trouble when an output could not be written.
    public func exitCode(driftFails: Bool) -> Int32 {
        failures.isEmpty ? report.exitCode(driftFails: driftFails) : 2
    }
}

/// The run of one pipeline: load → quarantine → reconcile → export → build
/// report → publish. Each stage is in its own file in `Stages/`, and is
/// a stored value. No stage throws, so the last one, which writes every
/// output, always runs.
public struct Pipeline {
    public var settings: RunSettings
    public var load = Pipeline.loading
    public var quarantine = Pipeline.quarantining
    public var reconcile = Pipeline.reconciling
    public var export = Pipeline.exporting
    public var buildReport = Pipeline.reporting
    public var publish = Pipeline.publishing

    public init(startedAt: Timestamp) {
        settings = RunSettings(startedAt: startedAt)
    }

    /// Runs every stage in order, each given what it needs.
    public func run(_ definition: PipelineDefinition, context: RunContext) -> Published {
        let run = PipelineRun(definition: definition, settings: settings, context: context)
        let loaded = quarantine.run(load.run(definition, in: run), in: run)
        let reconciled = reconcile.run(loaded, in: run)
        let exported = export.run(ExportInput(sides: loaded, keepLastBefore: reconciled.alarmSince), in: run)
        let report = buildReport.run(ReportInput(sides: loaded, reconciliation: reconciled, exported: exported, timings: context.timings), in: run)
        return publish.run(PublishInput(report: report, sides: loaded, baselines: reconciled.baselines, failures: exported.failures), in: run)
    }
}
