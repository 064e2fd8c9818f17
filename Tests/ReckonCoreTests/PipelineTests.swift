import Foundation
import Testing

@testable import ReckonCore

@Suite struct PipelineTests {
    let local = TempFolder()
    let remote = TempFolder()

    func definition() -> PipelineDefinition {
        local.index([entry(idA), entry(idB, archived: "2026-04-20T00:00:00Z")])
        local.write("memos/\(idA).json", memo(idA))
        local.write("memos/\(idB).json", memo(idB, archived: "2026-04-20T00:00:00Z"))
        remote.index([entry(idA)])
        remote.write("memos/\(idA).json", memo(idA))
        return PipelineDefinition(name: "t", local: local.spec(.local), remotes: [remote.spec(.remote)])
    }

    @Test func stagesRunAloneAndAreTimed() throws {
        let context = RunContext()
        let pipeline = Pipeline(startedAt: Timestamp(seconds: 1_776_600_000))
        let definition = definition()
        let run = PipelineRun(definition: definition, settings: pipeline.settings, context: context)
        let loaded = pipeline.load.run(definition, in: run)
        #expect(loaded.local.counts == MemoCounts(active: 1, archived: 1))
        let reconciled = pipeline.reconcile.run(loaded, in: run)
        #expect(reconciled.differences.map(\.sigil) == [.onlyOnLocal])
        #expect(context.timings.map(\.stage) == ["load", "reconcile"])
        #expect(context.notes == ["reading this device", "reading Google Drive"])
    }

    @Test func theWholeRunGivesTheOutcome() throws {
        let report = Pipeline(startedAt: Timestamp(seconds: 1_776_600_000)).run(definition(), context: RunContext()).report
        #expect(report.outcome == .drift)
        #expect(report.inSync == false)
        #expect(report.hints(.en) == ["This device has 1 memo that is not on Google Drive. Sync this device to upload it to Google Drive."])
    }

    /// A stage is a stored value: a test puts another in its place, and the
    /// stages after it take what it returned.
    @Test func aStageCanBeReplacedAndTheLaterStagesUseWhatItGives() throws {
        var pipeline = Pipeline(startedAt: Timestamp(seconds: 1_776_600_000))
        pipeline.reconcile = Stage("reconcile") { _, _ in Reconciliation(differences: []) }
        let report = pipeline.run(definition(), context: RunContext()).report
        #expect(report.outcome == .inSync, "the report is built from the replaced stage's value, not from the sides")
        #expect(report.differences.isEmpty)
        #expect(report.sides.map(\.counts) == [MemoCounts(active: 1, archived: 1), MemoCounts(active: 1, archived: 0)])
    }

    /// Load hands each side's store forward: the export reads through the
    /// store that listed the side, and opens nothing again.
    @Test func loadHandsEachSideStoreForward() throws {
        let definition = definition()
        let pipeline = Pipeline(startedAt: Timestamp(seconds: 1_776_600_000))
        let run = PipelineRun(definition: definition, settings: pipeline.settings, context: RunContext())
        let loaded = pipeline.load.run(definition, in: run)
        #expect(loaded.stores.count == 2)
        #expect(loaded.stores.map(\.spec) == [definition.local] + definition.remotes)
    }
}
