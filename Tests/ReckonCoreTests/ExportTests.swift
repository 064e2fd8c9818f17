import Foundation
import TestSupport
import Testing

@testable import ReckonCore

@Suite struct JSONExportTests {
    func memo(_ id: String, created: String?) -> Memo {
        Memo(id: MemoID(id)!, title: "t", createdAt: created.flatMap { Timestamp(iso8601: $0) }, modifiedAt: Timestamp(seconds: 0))
    }

    @Test func sortsByCreationThenIdWithUndatedFirst() throws {
        let memos = [
            memo(idC, created: "2026-01-02T00:00:00Z"), memo(idB, created: "2026-01-01T00:00:00Z"),
            memo(idA, created: "2026-01-01T00:00:00Z"), memo(idD, created: nil)
        ]
        let ordered = memos.sorted(by: JSONExport.exportOrder).map(\.id.value)
        #expect(ordered == [idD, idA, idB, idC].map { $0.lowercased() })
    }

    @Test func eachMemoIsWrittenAsTheEncoderWouldWriteIt() throws {
        let encoder = makeJSONEncoder()
        var everyByte = ""
        for value in 0..<0x80 { everyByte.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        let texts: [String?] = [nil, "", everyByte, "a/b \\ \"q\"", "\u{80}\u{9F}\u{2028}\u{FEFF}😀 京都 é", "line\r\nnext"]
        var memos: [Memo] = []
        for (position, text) in texts.enumerated() {
            var m = memo(idA, created: position % 2 == 0 ? "2026-04-02T09:00:00.5+09:00" : nil)
            m.title = text
            m.body = texts[(position + 2) % texts.count]
            m.changeTag = texts[(position + 3) % texts.count]
            m.tags = position == 0 ? [] : [text ?? "x", "b", "a"]
            m.pinned = [nil, true, false][position % 3]
            m.archivedAt = position % 3 == 1 ? Timestamp(iso8601: "2026-05-01T00:00:00Z") : nil
            m.deletedAt = position % 3 == 2 ? Timestamp(iso8601: "2026-05-02T00:00:00Z") : nil
            memos.append(m)
        }
        var unknown = memo(idA, created: nil)
        unknown.otherFields = ["zeta": .number("1.5"), "alpha": .object(["b": .null, "a": .array([])])]
        memos.append(unknown)
        for m in memos {
            let expected = indentedAfterFirstLine(try encoder.encode(JSONExport.value(of: m)), by: "    ")
            #expect(JSONExport.entry(of: m) == expected, "\(m)")
        }
    }

    @Test func writesEveryFieldInUTCAndKeepsUnknownKeys() throws {
        var m = memo(idA, created: "2026-04-02T09:00:00+09:00")
        m.tags = ["b", "a"]
        m.otherFields = ["color": .string("red")]
        guard case .object(let object) = JSONExport.value(of: m) else {
            Issue.record("not an object")
            return
        }
        #expect(object["createdAt"] == .string("2026-04-02T00:00:00Z"))
        #expect(object["tags"] == .array([.string("b"), .string("a")]), "in the memo's own order")
        #expect(object["color"] == .string("red"))
        #expect(object["archivedAt"] == .null)
        #expect(object["id"] == .string(idA.lowercased()))
    }
}

@Suite struct MarkdownExportTests {
    func memo(title: String?, created: String? = "2026-04-02T09:00:00+09:00") -> Memo {
        Memo(
            id: MemoID(idA)!, title: title, body: "Body line", createdAt: created.flatMap { Timestamp(iso8601: $0) },
            modifiedAt: Timestamp(iso8601: "2026-04-19T14:32:00Z")!, tags: ["travel", "japan"])
    }

    @Test func frontMatterHasFixedKeysOnlyWithValuesAndSortedTags() {
        var m = memo(title: "Trip")
        m.archivedAt = Timestamp(iso8601: "2026-05-01T00:00:00Z")
        #expect(
            MarkdownExport.render(m) == """
                ---
                title: "Trip"
                id: 3f2504e0-4f89-11d3-9a0c-0305e82c3301
                created: 2026-04-02T00:00:00Z
                updated: 2026-04-19T14:32:00Z
                archived: 2026-05-01T00:00:00Z
                tags:
                  - "japan"
                  - "travel"
                ---

                Body line

                """)
        var bare = memo(title: nil, created: nil)
        bare.tags = []
        bare.body = nil
        #expect(MarkdownExport.render(bare) == "---\nid: 3f2504e0-4f89-11d3-9a0c-0305e82c3301\nupdated: 2026-04-19T14:32:00Z\n---\n\n")
    }

    @Test func aHostileTitleStaysOneQuotedValue() {
        let text = MarkdownExport.render(memo(title: "a\"b\\c\n---\nrm: -rf\u{7}"))
        #expect(text.contains(#"title: "a\"b\\c\n---\nrm: -rf\u0007""#))
        #expect(text.components(separatedBy: "\n---\n").count == 2, "the title cannot close the front matter")
    }

    @Test(arguments: [
        ("<script>alert(1)</script>", "2026-04-02-script-alert-1-script-3f2504e0.md"),
        ("../../etc/passwd", "2026-04-02-etc-passwd-3f2504e0.md"),
        ("京都旅行", "2026-04-02-京都旅行-3f2504e0.md"),
        ("🎉🎉", "2026-04-02-untitled-3f2504e0.md"),
        ("", "2026-04-02-untitled-3f2504e0.md"),
        ("CON", "2026-04-02-con-3f2504e0.md"),
        ("a\u{0}b\u{1F}c/d\\e", "2026-04-02-a-b-c-d-e-3f2504e0.md"),
        ("Café au lait", "2026-04-02-café-au-lait-3f2504e0.md"),
        // A letter keeps its marks: a dotted capital I, stacked accents, Devanagari signs.
        ("İstanbul", "2026-04-02-i\u{307}stanbul-3f2504e0.md"),
        ("e\u{301}\u{323}", "2026-04-02-\u{1EB9}\u{301}-3f2504e0.md"),
        ("नमस्ते", "2026-04-02-नमस्ते-3f2504e0.md"),
        ("a \u{301}b", "2026-04-02-a-b-3f2504e0.md")
    ])
    func fileNamesAreSafe(_ title: String, _ expected: String) throws {
        let name = MarkdownExport.fileNames(memo(title: title)).short
        #expect(name == expected)
        try ZipEntryRules.checkName("markdown/" + name)
    }

