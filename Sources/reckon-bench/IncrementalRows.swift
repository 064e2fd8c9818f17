import Foundation
import ReckonCore

/// The benchmark row that times a nightly pipeline run whose export reuses
/// the previous run's Markdown files, after 1% of the memos changed,
/// against the same run exporting everything afresh. Both run the same
/// pipeline (a quick check of the folder against itself, then the export of
/// json, markdown and zip with archived memos) on a copy of
/// `pair-100k/drive` with every 100th memo changed.
struct IncrementalRows {
    static let name = "export: nightly run after 1% changed, 100k"

    let pair: Pair

    /// Copies and changes the folder and writes the definitions (untimed).
    init(data: String, scratch: URL, reckon: String) throws {
        let root = scratch.appendingPathComponent("nightly")
        let original = "\(data)/pair-100k/drive/60dMemo"
        let changed = root.appendingPathComponent("changed/60dMemo")
        try FileManager.default.createDirectory(at: changed.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard try capture(["cp", "-r", original, changed.path]).code == 0 else { throw BenchError("cannot copy \(original)") }
        let count = try SFTPRows.changeOnePercent(of: changed)
        say("nightly row: changed \(count) memos in a copy of pair-100k/drive")
        /// A definition exporting `source` into `exports` beside it.
        func definition(_ name: String, source: String, exports: String) throws -> URL {
            let text = """
                {"schemaVersion": 1, "name": "\(name)", "local": {"path": "\(source)"}, "remotes": [{"name": "drive", "path": "\(source)"}],
                 "check": "quick", "reports": {"dir": "reports-\(name)"},
                 "export": {"from": "drive", "formats": ["json", "markdown", "zip"], "includeArchived": true, "dir": "\(exports)"}}
                """
            let url = root.appendingPathComponent("\(name).json")
            try Data(text.utf8).write(to: url)
            return url
        }
        // The night before: the unchanged folder, exported where the nightly run exports.
        let before = try definition("before", source: original, exports: "exports-nightly")
        let nightly = try definition("nightly", source: changed.path, exports: "exports-nightly")
        let full = try definition("full", source: changed.path, exports: "exports-full")
        let fullIndex = root.appendingPathComponent("exports-full/\(MarkdownIndex.fileName)")
        // Each run of either side starts after an untimed run of the night
        // before, so the nightly run always finds 1% changed; the full run
        // finds no index. Old runs are kept, not deleted (see the export rows).
        pair = Pair(name: Self.name, reckon: [reckon, "run", nightly.path, "--quiet"], peer: [reckon, "run", full.path, "--quiet"],
                    peerName: "the same run, all rendered", prepare: {
                        _ = try? capture([reckon, "run", before.path, "--quiet"])
                        unlink(fullIndex.path)
                        warm([original, changed.path])
                    })
    }
}
