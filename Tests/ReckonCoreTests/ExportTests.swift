import Foundation
import Testing
@testable import ReckonCore

@Suite struct JSONExportTests {
    func memo(_ id: String, created: String?) -> Memo {
        Memo(id: MemoID(id)!, title: "t", createdAt: created.flatMap { Timestamp(iso8601: $0) }, modifiedAt: Timestamp(seconds: 0))
    }

    @Test func sortsByCreationThenIdWithUndatedFirst() throws {
        let memos = [memo(idC, created: "2026-01-02T00:00:00Z"), memo(idB, created: "2026-01-01T00:00:00Z"),
                     memo(idA, created: "2026-01-01T00:00:00Z"), memo(idD, created: nil)]
        let ordered = memos.sorted(by: JSONExport.exportOrder).map(\.id.value)
        #expect(ordered == [idD, idA, idB, idC].map { $0.lowercased() })
    }

    @Test func writesEveryFieldInUTCAndKeepsUnknownKeys() throws {
        var m = memo(idA, created: "2026-04-02T09:00:00+09:00")
        m.tags = ["b", "a"]
        m.otherFields = ["color": .string("red")]
        guard case .object(let object) = JSONExport.value(of: m) else { Issue.record("not an object"); return }
        #expect(object["createdAt"] == .string("2026-04-02T00:00:00Z"))
        #expect(object["tags"] == .array([.string("a"), .string("b")]))
        #expect(object["color"] == .string("red"))
        #expect(object["archivedAt"] == .null)
        #expect(object["id"] == .string(idA.lowercased()))
    }
}
