import Foundation
import ReckonCore
import Testing

/// The stories of the last agreement, through the binary: a change on one
/// side stays one-sided however many nightly runs see it, a later change on
/// the other side makes it a conflict, undo never reads as a deletion, and a
/// state folder from before agreements were kept is seeded from its baselines.
@Suite struct AgreementTests {
    func agreement(_ pipeline: BaselinePipeline) throws -> [String: Any] {
        try json(read(pipeline.state.appendingPathComponent("agreement-drive.json")))
    }

    func agreedAt(_ pipeline: BaselinePipeline, _ n: Int) throws -> String? {
        let memos = try agreement(pipeline)["memos"] as! [[String: Any]]
        return memos.first { ($0["id"] as! String).uppercased() == EditableSide.id(n) }?["agreedAt"] as? String
    }

    /// Edited on the drive alone, seen by two nightly runs: the plan the
    /// morning after copies it to the device without asking. Edited on the
    /// device too, however many nights later: a conflict, never a copy.
    @Test func aOneSidedEditStaysOneSidedOverNightlyRuns() throws {
        var pipeline = try BaselinePipeline(memos: 1...3)
        #expect(try pipeline.run(day: 0).0.code == 0)
        #expect(try agreedAt(pipeline, 2) == "2026-04-19T12:00:00Z")
        pipeline.drive.memos[2] = .init(body: "Edited on the drive", modified: "2026-04-19T18:00:00Z")
        try pipeline.drive.write()
        for day in 1...2 {
            let (run, report) = try pipeline.run(day: day)
            #expect(run.code == 0, "drift alone fails no run without failOnDrift")
            #expect(directions(report) == [2: "remote"], "night \(day)")
            let difference = (report["differences"] as! [[String: Any]])[0]
            #expect(difference["agreedAt"] as? String == "2026-04-19T12:00:00Z", "the agreement does not move while they differ")
            #expect(run.stdout.contains("changed on Google Drive since they last agreed on 2026-04-19"), "\(run.stdout)")
        }
        let (planned, plan) = try pipeline.plan(day: 3)
        #expect(planned.code == 1)
        #expect(actions(plan) == [2: "copy remote>local"], "copied without a choice")
        let reason = (plan["actions"] as! [[String: Any]])[0]["reason"] as? String
        #expect(reason == "edited on Google Drive since they last agreed on 2026-04-19; unchanged on this device: copied to this device")

        pipeline.device.memos[2] = .init(body: "Edited on the device, days later", modified: "2026-04-23T09:00:00Z")
        try pipeline.device.write()
        #expect(try pipeline.run(day: 4).0.code == 0)
        let (_, conflicted) = try pipeline.plan(day: 5)
        #expect(actions(conflicted) == [2: "conflict ->-"], "changed on both sides since they agreed, on different nights")
        let shown = try pipeline.reckon(["show", EditableSide.id(2), "p.json"], day: 5)
        #expect(shown.stdout.contains("conflict: changed on both sides since they last agreed on 2026-04-19"), "\(shown.stdout)")
    }

    /// A memo only on the device is copied to the drive, a nightly run sees
    /// them agree, and the apply is undone: the next run raises no alarm and
    /// counts no deletion, and the next plan copies the memo to the drive
    /// again, as a plan before the apply would; never a deletion on the device.
    /// A memo edited on the device goes the same way, never overwritten there.
    @Test func undoAfterANightlyRunPlansAsBeforeTheApply() throws {
        var pipeline = try BaselinePipeline(memos: 1...3)
        #expect(try pipeline.run(day: 0).0.code == 0)
        pipeline.device.memos[7] = .init(body: "Only on the device", modified: "2026-04-19T18:00:00Z")
        pipeline.device.memos[3] = .init(body: "Edited on the device", modified: "2026-04-19T19:00:00Z")
        try pipeline.device.write()
        let (_, before) = try pipeline.plan(day: 1)
        #expect(actions(before) == [3: "copy local>remote", 7: "copy local>remote"])
        #expect(try pipeline.apply(["--yes"], day: 1).code == 0)
        let (nightly, inSync) = try pipeline.run(day: 2)
        #expect(nightly.code == 0)
        #expect(inSync["inSync"] as? Bool == true)
        #expect(try agreedAt(pipeline, 7) == "2026-04-20T12:00:00Z", "the apply made them agree, and the nightly run saw them so")

        let undone = try pipeline.reckon(["undo", pipeline.applyRuns()[0], "--state", pipeline.state.path], day: 3)
        #expect(undone.code == 0, "\(undone.stdout)\(undone.stderr)")
        #expect(try agreedAt(pipeline, 7) == nil, "the memo was never agreed on before the apply")
        #expect(try agreedAt(pipeline, 3) == "2026-04-19T12:00:00Z", "as before the apply")

        let (after, report) = try pipeline.run(day: 4)
        #expect(after.code == 0, "\(after.stdout)")
        #expect(side(report, 1)["alarm"] is NSNull, "undo's own removal is no deletion on the drive")
        #expect(side(report, 1)["sinceLastRun"] as? [String: Int] == ["added": 0, "edited": 0, "archived": 0, "unarchived": 0, "deleted": 0])
        #expect(directions(report) == [3: "local", 7: "unknown"])
        let (_, plan) = try pipeline.plan(day: 5)
        #expect(actions(plan) == actions(before), "the plan a plan before the apply made")
    }

