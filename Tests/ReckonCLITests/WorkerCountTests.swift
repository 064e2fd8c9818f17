import Foundation
import ReckonCore
import Testing

/// What reckon writes does not depend on how many threads do the work: an
/// export and a pipeline run (a deep check, an export, the reports) on 1, 2
/// and 3 worker threads (`RECKON_TEST_WORKERS`) write the same bytes.
@Suite struct WorkerCountTests {
    /// Runs `arguments` in `folder` on 1, 2 and 3 threads with the clock
    /// fixed, each time into an empty `out` there, and gives what each run
    /// left in it (stage timings masked), by thread count. Left out: the
    /// index of a pipeline's exports, which records the inodes and change
    /// times of the files each run wrote and read.
    func outputs(_ arguments: [String], in folder: URL) throws -> [Int: [String: Data?]] {
        var found: [Int: [String: Data?]] = [:]
        for workers in 1...3 {
            let out = folder.appendingPathComponent("out")
            let result = try runArray(arguments, environment: ["SOURCE_DATE_EPOCH": "1796117400", "RECKON_TEST_WORKERS": String(workers)], in: folder)
            #expect(result.code == 0 || result.code == 1, "\(workers) workers: \(result.stderr)")
            found[workers] = Dictionary(
                uniqueKeysWithValues: try everything(out).filter { !$0.key.hasSuffix("/" + MarkdownIndex.fileName) }.map { path, data in
                    let report = path.hasPrefix("reports/") && (path.hasSuffix(".md") || path.hasSuffix(".html"))
                    return (path, report ? data.map { Data(maskTimings(String(decoding: $0, as: UTF8.self)).utf8) } : data)
                })
            try FileManager.default.removeItem(at: out)
        }
        return found
    }

    func expectSame(_ outputs: [Int: [String: Data?]]) {
        let one = outputs[1] ?? [:]
        #expect(one.count > 100, "\(one.keys.sorted().prefix(5))")
        for workers in [2, 3] {
            let other = outputs[workers] ?? [:]
            #expect(Set(other.keys) == Set(one.keys), "\(workers) workers: \(Set(other.keys).symmetricDifference(one.keys).sorted().prefix(5))")
            let differing = one.keys.filter { other[$0] != one[$0] }.sorted()
            #expect(differing.isEmpty, "\(workers) workers write other bytes than 1 in \(differing.prefix(5))")
        }
    }

    @Test func anExportIsTheSameOnOneTwoAndThreeThreads() throws {
        let source = try generatedFolder(count: 1500)
        expectSame(try outputs(["export", source.path, "--out", "out", "--include-archived"], in: temporaryFolder()))
    }

    @Test func aPipelineRunIsTheSameOnOneTwoAndThreeThreads() throws {
        let device = try generatedFolder(count: 1500)
        let drive = try generatedFolder(count: 1450)
        // Drive lacks the last 50 memos and holds one memo edited.
        let edited = try #require(try FileManager.default.contentsOfDirectory(atPath: drive.appendingPathComponent("memos").path).sorted().first)
        let file = drive.appendingPathComponent("memos/\(edited)")
        try Data(try read(file).replacingOccurrences(of: "Memo number", with: "Edited memo number").utf8).write(to: file)
        let folder = temporaryFolder()
        try Data(
            """
            {"schemaVersion": 1, "name": "workers", "local": {"name": "device", "path": "\(device.path)"},
             "remotes": [{"name": "drive", "label": "Google Drive", "path": "\(drive.path)"}], "check": "deep",
             "reports": {"dir": "out/reports"},
             "export": {"from": "local", "formats": ["json", "markdown", "zip"], "includeArchived": true, "dir": "out/export"}}
            """.utf8
        ).write(to: folder.appendingPathComponent("pipeline.json"))
        expectSame(try outputs(["run", "pipeline.json"], in: folder))
    }
}
