import Foundation
import ReckonCore

/// The benchmark row that times a nightly pipeline run whose export takes
/// the previous run's unchanged memos whole, after 1% of the memos changed,
/// against the same run exporting everything afresh. Both run the same
/// pipeline (a quick check of the folder against itself, then the export of
/// json, markdown and zip with archived memos) on a copy of
/// a data set's 100k Drive folder. Before each nightly run, the night before is made
/// again on the same folder: the 1% put back as they were and exported,
/// then changed in place, as the app would change them during a day.
struct IncrementalRows {
    static func name(_ set: DataSet) -> String { "export: nightly run after 1% changed, \(set.label)" }

    let pair: Pair

    /// Copies and changes the folder and writes the definitions (untimed).
    init(data: String, set: DataSet, scratch: URL, reckon: String) throws {
        let root = scratch.appendingPathComponent("nightly-\(set.folder)")
        let original = "\(data)/\(set.folder)/drive/60dMemo"
        let folder = root.appendingPathComponent("drive/60dMemo")
        try FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard try capture(["cp", "-r", original, folder.path]).code == 0 else { throw BenchError("cannot copy \(original)") }
        // Both states of what changes: index.json and the 1% of memo files.
        let paths = ["index.json"] + (try SFTPRows.changeOnePercent(of: folder)).map { "memos/\($0)" }
        let before = try paths.map { try Data(contentsOf: URL(fileURLWithPath: "\(original)/\($0)")) }
        let after = try paths.map { try Data(contentsOf: folder.appendingPathComponent($0)) }
        say("nightly row: changed \(paths.count - 1) memos in a copy of \(set.folder)/drive")
        /// Writes one state into the folder, in place, then waits out the
        /// second in which reckon takes a changed file's identity as proving nothing.
        func write(_ state: [Data]) {
            for (path, bytes) in zip(paths, state) {
                guard let handle = try? FileHandle(forWritingTo: folder.appendingPathComponent(path)) else { continue }
                try? handle.truncate(atOffset: 0)
                try? handle.write(contentsOf: bytes)
                try? handle.close()
            }
            Thread.sleep(forTimeInterval: 1.1)
        }
        /// A definition exporting the folder into `exports` beside it.
        func definition(_ name: String, exports: String) throws -> URL {
            let text = """
                {"schemaVersion": 1, "name": "\(name)", "local": {"path": "\(folder.path)"}, "remotes": [{"name": "drive", "path": "\(folder.path)"}],
                 "check": "quick", "reports": {"dir": "reports-\(name)"},
                 "export": {"from": "drive", "formats": ["json", "markdown", "zip"], "includeArchived": true, "dir": "\(exports)"}}
                """
            let url = root.appendingPathComponent("\(name).json")
            try Data(text.utf8).write(to: url)
            return url
        }
        let nightly = try definition("nightly", exports: "exports-nightly")
        let full = try definition("full", exports: "exports-full")
        let fullIndex = root.appendingPathComponent("exports-full/\(MarkdownIndex.fileName)")
        // Each run of either side starts after an untimed run of the night
        // before, so the nightly run always finds 1% changed; the full run
        // finds no index. Old runs are kept, not deleted (see the export rows).
        pair = Pair(
            name: Self.name(set), reckon: [reckon, "run", nightly.path, "--quiet"], peer: [reckon, "run", full.path, "--quiet"],
            peerName: "the same run, all rendered",
            prepare: {
                write(before)
                _ = try? capture([reckon, "run", nightly.path, "--quiet"])
                write(after)
                unlink(fullIndex.path)
                warm([folder.deletingLastPathComponent().path])
            },
            target: .atMost(0.5, "≤ 0.5× its time"))
    }
}