    /// A state folder written before agreements were kept holds baselines
    /// only: the next run seeds the agreement from every memo both hold with
    /// the same digest and state, at the older baseline's time, and writes it.
    @Test func aStateFolderFromBeforeIsSeededFromItsBaselines() throws {
        var pipeline = try BaselinePipeline(memos: 1...3)
        pipeline.drive.memos[3]!.body = "Worded otherwise on the drive from the start"
        try pipeline.drive.write()
        #expect(try pipeline.run(day: 0).0.code == 0)
        let file = pipeline.state.appendingPathComponent("agreement-drive.json")
        try FileManager.default.removeItem(at: file)
        // The device's baseline is a day newer, as when only it was read again.
        let deviceBaseline = pipeline.state.appendingPathComponent("baseline-device.txt")
        try Data(try read(deviceBaseline).replacingOccurrences(of: "time 2026-04-19T12:00:00Z", with: "time 2026-04-20T12:00:00Z").utf8)
            .write(to: deviceBaseline)

        pipeline.drive.memos[2] = .init(body: "Edited on the drive", modified: "2026-04-20T18:00:00Z")
        try pipeline.drive.write()
        let (_, plan) = try pipeline.plan(day: 2)
        #expect(actions(plan) == [2: "copy remote>local", 3: "conflict ->-"], "2 agreed in both baselines; 3 never")
        #expect(FileKind(path: file.path) == .missing, "a plan writes no state")

        let (_, report) = try pipeline.run(day: 2)
        #expect(directions(report) == [2: "remote", 3: "unknown"])
        #expect(try agreedAt(pipeline, 2) == "2026-04-19T12:00:00Z", "seeded at the older baseline's time, kept while they differ")
        #expect(try agreedAt(pipeline, 1) == "2026-04-19T12:00:00Z", "seen equal again, on the version they agreed on then")
        #expect(try agreedAt(pipeline, 3) == nil)
    }

    /// An agreement of another pair of sides is not used, and the next deep
    /// run writes this pair's; an unreadable one is named and not used.
    @Test func anAgreementOfOtherSidesOrUnreadableIsNotUsed() throws {
        var pipeline = try BaselinePipeline(memos: 1...2)
        #expect(try pipeline.run(day: 0).0.code == 0)
        let file = pipeline.state.appendingPathComponent("agreement-drive.json")
        let text = try read(file)
        try Data(
            text.replacingOccurrences(of: "\"shown\": \"drive\"", with: "\"shown\": \"elsewhere\"").replacingOccurrences(
                of: "/drive\"", with: "/elsewhere\""
            ).utf8
        )
        .write(to: file)
        pipeline.drive.memos[1] = .init(body: "Edited", modified: "2026-04-20T08:00:00Z")
        try pipeline.drive.write()
        // The baselines seed nothing here: the file is there, of other sides, so nothing is agreed.
        let (_, plan) = try pipeline.plan(day: 1)
        #expect(actions(plan) == [1: "conflict ->-"])
        let (run, report) = try pipeline.run(day: 1)
        #expect(run.code == 0)
        #expect(side(report, 1)["agreement"] as? String == "another-pair")
        #expect(side(report, 0)["agreement"] is NSNull)
        #expect(
            run.stdout.contains("The last agreement of this device and Google Drive in the state folder belongs to other sides ("), "\(run.stdout)")
        #expect(try read(file).contains("/drive\""), "written again for this pair")
        try Data("{\"schemaVersion\": 9}".utf8).write(to: file)
        let (planned, again) = try pipeline.plan(day: 2)
        #expect(actions(again) == [1: "conflict ->-"])
        #expect(
            planned.stderr.contains("warning: The last agreement of this device and Google Drive could not be read ("),
            "a plan says why it decides as if they never agreed: \(planned.stderr)")
        let (unreadable, unread) = try pipeline.run(day: 2)
        #expect(side(unread, 1)["agreement"] as? String == "unreadable")
        #expect(
            unreadable.stdout.contains(
                "The last agreement of this device and Google Drive could not be read (out/reports/state/agreement-drive.json: it was written by a newer reckon (schemaVersion 9)), so it was not used"
            ), "\(unreadable.stdout)")
    }
}
