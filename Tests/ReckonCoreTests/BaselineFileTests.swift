import Foundation
import TestSupport
import Testing

@testable import ReckonCore

@Suite struct BaselineFileTests {
    /// A baseline of every kind of value, with a header that needs escaping.
    func sample(_ memos: [(MemoID, Fingerprint)]) -> Baseline {
        Baseline(
            side: SideIdentity(kind: SideKindName(AppStoreSide.self), place: "/srv/my memos/\n%default.store#app=group.x", shown: "../my memos/ストア"),
            time: Timestamp(iso8601: "2026-04-19T12:00:00Z")!, alarmSince: Timestamp(iso8601: "2026-04-20T12:00:00.5Z"),
            memos: IDMap(sortedKeys: memos.map(\.0), values: memos.map(\.1)))
    }

    func expectSame(_ a: Baseline, _ b: Baseline, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.side == b.side && a.side.shown == b.side.shown, sourceLocation: sourceLocation)
        #expect(a.time == b.time && a.alarmSince == b.alarmSince, sourceLocation: sourceLocation)
        #expect(a.memos.keys == b.memos.keys && a.memos.values == b.memos.values, sourceLocation: sourceLocation)
    }

    @Test func aBaselineReadsBackAsItWasWritten() throws {
        let baseline = sample([
            (
                MemoID("3F2504E0-4F89-11D3-9A0C-0305E82C3301")!,
                Fingerprint(
                    modifiedTime: Timestamp(seconds: -86_401, nanoseconds: 999_999_999), archived: true, deleted: true, rowVersion: -3,
                    changeTag: 0, digest: .max)
            ),
            (
                MemoID("7C9E6679-7425-40DE-944B-E07FC1F90AE7")!,
                Fingerprint(
                    modifiedTime: Timestamp(seconds: 1_776_600_000), archived: false, deleted: false, rowVersion: nil, changeTag: nil, digest: nil)
            )
        ])
        let text = String(decoding: baseline.data, as: UTF8.self)
        #expect(
            text == """
                reckon-baseline 1
                kind store
                place /srv/my%20memos/%0A%25default.store#app=group.x
                shown ../my%20memos/%E3%82%B9%E3%83%88%E3%82%A2
                time 2026-04-19T12:00:00Z
                alarm-since 2026-04-20T12:00:00.500Z
                memos 2
                3f2504e04f8911d39a0c0305e82c3301 -86401 999999999 3 -3 0000000000000000 ffffffffffffffff
                7c9e6679742540de944be07fc1f90ae7 1776600000 0 0 - - -

                """)
        expectSame(try Baseline.parse(baseline.data), baseline)
    }

    /// Random fingerprints read back exactly; the seed is printed.
    @Test func randomBaselinesReadBackExactly() throws {
        var random = TestSeed.generator()
        func next() -> UInt64 { random.next() }
        for _ in 0..<20 {
            var ids = Set<MemoID>()
            for _ in 0..<Int(next() % 300) { ids.insert(MemoID(high: next(), low: next())) }
            let memos = ids.sorted().map { id in
                (
                    id,
                    Fingerprint(
                        modifiedTime: Timestamp(seconds: Int64(bitPattern: next()) % 100_000_000_000, nanoseconds: Int32(next() % 1_000_000_000)),
                        archived: next() % 2 == 0, deleted: next() % 5 == 0,
                        rowVersion: next() % 3 == 0 ? nil : Int64(bitPattern: next()) % 1_000_000_000_000_000,
                        changeTag: next() % 2 == 0 ? nil : next(), digest: next() % 4 == 0 ? nil : next())
                )
            }
            expectSame(try Baseline.parse(sample(memos).data), sample(memos))
        }
    }

    /// A file that is not a whole baseline this reckon writes is not used,
    /// and the words say why.
    @Test(arguments: [
        ("reckon-baseline 2\n", "it was written by a newer reckon (version 2)"),
        ("{\"memos\": []}\n", "line 1 should start with 'reckon-baseline'"),
        ("reckon-baseline 1\nkind folder\nplace /a\nshown a\ntime yesterday\nmemos 0\n", "line 5: not a time"),
        (
            "reckon-baseline 1\nkind folder\nplace /a\nshown a\ntime 2026-04-19T12:00:00Z\nmemos 2\n"
                + "7c9e6679742540de944be07fc1f90ae7 1776600000 0 0 - - -\n", "it lists 1 memo where its header says 2"
        ),
        (
            "reckon-baseline 1\nkind folder\nplace /a\nshown a\ntime 2026-04-19T12:00:00Z\nmemos 2\n"
                + "7c9e6679742540de944be07fc1f90ae7 1776600000 0 0 - - -\n3f2504e04f8911d39a0c0305e82c3301 1776600000 0 0 - - -\n",
            "line 8 is not a memo's fingerprint in id order"
        ),
        (
            "reckon-baseline 1\nkind folder\nplace /a\nshown a\ntime 2026-04-19T12:00:00Z\nmemos 1\n"
                + "7c9e6679742540de944be07fc1f90ae7 1776600000 0 4 - - -\n", "line 7 is not a memo's fingerprint in id order"
        )
    ])
    func aDamagedBaselineIsNamed(_ text: String, _ reason: String) throws {
        let folder = TempFolder()
        let url = folder.url.appendingPathComponent("baseline-drive.txt")
        try Data(text.utf8).write(to: url)
        guard case .unreadable(let message) = Baseline.read(url) else {
            Issue.record("read as a baseline")
            return
        }
        #expect(message == reason)
    }

    /// How one side moved between two fingerprints of a memo.
    @Test func changesAreToldApart() {
        let time = Timestamp(seconds: 1_776_600_000)
        let live = Fingerprint(modifiedTime: time, archived: false, deleted: false, rowVersion: 4, changeTag: 1, digest: 7)
        func with(_ change: (inout Fingerprint) -> Void) -> Fingerprint {
            var print = live
            change(&print)
            return print
        }
        let deleted = with { $0.deleted = true }
        #expect(Fingerprint.change(from: nil, to: nil) == nil)
        #expect(Fingerprint.change(from: deleted, to: nil) == nil, "soft-deleted and absent are the same")
        #expect(Fingerprint.change(from: nil, to: live) == .added)
        #expect(Fingerprint.change(from: deleted, to: live) == .added)
        #expect(Fingerprint.change(from: live, to: nil) == .deleted)
        #expect(Fingerprint.change(from: live, to: deleted) == .deleted)
        #expect(Fingerprint.change(from: live, to: with { $0.archived = true }) == .archived)
        #expect(Fingerprint.change(from: with { $0.archived = true }, to: live) == .unarchived)
        #expect(Fingerprint.change(from: live, to: with { $0.modifiedTime = Timestamp(seconds: 1_776_600_000, nanoseconds: 1) }) == .edited)
        #expect(Fingerprint.change(from: live, to: with { $0.changeTag = 2 }) == .edited)
        #expect(Fingerprint.change(from: live, to: with { $0.changeTag = nil }) == .edited)
        #expect(Fingerprint.change(from: live, to: with { $0.digest = 8 }) == .edited)
        #expect(Fingerprint.change(from: live, to: with { $0.rowVersion = 5 }) == .edited)
        #expect(Fingerprint.change(from: live, to: with { $0.digest = nil }) == nil, "a quick run reads no memo file")
        #expect(Fingerprint.change(from: live, to: live) == nil)
    }

    /// The digest covers every field the deep check compares, tags as a set.
    @Test func theDigestCoversEveryComparedField() {
        let memo = Memo(
            id: MemoID(idA)!, title: "Title", body: "Body", createdAt: Timestamp(seconds: 1), modifiedAt: Timestamp(seconds: 2),
            tags: ["b", "a"], pinned: false, changeTag: "v1")
        let digest = Fingerprint.digest(MemoSummary(memo))
        var reordered = memo
        reordered.tags = ["a", "b"]
        reordered.otherFields = ["unknown": .string("ignored")]
        #expect(Fingerprint.digest(MemoSummary(reordered)) == digest)
        let changes: [(inout Memo) -> Void] = [
            { $0.title = "Title " }, { $0.title = nil }, { $0.body = "Body." }, { $0.tags = ["a"] }, { $0.tags = ["a", "b", ""] },
            { $0.createdAt = nil }, { $0.modifiedAt = Timestamp(seconds: 2, nanoseconds: 1) }, { $0.archivedAt = Timestamp(seconds: 3) },
            { $0.deletedAt = Timestamp(seconds: 3) }, { $0.pinned = true }, { $0.changeTag = "v2" }
        ]
        var seen: Set<UInt64> = [digest]
        for change in changes {
            var changed = memo
            change(&changed)
            #expect(seen.insert(Fingerprint.digest(MemoSummary(changed))).inserted)
        }
    }

    @Test func percentagesAreNeverRoundedToNoneOrAll() {
        #expect(percent(2, 8) == "25%")
        #expect(percent(1, 1000) == "1%")
        #expect(percent(999, 1000) == "99%")
        #expect(percent(3, 3) == "100%")
        #expect(percent(1, 3) == "33%")
    }
}
