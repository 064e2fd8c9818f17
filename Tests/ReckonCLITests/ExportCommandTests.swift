import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a system tool and returns its exit code and output (stdout, then stderr).
func tool(_ path: String, _ arguments: [String]) throws -> (Int32, String) {
    let result = try runArray(arguments, executable: URL(fileURLWithPath: path))
    return (result.code, result.stdout + result.stderr)
}

/// Adds unknown keys to a memo file whose numbers a double would change:
/// beyond 2^53, a trailing zero, out of range, and beyond 64 bits.
func addUnknownNumbers(to file: URL) throws {
    var text = try read(file)
    text.removeLast()  // the closing brace
    text += #","serverSeq": 9007199254740993, "ratio": 1.10, "far": 1e400, "more": {"ids": [12345678901234567890]}}"#
    try Data(text.utf8).write(to: file)
}

/// A memo folder of `count` generated memos with bodies of a few kilobytes.
func generatedFolder(count: Int, titles: [String] = []) throws -> URL {
    let root = temporaryFolder()
    try FileManager.default.createDirectory(at: root.appendingPathComponent("memos"), withIntermediateDirectories: true)
    var entries: [String] = []
    for n in 0..<count {
        let id = String(format: "%08X-0000-4000-8000-%012X", n, n * 7919)
        let title = n < titles.count ? titles[n] : "Memo number \(n)"
        let archived = n % 10 == 3 ? "\"2026-03-01T00:00:00Z\"" : "null"
        let deleted = n % 17 == 5 ? "\"2026-03-02T00:00:00Z\"" : "null"
        let modified = String(format: "2026-04-%02dT%02d:%02d:00Z", n % 28 + 1, n % 24, n % 60)
        entries.append(#"{"id": "\#(id)", "modifiedTime": "\#(modified)", "archivedAt": \#(archived), "deletedAt": \#(deleted)}"#)
        let memo: [String: Any] = [
            "id": id, "title": title, "body": String(repeating: "Line \(n) of a memo body.\n", count: 60),
            "createdAt": String(format: "2026-03-%02dT00:00:%02dZ", n % 28 + 1, n % 60), "modifiedAt": modified,
            "archivedAt": n % 10 == 3 ? "2026-03-01T00:00:00Z" : NSNull(),
            "deletedAt": n % 17 == 5 ? "2026-03-02T00:00:00Z" : NSNull(), "tags": ["t\(n % 5)"], "pinned": false
        ]
        try JSONSerialization.data(withJSONObject: memo).write(to: root.appendingPathComponent("memos/\(id).json"))
    }
    try Data(#"{"schemaVersion": 1, "entries": [\#(entries.joined(separator: ","))]}"#.utf8).write(to: root.appendingPathComponent("index.json"))
    return root
}

/// Every visible file under an export folder with its bytes (staging folders are hidden).
func visibleFiles(_ folder: URL) throws -> [String: Data] {
    var result: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where !name.hasPrefix(".") {
        let url = folder.appendingPathComponent(name)
        if FileKind(path: url.path) == .directory {
            for (inner, data) in try visibleFiles(url) { result[name + "/" + inner] = data }
        } else {
            result[name] = try Data(contentsOf: url)
        }
    }
    return result
}

@Suite struct ExportCommandTests {
    @Test(.needs(.unzip, .bsdtar)) func theDriftSampleExportsToFilesAnyToolOpens() throws {
        let out = temporaryFolder()
        let result = try reckon("export", "Samples/drift/device", "--out", out.path)
        #expect(result.code == 0)
        #expect(result.stdout.contains("memos.zip  4 memos"))
        let zip = out.appendingPathComponent("memos.zip").path
        let (unzipCode, unzipOutput) = try tool("/usr/bin/unzip", ["-t", zip])
        #expect(unzipCode == 0, "\(unzipOutput)")
        #expect(unzipOutput.contains("No errors detected"))
        let (tarCode, listing) = try tool("/usr/bin/bsdtar", ["-tf", zip])
        #expect(tarCode == 0)
        #expect(
            listing == """
                markdown/2026-04-01-groceries-3f2504e0.md
                markdown/2026-04-02-京都旅行-7c9e6679.md
                markdown/2026-04-03-book-list-16fd2706.md
                markdown/2026-04-05-meeting-notes-886313e1.md
                memos.json
                manifest.json

                """)
        let files = try visibleFiles(out)
        for entry in try ArchiveReader.entries(of: out.appendingPathComponent("memos.zip")) where entry.name != "manifest.json" {
            #expect(files[entry.name] == entry.data, "\(entry.name) in the zip equals the file beside it")
        }
        let kyoto = try read(out.appendingPathComponent("markdown/2026-04-02-京都旅行-7c9e6679.md"))
        #expect(kyoto.hasSuffix("---\n\nDay 1: Fushimi Inari early, before the crowds.\nDay 2: Arashiyama.\n"))
        let memos = try json(read(out.appendingPathComponent("memos.json")))["memos"] as? [[String: Any]] ?? []
        let source = try json(
            read(packageRoot.appendingPathComponent("Samples/drift/device/60dMemo/memos/7C9E6679-7425-40DE-944B-E07FC1F90AE7.json")))
        let exported = try #require(memos.first { $0["title"] as? String == "京都旅行" })
        for key in ["title", "body", "createdAt", "modifiedAt"] { #expect(exported[key] as? String == source[key] as? String, "\(key)") }
    }

    @Test func nonASCIINamesAreFlaggedUTF8AndEverythingIsDeflated() throws {
        let out = temporaryFolder()
        #expect(try reckon("export", "Samples/drift/device", "--out", out.path, "--format", "zip").code == 0)
        let bytes = [UInt8](try Data(contentsOf: out.appendingPathComponent("memos.zip")))
        func le16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        var headers: [(name: String, flags: Int, method: Int)] = []
        var at = 0
        while at + 30 <= bytes.count, bytes[at..<at + 4].elementsEqual([0x50, 0x4B, 0x03, 0x04]) {
            let nameLength = le16(at + 26)
            let extraLength = le16(at + 28)
            let name = String(decoding: bytes[at + 30..<at + 30 + nameLength], as: UTF8.self)
            headers.append((name, le16(at + 6), le16(at + 8)))
            // Entries carry a data descriptor; find the next local header after this one's name.
            let next = bytes.indices.dropFirst(at + 30 + nameLength + extraLength).first { i in
                i + 4 <= bytes.count && bytes[i..<i + 4].elementsEqual([0x50, 0x4B, 0x03, 0x04])
                    || bytes[i..<min(i + 4, bytes.count)].elementsEqual([0x50, 0x4B, 0x01, 0x02])
            }
            guard let next, bytes[next..<next + 4].elementsEqual([0x50, 0x4B, 0x03, 0x04]) else { break }
            at = next
        }
        #expect(headers.count == 6)
        let kyoto = try #require(headers.first { $0.name.contains("京都") })
        #expect(kyoto.flags & 0x0800 != 0, "the UTF-8 flag (bit 11) is set")
        #expect(headers.allSatisfy { $0.method == 8 }, "deflate")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("manifest.json").path))
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("memos.json").path), "only the formats asked for")
    }

    @Test func theSameBytesInEveryTimeZoneAndLocale() throws {
        let first = temporaryFolder()
        let second = temporaryFolder()
        #expect(
            try reckon("export", "Samples/drift/drive", "--out", first.path, "--include-archived", environment: ["TZ": "UTC", "LANG": "C"]).code == 0)
        #expect(
            try reckon(
                "export", "Samples/drift/drive", "--out", second.path, "--include-archived",
                environment: ["TZ": "Pacific/Kiritimati", "LANG": "ja_JP.UTF-8", "LC_ALL": "ja_JP.UTF-8"]
            ).code == 0)
        let a = try visibleFiles(first)
        let b = try visibleFiles(second)
        #expect(a.keys.sorted() == b.keys.sorted())
        #expect(a == b)
        #expect(a.keys.contains("memos.zip"))
    }

    /// Whatever the umask takes away or leaves, every exported file is
    /// exactly read-only for everyone, and the bytes do not change.
    @Test(.needs(.python3), arguments: ["077", "000", "022"])
    func everyFileIsReadOnlyWhateverTheUmask(_ umask: String) throws {
        let out = temporaryFolder().appendingPathComponent("export")
        let reference = temporaryFolder().appendingPathComponent("export")
        // Python sets the umask and becomes reckon (exec, with the arguments as an array).
        let launcher = ["-c", "import os, sys; os.umask(int(sys.argv[1], 8)); os.execv(sys.argv[2], sys.argv[2:])", umask, reckonBinary.path]
        let result = try runArray(
            launcher + ["export", "Samples/drift/drive", "--out", out.path, "--include-archived"],
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(result.code == 0, "\(result.stderr)")
        #expect(try reckon("export", "Samples/drift/drive", "--out", reference.path, "--include-archived").code == 0)
        let files = try visibleFiles(out)
        #expect(files.count > 3)
        #expect(files == (try visibleFiles(reference)))
        for name in files.keys {
            #expect(fileStatus(out.appendingPathComponent(name)).st_mode & 0o7777 == 0o444, "\(name) with umask \(umask)")
        }
    }

    /// A zip whose manifest comes last, after entries written while the
    /// memos were still read: unzip, bsdtar and Python's zipfile all open
    /// it and find every entry whole, and a second machine in another time
    /// zone writes the very same bytes.
    @Test(.needs(.unzip, .bsdtar, .python3)) func theZipWithItsManifestLastOpensInEveryToolAndIsTheSameInEveryTimeZone() throws {
        let source = try generatedFolder(count: 2500, titles: ["京都旅行", "Ünïcödé", "a/b\\c"])
        let first = temporaryFolder().appendingPathComponent("export")
        let second = temporaryFolder().appendingPathComponent("export")
        #expect(try runArray(["export", source.path, "--out", first.path, "--include-archived"], environment: ["TZ": "UTC"]).code == 0)
        #expect(
            try runArray(
                ["export", source.path, "--out", second.path, "--include-archived"],
                environment: ["TZ": "America/St_Johns", "LC_ALL": "ja_JP.UTF-8"]
            ).code == 0)
        let zip = first.appendingPathComponent("memos.zip")
        #expect(try Data(contentsOf: zip) == Data(contentsOf: second.appendingPathComponent("memos.zip")))
        let (unzipCode, unzipOutput) = try tool("/usr/bin/unzip", ["-t", zip.path])
        #expect(unzipCode == 0 && unzipOutput.contains("No errors detected"), "\(unzipOutput.suffix(300))")
        let (tarCode, listing) = try tool("/usr/bin/bsdtar", ["-tf", zip.path])
        let names = listing.split(separator: "\n").map(String.init)
        #expect(tarCode == 0)
        let exported = try FileManager.default.contentsOfDirectory(atPath: first.appendingPathComponent("markdown").path)
        #expect(names.count == exported.count + 2)
        #expect(names.suffix(2) == ["memos.json", "manifest.json"])
        let python = """
            import hashlib, json, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            names = z.namelist()
            manifest = json.loads(z.read("manifest.json"))
            listed = {f["path"]: f["sha256"] for f in manifest["files"]}
            assert names[-1] == "manifest.json"
            assert sorted(listed) == sorted(names[:-1])
            for name in names[:-1]:
                assert hashlib.sha256(z.read(name)).hexdigest() == listed[name], name
            wide = [i for i in z.infolist() if not i.filename.isascii()]
            print(len(names), len(wide), all(i.flag_bits & 0x800 for i in wide), sum(1 for i in z.infolist() if i.compress_type == 8))
            """
        let (pythonCode, counts) = try tool("/usr/bin/python3", ["-c", python, zip.path])
        #expect(pythonCode == 0, "\(counts)")
        let total = exported.count + 2
        #expect(counts == "\(total) 2 True \(total)\n", "every name beyond ASCII flagged UTF-8, every entry deflated")
        #expect(try wholeExportProblems(first).isEmpty)
    }

    @Test(.needs(.unzip)) func hostileTitlesExportToSafeNames() throws {
        // The sixth memo (number 5) is soft-deleted and never exported.
        let source = try generatedFolder(count: 7, titles: ["<script>alert(1)</script>", "../../etc/passwd", "京都旅行", "🎉", "", "deleted", "/abs\\win"])
        let out = temporaryFolder()
        let result = try runArray(["export", source.path, "--out", out.path, "--include-archived"])
        #expect(result.code == 0, "\(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("markdown").path).sorted()
        #expect(names.count == 6)
        for name in names {
            #expect(!name.contains("/") && !name.contains("\\") && !name.contains("..") && !name.contains("<"), "\(name)")
        }
        #expect(names.contains { $0.contains("-etc-passwd-") })
        #expect(names.contains { $0.contains("-untitled-") })
        let extract = temporaryFolder()
        let (code, output) = try tool("/usr/bin/unzip", ["-q", out.appendingPathComponent("memos.zip").path, "-d", extract.path])
        #expect(code == 0, "\(output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: extract.path).sorted() == ["manifest.json", "markdown", "memos.json"])
    }

    @Test func aCorruptMemoIsNamedAndTheRunIsTrouble() throws {
        let source = try generatedFolder(count: 3)
        try Data("{".utf8).write(to: source.appendingPathComponent("memos/00000001-0000-4000-8000-000000001EEF.json"))
        let out = temporaryFolder()
        let result = try runArray(["export", source.path, "--out", out.path])
        #expect(result.code == 2)
        #expect(result.stderr.contains("memos/00000001-0000-4000-8000-000000001EEF.json: not exported: not valid JSON"))
        let manifest = try json(read(out.appendingPathComponent("manifest.json")))
        let missing = try #require(manifest["missing"] as? [[String: Any]])
        #expect(missing.first?["id"] as? String == "00000001-0000-4000-8000-000000001eef")
        #expect((manifest["counts"] as? [String: Int]) == ["active": 2, "archived": 0])
    }

    @Test(.needs(.unzip)) func unknownKeysKeepEveryDigitInTheJSONAndTheZip() throws {
        let source = try generatedFolder(count: 2)
        try addUnknownNumbers(to: source.appendingPathComponent("memos/00000000-0000-4000-8000-000000000000.json"))
        let out = temporaryFolder()
        let result = try runArray(["export", source.path, "--out", out.path])
        #expect(result.code == 0, "\(result.stderr)")
        let written = try read(out.appendingPathComponent("memos.json"))
        for line in ["\"serverSeq\" : 9007199254740993,", "\"ratio\" : 1.10,", "\"far\" : 1e400,", "          12345678901234567890\n"] {
            #expect(written.contains(line), "\(line)")
        }
        let (code, zipped) = try tool("/usr/bin/unzip", ["-p", out.appendingPathComponent("memos.zip").path, "memos.json"])
        #expect(code == 0)
        #expect(zipped == written)
    }

    @Test func aProblemInANestedFolderNamesTheFileItself() throws {
        // The side is given as the folder holding 60dMemo, as the samples are.
        let parent = temporaryFolder()
        try FileManager.default.moveItem(at: try generatedFolder(count: 3), to: parent.appendingPathComponent("60dMemo"))
        let name = "memos/00000001-0000-4000-8000-000000001EEF.json"
        try Data("{".utf8).write(to: parent.appendingPathComponent("60dMemo/" + name))
        let out = temporaryFolder()
        let export = try runArray(["export", parent.path, "--out", out.path])
        #expect(export.code == 2)
        #expect(export.stderr.contains("error: \(parent.path)/60dMemo/\(name): not exported: not valid JSON"), "\(export.stderr)")
        let manifest = try json(read(out.appendingPathComponent("manifest.json")))
        let missing = try #require(manifest["missing"] as? [[String: Any]])
        #expect(missing.first?["path"] as? String == "60dMemo/" + name)

        try Data("[".utf8).write(to: parent.appendingPathComponent("60dMemo/index.json"))
        let counts = try runArray(["counts", parent.path])
        #expect(counts.stderr.contains("\(parent.path)/60dMemo/index.json: not valid JSON"), "\(counts.stderr)")
        #expect(counts.stdout.contains("Active    2"), "rebuilt from the two memo files that can be read")
    }

    @Test func aSideThatCannotBeReadWritesNothing() throws {
        let source = try generatedFolder(count: 3)
        try FileManager.default.removeItem(at: source.appendingPathComponent("index.json"))
        let out = temporaryFolder().appendingPathComponent("new")
        let result = try runArray(["export", source.path, "--out", out.path])
        #expect(result.code == 2)
        #expect(result.stderr.contains("index.json: there is no index.json in this folder"))
        #expect(!FileManager.default.fileExists(atPath: out.path), "not even the output folder is made")
    }

    @Test func badFormatsAndOutputInsideTheSourceAreUsageErrors() throws {
        let format = try reckon("export", "Samples/drift/device", "--out", temporaryFolder().path, "--format", "json,pdf")
        #expect(format.code == 64)
        #expect(format.stderr.hasPrefix("Error: The value 'pdf' is invalid for '--format <formats>'"))
        let inside = try reckon("export", "Samples/drift/device", "--out", "Samples/drift/device/export")
        #expect(inside.code == 64)
        #expect(!FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent("Samples/drift/device/export").path))
    }

    /// Killed anywhere, an export leaves the previous one whole. Each
    /// round the seed picks one of the points a run passes (each Markdown
    /// file and zip entry written, each file of the old export removed, and
    /// the named steps) and the run, on one thread, is killed exactly there
    /// (`RECKON_TEST_STOP_AT=<step>#<n>`), so a printed seed replays it.
    @Test func aKilledExportLeavesThePreviousOneWhole() throws {
        let source = try generatedFolder(count: 1500)
        let reference = temporaryFolder()
        let parent = temporaryFolder()
        let target = parent.appendingPathComponent("export")
        let arguments = ["export", source.path, "--out", target.path, "--include-archived"]
        #expect(try runArray(["export", source.path, "--out", reference.path, "--include-archived"]).code == 0)
        #expect(try runArray(arguments).code == 0)
        let expected = try visibleFiles(reference)
        #expect(expected.count > 1000)
        // Every point with how often a whole run passes it.
        let points =
            [
                ("markdown-file-written", expected.keys.filter { $0.hasPrefix("markdown/") }.count),
                ("zip-entry-written", try ArchiveReader.entries(of: reference.appendingPathComponent("memos.zip")).count),
                ("removing-old", try everything(target).values.filter { $0 != nil }.count)
            ]
            + ExportFolder.exportSteps.filter { $0 != "removing-old" }.map { ($0, 1) }
        var generator = TestSeed.generator()
        let seed = TestSeed.value
        for round in 0..<8 {
            // The pick-th point of all, counted through the steps in turn.
            var pick = Int.random(in: 0..<points.map(\.1).reduce(0, +), using: &generator)
            var (step, times) = points[0]
            for point in points {
                (step, times) = point
                if pick < times { break }
                pick -= times
            }
            let stop = "\(step)#\(pick + 1)"
            #expect(try stopped(at: stop, arguments), "seed \(seed) round \(round): a run passes \(step) \(times) times, so it stops at \(stop)")
            let found = try visibleFiles(target)
            let lost = Set(expected.keys).subtracting(found.keys)
            let added = Set(found.keys).subtracting(expected.keys)
            #expect(
                lost.isEmpty && added.isEmpty,
                "seed \(seed) round \(round), killed at \(stop): \(lost.count) files lost, \(added.count) added, such as \(lost.union(added).sorted().prefix(3))"
            )
            let damaged = found.filter { expected[$0.key] != $0.value }.map(\.key)
            #expect(damaged.isEmpty, "seed \(seed) round \(round), killed at \(stop): \(damaged.prefix(3)) differ from a whole export")
            #expect(try wholeExportProblems(target).isEmpty, "seed \(seed) round \(round), killed at \(stop)")
        }
        #expect(try runArray(["export", source.path, "--out", target.path, "--include-archived"]).code == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: parent.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "staging folders of killed runs are cleaned up: \(leftovers)")
    }
}

