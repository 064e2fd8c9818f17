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
        // Both states of what changes, index.json and the 1% of memo files, kept on disk and
        // copied in through a small buffer, and the change made in a child: the benchmark's
        // own peak RSS is the least any child it spawns shows, so it holds no index.
        let list = root.appendingPathComponent("changed.txt")
        let changed = try capture([CommandLine.arguments[0], "change-memos", folder.path, list.path], environment: [:])
        guard changed.code == 0 else { throw BenchError("change-memos of \(folder.path) failed: \(changed.errors)") }
        let names = try String(contentsOf: list, encoding: .utf8).split(separator: "\n").map(String.init)
        let paths = ["index.json"] + names.map { "memos/\($0)" }
        let after = root.appendingPathComponent("after")
        try FileManager.default.createDirectory(at: after.appendingPathComponent("memos"), withIntermediateDirectories: true)
        for path in paths {
            guard try capture(["cp", folder.appendingPathComponent(path).path, after.appendingPathComponent(path).path]).code == 0 else {
                throw BenchError("cannot keep a copy of \(folder.appendingPathComponent(path).path)")
            }
        }
        say("nightly row: changed \(paths.count - 1) memos in a copy of \(set.folder)/drive")
        /// Writes one state into the folder, in place (the same inode), then waits out the
        /// second in which reckon takes a changed file's identity as proving nothing.
        func put(from state: String) {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            for path in paths {
                let source = open("\(state)/\(path)", O_RDONLY | O_CLOEXEC)
                guard source >= 0 else { continue }
                let target = open(folder.appendingPathComponent(path).path, O_WRONLY | O_TRUNC | O_CLOEXEC)
                if target >= 0 {
                    while true {
                        let count = read(source, &buffer, buffer.count)
                        guard count > 0, write(target, buffer, count) == count else { break }
                    }
                    close(target)
                }
                close(source)
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
                put(from: original)
                _ = try? capture([reckon, "run", nightly.path, "--quiet"])
                put(from: after.path)
                unlink(fullIndex.path)
                warm([folder.deletingLastPathComponent().path])
            },
            target: .atMost(0.5, "≤ 0.5× its time"))
    }
}
