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
        let pipeline = Pipeline()
        let loaded = pipeline.load.run(definition(), in: context)
        #expect(loaded.local.counts == MemoCounts(active: 1, archived: 1))
        let reconciled = pipeline.reconcile.run(loaded, in: context)
        #expect(reconciled.differences.map(\.sigil) == [.onlyOnLocal])
        #expect(context.timings.map(\.stage) == ["load", "reconcile"])
        #expect(context.notes == ["reading this device", "reading Google Drive"])
    }

    @Test func theWholeRunGivesTheOutcome() throws {
        let report = Pipeline().run(definition(), context: RunContext()).report
        #expect(report.outcome == .drift)
        #expect(report.inSync == false)
        #expect(report.hints(.en) == ["This device has 1 memo that is not on Google Drive. Sync this device to upload it to Google Drive."])
    }
}