/// Root deletes whatever a folder's permissions say, so as root the test
/// below marks a file immutable instead: that needs chattr, and a file
/// system under the test scratch folder that keeps the flag.
let immutableFilesAsRoot = Requirement("chattr +i in the test scratch folder, when run as root") {
    guard getuid() == 0 else { return true }
    let chattr = URL(fileURLWithPath: "/usr/bin/chattr")
    let file = scratchFolder("chattr").appendingPathComponent("probe")
    guard FileManager.default.createFile(atPath: file.path, contents: nil),
        (try? runArray(["+i", file.path], executable: chattr))?.code == 0
    else { return false }
    return (try? runArray(["-i", file.path], executable: chattr))?.code == 0
}

@Suite struct NightlyRunTests {
    func definition(keep: Int = 2) throws -> URL {
        let folder = temporaryFolder()
        let samples = packageRoot.appendingPathComponent("Samples/drift").path
        let text = """
            {"name": "nightly", "local": {"path": "\(samples)/device"}, "remotes": [{"name": "drive", "path": "\(samples)/drive"}],
             "reports": {"dir": "reports"}, "export": {"dir": "exports", "keep": \(keep)}}
            """
        try Data(text.utf8).write(to: folder.appendingPathComponent("nightly.json"))
        return folder.appendingPathComponent("nightly.json")
    }