    @Test func veryLongTitlesGiveShortNames() {
        let name = MarkdownExport.fileNames(memo(title: String(repeating: "長い", count: 500))).short
        #expect(name.utf8.count < 255)
        #expect(name.hasSuffix("-3f2504e0.md"))
    }

    @Test(arguments: ["/etc/passwd", "a/../b", "..", "a\\b", "", "a//b", "./a", "a\u{0}b", "a/", "a/..", "a/.", "."])
    func zipRefusesUnsafeNames(_ name: String) {
        #expect(throws: ArchiveError.self) { try ZipEntryRules.checkName(name) }
    }

    @Test func theBytewiseControlCheckAgreesWithUnicodeForEveryScalar() {
        var disagreeing: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let name = "a" + String(Character(scalar)) + "b"
            if ZipEntryRules.containsControlCharacter(name) != (scalar.properties.generalCategory == .control) { disagreeing.append(value) }
        }
        #expect(disagreeing.isEmpty)
        #expect(throws: ArchiveError.self) { try ZipEntryRules.checkName("markdown/a\u{85}b.md") }
        #expect(throws: Never.self) { try ZipEntryRules.checkName("markdown/2026-04-01-京都旅行-3f2504e0.md") }
    }

    @Test(arguments: ["a", "a/b", "...", "a/.../b", ".a", "a./b.", "manifest.json"])
    func zipTakesSafeNames(_ name: String) {
        #expect(throws: Never.self) { try ZipEntryRules.checkName(name) }
    }
}

@Suite struct ExporterTests {
    let source = TempFolder()

