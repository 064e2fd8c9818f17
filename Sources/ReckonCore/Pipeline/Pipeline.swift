import Foundation

/// The sides as read, and the files the quarantine set aside.
public struct LoadedSides: Sendable {
    public var definition: PipelineDefinition
    public var local: SideListing
    public var remotes: [SideListing]
    /// Files set aside by the quarantine stage.
    public var quarantined: [QuarantineRecord] = []

    /// Every side, the local one first.
    public var sides: [SideListing] { [local] + remotes }
}

public struct Reconciliation: Sendable {
    public var loaded: LoadedSides
    public var differences: [Difference]
    /// Each side's baseline and what moved since, in the order of `loaded.sides`.
    public var baselines: [SideBaseline] = []
}

public struct Exported: Sendable {
    public var reconciliation: Reconciliation
    /// The files written, or one record saying why the export failed.
    public var exports: [ExportRecord]
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
/// report → publish. Each stage is in its own file in `Stages/`. No stage
/// throws, so the last one, which writes every output, always runs.
public struct Pipeline {
    /// Whether files may be written (false for `--dry-run`).
    public var writeFiles = true
    /// The run's start time; names the run's export and quarantine folders.
    /// `SOURCE_DATE_EPOCH`, when set, fixes it, for reproducible reports.
    public var startedAt = Timestamp(seconds: ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"].flatMap { Int64($0) }
                                     ?? Int64(Date().timeIntervalSince1970))
    /// Whether the run appends to `history.jsonl` (pipeline runs do).
    public var keepsHistory = false
    /// Whether a person agreed, for this run, to the deletions an alarm
    /// names (`--accept-deletions`): the run is not held back by it, and the
    /// baseline moves on.
    public var acceptDeletions = false
    /// Whether the export reads every memo, even one whose file the
    /// previous run read and is unchanged (`--refresh`).
    public var readsEveryMemo = false

    public init() {}

    /// Runs every stage in order.
    public func run(_ definition: PipelineDefinition, context: RunContext) -> Published {
        let loaded = quarantine.run(load.run(definition, in: context), in: context)
        let reconciled = reconcile.run(loaded, in: context)
        let exported = export.run(reconciled, in: context)
        let report = buildReport.run(exported, in: context)
        return publish.run(PublishInput(report: report, loaded: exported.reconciliation.loaded, baselines: exported.reconciliation.baselines,
                                        failures: exported.failures),
                           in: context)
    }
}