    @Test func runsKeepTheNewestAndDeleteOnlyTheirOwnFolders() throws {
        let url = try definition()
        let exports = url.deletingLastPathComponent().appendingPathComponent("exports")
        try FileManager.default.createDirectory(at: exports.appendingPathComponent("20000101T000000Z"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: exports.appendingPathComponent("my notes"), withIntermediateDirectories: true)
        for _ in 0..<4 {
            let result = try runArray(["run", url.path])
            #expect(result.code == 0)
            #expect(result.stdout.hasPrefix("Memos on this device"))
            #expect(result.stderr.isEmpty, "no progress without a terminal")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: exports.path).filter { !$0.hasPrefix(".") }.sorted()
        let runs = ExportFolder.runFolders(in: exports)
        #expect(runs.count == 2)
        #expect(Set(names) == Set(runs + ["20000101T000000Z", "my notes", "latest"]), "\(names)")
        let latest = try FileManager.default.destinationOfSymbolicLink(atPath: exports.appendingPathComponent("latest").path)
        #expect(latest == runs.first)
        let first = try visibleFiles(exports.appendingPathComponent(runs[0]))
        #expect(first == (try visibleFiles(exports.appendingPathComponent(runs[1]))), "the same input gives the same export")
        #expect(first.keys.contains("memos.zip") && first.keys.contains("manifest.json"))
    }

    /// A run killed while it removes an old run folder leaves that folder
    /// with its manifest (removed last), so the next run knows it as its
    /// own and finishes removing it.
    @Test func aRemovalCutShortIsFinishedByTheNextRun() throws {
        let url = try definition(keep: 1)
        let exports = url.deletingLastPathComponent().appendingPathComponent("exports")
        #expect(try runArray(["run", url.path, "--quiet"]).code == 0)
        let old = try #require(ExportFolder.runFolders(in: exports).first)
        let files = try FileManager.default.subpathsOfDirectory(atPath: exports.appendingPathComponent(old).path)
        #expect(try stopped(at: "retention", ["run", url.path, "--quiet"]))
        let left = try FileManager.default.subpathsOfDirectory(atPath: exports.appendingPathComponent(old).path)
        #expect(left.contains("manifest.json") && left.count == files.count - 1, "cut short after one file, with its manifest: \(left)")
        #expect(try runArray(["run", url.path, "--quiet"]).code == 0)
        let runs = ExportFolder.runFolders(in: exports)
        #expect(runs.count == 1 && !runs.contains(old))
        let names = try FileManager.default.contentsOfDirectory(atPath: exports.path).filter { !$0.hasPrefix(".") }
        #expect(Set(names) == Set(runs + ["latest"]), "\(names)")
    }

    /// An old run folder that retention cannot delete whole (a file marked
    /// immutable, which stops root too, or for another user a folder made
    /// read-only) is kept whole, and every run says so on stderr, even with
    /// `--quiet`. Deleting it in name order would have stopped at that file,
    /// leaving a run that `reckon verify` calls damaged.
    @Test(.needs(immutableFilesAsRoot)) func anOldRunThatCannotBeDeletedWholeIsKeptWholeAndNamed() throws {
        let url = try definition(keep: 1)
        let exports = url.deletingLastPathComponent().appendingPathComponent("exports")
        #expect(try runArray(["run", url.path, "--quiet"]).code == 0)
        let old = try #require(ExportFolder.runFolders(in: exports).first)
        let markdown = exports.appendingPathComponent("\(old)/markdown")
        let last = try #require(
            try FileManager.default.contentsOfDirectory(atPath: markdown.path).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.last)
        let reason: String
        if getuid() == 0 {
            let marked = try runArray(["+i", markdown.appendingPathComponent(last).path], executable: URL(fileURLWithPath: "/usr/bin/chattr"))
            try #require(marked.code == 0, "chattr +i: \(marked.stderr)")
            reason = "markdown/\(last): is marked immutable or append-only (chattr), so it cannot be deleted"
        } else {
            #expect(chmod(markdown.path, 0o555) == 0)
            reason = "markdown: what it holds cannot be deleted (Permission denied)"
        }
        defer {
            if getuid() == 0 {
                _ = try? runArray(["-i", markdown.appendingPathComponent(last).path], executable: URL(fileURLWithPath: "/usr/bin/chattr"))
            }
            chmod(markdown.path, 0o755)
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: exports.appendingPathComponent(old).path).sorted()
        for _ in 0..<2 {
            // Run from the definition's folder: the warning names the folder from the current one.
            let result = try runArray(["run", url.path, "--quiet"], in: url.deletingLastPathComponent())
            #expect(result.code == 0)
            #expect(result.stderr == "warning: kept the old export exports/\(old), which keep: 1 would remove: \(reason)\n")
            #expect(try FileManager.default.subpathsOfDirectory(atPath: exports.appendingPathComponent(old).path).sorted() == files)
            #expect(try runArray(["verify", exports.appendingPathComponent(old).path]).code == 0, "the old run is whole")
        }
        #expect(ExportFolder.runFolders(in: exports).count == 2, "the newest run and the one kept")
    }

    @Test func aSecondRunWhileOneIsGoingIsRefused() throws {
        let url = try definition()
        let lockURL = url.deletingLastPathComponent().appendingPathComponent("reports/.reckon.lock")
        let lock = try RunLock(at: lockURL)
        let refused = try runArray(["run", url.path])
        #expect(refused.code == 2)
        #expect(refused.stderr == "Error: another reckon run (process \(getpid())) holds the lock \(lockURL.path); try again when it has finished\n")
        #expect(ExportFolder.runFolders(in: url.deletingLastPathComponent().appendingPathComponent("exports")).isEmpty)
        lock.release()
        #expect(try runArray(["run", url.path, "--quiet"]).code == 0)
    }

    /// The id in the file may be of a dead process or, reused, of a live one
    /// (here the test's own) that does not hold the lock: one true sentence for both.
    @Test(arguments: ["4194301", "\(getpid())"])
    func aLockLeftByADeadProcessIsTakenOverWithAWarning(_ holder: String) throws {
        let url = try definition()
        let lockURL = url.deletingLastPathComponent().appendingPathComponent("reports/.reckon.lock")
        try FileManager.default.createDirectory(at: lockURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("\(holder)\n".utf8).write(to: lockURL)
        let result = try runArray(["run", url.path, "--quiet"])
        #expect(result.code == 0)
        #expect(
            result.stderr == "warning: took over the lock \(lockURL.path) left by process \(holder), which no longer holds it\n",
            "the warning must not say a running process is no longer running: \(result.stderr)")
        #expect(try read(lockURL).isEmpty, "released at the end")
    }
}

@Suite struct ProgressTests {
    @Test func aTerminalSeesProgressAndAPipeDoesNot() throws {
        let out = temporaryFolder()
        let command = "\(reckonBinary.path) export Samples/drift/device --out \(out.path)"
        let terminal = try runArray(["-qec", command, "/dev/null"], executable: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(terminal.code == 0)
        #expect(terminal.stdout.contains("\rreckon: exporting 4/4 memos\r\n"), "\(terminal.stdout.debugDescription)")
        let piped = try reckon("export", "Samples/drift/device", "--out", temporaryFolder().path)
        #expect(piped.code == 0)
        #expect(piped.stderr.isEmpty)
    }

    @Test func theNightlyPipelineIsValid() throws {
        let result = try reckon("validate", "Pipelines/nightly.json")
        #expect(result.code == 0)
        #expect(result.stdout.contains("export json,markdown,zip from 'drive'"))
    }
}

/// Every file and folder under `folder`, hidden ones included, by relative
/// path: a file's bytes, a link's target, or nil for a folder.
func everything(_ folder: URL) throws -> [String: Data?] {
    var result: [String: Data?] = [:]
    guard FileKind(path: folder.path) == .directory else { return result }
    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
        let url = folder.appendingPathComponent(name)
        if FileKind(path: url.path) == .link {
            result[name] = Data("link to \(try FileManager.default.destinationOfSymbolicLink(atPath: url.path))".utf8)
        } else if FileKind(path: url.path) == .directory {
            result[name] = .some(nil)
            for (inner, data) in try everything(url) { result[name + "/" + inner] = data }
        } else {
            result[name] = try Data(contentsOf: url)
        }
    }
    return result
}

/// What is wrong with `dir` as a whole export: every file beside
/// `manifest.json` must be listed `"in": "folder"` with its very size and
/// SHA-256 and nothing listed may be absent; `memos.zip` must hold exactly
/// the entries listed `"in": "zip"`, byte for byte, and its own manifest
/// must list its other entries.
func wholeExportProblems(_ dir: URL) throws -> [String] {
    var problems: [String] = []
    let manifestURL = dir.appendingPathComponent("manifest.json")
    guard FileManager.default.fileExists(atPath: manifestURL.path) else { return ["\(dir.path) has no manifest.json"] }
    let manifest = try json(read(manifestURL))
    let files = manifest["files"] as? [[String: Any]] ?? []
    func listed(_ place: String) -> [String: (Int, String)] {
        Dictionary(
            files.filter { $0["in"] as? String == place }.map {
                ($0["path"] as? String ?? "", ($0["size"] as? Int ?? -1, $0["sha256"] as? String ?? ""))
            }
        ) { first, _ in first }
    }
    var onDisk = try visibleFiles(dir)
    onDisk["manifest.json"] = nil
    let inFolder = listed("folder")
    if Set(onDisk.keys) != Set(inFolder.keys) {
        problems.append("on disk \(onDisk.keys.sorted()) but listed in the folder \(inFolder.keys.sorted())")
    }
    for (path, data) in onDisk where inFolder[path].map({ $0 != (data.count, SHA256.hex(of: data)) }) ?? false {
        problems.append("\(path) differs from its manifest record")
    }
    let inZip = listed("zip")
    if let zip = onDisk["memos.zip"] {
        let entries = try ArchiveReader.entries(of: dir.appendingPathComponent("memos.zip"))
        if Set(entries.map(\.name)) != Set(inZip.keys) { problems.append("the zip holds \(entries.map(\.name)) but lists \(inZip.keys.sorted())") }
        for entry in entries where inZip[entry.name].map({ $0 != (entry.data.count, SHA256.hex(of: entry.data)) }) ?? true {
            problems.append("\(entry.name) in the zip differs from its manifest record")
        }
        if let inner = entries.first(where: { $0.name == "manifest.json" }) {
            let innerFiles = (try JSONSerialization.jsonObject(with: inner.data) as? [String: Any])?["files"] as? [[String: Any]] ?? []
            let innerNames = innerFiles.map { "\($0["in"] ?? "") \($0["path"] ?? "")" }.sorted()
            let others = entries.map(\.name).filter { $0 != "manifest.json" }.map { "zip \($0)" }.sorted()
            if innerNames != others { problems.append("the zip's manifest lists \(innerNames), its other entries are \(others)") }
        }
        _ = zip
    } else if !inZip.isEmpty {
        problems.append("zip entries are listed but there is no memos.zip")
    }
    return problems
}

/// Runs the binary with `RECKON_TEST_STOP_AT=step` (on one thread); true
/// when it was killed there.
func stopped(at step: String, _ arguments: [String]) throws -> Bool {
    let process = Process()
    process.executableURL = reckonBinary
    process.arguments = arguments
    process.currentDirectoryURL = packageRoot
    process.environment = childEnvironment(["RECKON_TEST_STOP_AT": step])
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
}

/// `reckon export` onto a full disk or a mount point: the message is about
/// `--out` as given, never the hidden staging folder, and nothing is left.
/// Mounting a tmpfs needs root.
@Suite(.needs(.root)) struct ExportMountTests {
    /// Mounts a tmpfs of `size` on `folder`.
    func mountTmpfs(on folder: URL, size: String) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try #require(mount("tmpfs", folder.path, "tmpfs", 0, "size=\(size)") == 0, "mount: \(String(cString: strerror(errno)))")
    }

