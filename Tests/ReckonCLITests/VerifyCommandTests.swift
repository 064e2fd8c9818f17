import Foundation
import ReckonCore
import TestSupport
import Testing

/// Exports `source` (a path under the package root, or absolute) with every
/// format and archived memos into a new folder, and returns the folder.
func exportFolder(_ source: String, extra: [String] = ["--include-archived"]) throws -> URL {
    let out = temporaryFolder().appendingPathComponent("export")
    let result = try runArray(["export", source, "--out", out.path] + extra)
    try #require(FileManager.default.fileExists(atPath: out.appendingPathComponent("manifest.json").path), "\(result.stderr)")
    return out
}

/// Writes `entries` into a zip at `url` as reckon writes an export's zip (`ZipBuilder`), in the order given.
func reckonZip(_ entries: [ArchiveReader.Entry], at url: URL) throws {
    let builder = ZipBuilder(url: url)
    try builder.add(entries.map { .init(name: $0.name, modified: Timestamp(seconds: $0.modified), contents: .data($0.data)) })
    _ = try builder.finish()
}

/// Flips the lowest bit of the byte at `offset` of a file.
func flipByte(_ url: URL, at offset: Int) throws {
    var data = try Data(contentsOf: url)
    data[offset] ^= 0x01
    try data.write(to: url)
}

/// Where the stored bytes of the zip entry `name` lie: from the end of its
/// local file header to the next signature (a data descriptor, the next
/// entry or the central directory).
func entryData(_ zip: Data, _ name: String) throws -> Range<Int> {
    let bytes = [UInt8](zip)
    func le16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    func signature(_ at: Int) -> Bool {
        bytes[at] == 0x50 && bytes[at + 1] == 0x4B && [0x0403, 0x0201, 0x0807].contains(le16(at + 2))
    }
    var at = 0
    while at + 30 < bytes.count {
        guard le16(at + 2) == 0x0403 else { break }
        let nameLength = le16(at + 26)
        let extraLength = le16(at + 28)
        let entryName = String(decoding: bytes[(at + 30)..<(at + 30 + nameLength)], as: UTF8.self)
        let start = at + 30 + nameLength + extraLength
        var end = start
        while end + 4 <= bytes.count, !signature(end) { end += 1 }
        if entryName == name { return start..<end }
        at = end
        while at + 4 <= bytes.count, !(signature(at) && le16(at + 2) != 0x0807) { at += 1 }
    }
    throw CocoaError(.fileReadCorruptFile)
}

@Suite struct VerifyCommandTests {
    let sample = "Samples/drift/device"

