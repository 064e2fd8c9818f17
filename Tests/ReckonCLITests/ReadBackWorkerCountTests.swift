import Foundation
import ReckonCore
import Testing

/// `verify` and `restore` read on every core (issue 34): what they print,
/// their exit codes and the folders they restore are the same on 1, 2 and
/// 3 worker threads (`RECKON_TEST_WORKERS`), for a whole export, its zip
/// alone, and exports damaged in the zip and beside it.
@Suite struct VerifyRestoreWorkerCountTests {
    /// What a command gave: its exit code, what it printed, and what it restored.
    struct Outcome: Equatable {
        var code: Int32
        var stdout: String
        var stderr: String
        var restored: [String: Data?]
    }

    @Test func verifyAndRestoreAreTheSameOnOneTwoAndThreeThreads() throws {
        let source = try generatedFolder(count: 1500)
        let folder = temporaryFolder()
        let made = try runArray(["export", source.path, "--out", "whole", "--include-archived"], in: folder)
        #expect(made.code == 0, "\(made.stderr)")
        // A copy with a Markdown entry of the zip damaged and a Markdown file beside it changed, and one whose zip's memos.json is damaged.
        let copy = folder.appendingPathComponent("damaged")
        try FileManager.default.copyItem(at: folder.appendingPathComponent("whole"), to: copy)
        let zip = copy.appendingPathComponent("memos.zip")
        let names = try ArchiveReader.entries(of: zip).map(\.name)
        let markdown = try #require(names.filter { $0.hasPrefix("markdown/") }.dropFirst(700).first)
        let range = try entryData(try Data(contentsOf: zip), markdown)
        try flipByte(zip, at: range.lowerBound + range.count / 2)
        let beside = try #require(names.filter { $0.hasPrefix("markdown/") }.dropFirst(1200).first)
        try flipByte(copy.appendingPathComponent(beside), at: 100)
        let badJSON = folder.appendingPathComponent("bad-json.zip")
        try FileManager.default.copyItem(at: folder.appendingPathComponent("whole/memos.zip"), to: badJSON)
        let jsonRange = try entryData(try Data(contentsOf: badJSON), "memos.json")
        try flipByte(badJSON, at: jsonRange.lowerBound + jsonRange.count / 2)

        let commands: [[String]] = [
            ["verify", "whole"], ["verify", "whole", "--json"], ["verify", "whole/memos.zip"], ["verify", "whole/memos.zip", "--json"],
            ["verify", "damaged"], ["verify", "damaged", "--json"], ["verify", "damaged/memos.zip"], ["verify", "bad-json.zip"],
            ["restore", "whole", "--to", "restored"], ["restore", "whole/memos.zip", "--to", "restored"],
            ["restore", "damaged/memos.zip", "--to", "restored"], ["restore", "bad-json.zip", "--to", "restored"]
        ]
        for command in commands {
            var outcomes: [Int: Outcome] = [:]
            for workers in 1...3 {
                let result = try runArray(command, environment: ["RECKON_TEST_WORKERS": String(workers)], in: folder)
                let restored = folder.appendingPathComponent("restored")
                outcomes[workers] = Outcome(code: result.code, stdout: result.stdout, stderr: result.stderr, restored: try everything(restored))
                if FileManager.default.fileExists(atPath: restored.path) { try FileManager.default.removeItem(at: restored) }
            }
            let one = try #require(outcomes[1])
            #expect(one.code == (command[1].hasPrefix("whole") || command[1] == "damaged/memos.zip" && command[0] == "restore" ? 0 : 2), "\(command)")
            if command[0] == "restore" && one.code == 0 {
                #expect(one.restored["index.json"] != nil && one.restored.count > 1000, "\(command): index.json and every memo")
            }
            for workers in [2, 3] {
                let other = try #require(outcomes[workers])
                #expect(other.code == one.code && other.stdout == one.stdout && other.stderr == one.stderr, "\(command) on \(workers) workers")
                let differing = Set(one.restored.keys).union(other.restored.keys).filter { one.restored[$0] != other.restored[$0] }
                #expect(differing.isEmpty, "\(command) on \(workers) workers restores other bytes in \(differing.sorted().prefix(5))")
            }
        }
    }
}