    @Test func aFullDiskIsSaidOfTheOutFolder() throws {
        let parent = temporaryFolder()
        let disk = parent.appendingPathComponent("disk")
        try mountTmpfs(on: disk, size: "16k")
        defer { umount(disk.path) }
        let result = try runArray(["export", packageRoot.appendingPathComponent("Samples/drift/device").path, "--out", "disk/out"], in: parent)
        #expect(result.code == 2)
        #expect(
            result.stderr == "Error: cannot write memos.json of the export into disk/out: No space left on device\n",
            "the message must name --out as given, not the staging folder: \(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).isEmpty, "the staging folder is cleaned away")
    }

    @Test func aMountPointIsSaidToBeOneAndLeftAsItWas() throws {
        let parent = temporaryFolder()
        let point = parent.appendingPathComponent("mp")
        try mountTmpfs(on: point, size: "1m")
        defer { umount(point.path) }
        let result = try runArray(["export", packageRoot.appendingPathComponent("Samples/drift/device").path, "--out", "mp"], in: parent)
        #expect(result.code == 2)
        #expect(
            result.stderr == "Error: cannot write mp: it is a mount point (or in use), and reckon publishes an export only by "
                + "replacing the folder whole; export into a folder inside it\n", "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["mp"], "no staging folder is left beside it")
        #expect(try FileManager.default.contentsOfDirectory(atPath: point.path).isEmpty, "the mount point is left empty")
    }
}