    /// Exports the source; returns the staging folder, the summary and the manifest as written.
    func exportAll(
        formats: [ExportFormat] = ExportFormat.allCases, includeArchived: Bool = true,
        limits: ReadLimits = ReadLimits()
    ) throws -> (URL, ExportSummary, ExportManifest) {
        let side = MemoFolder(source.spec(), limits: limits).load(deep: false)
        let staging = scratchFolder("staging")
        let summary = try Exporter(store: MemoFolder(source.spec(), limits: limits)).export(
            side, formats: formats, includeArchived: includeArchived,
            into: staging)
        let manifest = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: staging.appendingPathComponent("manifest.json")))
        return (staging, summary, manifest)
    }

    func fill() {
        source.index([
            entry(idA, modified: "2026-04-19T14:32:00Z"), entry(idB, archived: "2026-04-20T00:00:00Z"),
            entry(idC, deleted: "2026-04-21T00:00:00Z"), entry(idD, modified: "1970-01-02T00:00:00Z")
        ])
        source.write("memos/\(idA).json", memo(idA, title: "京都旅行", tags: ["b", "a"]))
        source.write("memos/\(idB).json", memo(idB, title: "Archived", archived: "2026-04-20T00:00:00Z"))
        source.write("memos/\(idC).json", memo(idC, title: "Deleted"))
        source.write("memos/\(idD).json", memo(idD, title: "Old", modified: "1970-01-02T00:00:00Z"))
    }

    @Test func theStreamedJSONIsWhatTheEncoderWouldWrite() throws {
        fill()
        let (staging, summary, _) = try exportAll()
        let written = try Data(contentsOf: staging.appendingPathComponent("memos.json"))
        let parsed = try JSONValue.parse(written)
        var expected = try makeJSONEncoder().encode(parsed)
        expected.append(0x0A)
        #expect(written == expected)
        guard case .object(let root) = parsed, case .array(let memos)? = root["memos"] else {
            Issue.record("bad shape")
            return
        }
        #expect(memos.count == 3)
        #expect(root["exportedAt"] == .string("2026-04-19T14:32:00Z"))
        #expect(summary.counts == MemoCounts(active: 2, archived: 1))
        #expect(summary.json.size == written.count)
        #expect(summary.json.sha256 == SHA256.hex(of: written))
        #expect(!String(decoding: written, as: UTF8.self).contains("Deleted"))
    }

    @Test func theStreamedManifestIsWhatTheEncoderWouldWrite() throws {
        fill()
        let (staging, summary, manifest) = try exportAll()
        let written = try Data(contentsOf: staging.appendingPathComponent("manifest.json"))
        #expect(written == (try makeJSONEncoder().encode(manifest)) + [0x0A])
        let inFolder = [
            "markdown/2026-04-01-archived-7c9e6679.md", "markdown/2026-04-01-old-a3bb189e.md",
            "markdown/2026-04-01-京都旅行-3f2504e0.md", "memos.json"
        ]
        #expect(manifest.files.filter { $0.place == .folder }.map(\.path) == inFolder + ["memos.zip"])
        #expect(manifest.files.filter { $0.place == .zip }.map(\.path) == ["manifest.json"] + inFolder)
        #expect(manifest.counts == summary.counts)
        #expect(summary.markdownBytes == manifest.files.filter { $0.place == .folder && $0.path.hasPrefix("markdown/") }.reduce(0) { $0 + $1.size })
    }

    @Test func anEmptyExportIsStillValidJSON() throws {
        source.index([])
        let (staging, _, manifest) = try exportAll()
        let written = try Data(contentsOf: staging.appendingPathComponent("memos.json"))
        var expected = try makeJSONEncoder().encode(JSONValue.parse(written))
        expected.append(0x0A)
        #expect(written == expected)
        #expect(manifest.exportedAt == nil)
        #expect(try ArchiveReader.entries(of: staging.appendingPathComponent("memos.zip")).map(\.name) == ["memos.json", "manifest.json"])
    }

    @Test func theZipHoldsTheMarkdownInExportOrderThenTheJSONThenTheManifestWithTheMemosTimes() throws {
        fill()
        let (staging, _, manifest) = try exportAll()
        let entries = try ArchiveReader.entries(of: staging.appendingPathComponent("memos.zip"))
        let names = entries.map(\.name)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: staging.appendingPathComponent("memos.json"))) as! [String: Any]
        let inExportOrder = (json["memos"] as! [[String: Any]]).map { ($0["id"] as! String).prefix(8) }
        #expect(names.dropLast(2).map { $0.dropLast(3).suffix(8) } == inExportOrder, "the Markdown files in the order of memos.json")
        #expect(names.suffix(2) == ["memos.json", "manifest.json"], "the manifest last, once everything before it is whole")
        #expect(names.contains("markdown/2026-04-01-京都旅行-3f2504e0.md"))
        #expect(entries.allSatisfy { $0.permissions == 0o644 })
        for entry in entries where entry.name != "manifest.json" {
            #expect(entry.data == (try Data(contentsOf: staging.appendingPathComponent(entry.name))), "\(entry.name)")
        }
        let kyoto = try #require(entries.first { $0.name.contains("京都") })
        #expect(kyoto.modified == Timestamp(iso8601: "2026-04-19T14:32:00Z")!.seconds)
        let old = try #require(entries.first { $0.name.contains("-old-") })
        #expect(old.modified == Timestamp(iso8601: "1980-01-01T00:00:00Z")!.seconds, "clamped to 1980")
        let files = Dictionary(uniqueKeysWithValues: manifest.files.filter { $0.place == .zip }.map { ($0.path, $0) })
        for entry in entries {
            #expect(files[entry.name]?.sha256 == SHA256.hex(of: entry.data))
            #expect(files[entry.name]?.size == entry.data.count)
        }
    }

    @Test func archivedOnlyWhenAskedAndOnlyTheFormatsAsked() throws {
        fill()
        let (staging, manifest, _) = try exportAll(formats: [.markdown], includeArchived: false)
        #expect(manifest.counts == MemoCounts(active: 2, archived: 0))
        #expect(try FileManager.default.contentsOfDirectory(atPath: staging.path).sorted() == ["manifest.json", "markdown"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: staging.appendingPathComponent("markdown").path).count == 2)
    }

    @Test func aCorruptMemoIsLeftOutAndNamedInTheManifest() throws {
        fill()
        source.write("memos/\(idB).json", #"{"id": "#)
        let (_, manifest, _) = try exportAll()
        #expect(manifest.counts.total == 2)
        #expect(manifest.missing.map(\.id) == [MemoID(idB)!])
        #expect(manifest.missing.first?.path == "memos/\(idB).json")
        #expect(manifest.missing.first?.reason.contains("not valid JSON") == true)
    }

    @Test func twoMemosWithOneTitleAndDateNeverCollide() throws {
        let twin = "3F2504E0-0000-4000-8000-000000000001"
        source.index([entry(idA), entry(twin)])
        source.write("memos/\(idA).json", memo(idA, title: "Same"))
        source.write("memos/\(twin).json", memo(twin, title: "Same"))
        let (staging, _, _) = try exportAll()
        let names = try FileManager.default.contentsOfDirectory(atPath: staging.appendingPathComponent("markdown").path).sorted()
        #expect(names.count == 2)
        #expect(Set(names).count == 2)
    }

    @Test func exportingStraightFromTheFolderWithEverySortOnDiskWritesTheSameBytes() throws {
        fill()
        // Memos sharing a title, a date and the short id, so Markdown names collide.
        let twins = (1...12).map { "3F2504E0-0000-4000-8000-0000000000\(String(format: "%02d", $0))" }
        source.index(
            [
                entry(idA), entry(idB, archived: "2026-04-20T00:00:00Z"), entry(idC, deleted: "2026-04-21T00:00:00Z"),
                entry(idD, modified: "1970-01-02T00:00:00Z")
            ] + twins.map { entry($0) })
        for twin in twins { source.write("memos/\(twin).json", memo(twin, title: "Same")) }
        source.write("memos/\(idB).json", #"{"id": "#)
        let (inMemory, summary, _) = try exportAll()

        var exporter = Exporter(store: MemoFolder(source.spec()))
        exporter.sortRunLength = 1
        // Batches and chunks that cut through the twins: which twin keeps the
        // short name must not depend on how the work is shared out.
        exporter.batchSize = 5
        exporter.chunkSize = 2
        let streamed = scratchFolder("staging")
        let (listing, streamedSummary) = try exporter.export(formats: ExportFormat.allCases, includeArchived: true, into: streamed)
        #expect(streamedSummary == summary)
        #expect(listing.problems.isEmpty)
        #expect(summary.missing.map(\.id) == [MemoID(idB)!])
        func files(_ folder: URL) throws -> [String: Data] {
            let paths = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { !$0.hasSuffix("markdown") }
            return try Dictionary(uniqueKeysWithValues: paths.map { ($0, try Data(contentsOf: folder.appendingPathComponent($0))) })
        }
        let expected = try files(inMemory)
        #expect(expected.count == 3 + 2 + 12, "memos.json, manifest.json, memos.zip and a Markdown file for idA, idD and each twin")
        #expect(try files(streamed) == expected)
        let shortName = try #require(expected.keys.first { $0.hasPrefix("markdown/") && $0.hasSuffix("-same-3f2504e0.md") })
        #expect(
            String(decoding: expected[shortName]!, as: UTF8.self).contains("id: \(twins[0].lowercased())"),
            "the first twin in export order (creation time, then id) keeps the short name")
    }

    @Test func aRunReusingThePreviousFilesByCopyWritesWhatAFullExportWrites() throws {
        let twins = (1...12).map { "3F2504E0-0000-4000-8000-0000000000\(String(format: "%02d", $0))" }
        source.index([entry(idA), entry(idD, modified: "1970-01-02T00:00:00Z")] + twins.map { entry($0) })
        source.write("memos/\(idA).json", memo(idA, title: "京都旅行"))
        source.write("memos/\(idD).json", memo(idD, title: "Old", modified: "1970-01-02T00:00:00Z"))
        for twin in twins { source.write("memos/\(twin).json", memo(twin, title: "Same")) }
        let runs = try publishPreviousRun()
        // The first twin is gone, so the second takes its short name and is rendered, not reused under its long one.
        source.index([entry(idA), entry(idD, modified: "1970-01-02T00:00:00Z")] + twins.dropFirst().map { entry($0) })
        let (full, _, _) = try exportAll()

        let (copied, _) = try exportReusing(runs, byLink: false)
        for path in try sameFiles(copied, full) {
            let attributes = try FileManager.default.attributesOfItem(atPath: copied.appendingPathComponent(path).path)
            #expect(attributes[.referenceCount] as? Int == 1, "\(path) is copied, not linked")
            #expect(attributes[.posixPermissions] as? Int == 0o444, "\(path) is read-only")
        }
    }

    /// Waits until every file in the source's `memos/` has a FileIdentity,
    /// which a file changed within the last second lacks (such a file is
    /// always read again), so that what the test shows is decided by the
    /// identity. Bounded: 300 looks 10 ms apart.
    func waitUntilTheMemoFilesHaveIdentities() throws {
        let folder = try #require(OpenFolder(source.url.path + "/memos"))
        let names = try FileManager.default.contentsOfDirectory(atPath: source.url.path + "/memos")
        func unsettled() -> [String] { names.filter { FileIdentity(of: $0, in: folder) == nil } }
        for _ in 0..<300 where !unsettled().isEmpty { usleep(10_000) }
        try #require(unsettled().isEmpty, "these memo files still count as just changed")
    }

    /// Exports the source as a pipeline's run does, into a run folder with
    /// its index beside it and `latest` pointing at it; gives the runs' folder.
    func publishPreviousRun() throws -> URL {
        let runs = scratchFolder("runs")
        let previous = runs.appendingPathComponent("20260101T000000Z")
        try FileManager.default.createDirectory(at: previous, withIntermediateDirectories: true)
        var first = Exporter(store: MemoFolder(source.spec()))
        first.index = try MarkdownIndex.Writer(url: runs.appendingPathComponent("index.tmp"), limits: ReadLimits())
        _ = try first.export(formats: ExportFormat.allCases, includeArchived: true, into: previous)
        try first.index!.install(in: runs)
        try FileManager.default.createSymbolicLink(
            atPath: runs.appendingPathComponent("latest").path, withDestinationPath: previous.lastPathComponent)
        return runs
    }

    /// Exports the source reusing the run `latest` points at in `runs`, a
    /// few memos at a time, reading under `limits`, and taking unchanged
    /// memos unread unless `readingEveryMemo`; gives the staging folder and the summary.
    func exportReusing(
        _ runs: URL, byLink: Bool, limits: ReadLimits = ReadLimits(),
        readingEveryMemo: Bool = false
    ) throws -> (URL, ExportSummary) {
        var exporter = Exporter(store: MemoFolder(source.spec(), limits: limits))
        let previous = try #require(MarkdownIndex.previous(in: runs, limits: limits))
        if readingEveryMemo { previous.takesUnread = false }
        exporter.previous = previous
        exporter.linksReusedFiles = byLink
        exporter.batchSize = 5
        exporter.chunkSize = 2
        let staging = scratchFolder("staging")
        return (staging, try exporter.export(formats: ExportFormat.allCases, includeArchived: true, into: staging).1!)
    }

    /// Expects two export folders to hold the same files with the same
    /// bytes; gives their paths (folders left out).
    func sameFiles(_ folder: URL, _ expected: URL) throws -> [String] {
        let paths = try FileManager.default.subpathsOfDirectory(atPath: expected.path).filter { $0 != "markdown" }.sorted()
        #expect(try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0 != "markdown" }.sorted() == paths)
        for path in paths {
            #expect(try Data(contentsOf: folder.appendingPathComponent(path)) == Data(contentsOf: expected.appendingPathComponent(path)), "\(path)")
        }
        return paths
    }

    /// A memo whose file is the one the previous run read (its inode, size
    /// and times) is taken whole from that run, unread; any sign of a
    /// change, in the file or in what the previous run holds, has it read
    /// again. Either way the export is the bytes a full export writes.
    @Test(arguments: [
        "nothing", "a memo file rewritten in place, its size and times put back", "the previous memos.json damaged at one memo",
        "the previous memos.json cut short halfway", "the previous Markdown file of one memo changed",
        "one memo's short name taken by a new memo before it",
        "every memo asked to be read (--refresh)", "a smaller size limit for memo files"
    ])
    func unchangedMemoFilesAreTakenWholeFromThePreviousRunUnread(_ change: String) throws {
        let ids = (0..<12).map { String(format: "ABCDEF%02X-0000-4000-8000-%012X", $0 == 5 ? 1 : $0 + 16, $0) }
        var entries = ids.map { entry($0) }
        source.index(entries)
        for (n, id) in ids.enumerated() { source.write("memos/\(id).json", memo(id, title: "Memo \(n)", body: "Body \(n)")) }
        // A file changed less than a second ago proves nothing, so the first run would read them all.
        try waitUntilTheMemoFilesHaveIdentities()
        let runs = try publishPreviousRun()
        let previous = runs.appendingPathComponent("20260101T000000Z")
        let fifth = ids[5].lowercased()
        /// Flips the last byte of `text` in a file of the previous run, made writable for it.
        func damage(_ url: URL, at text: String) throws {
            var bytes = try Data(contentsOf: url)
            let at = try #require(bytes.firstRange(of: Data(text.utf8))).upperBound - 1
            bytes[at] ^= 0x01
            chmod(url.path, 0o644)
            try bytes.write(to: url)
        }
        switch change {
        case "a memo file rewritten in place, its size and times put back":
            let url = source.url.appendingPathComponent("memos/\(ids[5]).json")
            var before = stat()
            lstat(url.path, &before)
            let handle = try FileHandle(forWritingTo: url)
            try handle.write(contentsOf: Data(memo(ids[5], title: "Memo X", body: "Body 5").utf8))
            try handle.close()
            var times = [before.st_atim, before.st_mtim]
            utimensat(AT_FDCWD, url.path, &times, 0)
            var after = stat()
            lstat(url.path, &after)
            #expect(after.st_ino == before.st_ino && after.st_size == before.st_size && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
        case "the previous memos.json damaged at one memo":
            try damage(previous.appendingPathComponent("memos.json"), at: "\"Body 5\"")
        case "the previous memos.json cut short halfway":
            // The entries are read several at a time: those still whole before the cut are taken, the rest read again.
            let json = previous.appendingPathComponent("memos.json")
            let bytes = try Data(contentsOf: json)
            chmod(json.path, 0o644)
            try bytes.prefix(bytes.count / 2).write(to: json)
        case "the previous Markdown file of one memo changed":
            let name = try #require(
                try FileManager.default.contentsOfDirectory(atPath: previous.appendingPathComponent("markdown").path)
                    .first { $0.hasSuffix("-memo-5-\(fifth.prefix(8)).md") })
            try damage(previous.appendingPathComponent("markdown/\(name)"), at: "Body 5")
        case "one memo's short name taken by a new memo before it":
            let earlier = "ABCDEF01-0000-4000-8000-000000000000"
            entries.append(entry(earlier))
            source.index(entries)
            source.write("memos/\(earlier).json", memo(earlier, title: "Memo 5"))
        default: break
        }
        // Nothing is read for having changed within the last second.
        try waitUntilTheMemoFilesHaveIdentities()
        // Under other limits every memo is checked against them again: the one now too large is left out.
        var limits = ReadLimits()
        if change == "a smaller size limit for memo files" {
            limits.memoSizeLimit = Int64(memo(ids[11], title: "Memo 11", body: "Body 11").utf8.count - 1)
        }
        let (full, fullSummary, _) = try exportAll(limits: limits)
        let (incremental, summary) = try exportReusing(runs, byLink: true, limits: limits, readingEveryMemo: change.hasPrefix("every memo"))
        let readAgain = ["nothing": 0, "every memo asked to be read (--refresh)": ids.count, "a smaller size limit for memo files": ids.count]
        if change == "the previous memos.json cut short halfway" {
            #expect(summary.reusedMemos > 0 && summary.reusedMemos < ids.count, "\(summary.reusedMemos)")
        } else {
            #expect(summary.reusedMemos == ids.count - (readAgain[change] ?? 1))
        }
        #expect(summary.missing == fullSummary.missing)
        _ = try sameFiles(incremental, full)
    }

    /// A memo whose Markdown file is reused has its zip entry copied,
    /// compressed, from the previous run's zip, only when that zip is the
    /// one the previous run recorded, written with the same writer and
    /// settings; either way the zip is the bytes a full export writes.
    @Test(arguments: [
        "nothing", "one memo changed", "the previous zip's bytes changed", "the previous zip written with other settings",
        "one local header of the previous zip lies, the zip's digest recorded again"
    ])
    func unchangedMemosHaveTheirZipEntriesCopiedFromThePreviousZip(_ change: String) throws {
        let ids = (0..<12).map { String(format: "ABCDEF%02X-0000-4000-8000-%012X", $0 + 16, $0) }
        source.index(ids.map { entry($0) })
        for (n, id) in ids.enumerated() { source.write("memos/\(id).json", memo(id, title: "Memo \(n)", body: "Body \(n)")) }
        let runs = try publishPreviousRun()
        let previousZip = runs.appendingPathComponent("20260101T000000Z/memos.zip")
        switch change {
        case "one memo changed": source.write("memos/\(ids[3]).json", memo(ids[3], title: "Memo 3", body: "Body changed"))
        case "the previous zip's bytes changed":
            // One byte of the last entry's name in the central directory, which no reader checks against a digest.
            var bytes = try Data(contentsOf: previousZip)
            let at = try #require(bytes.lastRange(of: Data("manifest.json".utf8))).lowerBound
            bytes[at] = UInt8(ascii: "M")
            chmod(previousZip.path, 0o644)
            try bytes.write(to: previousZip)
        case "the previous zip written with other settings":
            // The index as a reckon with other zip settings seals it: one byte
            // of the settings' SHA-256 changed, and the seal made again.
            let index = runs.appendingPathComponent(MarkdownIndex.fileName)
            var bytes = [UInt8](try Data(contentsOf: index))
            let end = MarkdownIndex.headerSize
            bytes[end - 68] ^= 0x01
            reseal(&bytes)
            try Data(bytes).write(to: index)
            #expect(MarkdownIndex.previous(in: runs, limits: ReadLimits()) != nil, "the index is still used, for its Markdown files")
        case "one local header of the previous zip lies, the zip's digest recorded again":
            // The first entry's header says its name is a byte longer, so its data
            // would start a byte later; the index records the zip's new SHA-256.
            var bytes = try Data(contentsOf: previousZip)
            try #require(bytes.starts(with: [0x50, 0x4B, 3, 4]) && bytes[30..<39] == Data("markdown/".utf8))
            bytes[26] += 1
            chmod(previousZip.path, 0o644)
            try bytes.write(to: previousZip)
            let index = runs.appendingPathComponent(MarkdownIndex.fileName)
            var indexBytes = [UInt8](try Data(contentsOf: index))
            let end = MarkdownIndex.headerSize
            var record = Record()
            record.add(bytes.withUnsafeBytes { SHA256.digest(of: $0) })
            indexBytes.replaceSubrange((end - 128)..<(end - 96), with: record.bytes)
            reseal(&indexBytes)
            try Data(indexBytes).write(to: index)
        default: break
        }
        let (full, _, _) = try exportAll()
        let (incremental, summary) = try exportReusing(runs, byLink: true)
        let copied = [
            "nothing": ids.count, "one memo changed": ids.count - 1,
            "one local header of the previous zip lies, the zip's digest recorded again": ids.count - 1
        ]
        #expect(summary.copiedZipEntries == copied[change] ?? 0)
        // memos.json's blocks: all copied when nothing changed, none from a zip that cannot be trusted.
        #expect(summary.jsonBlocks >= 1)
        switch change {
        case "nothing", "one local header of the previous zip lies, the zip's digest recorded again":
            #expect(summary.copiedJSONBlocks == summary.jsonBlocks)
        case "one memo changed": #expect(summary.copiedJSONBlocks < summary.jsonBlocks)
        default: #expect(summary.copiedJSONBlocks == 0)
        }
        _ = try sameFiles(incremental, full)
    }

    /// Seals an index's bytes again after a change, as reckon seals them:
    /// the SHA-256 of the limits, every byte after the header, the zip's
    /// two digests and the two starts.
    func reseal(_ bytes: inout [UInt8]) {
        let end = MarkdownIndex.headerSize
        let sealed = Array(bytes[(end - 64)..<(end - 48)] + bytes[end...] + bytes[(end - 128)..<(end - 64)] + bytes[(end - 48)..<(end - 32)])
        var record = Record()
        record.add(sealed.withUnsafeBytes { SHA256.digest(of: $0) })
        bytes.replaceSubrange((end - 32)..<end, with: record.bytes)
    }

    /// An index sealed as reckon seals it but whose blocks lie about where
    /// their bytes are in the previous zip, and a memo too long to be held
    /// whole, taken unread: the zip is still the bytes a full export
    /// writes, as no block is copied unless its bytes inflate to the block.
    @Test(arguments: ["a memo of 4 MiB and more, unchanged", "an index whose blocks lie about their places"])
    func aNightlyZipIsAFullOnesBytesWhateverThePreviousRunHolds(_ case: String) throws {
        let ids = (0..<200).map { String(format: "ABCDEF%02X-0000-4000-8000-%012X", $0 % 100 + 16, $0) }
        source.index(ids.map { entry($0) })
        for (n, id) in ids.enumerated() {
            let body = n == 7 && `case`.hasPrefix("a memo") ? String(repeating: "long line\\n", count: 500_000) : "Body \(n)"
            source.write("memos/\(id).json", memo(id, title: "Memo \(n)", body: body))
        }
        try waitUntilTheMemoFilesHaveIdentities()
        let runs = try publishPreviousRun()
        if `case`.hasPrefix("an index") {
            // The first two blocks' places (offset and compressed size) swapped.
            let index = runs.appendingPathComponent(MarkdownIndex.fileName)
            var bytes = [UInt8](try Data(contentsOf: index))
            let end = MarkdownIndex.headerSize
            let blocksStart = Int(bytes[(end - 40)..<(end - 32)].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            let (first, second) = (blocksStart + 4 + 48, blocksStart + 68 + 4 + 48)
            try #require(bytes.count >= second + 16)
            let places = (Array(bytes[first..<first + 16]), Array(bytes[second..<second + 16]))
            bytes.replaceSubrange(first..<first + 16, with: places.1)
            bytes.replaceSubrange(second..<second + 16, with: places.0)
            reseal(&bytes)
            try Data(bytes).write(to: index)
        }
        let (full, fullSummary, _) = try exportAll()
        let (incremental, summary) = try exportReusing(runs, byLink: true)
        #expect(summary.jsonBlocks == fullSummary.jsonBlocks)
        #expect(summary.copiedJSONBlocks == summary.jsonBlocks - (`case`.hasPrefix("an index") ? 2 : 0))
        _ = try sameFiles(incremental, full)
    }

    /// The zip's memos.json is deflated in blocks whose ends the memos'
    /// ids set, so one memo changed among many leaves every other block as
    /// it was: those are copied from the previous zip, and the zip is
    /// still the bytes a full export writes.
    @Test func oneMemoChangedAmongManyDeflatesOnlyItsOwnBlocksOfMemosJSONAgain() throws {
        let ids = (0..<400).map { String(format: "ABCDEF%02X-0000-4000-8000-%012X", $0 % 200 + 16, $0) }
        source.index(ids.map { entry($0) })
        for (n, id) in ids.enumerated() {
            source.write("memos/\(id).json", memo(id, title: "Memo \(n)", body: "Body \(n) " + String(repeating: "word\(n % 7) ", count: n % 50)))
        }
        let runs = try publishPreviousRun()
        source.write("memos/\(ids[200]).json", memo(ids[200], title: "Memo 200", body: "Body changed"))
        try waitUntilTheMemoFilesHaveIdentities()
        let (full, fullSummary, _) = try exportAll()
        let (incremental, summary) = try exportReusing(runs, byLink: true)
        // About one memo in 16 ends a block, by its id; the changed memo's
        // block is all that is new, with the first when it holds the newer
        // `exportedAt`.
        #expect(fullSummary.jsonBlocks > 10)
        #expect(summary.jsonBlocks == fullSummary.jsonBlocks)
        #expect((1...2).contains(summary.jsonBlocks - summary.copiedJSONBlocks))
        _ = try sameFiles(incremental, full)
    }
}

