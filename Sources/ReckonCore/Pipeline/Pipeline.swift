import Foundation

/// How one run goes, as the command line sets it: the run's start time
/// (which the command line reads from the clock, or from
/// `SOURCE_DATE_EPOCH` for reproducible reports) and what the run may do.
package struct RunSettings: Sendable {
    /// Names the run's export and quarantine folders.
    package var startedAt: Timestamp
    /// Whether files may be written (false for `--dry-run`).
    package var writeFiles = true
    /// Whether the run appends to `history.jsonl` (pipeline runs do).
    package var keepsHistory = false
    /// Whether a person agreed, for this run, to the deletions an alarm
    /// names (`--accept-deletions`): the run is not held back by it, and the
    /// baseline moves on.
    package var acceptDeletions = false
    /// Whether the export reads every memo, even one whose file the
    /// previous run read and is unchanged (`--refresh`).
    package var readsEveryMemo = false
    /// The run folders already in the export folder, as the check before
    /// the run found them (`checkExportFolderIsOwn`), recorded for the next
    /// run once the export is published; nil records nothing.
    package var exportRuns: [RunFolder]? = nil
    /// How the report's page writes the commands that carry out choices.
    package var repairCommand: RepairCommand?
    /// What the process around the library decides for the run (private
    /// folders, child environment, workers, lock wait, test checkpoints).
    package var process = ProcessSettings()

    package init(startedAt: Timestamp) { self.startedAt = startedAt }
}

/// What every stage of one run shares and none changes: the definition,
/// the settings, and the context that records timings, notes and warnings.
package struct PipelineRun: Sendable {
    package var definition: PipelineDefinition
    package var settings: RunSettings
    package var context: RunContext

    package init(definition: PipelineDefinition, settings: RunSettings, context: RunContext) {
        self.definition = definition
        self.settings = settings
        self.context = context
    }
}

/// The sides as Load read them, each with the store that read it, and the
/// files the quarantine set aside. Later stages read memos through these
/// stores, so a side is opened, and a store's snapshot taken, once a run.
package struct LoadedSides: Sendable {
    package var local: SideListing
    package var remotes: [SideListing]
    /// The store that read each side, the local one first.
    package var stores: [any MemoStore]
    /// Files set aside by the quarantine stage.
    package var quarantined: [QuarantineRecord] = []
    /// The sides' locks, held shared while the stages read them.
    package var locks: SideLocks?

    /// Every side, the local one first.
    package var sides: [SideListing] { [local] + remotes }

    /// The side an export reads, with its store.
    func side(_ source: ExportSource) -> (SideListing, any MemoStore) {
        switch source {
        case .local: (local, stores[0])
        case .remote(_, let position): (remotes[position], stores[position + 1])
        }
    }
}

/// What Reconcile found: every memo that differs, each side's baseline
/// and what moved since, in the order of `LoadedSides.sides`, and the
/// local side's agreement with each remote, in the order of `LoadedSides.remotes`.
package struct Reconciliation: Sendable {
    package var differences: [Difference]
    package var baselines: [SideBaseline] = []
    package var agreements: [PairAgreement] = []

    package init(differences: [Difference], baselines: [SideBaseline] = [], agreements: [PairAgreement] = []) {
        self.differences = differences
        self.baselines = baselines
        self.agreements = agreements
    }

    /// When the oldest deletion alarm that still holds was raised: the
    /// export keeps the last run before it.
    var alarmSince: Timestamp? { baselines.filter(\.alarmHolds).compactMap { $0.alarm?.since }.min() }
}

/// What Export wrote.
package struct Exported: Sendable {
    /// The files written, or one record saying why the export failed.
    package var exports: [ExportRecord] = []
    /// What the export published but could not tidy as asked: old run
    /// folders whose removal stopped part of the way.
    package var failures: [OutputError] = []
}

/// What the last stage wrote: the report, the run's history, and every
/// output that could not be written.
package struct Published: Sendable {
    package var report: Report
    package var failures: [OutputError]

    /// The exit code: trouble when an output could not be written.
    package func exitCode(driftFails: Bool) -> Int32 {
        failures.isEmpty ? report.exitCode(driftFails: driftFails) : 2
    }
}

/// The run of one pipeline: load → quarantine → reconcile → export → build
/// report → publish. Each stage is in its own file in `Stages/`, and is
/// a stored value. No stage throws, so the last one, which writes every
/// output, always runs.
package struct Pipeline {
    package var settings: RunSettings
    package var load = Pipeline.loading
    package var quarantine = Pipeline.quarantining
    package var reconcile = Pipeline.reconciling
    package var export = Pipeline.exporting
    package var buildReport = Pipeline.reporting
    package var publish = Pipeline.publishing

    /// A run started at `startedAt`, in the process `process` describes.
    package init(startedAt: Timestamp, process: ProcessSettings = ProcessSettings()) {
        settings = RunSettings(startedAt: startedAt)
        settings.process = process
    }

    /// Runs every stage in order, each given what it needs.
    package func run(_ definition: PipelineDefinition, context: RunContext) -> Published {
        let run = PipelineRun(definition: definition, settings: settings, context: context)
        let loaded = quarantine.run(load.run(definition, in: run), in: run)
        let reconciled = reconcile.run(loaded, in: run)
        let exported = export.run(ExportInput(sides: loaded, keepLastBefore: reconciled.alarmSince), in: run)
        let report = buildReport.run(ReportInput(sides: loaded, reconciliation: reconciled, exported: exported, timings: context.timings), in: run)
        return publish.run(PublishInput(report: report, sides: loaded, reconciled: reconciled, failures: exported.failures), in: run)
    }
}