@Suite struct ExportPromiseTests {
    /// An export folder holding an earlier export of the drift sample's
    /// device (Markdown only), then what `change` puts there.
    func earlierExport(formats: String = "markdown") throws -> (URL, URL) {
        let parent = temporaryFolder()
        let out = parent.appendingPathComponent("export")
        let first = try reckon("export", "Samples/drift/device", "--out", out.path, "--format", formats)
        #expect(first.code == 0, "\(first.stderr)")
        return (parent, out)
    }

    @Test(arguments: [
        "a markdown folder a person made", "a memos.json a person made", "a file beside an earlier export",
        "a file in an earlier export's markdown folder", "a listed file that was changed", "a manifest reckon did not write",
        "an empty folder beside an earlier export", "a link beside an earlier export"
    ])
    func anythingAnEarlierExportDidNotWriteIsLeftAloneAndStopsTheExport(_ what: String) throws {
        var (parent, out) = try earlierExport()
        let markdown = try #require(FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("markdown").path).first)
        let named: String
        switch what {
        case "a markdown folder a person made":
            out = parent.appendingPathComponent("mine")
            try FileManager.default.createDirectory(at: out.appendingPathComponent("markdown"), withIntermediateDirectories: true)
            try Data("my own notes\n".utf8).write(to: out.appendingPathComponent("markdown/todo.md"))
            named = "markdown"
        case "a memos.json a person made":
            out = parent.appendingPathComponent("mine")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            try Data("[]".utf8).write(to: out.appendingPathComponent("memos.json"))
            named = "memos.json"
        case "a file beside an earlier export":
            try Data("keep me".utf8).write(to: out.appendingPathComponent("notes.txt"))
            named = "notes.txt"
        case "a file in an earlier export's markdown folder":
            try Data("keep me".utf8).write(to: out.appendingPathComponent("markdown/zz-mine.md"))
            named = "markdown/zz-mine.md"
        case "a listed file that was changed":
            try Data("edited by hand\n".utf8).write(to: out.appendingPathComponent("markdown/" + markdown))
            named = "markdown/" + markdown
        case "a manifest reckon did not write":
            try Data(#"{"files": []}"#.utf8).write(to: out.appendingPathComponent("manifest.json"))
            named = "manifest.json"
        case "an empty folder beside an earlier export":
            try FileManager.default.createDirectory(at: out.appendingPathComponent("photos"), withIntermediateDirectories: true)
            named = "photos"
        default:
            try FileManager.default.createSymbolicLink(atPath: out.appendingPathComponent("elsewhere").path, withDestinationPath: "/etc")
            named = "elsewhere"
        }
        let before = try everything(parent)
        let result = try runArray(["export", "Samples/drift/device", "--out", out.path])
        #expect(result.code == 2)
        #expect(result.stderr.hasPrefix("Error: \(out.path)/\(named): "), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was written"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try everything(parent) == before, "nothing touched, nothing left beside it")
    }

    @Test func aNewExportReplacesTheEarlierOneWholeAndKeepsTheFoldersPermissions() throws {
        let (parent, out) = try earlierExport(formats: "json,markdown,zip")
        chmod(out.path, 0o700)
        let result = try runArray(["export", "Samples/drift/device", "--out", out.path, "--format", "json"])
        #expect(result.code == 0, "\(result.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == ["manifest.json", "memos.json"],
            "the formats not asked for this time are gone")
        #expect(try wholeExportProblems(out).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["export"], "no staging folder is left")
        var info = stat()
        lstat(out.path, &info)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    @Test(arguments: ["json", "markdown", "zip", "json,zip", "markdown,zip", "json,markdown,zip"])
    func theManifestListsExactlyTheFilesWrittenAndWhereTheyAre(_ formats: String) throws {
        let out = temporaryFolder().appendingPathComponent("export")
        let result = try runArray(["export", "Samples/drift/drive", "--out", out.path, "--format", formats, "--include-archived"])
        #expect(result.code == 0, "\(result.stderr)")
        let problems = try wholeExportProblems(out)
        #expect(problems.isEmpty, "\(problems)")
        let manifest = try json(read(out.appendingPathComponent("manifest.json")))
        let files = (manifest["files"] as? [[String: Any]] ?? []).map { "\($0["in"] ?? "nowhere") \($0["path"] ?? "")" }
        let asked = formats.split(separator: ",")
        #expect(files.contains("folder memos.json") == asked.contains("json"))
        #expect(files.contains { $0.hasPrefix("folder markdown/") } == asked.contains("markdown"))
        #expect(files.contains("folder memos.zip") == asked.contains("zip"))
        #expect(files.contains("zip memos.json") == asked.contains("zip"))
        #expect(files.contains("zip manifest.json") == asked.contains("zip"))
        #expect(manifest["schemaVersion"] as? Int == 2)
    }

    @Test func withJSONAloneNoMarkdownIsEverWritten() throws {
        // Stopped once the memos are written, the staging folder shows all that was written.
        let parent = temporaryFolder()
        let out = parent.appendingPathComponent("export")
        #expect(try stopped(at: "memos-written", ["export", "Samples/drift/device", "--out", out.path, "--format", "json"]))
        let staging = try #require(try FileManager.default.contentsOfDirectory(atPath: parent.path).first { $0.hasPrefix(".reckon-export-") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.appendingPathComponent(staging).path) == ["memos.json"])
        #expect(try runArray(["export", "Samples/drift/device", "--out", out.path, "--format", "json"]).code == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["export"], "the dead run's staging folder is removed")
    }

    @Test(arguments: ["two files", "two index entries"])
    func anIDHeldTwiceIsNamedMissingAndNeitherCopyIsExported(_ how: String) throws {
        let source = try generatedFolder(count: 3)
        let id = "00000001-0000-4000-8000-000000001EEF"
        if how == "two files" {
            var other = try read(source.appendingPathComponent("memos/\(id).json"))
            other = other.replacingOccurrences(of: "Memo number 1", with: "The other copy")
            try Data(other.utf8).write(to: source.appendingPathComponent("memos/\(id.lowercased()).json"))
        } else {
            var index = try read(source.appendingPathComponent("index.json"))
            index = index.replacingOccurrences(
                of: "]}", with: #", {"id": "\#(id)", "modifiedTime": "2026-05-01T00:00:00Z", "archivedAt": null, "deletedAt": null}]}"#)
            try Data(index.utf8).write(to: source.appendingPathComponent("index.json"))
        }
        let out = temporaryFolder().appendingPathComponent("export")
        let result = try runArray(["export", source.path, "--out", out.path])
        #expect(result.code == 2)
        #expect(result.stderr.contains(": not exported: the id is held twice ("), "\(result.stderr)")
        let manifest = try json(read(out.appendingPathComponent("manifest.json")))
        let missing = manifest["missing"] as? [[String: Any]] ?? []
        #expect(missing.map { $0["id"] as? String } == [id.lowercased()])
        #expect((manifest["counts"] as? [String: Int]) == ["active": 2, "archived": 0])
        let exported = try read(out.appendingPathComponent("memos.json"))
        #expect(!exported.contains(id.lowercased()))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("markdown").path).allSatisfy { !$0.contains("00000001") })
        #expect(try wholeExportProblems(out).isEmpty)
    }

    @Test func aKillAtEveryStepLeavesTheOldExportOrTheNewOneWhole() throws {
        let reference = temporaryFolder().appendingPathComponent("export")
        #expect(try reckon("export", "Samples/drift/drive", "--out", reference.path, "--include-archived").code == 0)
        let new = try everything(reference)
        for start in ["no folder", "an earlier export"] {
            for step in ExportFolder.exportSteps {
                let parent = temporaryFolder()
                try Data("a person's file".utf8).write(to: parent.appendingPathComponent("keep.txt"))
                let out = parent.appendingPathComponent("export")
                if start == "an earlier export" {
                    #expect(try reckon("export", "Samples/drift/device", "--out", out.path, "--format", "markdown,zip").code == 0)
                }
                let old = try everything(out)
                let arguments = ["export", "Samples/drift/drive", "--out", out.path, "--include-archived"]
                let killed = try stopped(at: step, arguments)
                #expect(killed || (step == "removing-old" && start == "no folder"), "\(start): the export stops at \(step)")
                let found = try everything(out)
                if found.isEmpty {
                    #expect(start == "no folder", "\(start), killed at \(step): the earlier export is gone")
                } else {
                    #expect(found == old || found == new, "\(start), killed at \(step): neither the old export nor the new one")
                    #expect(try wholeExportProblems(out).isEmpty, "\(start), killed at \(step)")
                }
                #expect(try read(parent.appendingPathComponent("keep.txt")) == "a person's file")
                // The next run finishes the job and leaves nothing of the dead one.
                #expect(try runArray(arguments).code == 0, "\(start), after a kill at \(step)")
                #expect(try everything(out) == new)
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: parent.path).sorted() == ["export", "keep.txt"],
                    "\(start), after a kill at \(step): no staging folder is left")
            }
        }
    }
}

