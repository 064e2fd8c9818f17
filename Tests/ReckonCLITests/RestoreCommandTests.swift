import Foundation
import ReckonCore
import SeededGenerator
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Restores `export` (a folder or a zip) into a new folder and returns it.
func restored(_ export: URL) throws -> URL {
    let dir = temporaryFolder().appendingPathComponent("restored")
    let result = try runArray(["restore", export.path, "--to", dir.path])
    try #require(result.code == 0, "\(result.stderr)")
    return dir
}

/// The ids `memos.json` of an export holds, in small letters.
func exportedIDs(_ export: URL) throws -> [String] {
    guard case .object(let file) = try JSONValue.parse(Data(contentsOf: export.appendingPathComponent("memos.json"))),
        case .array(let memos)? = file["memos"]
    else { return [] }
    return memos.compactMap { memo in
        guard case .object(let fields) = memo, case .string(let id)? = fields["id"] else { return nil }
        return id
    }
}

/// Reconciles `side` with the folder restored from its export and checks
/// that every exported memo is `=`: no difference names it. Returns
/// reconcile's exit code.
@discardableResult
func expectRoundTrip(_ side: String, export: URL, restoredFolder: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int32 {
    let result = try runArray(["reconcile", "--local", side, "--remote", restoredFolder.path, "--json"])
    let report = try json(result.stdout)
    let differing = Set((report["differences"] as? [[String: Any]] ?? []).compactMap { ($0["id"] as? String)?.lowercased() })
    let ids = try exportedIDs(export)
    let notEqual = ids.filter { differing.contains($0) }
    #expect(
        notEqual.isEmpty, "\(side): \(notEqual.count) of \(ids.count) exported memos are not '=', such as \(notEqual.prefix(3))",
        sourceLocation: sourceLocation)
    #expect(
        ((report["sides"] as? [[String: Any]])?.last?["problems"] as? [Any])?.isEmpty == true, "the restored folder reads whole",
        sourceLocation: sourceLocation)
    return result.code
}

@Suite struct RestoreCommandTests {
    @Test(arguments: [
        "Samples/drift/device", "Samples/drift/drive", "Samples/in-sync/device", "Samples/in-sync/drive",
        "Samples/empty/drive", "Samples/store/default.store", "Samples/backup/iphone"
    ])
    func everySampleComesBackEqual(_ side: String) throws {
        let export = try exportFolder(side)
        let fromFolder = try restored(export)
        #expect(try expectRoundTrip(side, export: export, restoredFolder: fromFolder) == 0, "nothing differs at all")
        let fromZip = try restored(export.appendingPathComponent("memos.zip"))
        #expect(try fingerprint(fromZip) == fingerprint(fromFolder), "memos.json beside the manifest and in the zip restore the same bytes")
    }

