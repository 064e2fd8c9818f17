import Foundation
import Testing

@testable import ReckonCore

/// What a kind keeps in a plan is read back as the kind declares it: the
/// rclone config file as a text, its flags as a list; any other shape is refused.
@Suite struct PlanSideTests {
    func side(kept: [String: PlanSide.Kept]) -> PlanSide {
        var side = PlanSide(
            role: .remote, name: "drive", label: "Google Drive", path: "gdrive:60dMemo", kind: SideKindName(RcloneSide.self), place: "rclone:abc",
            writable: true, liveMemos: 5)
        side.kept = kept
        return side
    }

    @Test func keptValuesComeBackAsTheyWereWritten() throws {
        let written = side(kept: ["rcloneConfig": .text("/etc/rclone.conf"), "rcloneFlags": .list(["--fast-list"])])
        let data = try JSONEncoder().encode(written)
        let text = try #require(String(data: data, encoding: .utf8))
        #expect(text.contains(#""rcloneConfig":"\/etc\/rclone.conf""#) && text.contains(#""rcloneFlags":["--fast-list"]"#), "\(text)")
        #expect(try JSONDecoder().decode(PlanSide.self, from: data) == written)
    }

    @Test(arguments: [#""rcloneConfig": ["a.conf"]"#, #""rcloneFlags": "--fast-list""#, #""rcloneFlags": [1]"#])
    func aKeptValueOfAnotherShapeIsRefused(field: String) throws {
        let written = String(decoding: try JSONEncoder().encode(side(kept: [:])), as: UTF8.self)
        let changed = written.replacingOccurrences(of: #""writable""#, with: field + #", "writable""#)
        #expect(changed != written)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PlanSide.self, from: Data(changed.utf8)) }
    }
}