/// A plain export keeps the pipeline's promise (the deletion alarm's rule).
@Suite struct ExportDeletionAlarmTests {
    /// An export that would hold far fewer memos than the one it replaces is
    /// refused and the earlier one kept whole, unless `--accept-deletions`;
    /// archived memos count only when both exports hold them.
    @Test func anExportWithFarFewerMemosKeepsTheEarlierOneUnlessDeletionsAreAccepted() throws {
        // 3 active memos and 1 archived: a quarter of the memos are archived.
        let source = try generatedFolder(count: 4)
        let parent = temporaryFolder()
        let out = parent.appendingPathComponent("export")
        #expect(try runArray(["export", source.path, "--out", out.path, "--include-archived"]).code == 0)
        let withoutArchived = try runArray(["export", source.path, "--out", out.path])
        #expect(withoutArchived.code == 0, "like for like: 3 active memos where there were 3. \(withoutArchived.stderr)")

        try Data("{bad".utf8).write(to: source.appendingPathComponent("index.json"))
        for name in try FileManager.default.contentsOfDirectory(atPath: source.appendingPathComponent("memos").path) {
            try FileManager.default.removeItem(at: source.appendingPathComponent("memos/\(name)"))
        }
        let before = try fingerprint(out)
        let refused = try runArray(["export", source.path, "--out", out.path])
        #expect(refused.code == 2)
        #expect(
            refused.stderr.contains(
                "Error: \(out.path): the new export holds 0 active memos where the earlier one holds 3: more gone than the deletion alarm allows, so the earlier export is kept"
            ), "\(refused.stderr)")
        #expect(refused.stderr.contains("run again with --accept-deletions."))
        #expect(refused.stdout.isEmpty, "no export file is named: none was published")
        #expect(try fingerprint(out) == before, "the earlier export is kept, byte for byte")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["export"], "no staging folder is left")

        let accepted = try runArray(["export", source.path, "--out", out.path, "--accept-deletions"])
        #expect(accepted.code == 2, "the side's index is still damaged")
        #expect(accepted.stderr.contains("warning: \(out.path): the new export holds 0 active memos where the earlier one holds 3;"))
        let counts = try json(read(out.appendingPathComponent("manifest.json")))["counts"] as? [String: Int]
        #expect(counts == ["active": 0, "archived": 0], "replaced, as asked")
    }
}
