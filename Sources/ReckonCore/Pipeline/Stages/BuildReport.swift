import Foundation

extension Pipeline {
    /// Builds the report from what the earlier stages found; writes nothing.
    public var buildReport: Stage<Exported, Report> {
        Stage("report") { [startedAt] exported, context in
            Report.build(exported, startedAt: startedAt, timings: context.timings)
        }
    }
}

extension Report {
    /// The report of a run: a pure function of the stages' values, the
    /// run's start time and the stages' timings.
    public static func build(_ exported: Exported, startedAt: Timestamp, timings: [RunContext.Timing]) -> Report {
        let loaded = exported.reconciliation.loaded
        let differences = exported.reconciliation.differences
        let sides = loaded.sides
        let inSync = differences.isEmpty && sides.allSatisfy { $0.status != .failed }
        let baselines = exported.reconciliation.baselines
        let trouble = sides.contains { $0.hasTrouble } || exported.exports.contains { $0.failure != nil || !$0.missing.isEmpty }
            || baselines.contains { $0.alarmHolds }
        var sideReports = sides.map(SideReport.init)
        for (index, baseline) in zip(sideReports.indices, baselines) { sideReports[index].add(baseline) }
        var report = Report(pipeline: loaded.definition.name, check: loaded.definition.check, sides: sideReports,
                            inSync: inSync, outcome: trouble ? .trouble : differences.isEmpty ? .inSync : .drift,
                            differences: differences, quarantined: loaded.quarantined, exports: exported.exports)
        report.startedAt = startedAt
        report.timeZone = loaded.definition.timeZone
        report.timings = timings.map { StageTiming(stage: $0.stage, seconds: Double($0.duration.components.seconds) + Double($0.duration.components.attoseconds) / 1e18) }
        return report
    }
}
