import Foundation
import TestSupport
import Testing

/// How often a deep run with an export opens each memo file, counted by
/// strace from the system calls the binary makes: once to compare, once to
/// export, and a memo that differs once more, for the report's page to show
/// it; never more.
@Suite struct ReadCountTests {
    @Test(.needs(.tool("/usr/bin/strace")))
    func aDeepRunOpensEachMemoFileOnlyAsOftenAsItNeeds() throws {
        let folder = scratchFolder("reads")
        let device = folder.appendingPathComponent("device")
        let drive = folder.appendingPathComponent("drive")
        let memos = twelveMemos()
        try writeMemoFolder(memos, to: device)
        try writeMemoFolder(Array(memos.dropLast(3)), to: drive)
        let definition = folder.appendingPathComponent("p.json")
        try Data(
            """
            { "schemaVersion": 1, "name": "reads", "check": "deep",
              "local": { "name": "device", "path": "device" },
              "remotes": [ { "name": "drive", "label": "Google Drive", "path": "drive" } ],
              "reports": { "dir": "out/reports" },
              "export": { "from": "local", "formats": ["json", "markdown", "zip"], "dir": "out/export" } }
            """.utf8
        ).write(to: definition)
        let trace = folder.appendingPathComponent("trace.txt")
        let result = try runArray(
            ["-f", "-y", "-e", "trace=open,openat,openat2", "-o", trace.path, reckonBinary.path, "run", definition.path],
            environment: ["SOURCE_DATE_EPOCH": "1776600000"], in: folder, executable: URL(fileURLWithPath: "/usr/bin/strace"))
        #expect(result.code == 1 || result.code == 0, "\(result.stderr)")
        let calls = try String(contentsOf: trace, encoding: .utf8)
        // Opened by name inside the device's memos/, which `-y` names beside its descriptor.
        let deviceCalls = calls.split(separator: "\n").filter { $0.contains("/device/memos>, ") }
        let differing = Set(memos.suffix(3).map(\.id))
        for memo in memos {
            let opens = deviceCalls.filter { $0.contains("\"\(memo.id).json\"") }.count
            let expected = differing.contains(memo.id) ? 3 : 2
            #expect(
                opens == expected,
                "\(memo.id).json was opened \(opens) times; the device's memos are read once to compare and once to export, and those that differ once for the page"
            )
        }
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/reports/report.json").path))
    }
}