@Suite struct ExportPromiseCoreTests {
    let source = TempFolder()

    func staging() throws -> URL {
        scratchFolder("staging")
    }

    @Test func aZipCutShortIsAnErrorNamingTheFile() throws {
        source.index([entry(idA), entry(idB)])
        source.write("memos/\(idA).json", memo(idA, title: "One", body: String(repeating: "a long body line\\n", count: 400)))
        source.write("memos/\(idB).json", memo(idB, title: "Two"))
        let folder = try staging()
        _ = try Exporter(store: MemoFolder(source.spec())).export(
            MemoFolder(source.spec()).load(deep: false), formats: [.zip], includeArchived: true, into: folder)
        let zip = folder.appendingPathComponent("memos.zip")
        let whole = try Data(contentsOf: zip)
        #expect(try ArchiveReader.entries(of: zip).count == 4)
        for length in [whole.count - 1, whole.count - 30, whole.count / 2, 40] {
            let cut = folder.appendingPathComponent("cut-\(length).zip")
            try whole.prefix(length).write(to: cut)
            do {
                let entries = try ArchiveReader.entries(of: cut)
                Issue.record("a zip cut to \(length) of \(whole.count) bytes was read as \(entries.count) entries")
            } catch {
                #expect(error.message.hasPrefix(cut.path + ": "), "\(error.message)")
            }
        }
    }

