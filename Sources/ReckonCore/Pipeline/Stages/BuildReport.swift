import Foundation

/// What the report is built from: the sides, what Reconcile found, what
/// Export wrote, and the earlier stages' timings.
package struct ReportInput: Sendable {
    package var sides: LoadedSides
    package var reconciliation: Reconciliation
    package var exported: Exported
    package var timings: [RunContext.Timing]
}

extension Pipeline {
    /// Builds the report from what the earlier stages found; writes nothing.
    package static var reporting: Stage<ReportInput, Report> {
        Stage("report") { input, run in
            var report = Report.build(input, definition: run.definition, startedAt: run.settings.startedAt)
            report.repair = run.settings.repairCommand
            // Only the pages show the memos, so they are read only when pages are written.
            if run.definition.reportDir != nil {
                report.details = MemoDetail.read(input.reconciliation.differences, sides: input.sides, deep: run.definition.check == .deep)
            }
            return report
        }
    }
}

extension Report {
    /// The report of a run: a pure function of the stages' values, the
    /// definition and the run's start time.
    package static func build(_ input: ReportInput, definition: PipelineDefinition, startedAt: Timestamp) -> Report {
        let differences = input.reconciliation.differences
        let sides = input.sides.sides
        let inSync = differences.isEmpty && sides.allSatisfy { $0.status != .failed }
        let baselines = input.reconciliation.baselines
        let exports = input.exported.exports
        let trouble =
            sides.contains { $0.hasTrouble } || exports.contains { $0.failure != nil || !$0.missing.isEmpty }
            || baselines.contains { $0.alarmHolds }
        var sideReports = sides.map(SideReport.init)
        for (index, baseline) in zip(sideReports.indices, baselines) { sideReports[index].add(baseline) }
        for (index, agreement) in zip(sideReports.indices.dropFirst(), input.reconciliation.agreements) {
            (sideReports[index].agreement, sideReports[index].agreementNote) = (agreement.use, agreement.note)
        }
        var report = Report(
            pipeline: definition.name, check: definition.check, sides: sideReports,
            inSync: inSync, outcome: trouble ? .trouble : differences.isEmpty ? .inSync : .drift,
            differences: differences, quarantined: input.sides.quarantined, exports: exports)
        report.startedAt = startedAt
        report.timeZone = definition.timeZone
        report.content = definition.reportContent
        report.timings = input.timings.map {
            StageTiming(stage: $0.stage, seconds: $0.duration.inSeconds)
        }
        return report
    }
}