    @Test func aWholeExportAndItsZipAreWhole() throws {
        let export = try exportFolder(sample)
        let folder = try runArray(["verify", export.path])
        #expect(folder.code == 0, "\(folder.stdout)")
        #expect(
            folder.stdout == "\(export.path): whole. The 7 files beside manifest.json and 7 entries of memos.zip match it, size and SHA-256; "
                + "5 memos (4 active, 1 archived) in memos.json and markdown/, as manifest.json counts.\n")
        let zip = try runArray(["verify", export.appendingPathComponent("memos.zip").path])
        #expect(zip.code == 0, "\(zip.stdout)")
        #expect(
            zip.stdout.hasSuffix(
                ": whole. The 6 entries of the zip match its manifest.json, size and SHA-256; "
                    + "5 memos (4 active, 1 archived) in memos.json and markdown/, as manifest.json counts.\n"))
    }

    @Test func aFlippedByteInAMarkdownFileIsFound() throws {
        let export = try exportFolder(sample)
        let markdown = try FileManager.default.contentsOfDirectory(atPath: export.appendingPathComponent("markdown").path).sorted()
        // The first memo's title, in its front matter: its id stays readable.
        try flipByte(export.appendingPathComponent("markdown/\(markdown[1])"), at: 12)
        let result = try runArray(["verify", export.path])
        #expect(result.code == 2)
        #expect(
            result.stdout == """
                changed  markdown/\(markdown[1]): its SHA-256 is not what manifest.json lists
                \(export.path): DAMAGED: 1 of 15 files differ from manifest.json.

                """)
    }

    @Test func aFlippedByteInMemosJSONIsFoundAndTheIDItChangedIsNamed() throws {
        let export = try exportFolder(sample)
        let text = try read(export.appendingPathComponent("memos.json"))
        // The last hex digit of the first id: 2 becomes 3.
        let id = "a3bb189e-8bf9-3888-9912-ace4e6543002"
        let offset = text.utf8.count - text[text.range(of: id)!.upperBound...].utf8.count - 1
        try flipByte(export.appendingPathComponent("memos.json"), at: offset)
        let result = try runArray(["verify", export.path])
        #expect(result.code == 2)
        #expect(
            result.stdout == """
                changed  memos.json: its SHA-256 is not what manifest.json lists
                damaged  markdown/: has no file for memo a3bb189e-8bf9-3888-9912-ace4e6543003, which memos.json holds
                damaged  markdown/: has a file for memo a3bb189e-8bf9-3888-9912-ace4e6543002, which memos.json does not hold
                \(export.path): DAMAGED: 1 of 15 files differ from manifest.json, and 2 problems with the memos.

                """)
        let report = try json(try runArray(["verify", export.path, "--json"]).stdout)
        #expect(report["status"] as? String == "damaged")
        let files = report["files"] as? [[String: Any]] ?? []
        let memos = files.first { $0["path"] as? String == "memos.json" && $0["in"] as? String == "folder" }
        #expect(memos?["status"] as? String == "changed")
        #expect(memos?["sha256"] as? String == SHA256.hex(of: try Data(contentsOf: export.appendingPathComponent("memos.json"))))
    }

    @Test(.needs(.unzip)) func aFlippedByteInsideAZipEntryIsFoundByItsCRC() throws {
        let export = try exportFolder(sample)
        let zip = export.appendingPathComponent("memos.zip")
        let range = try entryData(try Data(contentsOf: zip), "memos.json")
        try flipByte(zip, at: range.lowerBound + range.count / 2)
        let (unzipCode, _) = try tool("/usr/bin/unzip", ["-tq", zip.path])
        #expect(unzipCode != 0, "unzip -t finds it too")
        let result = try runArray(["verify", export.path])
        #expect(result.code == 2)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "changed  memos.zip: its SHA-256 is not what manifest.json lists")
        #expect(
            lines.dropFirst().first?.hasPrefix(
                "unreadable  memos.zip/memos.json: is damaged or cut short: its bytes are not the ones it was written with (their CRC-32 is 0x")
                == true, "\(lines)")
        #expect(lines.last == "\(export.path): DAMAGED: 2 of 15 files differ from manifest.json.")
        let alone = try runArray(["verify", zip.path])
        #expect(alone.code == 2)
        #expect(
            alone.stdout.hasPrefix("unreadable  memos.json: is damaged or cut short: its bytes are not the ones it was written with"),
            "\(alone.stdout)")
        // A zip cut short is said so in words, by verify and by the commands that read a zip.
        let cut = temporaryFolder().appendingPathComponent("cut.zip")
        try Data(contentsOf: zip).prefix(2000).write(to: cut)
        let words = "cannot be opened as a zip: it is not a zip, or it is cut short before the list of entries at its end"
        let central =
            "the zip's central directory cannot be read: the file has no end-of-central-directory record where a zip ends, so it is cut short or is not a zip"
        let verified = try runArray(["verify", cut.path]).stdout
        #expect(verified.hasPrefix("unreadable  manifest.json: was not read: the zip \(words)\n"))
        #expect(verified.contains("\ndamaged  \(cut.path): \(central)\n"), "\(verified)")
        // restore says what verify says of the zip's central directory.
        let restore = try runArray(["restore", cut.path, "--to", temporaryFolder().appendingPathComponent("r").path])
        #expect(restore.code == 2 && restore.stderr == "Error: \(cut.path): \(central)\n", "\(restore.stderr)")
    }

    @Test func aMissingFileAndAManifestThatListsAnAbsentFileAreFound() throws {
        let export = try exportFolder(sample)
        let markdown = try FileManager.default.contentsOfDirectory(atPath: export.appendingPathComponent("markdown").path).sorted()
        try FileManager.default.removeItem(at: export.appendingPathComponent("markdown/\(markdown[0])"))
        let result = try runArray(["verify", export.path])
        #expect(result.code == 2)
        #expect(
            result.stdout == """
                missing  markdown/\(markdown[0]): manifest.json lists it, but it is not there
                damaged  markdown/: holds 4 memos (4 active, 0 archived); manifest.json counts 5 memos (4 active, 1 archived)
                damaged  markdown/: has no file for memo a3bb189e-8bf9-3888-9912-ace4e6543002, which memos.json holds
                \(export.path): DAMAGED: 1 of 15 files differ from manifest.json, and 2 problems with the memos.

                """)

        let listed = try exportFolder(sample)
        let manifestURL = listed.appendingPathComponent("manifest.json")
        let text = try read(manifestURL).replacingOccurrences(
            of: "\"files\" : [",
            with: """
                "files" : [
                    {"in" : "folder", "path" : "notes.txt", "sha256" : "\(String(repeating: "ab", count: 32))", "size" : 3},
                """)
        try Data(text.utf8).write(to: manifestURL)
        try Data("hi\n".utf8).write(to: listed.appendingPathComponent("extra.txt"))
        let absent = try runArray(["verify", listed.path])
        #expect(absent.code == 2)
        #expect(
            absent.stdout == """
                unlisted  extra.txt: manifest.json does not list it
                missing  notes.txt: manifest.json lists it, but it is not there
                \(listed.path): DAMAGED: 2 of 17 files differ from manifest.json.

                """)

        // A folder where a listed file should be is named as a folder, not as missing.
        let folderInPlace = try exportFolder(sample)
        try FileManager.default.removeItem(at: folderInPlace.appendingPathComponent("memos.json"))
        try FileManager.default.createDirectory(at: folderInPlace.appendingPathComponent("memos.json"), withIntermediateDirectories: false)
        let folder = try runArray(["verify", folderInPlace.path])
        #expect(folder.code == 2)
        #expect(folder.stdout.contains("memos.json: is a folder, not a regular file"), "\(folder.stdout)")
    }

    @Test func aManifestThatNamesAPathOutsideTheExportIsNotFollowed() throws {
        let export = try exportFolder(sample)
        let outside = export.deletingLastPathComponent().appendingPathComponent("outside.txt")
        try Data("secret\n".utf8).write(to: outside)
        let manifestURL = export.appendingPathComponent("manifest.json")
        let text = try read(manifestURL).replacingOccurrences(
            of: "\"files\" : [",
            with: """
                "files" : [
                    {"in" : "folder", "path" : "../outside.txt", "sha256" : "\(SHA256.hex(of: Data("secret\n".utf8)))", "size" : 7},
                """)
        try Data(text.utf8).write(to: manifestURL)
        let result = try runArray(["verify", export.path])
        #expect(result.code == 2)
        #expect(
            result.stdout.hasPrefix(
                "unreadable  ../outside.txt: is not a path inside the export (absolute, with '..' or a control character), so it is not read\n"))
        let broken = try read(manifestURL).replacingOccurrences(of: "\"size\" : 7", with: "\"size\" : \"7\"")
        try Data(broken.utf8).write(to: manifestURL)
        let unreadable = try runArray(["verify", export.path])
        #expect(unreadable.code == 2)
        #expect(unreadable.stdout.hasPrefix("unreadable  manifest.json: the key files[0].size is missing or has a value reckon never writes there\n"))
    }

    @Test func aZipWithItsManifestFirstOrLastIsAccepted() throws {
        let export = try exportFolder(sample)
        let entries = try ArchiveReader.entries(of: export.appendingPathComponent("memos.zip"))
        #expect(entries.last?.name == "manifest.json", "reckon writes it last")
        let reordered = temporaryFolder().appendingPathComponent("first.zip")
        try reckonZip(entries.filter { $0.name == "manifest.json" } + entries.filter { $0.name != "manifest.json" }, at: reordered)
        #expect(try ArchiveReader.entries(of: reordered).first?.name == "manifest.json", "as reckon wrote it before")
        for zip in [export.appendingPathComponent("memos.zip"), reordered] {
            let result = try runArray(["verify", zip.path])
            #expect(result.code == 0, "\(zip.lastPathComponent): \(result.stdout)")
            #expect(result.stdout.contains(": whole. The 6 entries of the zip match its manifest.json"))
        }
        // Restore and diff read it too, whichever entry comes first.
        let dir = try restored(reordered)
        try expectRoundTrip(sample, export: export, restoredFolder: dir)
        #expect(try runArray(["diff", export.path, reordered.path]).code == 0)
    }

    @Test func againstASideThatMovedOnIsExitOneAndNamesTheChange() throws {
        let export = try exportFolder(sample)
        let same = try runArray(["verify", export.path, "--against", sample])
        #expect(same.code == 0)
        #expect(same.stdout.hasSuffix("\(sample): every memo it would export is in the export, with equal fields.\n"))
        let moved = try runArray(["verify", export.path, "--against", "Samples/drift/drive"])
        #expect(moved.code == 1)
        #expect(
            moved.stdout.hasSuffix(
                """
                added  e4eaaaf2-d142-11e1-b3e4-080027620cdd  'Idea from the train'
                Samples/drift/drive: moved on since the export: 1 added, 0 removed, 0 edited, 0 archived, 0 unarchived.

                """), "\(moved.stdout)")
        let report = try json(try runArray(["verify", export.path, "--against", "Samples/drift/drive", "--json"]).stdout)
        #expect(report["status"] as? String == "moved-on")
        let changes = (report["against"] as? [String: Any])?["changes"] as? [[String: Any]] ?? []
        #expect(changes.map { $0["change"] as? String } == ["added"])
        // A damaged export is exit 2 whatever the side says.
        try flipByte(export.appendingPathComponent("memos.json"), at: 40)
        #expect(try runArray(["verify", export.path, "--against", sample]).code == 2)
    }

    @Test func theJSONHasEveryFileWithItsStatusAndTheCounts() throws {
        let export = try exportFolder(sample)
        let result = try runArray(["verify", export.path, "--json"])
        #expect(result.code == 0)
        let report = try json(result.stdout)
        #expect(report["schemaVersion"] as? Int == 1)
        #expect(report["kind"] as? String == "folder")
        #expect(report["status"] as? String == "whole")
        #expect(report["against"] is NSNull)
        let files = report["files"] as? [[String: Any]] ?? []
        #expect(files.count == 15)
        #expect(files.allSatisfy { $0["status"] as? String == "ok" && $0["problem"] is NSNull })
        #expect(Set(files.map { $0["in"] as? String ?? "" }) == ["folder", "zip"])
        let counts = report["counts"] as? [String: [String: Int]]
        #expect(counts?["manifest"] == ["active": 4, "archived": 1])
        #expect(counts?["memosJSON"] == ["active": 4, "archived": 1])
        #expect(counts?["markdown"] == ["active": 4, "archived": 1])
    }

    @Test func aZipHoldingANameTwiceIsDamaged() throws {
        let export = try exportFolder(sample)
        let entries = try ArchiveReader.entries(of: export.appendingPathComponent("memos.zip"))
        let twice = temporaryFolder().appendingPathComponent("twice.zip")
        // The second is written as memos.jsoX, and its name patched in the local and central headers.
        var second = try #require(entries.first { $0.name == "memos.json" })
        second.name = "memos.jsoX"
        try reckonZip(entries + [second], at: twice)
        try renameEntry(in: twice, "memos.jsoX", to: "memos.json")
        let result = try runArray(["verify", twice.path])
        #expect(result.code == 2)
        // Said exactly, and the second entry's bytes are never read as the export's memos.
        #expect(
            result.stdout == """
                unlisted  memos.json: \(twice.path) holds two entries named 'memos.json'; reckon never writes a zip like that, \
                and which of the two is the export cannot be told: the export is damaged
                \(twice.path): DAMAGED: 1 of 8 files differ from manifest.json.

                """, "\(result.stdout)")
    }

    /// A zip whose manifest lists an entry named `../x` (or any name that
    /// leaves the folder it is unzipped into) is never whole, even when
    /// the entry's bytes match: before, zip mode called it whole.
    @Test func aZipEntryNamedOutsideTheExportIsNeverWhole() throws {
        let export = try exportFolder(sample)
        let entries = try ArchiveReader.entries(of: export.appendingPathComponent("memos.zip"))
        let crafted = temporaryFolder().appendingPathComponent("outside.zip")
        var written: [ArchiveReader.Entry] = []
        for entry in entries {
            var data = entry.data
            if entry.name == "manifest.json" {
                data = Data(
                    String(decoding: data, as: UTF8.self).replacingOccurrences(
                        of: "\"files\" : [",
                        with: """
                            "files" : [
                                {"in" : "zip", "path" : "../x", "sha256" : "\(SHA256.hex(of: Data("x\n".utf8)))", "size" : 2},
                            """
                    ).utf8)
            }
            var changed = entry
            changed.data = data
            written.append(changed)
        }
        // The entry is written as `up/x`, and its name patched in the local and central headers.
        var outside = entries[0]
        outside.name = "up/x"
        outside.data = Data("x\n".utf8)
        written.append(outside)
        try reckonZip(written, at: crafted)
        try renameEntry(in: crafted, "up/x", to: "../x")
        let result = try runArray(["verify", crafted.path])
        #expect(result.code == 2)
        #expect(
            result.stdout.hasPrefix(
                "unreadable  ../x: is not a path inside the export (absolute, with '..' or a control character), so it is not read\n"),
            "\(result.stdout)")
    }

    @Test func aLinkToARunFolderIsFollowed() throws {
        let export = try exportFolder(sample)
        let latest = export.deletingLastPathComponent().appendingPathComponent("latest")
        try FileManager.default.createSymbolicLink(atPath: latest.path, withDestinationPath: "export")
        let result = try runArray(["verify", latest.path])
        #expect(result.code == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("\(latest.path): whole."))
        #expect(try runArray(["diff", latest.path, export.path]).code == 0)
    }

    @Test func nothingThereAndBadUsageAreSaidSo() throws {
        let missing = try runArray(["verify", "no/such/export"])
        #expect(missing.code == 2)
        #expect(missing.stderr == "Error: no/such/export: there is nothing here\n")
        let notExport = try runArray(["verify", sample])
        #expect(notExport.code == 2)
        #expect(notExport.stdout.hasPrefix("missing  manifest.json: is missing, so this folder is not an export reckon can check\n"))
        let usage = try runArray(["verify"])
        #expect(usage.code == 64)
        #expect(usage.stderr.hasPrefix("Error: Missing expected argument '<export>'\nUsage: reckon verify <export>"))
    }
}

/// Renames an entry of a zip in place, in its local header and in the
/// central directory, to a name of the same length that a writer would
/// refuse to write.
func renameEntry(in zip: URL, _ name: String, to newName: String) throws {
    var bytes = try Data(contentsOf: zip)
    var patched = 0
    while let found = bytes.range(of: Data(name.utf8)) {
        bytes.replaceSubrange(found, with: Data(newName.utf8))
        patched += 1
    }
    try #require(patched == 2, "\(name) is in both headers, once each")
    try bytes.write(to: zip)
}