    @Test func theFolderHasIdsInSmallLettersAndIndexSchemaOne() throws {
        let export = try exportFolder("Samples/drift/device")
        let dir = try restored(export)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("memos").path).sorted()
        #expect(
            names == [
                "16fd2706-8baf-433b-82eb-8c7fada847da.json", "3f2504e0-4f89-11d3-9a0c-0305e82c3301.json",
                "7c9e6679-7425-40de-944b-e07fc1f90ae7.json", "886313e1-3b8a-5372-9b90-0c9aee199e5d.json",
                "a3bb189e-8bf9-3888-9912-ace4e6543002.json"
            ])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["index.json", "memos"])
        let index = try json(read(dir.appendingPathComponent("index.json")))
        #expect(index["schemaVersion"] as? Int == 1)
        let entries = index["entries"] as? [[String: Any]] ?? []
        #expect(entries.compactMap { $0["id"] as? String }.sorted() == names.map { String($0.dropLast(5)) })
        #expect(
            try read(dir.appendingPathComponent("memos/3f2504e0-4f89-11d3-9a0c-0305e82c3301.json")) == """
                {
                  "archivedAt" : null,
                  "body" : "Milk, eggs, miso, green onions.",
                  "changeTag" : null,
                  "createdAt" : "2026-04-01T08:00:00Z",
                  "deletedAt" : null,
                  "id" : "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
                  "modifiedAt" : "2026-04-18T09:15:00Z",
                  "pinned" : true,
                  "tags" : [
                    "home"
                  ],
                  "title" : "Groceries"
                }

                """)
    }

    @Test func unknownKeysComeBackWithEveryDigit() throws {
        let source = try generatedFolder(count: 2)
        try addUnknownNumbers(to: source.appendingPathComponent("memos/00000000-0000-4000-8000-000000000000.json"))
        let export = try exportFolder(source.path)
        let dir = try restored(export)
        let memo = try read(dir.appendingPathComponent("memos/00000000-0000-4000-8000-000000000000.json"))
        for line in ["\"serverSeq\" : 9007199254740993,", "\"ratio\" : 1.10,", "\"far\" : 1e400,", "      12345678901234567890\n"] {
            #expect(memo.contains(line), "\(line) in \(memo)")
        }
        try expectRoundTrip(source.path, export: export, restoredFolder: dir)
        // Exported again, the restored folder gives the same memos, key for key and digit for digit.
        let again = try exportFolder(dir.path)
        func memos(_ export: URL) throws -> JSONValue? {
            guard case .object(let file) = try JSONValue.parse(Data(contentsOf: export.appendingPathComponent("memos.json"))) else { return nil }
            return file["memos"]
        }
        #expect(try memos(again) == memos(export))
        #expect(try memos(export) != nil)
    }

    /// memos.json is the copy a person keeps: tags in the memo's own order,
    /// twice if twice. The Markdown file sorts them, as Joplin's export does.
    @Test func tagsComeBackInTheirOwnOrder() throws {
        let source = try generatedFolder(count: 2)
        let file = source.appendingPathComponent("memos/00000000-0000-4000-8000-000000000000.json")
        let text = try read(file)
        let tags = try #require(text.firstRange(of: try Regex(#""tags": *\[[^\]]*\]"#)))
        try Data(text.replacingCharacters(in: tags, with: #""tags": ["b", "a", "a"]"#).utf8).write(to: file)
        let export = try exportFolder(source.path)
        #expect(try read(export.appendingPathComponent("memos.json")).contains(#""tags" : [\#n        "b",\#n        "a",\#n        "a"\#n      ]"#))
        let markdown = try FileManager.default.contentsOfDirectory(atPath: export.appendingPathComponent("markdown").path)
            .map { try read(export.appendingPathComponent("markdown/\($0)")) }
        #expect(markdown.contains { $0.contains("tags:\n  - \"a\"\n  - \"a\"\n  - \"b\"\n") })
        let back =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: restored(export).appendingPathComponent("memos/00000000-0000-4000-8000-000000000000.json"))) as? [String: Any]
        #expect(back?["tags"] as? [String] == ["b", "a", "a"])
    }

    @Test func theGoodMemosOfTheHostileCorpusComeBack() throws {
        var checked = 0
        let cases =
            ["good"] + (try FileManager.default.contentsOfDirectory(atPath: fixtures.appendingPathComponent("bad").path).sorted().map { "bad/\($0)" })
        for name in cases {
            let side = fixtures.appendingPathComponent(name).path
            let out = temporaryFolder().appendingPathComponent("export")
            _ = try runArray(["export", side, "--out", out.path, "--include-archived"])
            // A side that could not be read at all exports nothing.
            guard FileManager.default.fileExists(atPath: out.appendingPathComponent("memos.json").path) else { continue }
            let dir = try restored(out)
            try expectRoundTrip(side, export: out, restoredFolder: dir)
            checked += try exportedIDs(out).count
        }
        #expect(checked > 40, "the corpus's good memos were exported and restored: \(checked)")
    }

    @Test func tenThousandGeneratedMemosComeBack() throws {
        let side = try randomFolder(count: 10_000, random: TestSeed.generator())
        let seed = TestSeed.value
        let export = try exportFolder(side.path)
        let dir = try restored(export)
        let code = try expectRoundTrip(side.path, export: export, restoredFolder: dir)
        #expect(code == 0, "seed \(seed): nothing differs, deleted memos being absent, the same to the user")
        #expect(try exportedIDs(export).count > 8_000, "seed \(seed)")
    }

    @Test func aFolderThatIsNotEmptyIsUsageAndNothingIsWritten() throws {
        let export = try exportFolder("Samples/drift/device")
        let dir = temporaryFolder().appendingPathComponent("mine")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: false)
        try Data("mine\n".utf8).write(to: dir.appendingPathComponent("notes.txt"))
        let before = try everything(dir.deletingLastPathComponent())
        let result = try runArray(["restore", export.path, "--to", dir.path])
        #expect(result.code == 64)
        #expect(
            result.stderr.hasPrefix(
                "Error: '--to' \(dir.path) is not empty; reckon restores only into a new or empty folder, so nothing was written\n"))
        #expect(try everything(dir.deletingLastPathComponent()) == before)
        let file = try runArray(["restore", export.path, "--to", dir.appendingPathComponent("notes.txt").path])
        #expect(file.code == 64)
        let inside = try runArray(["restore", export.path, "--to", export.appendingPathComponent("back").path])
        #expect(inside.code == 64)
        #expect(!FileManager.default.fileExists(atPath: export.appendingPathComponent("back").path))
        let empty = temporaryFolder()
        #expect(try runArray(["restore", export.path, "--to", empty.path]).code == 0, "an empty folder is fine")
        #expect(FileManager.default.fileExists(atPath: empty.appendingPathComponent("index.json").path))
    }

    @Test func aLinkIsNeverWrittenThroughAndTheExportsFolderIsNeverWrittenInto() throws {
        let export = try exportFolder("Samples/drift/device")
        let parent = temporaryFolder()
        // A link to nothing yet, and a link to an empty folder.
        let elsewhere = parent.appendingPathComponent("elsewhere")
        try FileManager.default.createSymbolicLink(
            atPath: parent.appendingPathComponent("dangling").path, withDestinationPath: elsewhere.appendingPathComponent("deep").path)
        try FileManager.default.createDirectory(at: elsewhere.appendingPathComponent("empty"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: parent.appendingPathComponent("toEmpty").path, withDestinationPath: elsewhere.appendingPathComponent("empty").path)
        let before = try everything(parent)
        for link in ["dangling", "toEmpty"] {
            let result = try runArray(["restore", export.path, "--to", parent.appendingPathComponent(link).path])
            #expect(result.code == 64)
            #expect(
                result.stderr.hasPrefix(
                    "Error: '--to' \(parent.appendingPathComponent(link).path) is a link; reckon does not write through links, so nothing was written\n"
                ))
        }
        #expect(try everything(parent) == before)
        // The zip of an export names the export's folder as much as the folder does.
        let exportBefore = try everything(export)
        let intoExport = try runArray([
            "restore", export.appendingPathComponent("memos.zip").path, "--to", export.appendingPathComponent("markdown/back").path
        ])
        #expect(intoExport.code == 64, "\(intoExport.stderr)")
        #expect(try everything(export) == exportBefore)
    }

    @Test func anEmptyFolderThatExistsKeepsItsInodeAndPermissions() throws {
        let export = try exportFolder("Samples/drift/device")
        let dir = temporaryFolder().appendingPathComponent("private")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        var before = stat()
        #expect(stat(dir.path, &before) == 0)
        let result = try runArray(["restore", export.path, "--to", dir.path])
        #expect(result.code == 0, "\(result.stderr)")
        var after = stat()
        #expect(stat(dir.path, &after) == 0)
        #expect(after.st_ino == before.st_ino)
        #expect(after.st_mode & 0o777 == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["index.json", "memos"])
    }

    @Test func aFolderOfTheUsersNamedLikeAStagingFolderIsNeverRemoved() throws {
        let export = try exportFolder("Samples/drift/device")
        let parent = temporaryFolder()
        // Named as staging folders of a process that is gone, holding a file reckon never writes.
        for kind in ["restore", "export"] {
            let folder = parent.appendingPathComponent(".reckon-\(kind)-999999999.partial")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("precious\n".utf8).write(to: folder.appendingPathComponent("mydata.txt"))
        }
        // A killed run's staging (only what reckon writes) still goes.
        let killed = parent.appendingPathComponent(".reckon-restore-999999998.partial")
        try FileManager.default.createDirectory(at: killed.appendingPathComponent("memos"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: killed.appendingPathComponent("index.json"))
        #expect(try runArray(["restore", export.path, "--to", parent.appendingPathComponent("restored").path]).code == 0)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: parent.path).sorted()
                == [".reckon-export-999999999.partial", ".reckon-restore-999999999.partial", "restored"])
        #expect(try read(parent.appendingPathComponent(".reckon-restore-999999999.partial/mydata.txt")) == "precious\n")
    }

    @Test func aMemosJSONLongerThanItsManifestSaysIsNotReadToItsEnd() throws {
        let export = try exportFolder("Samples/drift/device")
        let file = try FileHandle(forWritingTo: export.appendingPathComponent("memos.json"))
        try file.seekToEnd()
        try file.write(contentsOf: Data(repeating: 0x20, count: 70 << 20))
        try file.close()
        let parent = temporaryFolder()
        let result = try runArray(["restore", export.path, "--to", parent.appendingPathComponent("restored").path])
        #expect(result.code == 2)
        #expect(result.stderr.contains("/memos.json: is larger than the "), "\(result.stderr)")
        #expect(result.stderr.contains(" bytes manifest.json lists: the export is damaged"))
        // verify reads it to name its memos: the spaces are not kept past the memo size limit.
        let verified = try runArray(["verify", export.path])
        #expect(verified.code == 2)
        #expect(verified.stdout.contains("longer than 67108864 bytes"), "\(verified.stdout)")
    }

    @Test func aDamagedExportRestoresNothing() throws {
        let export = try exportFolder("Samples/drift/device")
        try flipByte(export.appendingPathComponent("memos.json"), at: 200)
        let parent = temporaryFolder()
        let result = try runArray(["restore", export.path, "--to", parent.appendingPathComponent("restored").path])
        #expect(result.code == 2)
        #expect(
            result.stderr
                == "Error: \(export.path)/memos.json: is not what manifest.json lists (its size or SHA-256 differs): the export is damaged; 'reckon verify' says more\n"
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).isEmpty, "no folder, no staging left")
        let zip = export.appendingPathComponent("memos.zip")
        let range = try entryData(try Data(contentsOf: zip), "memos.json")
        try flipByte(zip, at: range.lowerBound + range.count / 2)
        let damagedZip = try runArray(["restore", zip.path, "--to", parent.appendingPathComponent("restored").path])
        #expect(damagedZip.code == 2)
        #expect(
            damagedZip.stderr.hasPrefix(
                "Error: \(zip.path): the entry memos.json is damaged or cut short: its bytes are not the ones it was written with"),
            "\(damagedZip.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).isEmpty)
        // Damage in another entry of the zip (a Markdown file) does not stop it: only memos.json is read.
        let intact = try exportFolder("Samples/drift/device").appendingPathComponent("memos.zip")
        let markdownName = try #require(try ArchiveReader.entries(of: intact).map(\.name).first { $0.hasPrefix("markdown/") })
        let markdownRange = try entryData(try Data(contentsOf: intact), markdownName)
        try flipByte(intact, at: markdownRange.lowerBound + markdownRange.count / 2)
        #expect(try runArray(["verify", intact.path]).code == 2, "the zip is damaged")
        let despite = try runArray(["restore", intact.path, "--to", parent.appendingPathComponent("restored").path])
        #expect(despite.code == 0, "\(despite.stderr)")
        #expect(try runArray(["diff", intact.path, intact.path]).code == 0)
        try FileManager.default.removeItem(at: parent.appendingPathComponent("restored"))
        let markdownOnly = try exportFolder("Samples/drift/device", extra: ["--format", "markdown"])
        let noJSON = try runArray(["restore", markdownOnly.path, "--to", parent.appendingPathComponent("restored").path])
        #expect(noJSON.code == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).isEmpty)
    }

    @Test(arguments: ["memos.json", "manifest.json", "markdown/"])
    func aZipHoldingANameTwiceIsNotRestoredAndSaysSo(_ doubled: String) throws {
        let export = try exportFolder("Samples/drift/device")
        let entries = try ArchiveReader.entries(of: export.appendingPathComponent("memos.zip"))
        let name = try #require(entries.first { $0.name.hasPrefix(doubled) }).name
        let twice = temporaryFolder().appendingPathComponent("twice.zip")
        let writer = try ZipWriter(url: twice)
        // The second entry right after the first, so it is read before the zip's manifest.
        for entry in entries.flatMap({ $0.name == name ? [$0, $0] : [$0] }) {
            try writer.add(name: entry.name, modified: Timestamp(seconds: entry.modified), size: entry.data.count) { try $0(entry.data) }
        }
        try writer.finish()
        let parent = temporaryFolder()
        let result = try runArray(["restore", twice.path, "--to", parent.appendingPathComponent("restored").path])
        #expect(result.code == 2)
        #expect(
            result.stderr
                == "Error: \(twice.path): holds two entries named '\(name)'; reckon never writes a zip like that, "
                + "and which of the two is the export cannot be told: the export is damaged\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).isEmpty, "nothing restored, no staging left")
    }

    /// A write that fails (a file over the size limit `ulimit -f` sets) is
    /// told of the folder restored into, as the user named it, never of
    /// reckon's staging folder beside it.
    @Test func aFailedWriteNamesTheFolderRestoredIntoNotTheStagingFolder() throws {
        let source = temporaryFolder()
        try FileManager.default.createDirectory(at: source.appendingPathComponent("memos"), withIntermediateDirectories: true)
        let id = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
        let body = String(repeating: "a long line of a memo\n", count: 20_000)
        try Data(#"{"id":"\#(id)","title":"Long","body":\#(jsonString(body)),"modifiedAt":"2026-04-18T09:15:00Z"}"#.utf8)
            .write(to: source.appendingPathComponent("memos/\(id).json"))
        try Data(#"{"schemaVersion":1,"entries":[{"id":"\#(id)","modifiedTime":"2026-04-18T09:15:00Z"}]}"#.utf8)
            .write(to: source.appendingPathComponent("index.json"))
        let export = try exportFolder(source.path, extra: ["--format", "json"])
        let parent = temporaryFolder()
        // Files are limited to 100 blocks (50 or 100 KiB), and the signal a write past that sends is ignored: it fails with EFBIG.
        let result = try runArray(
            ["-c", #"ulimit -f 100 && trap '' XFSZ && exec "$0" restore "$1" --to restored"#, reckonBinary.path, export.path], in: parent,
            executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.code == 2)
        #expect(result.stderr == "Error: cannot write restored/memos/\(id).json: File too large\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path).isEmpty, "nothing restored, no staging left")
    }

    @Test func aKilledRestoreLeavesNothingAndTheNextOneCleansUp() throws {
        let export = try exportFolder("Samples/drift/device")
        let parent = temporaryFolder()
        let dir = parent.appendingPathComponent("restored")
        for step in ["restore-written", "restore-checked"] {
            #expect(try stopped(at: step, ["restore", export.path, "--to", dir.path]), "killed at \(step)")
            #expect(!FileManager.default.fileExists(atPath: dir.path), "killed at \(step), nothing is at the folder")
        }
        #expect(try runArray(["restore", export.path, "--to", dir.path]).code == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["restored"], "the staging folders of killed runs are gone")
    }
}

/// A memo folder of `count` memos made with `random`: titles and bodies in
/// several scripts with quotes, tabs and line breaks, tags, pinned or not,
/// some archived, some soft-deleted, some with unknown keys holding
/// numbers no Double keeps, times with and without fractions of a second.
func randomFolder(count: Int, random: SeededRandom) throws -> URL {
    var random = random
    let words = ["memo", "note", "京都", "旅行", "café", "naïve", "\"quoted\"", "tab\there", "line\nbreak", "back\\slash", "emoji 🗒️", "Ωμέγα"]
    func text(_ count: Int) -> String { (0..<count).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ") }
    func time() -> String {
        let seconds = 1_767_225_600 + Int64(random.next() % 9_000_000)
        let iso = Timestamp(seconds: seconds).iso8601
        return random.next() % 4 == 0 ? String(iso.dropLast()) + ".\(100 + random.next() % 900)Z" : iso
    }
    let root = temporaryFolder()
    try FileManager.default.createDirectory(at: root.appendingPathComponent("memos"), withIntermediateDirectories: true)
    var entries: [String] = []
    for _ in 0..<count {
        let id = String(
            format: "%08X-%04X-4%03X-8%03X-%012llX", UInt32(truncatingIfNeeded: random.next()), UInt32(random.next() % 0x10000),
            UInt32(random.next() % 0x1000), UInt32(random.next() % 0x1000), random.next() % 0x1_0000_0000_0000)
        let modified = time()
        let roll = random.next() % 100
        let archived = roll < 12 ? "\"\(modified)\"" : "null"
        let deleted = (12..<18).contains(roll) ? "\"\(modified)\"" : "null"
        entries.append(#"{"id":"\#(id)","modifiedTime":"\#(modified)","archivedAt":\#(archived),"deletedAt":\#(deleted)}"#)
        var fields = [
            #""id":"\#(id)""#, #""title":\#(jsonString(text(3)))"#, #""body":\#(jsonString(text(5 + Int(random.next() % 60))))"#,
            #""createdAt":"\#(time())""#, #""modifiedAt":"\#(modified)""#, #""archivedAt":\#(archived)"#, #""deletedAt":\#(deleted)"#,
            #""tags":[\#((0..<Int(random.next() % 3)).map { _ in jsonString(text(1)) }.joined(separator: ","))]"#,
            #""pinned":\#(random.next() % 5 == 0)"#
        ]
        if random.next() % 10 == 0 {
            fields.append(#""serverSeq":\#(9_007_199_254_740_993 + random.next() % 1000),"weight":1.\#(random.next() % 100)0"#)
        }
        try Data("{\(fields.joined(separator: ","))}".utf8).write(to: root.appendingPathComponent("memos/\(id).json"))
    }
    try Data(#"{"schemaVersion":1,"entries":[\#(entries.joined(separator: ",\n"))]}"#.utf8).write(to: root.appendingPathComponent("index.json"))
    return root
}

/// A JSON string literal.
func jsonString(_ text: String) -> String {
    String(decoding: try! JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed]), as: UTF8.self)
}