    @Test func writingAndReadingAZipChangesNoProcessWideState() throws {
        let zone = getenv("TZ").map { String(cString: $0) }
        let locale = setlocale(LC_CTYPE, nil).map { String(cString: $0) }
        source.index([entry(idA)])
        source.write("memos/\(idA).json", memo(idA, title: "京都旅行"))
        let folder = try staging()
        _ = try Exporter(store: MemoFolder(source.spec())).export(
            MemoFolder(source.spec()).load(deep: false), formats: [.zip], includeArchived: true, into: folder)
        let names = try ArchiveReader.entries(of: folder.appendingPathComponent("memos.zip")).map(\.name)
        #expect(names.contains("markdown/2026-04-01-京都旅行-3f2504e0.md"), "UTF-8 names read back whole in any locale")
        #expect(getenv("TZ").map { String(cString: $0) } == zone)
        #expect(setlocale(LC_CTYPE, nil).map { String(cString: $0) } == locale)
    }

    @Test(arguments: ["two files", "two index entries"])
    func anIDHeldTwiceIsLeftOutAndNamedMissing(_ how: String) throws {
        source.index([entry(idA), entry(idB)] + (how == "two index entries" ? [entry(idA, modified: "2026-05-01T00:00:00Z")] : []))
        source.write("memos/\(idA).json", memo(idA, title: "One", modified: "2026-06-01T00:00:00Z"))
        source.write("memos/\(idB).json", memo(idB, title: "Two"))
        if how == "two files" { source.write("memos/\(idA.lowercased()).json", memo(idA, title: "The other one")) }
        var results: [Data] = []
        for streamed in [false, true] {
            let folder = try staging()
            let summary: ExportSummary
            if streamed {
                summary = try #require(
                    try Exporter(store: MemoFolder(source.spec())).export(formats: ExportFormat.allCases, includeArchived: true, into: folder).1)
            } else {
                summary = try Exporter(store: MemoFolder(source.spec())).export(
                    MemoFolder(source.spec()).load(deep: false), formats: ExportFormat.allCases, includeArchived: true, into: folder)
            }
            #expect(summary.missing.map(\.id) == [MemoID(idA)!])
            #expect(summary.missing.first?.reason.hasPrefix("the id is held twice") == true)
            #expect(summary.counts == MemoCounts(active: 1, archived: 0))
            #expect(summary.exportedAt == Timestamp(iso8601: "2026-04-19T14:32:00Z"), "the memo left out does not date the export")
            let json = try String(decoding: Data(contentsOf: folder.appendingPathComponent("memos.json")), as: UTF8.self)
            #expect(!json.contains(idA.lowercased()))
            results.append(try Data(contentsOf: folder.appendingPathComponent("manifest.json")))
        }
        #expect(results[0] == results[1], "both ways of exporting agree")
    }

    @Test func aLatestThatIsNotALinkIsLeftAloneAndNamed() throws {
        let dir = scratchFolder("runs")
        try Data("mine".utf8).write(to: dir.appendingPathComponent("latest"))
        #expect {
            _ = try ExportFolder.makeRunStaging(in: dir)
        } throws: { error in
            let error = try #require(error as? OutputError)
            return error.path == dir.appendingPathComponent("latest").path && error.reason.hasPrefix("a file stands where reckon keeps its link")
        }
        // Made before `latest` appeared: publishing still refuses and leaves no staging folder.
        try FileManager.default.removeItem(at: dir.appendingPathComponent("latest"))
        let staging = try ExportFolder.makeRunStaging(in: dir)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("latest"), withIntermediateDirectories: true)
        #expect(throws: OutputError.self) {
            _ = try ExportFolder.publishRun(staging, in: dir, startedAt: Timestamp(seconds: 0), keep: nil)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["latest"])
        // A file where the export folder should be is named, in words.
        let file = dir.appendingPathComponent("file")
        try Data().write(to: file)
        #expect {
            _ = try ExportFolder.makeRunStaging(in: file)
        } throws: { error in
            (error as? OutputError)?.description == "cannot write \(file.path): a file stands where a folder must be"
        }
    }

    @Test func asciiTitlesGetTheSlugUnicodeRulesGive() {
        var random = TestSeed.generator()
        var titles = ["", "\r\n", "A-b_C", String(repeating: "ab ", count: 80), String(repeating: "x", count: 130)]
        for _ in 0..<5_000 {
            titles.append(
                String(
                    decoding: (0..<Int.random(in: 0...160, using: &random)).map { _ in UInt8.random(in: 0...0x7F, using: &random) },
                    as: UTF8.self))
        }
        for title in titles {
            #expect(MarkdownExport.asciiSlug(title) == MarkdownExport.unicodeSlug(title), "\(Array(title.utf8))")
        }
    }

    @Test func yamlEscapesExactlyTheControlCharactersAndSeparators() {
        var wrong: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a" + String(Character(scalar)) + "b"
            let escaped =
                scalar == "\"" || scalar == "\\" || scalar.properties.generalCategory == .control
                || [0x2028, 0x2029, 0xFEFF].contains(value)
            let quoted = MarkdownExport.yamlQuoted(text)
            if escaped ? !quoted.hasPrefix("\"a\\") : quoted != "\"" + text + "\"" { wrong.append(value) }
        }
        #expect(wrong.isEmpty)
        #expect(MarkdownExport.yamlQuoted("x\u{85}\"\n") == #""x\u0085\"\n""#)
    }

    /// A Markdown index holds its records in export order and again in id
    /// order. Damaged anywhere (each of its bytes flipped in turn, three
    /// ways) or cut short, it is not used at all, and reading it never
    /// stops the program: its header seals its records by their SHA-256.
    @Test func aDamagedMarkdownIndexIsNeverUsed() throws {
        let runs = TempFolder().url
        let run = runs.appendingPathComponent(ExportFolder.runName(Timestamp(seconds: 1_780_000_000)))
        try FileManager.default.createDirectory(at: run.appendingPathComponent(Exporter.markdownName), withIntermediateDirectories: true)
        try Data("{}\n".utf8).write(to: run.appendingPathComponent(Exporter.manifestName))
        try FileManager.default.createSymbolicLink(
            atPath: runs.appendingPathComponent(ExportFolder.latestName).path, withDestinationPath: run.lastPathComponent)
        func entry(_ n: Int) -> MarkdownIndex.Entry {
            let created: Timestamp? = n == 1 ? nil : Timestamp(seconds: Int64(n))
            let id = MemoID(String(format: "%08X-0000-4000-8000-000000000000", n))!
            let fingerprint = [UInt8(n)].withUnsafeBytes { SHA256.digest(of: $0) }
            let digest = [UInt8(n), 1].withUnsafeBytes { SHA256.digest(of: $0) }
            let source =
                n == 2 ? nil : FileIdentity(device: 3, inode: UInt64(n) * 7, size: n * 100, modified: Int64(n) << 31, changed: Int64(n) << 32)
            return MarkdownIndex.Entry(
                createdAt: created, id: id, fingerprint: fingerprint, path: "markdown/memo-\(n).md", digest: digest,
                inode: UInt64(n) * 1_000_003, modified: Timestamp(seconds: Int64(n) * 60), archived: n == 0,
                json: (n * 300)..<(n * 300 + 250), source: source)
        }
        let entries = [entry(1), entry(0), entry(2)]
        // One record a run: the copy by id is merged from spilled runs.
        let writer = try MarkdownIndex.Writer(url: runs.appendingPathComponent("index.tmp"), limits: ReadLimits(), runLength: 1)
        for entry in entries { try writer.append(entry) }
        try writer.finish(manifest: try Exporter.sizeAndDigest(of: run.appendingPathComponent(Exporter.manifestName)).1, zip: nil)
        try writer.install(in: runs)
        let index = runs.appendingPathComponent(MarkdownIndex.fileName)
        let whole = try Data(contentsOf: index)
        func read() -> [MarkdownIndex.Entry] {
            guard let previous = MarkdownIndex.previous(in: runs, limits: ReadLimits()) else { return [] }
            return entries.compactMap { previous.entry(createdAt: $0.createdAt, id: $0.id) }
        }
        #expect(read() == entries, "every field read back as written")
        var byID = try #require(MarkdownIndex.previous(in: runs, limits: ReadLimits())).byID()
        #expect(Array(sequence(state: ()) { _ in byID.next() }) == entries.sorted { $0.id < $1.id }, "then again in id order")
        for position in 0..<whole.count {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = whole
                damaged[position] ^= flip
                try damaged.write(to: index)
                #expect(read() == [], "byte \(position) ^ \(flip)")
            }
        }
        for length in [MarkdownIndex.headerSize, MarkdownIndex.headerSize + 3, whole.count - 1] {
            try whole.prefix(length).write(to: index)
            #expect(read() == [], "cut at \(length)")
        }
        // A FIFO, or a folder, where the index should be is not read, and never waited on.
        try FileManager.default.removeItem(at: index)
        #expect(mkfifo(index.path, 0o644) == 0)
        #expect(read() == [])
        try FileManager.default.removeItem(at: index)
        try FileManager.default.createDirectory(at: index, withIntermediateDirectories: false)
        #expect(read() == [])
    }

    /// A record handed over `later` (the zip, while it is still being
    /// deflated) lands where it was listed: the manifest is the same bytes as
    /// one written in order, it is asked for only after every other record,
    /// and the side file is gone.
    @Test(arguments: [0, 1, 2, 3])
    func aRecordWrittenLaterLandsWhereItWasListed(at position: Int) throws {
        let manifest = ExportManifest(
            source: .init(name: "drive", label: "Google Drive", path: "/d"), exportedAt: nil, includeArchived: true,
            formats: ExportFormat.allCases, counts: MemoCounts(), files: [], missing: [])
        func file(_ path: String, _ size: Int) -> Exporter.Written {
            .init(path: path, size: size, digest: Data(path.utf8).withUnsafeBytes { SHA256.digest(of: $0) }, modified: ZipEntryRules.earliest)
        }
        let records: [(ExportManifest.Place, Exporter.Written)] = [
            (.folder, file("markdown/a.md", 1)), (.folder, file("memos.zip", 12345)),
            (.zip, file("manifest.json", 7)), (.zip, file("markdown/a.md", 1))
        ]
        let folder = source.url
        let inOrder = try Exporter.writeManifest(manifest, to: folder.appendingPathComponent("in-order.json")) { list, _ in
            for (place, written) in records { try list(place, written) }
        }
        var listedAll = false
        let withLater = try Exporter.writeManifest(manifest, to: folder.appendingPathComponent("later.json")) { list, later in
            for (n, (place, written)) in records.enumerated() {
                if n == position {
                    try later(place) {
                        #expect(listedAll)
                        return written
                    }
                } else {
                    try list(place, written)
                }
            }
            listedAll = true
        }
        #expect(try Data(contentsOf: folder.appendingPathComponent("later.json")) == Data(contentsOf: folder.appendingPathComponent("in-order.json")))
        #expect(withLater.size == inOrder.size && withLater.digest == inOrder.digest)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("later.json.rest.tmp").path))
    }
}
