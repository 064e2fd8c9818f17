import Foundation
import ReckonCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A memo folder written from plain values, so a test can change one memo
/// between two runs: each memo's id, title, creation and modification day, body.
struct MemoSpec {
    var id: String
    var title: String
    var created: String = "2026-03-01T09:00:00Z"
    var modified: String = "2026-04-01T10:00:00Z"
    var body: String
}

func writeMemoFolder(_ memos: [MemoSpec], to root: URL) throws {
    let folder = root.appendingPathComponent("memos")
    if FileManager.default.fileExists(atPath: folder.path) { try FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var entries: [String] = []
    for memo in memos {
        entries.append(#"{"id": "\#(memo.id)", "modifiedTime": "\#(memo.modified)", "archivedAt": null, "deletedAt": null}"#)
        let file: [String: Any] = [
            "id": memo.id, "title": memo.title, "body": memo.body, "createdAt": memo.created, "modifiedAt": memo.modified,
            "archivedAt": NSNull(), "deletedAt": NSNull(), "tags": [], "pinned": false
        ]
        try JSONSerialization.data(withJSONObject: file, options: .sortedKeys).write(to: folder.appendingPathComponent("\(memo.id).json"))
    }
    try Data(#"{"schemaVersion": 1, "entries": [\#(entries.joined(separator: ","))]}"#.utf8).write(to: root.appendingPathComponent("index.json"))
}

/// Twelve memos; the first two share a title, a day and the first 8
/// letters of their ids, so the second's Markdown file has the long name.
func twelveMemos() -> [MemoSpec] {
    (0..<12).map { n in
        let id = n < 2 ? String(format: "ABCDEF01-0000-4000-8000-%012X", n) : String(format: "%08X-1111-4000-8000-000000000000", n * 4099)
        return MemoSpec(
            id: id, title: n < 2 ? "Same title" : "Memo \(n)", created: String(format: "2026-03-%02dT09:00:00Z", n < 2 ? 1 : n + 1),
            body: String(repeating: "Line \(n) of a memo.\n", count: 20))
    }
}

/// A pipeline exporting `source` (both sides, so nothing drifts) into
/// `exports/` beside its definition, keeping `keep` runs.
func exportPipeline(source: URL, keep: Int = 10) throws -> URL {
    let folder = temporaryFolder()
    let text = """
        {"name": "incremental", "local": {"path": "\(source.path)"}, "remotes": [{"name": "drive", "path": "\(source.path)"}],
         "reports": {"dir": "reports"}, "export": {"from": "drive", "dir": "exports", "keep": \(keep), "formats": ["json", "markdown", "zip"]}}
        """
    try Data(text.utf8).write(to: folder.appendingPathComponent("pipeline.json"))
    return folder.appendingPathComponent("pipeline.json")
}

/// Runs the pipeline once; gives the run folder it made.
func runExport(_ definition: URL) throws -> URL {
    let result = try runArray(["run", definition.path, "--quiet"])
    #expect(result.code == 0, "\(result.stderr)")
    let exports = definition.deletingLastPathComponent().appendingPathComponent("exports")
    return exports.appendingPathComponent(try FileManager.default.destinationOfSymbolicLink(atPath: exports.appendingPathComponent("latest").path))
}

func fileStatus(_ url: URL) -> stat {
    var info = stat()
    lstat(url.path, &info)
    return info
}

/// The Markdown files of a run folder, by name.
func markdownFiles(_ run: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: run.appendingPathComponent("markdown").path).sorted()
}

@Suite struct IncrementalExportTests {
    @Test func anUnchangedMemosFileIsLinkedAChangedOnesIsRenderedAndEveryFileIsReadOnly() throws {
        let source = temporaryFolder()
        var memos = twelveMemos()
        try writeMemoFolder(memos, to: source)
        let definition = try exportPipeline(source: source)
        let first = try runExport(definition)
        memos[5].body = "Rewritten.\n"
        memos[5].modified = "2026-05-01T00:00:00Z"
        try writeMemoFolder(memos, to: source)
        let second = try runExport(definition)
        #expect(first != second)
        let names = try markdownFiles(second)
        #expect(names == (try markdownFiles(first)))
        #expect(names.count == 12)
        let changed = try #require(names.first { $0.contains("memo-5-") })
        for name in names {
            let old = fileStatus(first.appendingPathComponent("markdown/\(name)"))
            let new = fileStatus(second.appendingPathComponent("markdown/\(name)"))
            if name == changed {
                #expect(new.st_ino != old.st_ino && new.st_nlink == 1, "\(name) changed, so it was rendered again")
            } else {
                #expect(new.st_ino == old.st_ino && new.st_nlink == 2, "\(name) is unchanged, so it is the earlier run's file")
            }
            #expect(new.st_mode & 0o7777 == 0o444, "\(name) is read-only")
        }
        #expect(try read(second.appendingPathComponent("markdown/\(changed)")).hasSuffix("---\n\nRewritten.\n"))
        for name in ["manifest.json", "memos.json", "memos.zip"] {
            #expect(fileStatus(second.appendingPathComponent(name)).st_mode & 0o7777 == 0o444, "\(name) is read-only")
            #expect(fileStatus(second.appendingPathComponent(name)).st_nlink == 1, "\(name) is written whole")
        }
        #expect(try wholeExportProblems(first).isEmpty)
        #expect(try wholeExportProblems(second).isEmpty)
    }

    @Test(arguments: ["a body edited", "a memo added", "the memo holding a short name deleted", "nothing"])
    func anIncrementalExportIsByteIdenticalToAFullExportOfTheSameInput(_ change: String) throws {
        let source = temporaryFolder()
        var memos = twelveMemos()
        try writeMemoFolder(memos, to: source)
        let nightly = try exportPipeline(source: source)
        let first = try runExport(nightly)
        switch change {
        case "a body edited": memos[7].body = "Shorter now."
        case "a memo added":
            memos.append(MemoSpec(id: "00000001-2222-4000-8000-000000000000", title: "Memo 9", created: "2026-03-10T09:00:00Z", body: "New."))
        case "the memo holding a short name deleted": memos.removeFirst()
        default: break
        }
        try writeMemoFolder(memos, to: source)
        let incremental = try runExport(nightly)
        let full = try runExport(try exportPipeline(source: source))
        let a = try visibleFiles(incremental)
        let b = try visibleFiles(full)
        #expect(a.keys.sorted() == b.keys.sorted())
        #expect(a == b, "\(a.keys.filter { a[$0] != b[$0] }.sorted())")
        let linked = try markdownFiles(incremental).filter { fileStatus(incremental.appendingPathComponent("markdown/\($0)")).st_nlink == 2 }
        // Only memos whose fingerprint and name are the same are linked.
        let expectedLinks = ["a body edited": 11, "a memo added": 12, "the memo holding a short name deleted": 10, "nothing": 12][change]!
        #expect(linked.count == expectedLinks, "\(linked)")
        if change == "the memo holding a short name deleted" {
            let same = try #require(try markdownFiles(incremental).first { $0.contains("same-title") })
            #expect(same == "2026-03-01-same-title-abcdef01.md", "the second memo now takes the short name")
            #expect(try markdownFiles(first).contains("2026-03-01-same-title-abcdef01-0000-4000-8000-000000000001.md"))
        }
        #expect(try wholeExportProblems(incremental).isEmpty)
    }

    @Test(arguments: [
        "other bytes", "the same size", "a link to a file with the same bytes", "removed",
        "a hard link to a file elsewhere with the same bytes", "made writable"
    ])
    func aMarkdownFileTamperedWithInThePreviousRunIsRenderedAgainNotLinked(_ tampering: String) throws {
        let source = temporaryFolder()
        try writeMemoFolder(twelveMemos(), to: source)
        let definition = try exportPipeline(source: source)
        let first = try runExport(definition)
        let name = try #require(try markdownFiles(first).first { $0.contains("memo-3-") })
        let tampered = first.appendingPathComponent("markdown/\(name)")
        let original = try Data(contentsOf: tampered)
        let elsewhere = temporaryFolder().appendingPathComponent("copy.md")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: tampered.path)
        switch tampering {
        case "other bytes": try Data("edited by hand\n".utf8).write(to: tampered)
        case "the same size": try Data(original.map { $0 == UInt8(ascii: "L") ? UInt8(ascii: "l") : $0 }).write(to: tampered)
        case "a link to a file with the same bytes":
            try original.write(to: elsewhere)
            try FileManager.default.removeItem(at: tampered)
            try FileManager.default.createSymbolicLink(at: tampered, withDestinationURL: elsewhere)
        case "a hard link to a file elsewhere with the same bytes":
            // Read-only like reckon's own, so only its inode tells it apart.
            try original.write(to: elsewhere)
            chmod(elsewhere.path, 0o444)
            try FileManager.default.removeItem(at: tampered)
            try FileManager.default.linkItem(at: elsewhere, to: tampered)
        case "made writable": break
        default: try FileManager.default.removeItem(at: tampered)
        }
        let before = try everything(first)
        let modeBefore = fileStatus(tampered).st_mode
        let second = try runExport(definition)
        let file = second.appendingPathComponent("markdown/\(name)")
        #expect(FileKind(path: file.path).isRegular)
        #expect(try Data(contentsOf: file) == original, "rendered again from the memo")
        #expect(fileStatus(file).st_nlink == 1, "not linked to the tampered file")
        #expect(fileStatus(file).st_ino != fileStatus(tampered).st_ino)
        #expect(fileStatus(file).st_mode & 0o7777 == 0o444)
        #expect(try everything(first) == before, "the earlier run is left as it was")
        #expect(fileStatus(tampered).st_mode == modeBefore, "even its modes")
        if FileKind(path: elsewhere.path).isRegular {
            #expect(fileStatus(elsewhere).st_ino != fileStatus(file).st_ino, "no file outside the runs shares the new run's file")
        }
        #expect(try wholeExportProblems(second).isEmpty)
        let others = try markdownFiles(second).filter { $0 != name }
        #expect(others.allSatisfy { fileStatus(second.appendingPathComponent("markdown/\($0)")).st_nlink == 2 })
    }

    /// The previous run's `markdown/`, or the whole run folder, swapped
    /// for a link to a copy elsewhere: nothing is linked from there, so no
    /// file outside the runs shares data with the new run.
    @Test(arguments: ["markdown/", "the run folder"])
    func aPreviousRunReachedThroughALinkIsNotLinkedFrom(_ replaced: String) throws {
        let source = temporaryFolder()
        try writeMemoFolder(twelveMemos(), to: source)
        let definition = try exportPipeline(source: source)
        let first = try runExport(definition)
        let moved = temporaryFolder().appendingPathComponent("moved")
        let linkAt = replaced == "markdown/" ? first.appendingPathComponent("markdown") : first
        try FileManager.default.moveItem(at: linkAt, to: moved)
        try FileManager.default.createSymbolicLink(at: linkAt, withDestinationURL: moved)
        let outside = replaced == "markdown/" ? moved : moved.appendingPathComponent("markdown")
        let outsideInodes = Set(
            try FileManager.default.contentsOfDirectory(atPath: outside.path).map { fileStatus(outside.appendingPathComponent($0)).st_ino })
        let second = try runExport(definition)
        let names = try markdownFiles(second)
        #expect(names.count == 12)
        for name in names {
            let status = fileStatus(second.appendingPathComponent("markdown/\(name)"))
            #expect(!outsideInodes.contains(status.st_ino) && status.st_nlink == 1, "\(name) shares nothing with \(outside.path)")
        }
        #expect(try visibleFiles(second) == (try visibleFiles(try runExport(try exportPipeline(source: source)))))
        #expect(try wholeExportProblems(second).isEmpty)
    }

    @Test func anIndexThatDoesNotBelongToTheNewestRunIsNotUsed() throws {
        let source = temporaryFolder()
        var memos = twelveMemos()
        try writeMemoFolder(memos, to: source)
        let definition = try exportPipeline(source: source)
        let first = try runExport(definition)
        let exports = first.deletingLastPathComponent()
        // The index of the first run, kept while a second run of other memos replaces it.
        let index = exports.appendingPathComponent(MarkdownIndex.fileName)
        let kept = try Data(contentsOf: index)
        memos[4].body = "Changed.\n"
        try writeMemoFolder(memos, to: source)
        _ = try runExport(definition)
        try kept.write(to: index)
        let third = try runExport(definition)
        #expect(
            try markdownFiles(third).allSatisfy { fileStatus(third.appendingPathComponent("markdown/\($0)")).st_nlink == 1 },
            "the index names another run's manifest, so nothing is reused")
        #expect(try wholeExportProblems(third).isEmpty)
        let fourth = try runExport(definition)
        #expect(
            try markdownFiles(fourth).allSatisfy { fileStatus(fourth.appendingPathComponent("markdown/\($0)")).st_nlink == 2 },
            "the third run wrote its own index")
    }

    /// A folder where the index goes: the run publishes its export, and
    /// says on stderr, even with `--quiet`, that the next run will read
    /// every memo, since it could not leave its index; a write failed, so
    /// the run is trouble.
    @Test func anIndexThatCannotBeLeftIsNamedAndTheRunIsTrouble() throws {
        let source = temporaryFolder()
        try writeMemoFolder(twelveMemos(), to: source)
        let definition = try exportPipeline(source: source)
        let index = definition.deletingLastPathComponent().appendingPathComponent("exports/\(MarkdownIndex.fileName)")
        try FileManager.default.createDirectory(at: index.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let result = try runArray(["run", definition.path, "--quiet"])
        #expect(result.code == 2)
        #expect(
            result.stderr
                == "error: cannot write exports/\(MarkdownIndex.fileName): Is a directory; the export is whole, and the next run reads every memo again\n",
            "named as the definition spells it: \(result.stderr)")
        let exports = index.deletingLastPathComponent()
        let run = exports.appendingPathComponent(
            try FileManager.default.destinationOfSymbolicLink(atPath: exports.appendingPathComponent("latest").path))
        #expect(try wholeExportProblems(run).isEmpty)
    }

    /// Every order of deleting three runs made one after another, with a
    /// change between each: after each deletion, every run left holds the
    /// very bytes it held before, whole; a run after all of that still works.
    @Test func deletingRunsInEveryOrderNeverBreaksANewerOrOlderOne() throws {
        let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
        for order in orders {
            let source = temporaryFolder()
            var memos = twelveMemos()
            try writeMemoFolder(memos, to: source)
            let definition = try exportPipeline(source: source)
            var runs: [URL] = []
            for round in 0..<3 {
                if round > 0 {
                    memos[round + 2].body = "Changed in round \(round).\n"
                    try writeMemoFolder(memos, to: source)
                }
                runs.append(try runExport(definition))
            }
            #expect(Set(runs).count == 3)
            let contents = try runs.map { try visibleFiles($0) }
            var left = Set(0..<3)
            for gone in order {
                try FileManager.default.removeItem(at: runs[gone])
                left.remove(gone)
                for kept in left.sorted() {
                    #expect(try visibleFiles(runs[kept]) == contents[kept], "order \(order): run \(kept) after deleting run \(gone)")
                    #expect(try wholeExportProblems(runs[kept]).isEmpty, "order \(order): run \(kept)")
                }
            }
            let after = try runExport(definition)
            #expect(try visibleFiles(after) == contents[2], "order \(order): a run after every deletion exports the same memos")
        }
    }

    @Test func retentionDeletesOldRunsWithoutTouchingTheLinkedFilesOfNewerOnes() throws {
        let source = temporaryFolder()
        var memos = twelveMemos()
        try writeMemoFolder(memos, to: source)
        let definition = try exportPipeline(source: source, keep: 2)
        var runs: [URL] = []
        var contents: [[String: Data]] = []
        for round in 0..<4 {
            memos[4].body = "Round \(round).\n"
            try writeMemoFolder(memos, to: source)
            runs.append(try runExport(definition))
            contents.append(try visibleFiles(runs[round]))
        }
        let exports = runs[0].deletingLastPathComponent()
        #expect(ExportFolder.runFolders(in: exports) == [runs[3].lastPathComponent, runs[2].lastPathComponent])
        #expect(try visibleFiles(runs[3]) == contents[3])
        #expect(try visibleFiles(runs[2]) == contents[2])
        #expect(try wholeExportProblems(runs[3]).isEmpty)
    }
}
