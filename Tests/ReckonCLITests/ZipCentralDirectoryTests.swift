import Foundation
import ReckonCore
import TestSupport
import Testing

/// Where the first record of a zip's central directory starts.
private func centralDirectoryStart(_ zip: Data) throws -> Int {
    try #require(zip.range(of: Data([0x50, 0x4B, 0x01, 0x02]))).lowerBound
}

/// A zip with byte `offset` of `zip` XORed with `mask`, written beside it as `name`.
private func flipped(_ zip: URL, at offset: Int, mask: UInt8 = 0x01, name: String) throws -> URL {
    var bytes = try Data(contentsOf: zip)
    bytes[offset] ^= mask
    let url = temporaryFolder().appendingPathComponent(name)
    try bytes.write(to: url)
    return url
}

/// Flips every bit of every byte of a zip's local headers, central
/// directory and end record in turn (not the entries' compressed bytes,
/// which their CRC-32 guards) and runs `reckon verify` on each. Prints one
/// JSON object: the header bytes, the flips, and every flip verify did not
/// call damaged (exit 2). Arguments: the reckon binary, the zip, a scratch folder.
private let flipsScript = #"""
    import json, os, struct, subprocess, sys, zipfile
    from concurrent.futures import ThreadPoolExecutor

    reckon, original, work = sys.argv[1], sys.argv[2], sys.argv[3]
    data = open(original, 'rb').read()
    offsets = list(range(data.find(b'PK\x01\x02'), len(data)))
    with zipfile.ZipFile(original) as z:
        for info in z.infolist():
            start = info.header_offset
            names, extras = struct.unpack('<HH', data[start + 26:start + 30])
            offsets += range(start, start + 30 + names + extras)

    def one(job):
        offset, mask = job
        path = os.path.join(work, '%d-%d.zip' % (offset, mask))
        changed = bytearray(data)
        changed[offset] ^= mask
        with open(path, 'wb') as f:
            f.write(changed)
        run = subprocess.run([reckon, 'verify', path], capture_output=True, text=True)
        os.remove(path)
        return {'offset': offset, 'mask': mask, 'code': run.returncode, 'output': (run.stdout + run.stderr)[-600:]}

    jobs = [(offset, 1 << bit) for offset in sorted(offsets) for bit in range(8)]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, jobs))
    print(json.dumps({
        'bytes': len(offsets),
        'flips': len(results),
        'originalCode': subprocess.run([reckon, 'verify', original], capture_output=True).returncode,
        'notDamaged': [r for r in results if r['code'] != 2],
    }))
    """#

/// `verify` reads a zip's central directory itself and compares it with
/// each entry's local header and with what libarchive read: libarchive
/// takes names and methods from the local headers, unzip and Python's
/// zipfile from the central directory.
@Suite struct ZipCentralDirectoryTests {
    let sample = "Samples/drift/drive"

    @Test(.needs(.unzip)) func aFlippedNameOrMethodInTheCentralDirectoryIsNotWhole() throws {
        let export = try exportFolder(sample, extra: ["--format", "zip"])
        let zip = export.appendingPathComponent("memos.zip")
        let bytes = try Data(contentsOf: zip)
        let start = try centralDirectoryStart(bytes)
        let nameLength = Int(bytes[start + 28]) | Int(bytes[start + 29]) << 8
        let name = String(decoding: bytes[(start + 46)..<(start + 46 + nameLength)], as: UTF8.self)
        #expect(name.hasPrefix("markdown/"))
        #expect(try runArray(["verify", zip.path]).code == 0)

        // "markdown/" becomes "markdnwn/" in the central directory alone.
        let renamed = try flipped(zip, at: start + 46 + 5, name: "name.zip")
        let (_, listing) = try tool("/usr/bin/unzip", ["-l", renamed.path])
        #expect(listing.contains("markdnwn/"), "unzip goes by the central directory: \(listing)")
        let byName = try runArray(["verify", renamed.path])
        #expect(byName.code == 2)
        #expect(
            byName.stdout == """
                unreadable  \(name): the zip's central directory names this entry '\(name.replacingOccurrences(of: "markdown/", with: "markdnwn/"))', \
                but its own header says '\(name)'; unzip would see the first
                \(renamed.path): DAMAGED: 1 of 7 files differ from manifest.json.

                """)
        let report = try json(try runArray(["verify", renamed.path, "--json"]).stdout)
        #expect(report["status"] as? String == "damaged")

        // Deflate (8) becomes 9 in the central directory alone.
        let method = try flipped(zip, at: start + 10, name: "method.zip")
        let byMethod = try runArray(["verify", method.path])
        #expect(byMethod.code == 2)
        #expect(
            byMethod.stdout == """
                unreadable  \(name): the zip's central directory says this entry is compressed with method 9, \
                but its own header says deflated (method 8); Python's zipfile would go by the first
                \(method.path): DAMAGED: 1 of 7 files differ from manifest.json.

                """)

        // In the export folder the zip is named as memos.zip, its entry inside it.
        try FileManager.default.removeItem(at: zip)
        try FileManager.default.copyItem(at: renamed, to: zip)
        let folder = try runArray(["verify", export.path])
        #expect(folder.code == 2)
        #expect(
            folder.stdout.contains("\nunreadable  memos.zip/\(name): the zip's central directory names this entry 'markdnwn/"), "\(folder.stdout)")
    }

    /// reckon flags every name as UTF-8. A name beyond ASCII whose flag is
    /// cleared, in both headers alike, reads as another name in Python's
    /// zipfile (as CP437), so the zip is not whole.
    @Test(.needs(.python3)) func aNameBeyondASCIINotMarkedUTF8IsNotWhole() throws {
        let export = try exportFolder(sample, extra: ["--format", "zip"])
        let zip = export.appendingPathComponent("memos.zip")
        var bytes = [UInt8](try Data(contentsOf: zip))
        let name = Array("markdown/2026-04-02-京都旅行-7c9e6679.md".utf8)
        var cleared = 0
        // The flags of a local header are at 6, of a central record at 8; bit 11 is 0x08 of their second byte.
        for (signature, flags, nameAt) in [(UInt8(0x03), 6, 30), (UInt8(0x01), 8, 46)] {
            for at in 0..<(bytes.count - nameAt - name.count)
            where bytes[at] == 0x50 && bytes[at + 1] == 0x4B && bytes[at + 2] == signature
                && Array(bytes[(at + nameAt)..<(at + nameAt + name.count)]) == name
            {
                #expect(bytes[at + flags + 1] & 0x08 != 0, "written flagged")
                bytes[at + flags + 1] &= ~0x08
                cleared += 1
            }
        }
        #expect(cleared == 2)
        let unflagged = temporaryFolder().appendingPathComponent("unflagged.zip")
        try Data(bytes).write(to: unflagged)
        let (_, listed) = try tool(
            "/usr/bin/python3", ["-c", "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).namelist()[1])", unflagged.path])
        #expect(!listed.contains("京都"), "zipfile reads another name: \(listed)")
        let result = try runArray(["verify", unflagged.path])
        #expect(result.code == 2)
        #expect(
            result.stdout.hasPrefix(
                "unreadable  markdown/2026-04-02-京都旅行-7c9e6679.md: the zip's central directory does not mark this entry's name as UTF-8, so Python's zipfile would read it as another name\n"
            ),
            "\(result.stdout)")
    }

    /// Every single-bit flip of the sample's zip headers (each local
    /// header, the central directory and the end record): reckon writes
    /// every field there the same way in every zip, and verify compares
    /// each with what it writes, so each flip is damage (exit 2).
    @Test(.needs(.python3)) func everyFlippedBitOfTheZipsHeadersIsDamaged() throws {
        let export = try exportFolder(sample, extra: ["--format", "zip"])
        let work = temporaryFolder()
        let script = work.appendingPathComponent("flips.py")
        try Data(flipsScript.utf8).write(to: script)
        let run = try runArray(
            [script.path, reckonBinary.path, export.appendingPathComponent("memos.zip").path, work.path],
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(run.code == 0, "\(run.stderr)")
        let report = try json(run.stdout)
        let flips = report["flips"] as? Int ?? 0
        let missed = report["notDamaged"] as? [[String: Any]] ?? []
        print("zip headers: \(report["bytes"] ?? "?") bytes, \(flips) single-bit flips, \(missed.count) not called damaged")
        #expect(report["originalCode"] as? Int == 0)
        #expect(flips > 8000)
        #expect(missed.isEmpty)
        for flip in missed.prefix(20) {
            Issue.record(
                Comment(
                    rawValue: "byte \(flip["offset"] ?? "?") ^ \(flip["mask"] ?? "?"): verify exit \(flip["code"] ?? "?"); \(flip["output"] ?? "")"))
        }
    }

    /// More than 65,535 entries need zip64's end record and locator. The
    /// zip is written as an export writes it (`ZipBuilder`), from the drive
    /// sample's entries and 65,600 small notes its manifest lists.
    @Test func aZip64ZipIsWholeAndAFlippedNameNearItsEndIsFound() throws {
        let clock = ContinuousClock()
        let began = clock.now
        let export = try exportFolder(sample, extra: ["--format", "zip"])
        let entries = try ArchiveReader.entries(of: export.appendingPathComponent("memos.zip"))
        let manifest = try #require(entries.first { $0.name == "manifest.json" })
        let notes = (0..<65_600).map { n in (name: String(format: "notes/%05d.txt", n), data: Data("note \(n)\n".utf8)) }
        let records = notes.map { #"{"in" : "zip", "path" : "\#($0.name)", "sha256" : "\#(SHA256.hex(of: $0.data))", "size" : \#($0.data.count)},"# }
        let listed = Data(
            String(decoding: manifest.data, as: UTF8.self)
                .replacingOccurrences(of: "\"files\" : [", with: "\"files\" : [\n" + records.joined(separator: "\n")).utf8)
        let zip = temporaryFolder().appendingPathComponent("zip64.zip")
        let builder = ZipBuilder(url: zip)
        let modified = Timestamp(seconds: manifest.modified)
        try builder.add(entries.filter { $0.name != "manifest.json" }.map { .init(name: $0.name, modified: modified, contents: .data($0.data)) })
        try builder.add(notes.map { .init(name: $0.name, modified: modified, contents: .data($0.data)) })
        try builder.add([.init(name: "manifest.json", modified: modified, contents: .data(listed))])
        _ = try builder.finish()
        let bytes = try Data(contentsOf: zip)
        // The zip64 end record (56 bytes) and its locator (20) come before the end record (22).
        #expect(Array(bytes.suffix(98).prefix(4)) == [0x50, 0x4B, 0x06, 0x06])
        #expect(Array(bytes.suffix(42).prefix(4)) == [0x50, 0x4B, 0x06, 0x07])
        #expect(Array(bytes[(bytes.count - 12)..<(bytes.count - 10)]) == [0xFF, 0xFF], "the end record's count is all ones")

        let written = clock.now
        let whole = try runArray(["verify", zip.path])
        let verified = clock.now
        #expect(whole.code == 0, "\(whole.stdout)")
        #expect(
            whole.stdout.contains(": whole. The \(entries.count - 1 + notes.count) entries of the zip match its manifest.json"), "\(whole.stdout)")

        // The last note's record comes right before the manifest's, the last one.
        let signature = Data([0x50, 0x4B, 0x01, 0x02])
        let last = try #require(bytes.range(of: signature, options: .backwards))
        let beforeLast = try #require(bytes.range(of: signature, options: .backwards, in: 0..<last.lowerBound)).lowerBound
        #expect(String(decoding: bytes[(beforeLast + 46)..<(beforeLast + 46 + 15)], as: UTF8.self) == "notes/65599.txt")
        let renamed = try flipped(zip, at: beforeLast + 46 + 6, name: "renamed.zip")
        let checked = clock.now
        let caught = try runArray(["verify", renamed.path])
        #expect(caught.code == 2)
        #expect(
            caught.stdout == """
                unreadable  notes/65599.txt: the zip's central directory names this entry 'notes/75599.txt', \
                but its own header says 'notes/65599.txt'; unzip would see the first
                \(renamed.path): DAMAGED: 1 of \(entries.count + notes.count) files differ from manifest.json.

                """)
        print(
            "zip64 case: \(entries.count + notes.count) entries, \(bytes.count) bytes; written in \(written - began), "
                + "verified whole in \(verified - written), the flipped name found in \(clock.now - checked)")
    }

    /// Zips another writer made (Python's zipfile) hold the same entries,
    /// but not as reckon writes them: made by zip 2.0, mode 0600 without a
    /// file type, a comment at the end; or a 600-byte extra field in every
    /// header, longer than reckon reads in one go. verify says so for each entry.
    @Test(
        .needs(.python3),
        arguments: [
            (
                "copy.comment = b'copied'", "copy.writestr(info.filename, data)", 0,
                "unreadable  memos.json: the zip's central directory says this entry was made by zip 2.0 on Unix, but reckon writes zip 6.3 on Unix; "
                    + "the zip's central directory makes this entry of no file type (mode 600), not a regular file; bsdtar would not extract it as one\n"
            ),
            (
                "pass", "info.extra = struct.pack('<HH', 0xCAFE, 600) + bytes(600); copy.writestr(info, data)", 6 * 2 * 604,
                "unreadable  memos.json: the zip's central directory gives this entry extra fields other than reckon writes (id 0xcafe); "
                    + "its own header gives it extra fields other than reckon writes (id 0xcafe)\n"
            )
        ])
    func aZipFromAnotherWriterIsNotAsReckonWritesIt(_ setUp: String, _ write: String, _ leastSize: Int, _ line: String) throws {
        let export = try exportFolder(sample, extra: ["--format", "zip"])
        let copy = temporaryFolder().appendingPathComponent("python.zip")
        let (code, output) = try tool(
            "/usr/bin/python3",
            [
                "-c",
                """
                import struct, sys, zipfile
                with zipfile.ZipFile(sys.argv[1]) as source, zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as copy:
                    \(setUp)
                    for info in source.infolist():
                        data = source.read(info)
                        \(write)
                """, export.appendingPathComponent("memos.zip").path, copy.path
            ])
        #expect(code == 0, "\(output)")
        #expect(try Data(contentsOf: copy).count > leastSize, "the headers hold what the writer was asked for")
        let result = try runArray(["verify", copy.path])
        #expect(result.code == 2, "\(result.stdout)")
        #expect(result.stdout.contains(line), "\(result.stdout)")
        #expect(
            result.stdout.hasSuffix(": DAMAGED: 7 of 7 files differ from manifest.json\(setUp == "pass" ? "" : ", and 1 problem with the zip").\n"))
    }

    /// A central directory that cannot be read at all is said so in words:
    /// cut short, or an end record whose place and count do not add up.
    @Test func aCentralDirectoryThatCannotBeReadIsNamed() throws {
        let export = try exportFolder(sample, extra: ["--format", "zip"])
        let zip = export.appendingPathComponent("memos.zip")
        let bytes = try Data(contentsOf: zip)
        let start = try centralDirectoryStart(bytes)
        let end = bytes.count - 22

        let cut = temporaryFolder().appendingPathComponent("cut.zip")
        try bytes.prefix(bytes.count - 10).write(to: cut)
        let short = try runArray(["verify", cut.path])
        #expect(short.code == 2)
        #expect(
            short.stdout.contains(
                """
                damaged  \(cut.path): the zip's central directory cannot be read: the file has no end-of-central-directory record \
                where a zip ends, so it is cut short or is not a zip

                """), "\(short.stdout)")

        // The directory's offset, 0x0000_0BCB or so, becomes 0x8000_0BCB: far past the file's end.
        let far = try flipped(zip, at: end + 19, mask: 0x80, name: "far.zip")
        let offset = try runArray(["verify", far.path])
        #expect(offset.code == 2)
        #expect(
            offset.stdout.contains(
                """
                damaged  \(far.path): the zip's central directory cannot be read: the end record says the central directory is \
                \(end - start) bytes from byte \(start + 0x8000_0000), which does not end at byte \(end), where the end records begin

                """), "\(offset.stdout)")

        // 7 entries in all become 5 (0b111 ^ 0b010), and the end record's two counts differ.
        let counted = try flipped(zip, at: end + 10, mask: 0x02, name: "counted.zip")
        let count = try runArray(["verify", counted.path])
        #expect(count.code == 2)
        #expect(
            count.stdout.contains(
                """
                damaged  \(counted.path): the zip's central directory cannot be read: the end record counts 7 entries on this disk but 5 in all

                """), "\(count.stdout)")
        #expect(count.stdout.hasSuffix(", and 1 problem with the zip.\n"), "a problem of the zip, not of the memos: \(count.stdout)")
    }
}

/// The zip reckon writes around entries deflated on every core.
@Suite struct ZipContainerTests {
    /// More entries than the plain end record can count (65,535): zip64's
    /// end records hold the count, and unzip, bsdtar, Python's zipfile and
    /// reckon's own reader all find every entry, with its bytes.
    @Test(.needs(.unzip, .bsdtar, .python3)) func aZipOfMoreEntriesThanThePlainEndRecordCountsOpensInEveryReader() throws {
        let url = temporaryFolder().appendingPathComponent("memos.zip")
        let count = 70_000
        let builder = ZipBuilder(url: url)
        try builder.add(
            (0..<count).map {
                .init(name: "markdown/\($0).md", modified: Timestamp(seconds: 1_780_000_000), contents: .data(Data("memo \($0)\n".utf8)))
            })
        let (size, digest) = try builder.finish()
        let bytes = try Data(contentsOf: url)
        #expect(bytes.count == size && bytes.withUnsafeBytes { SHA256.digest(of: $0) } == digest)
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) == ["memos.zip"], "no part left")
        let (unzipCode, unzipOutput) = try tool("/usr/bin/unzip", ["-t", url.path])
        #expect(unzipCode == 0 && unzipOutput.contains("No errors detected"), "\(unzipOutput.suffix(300))")
        let (tarCode, listing) = try tool("/usr/bin/bsdtar", ["-tf", url.path])
        #expect(tarCode == 0 && listing.split(separator: "\n").count == count)
        let (pythonCode, python) = try tool(
            "/usr/bin/python3",
            [
                "-c",
                "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(len(z.infolist()), z.testzip(), z.read('markdown/69999.md'))",
                url.path
            ])
        #expect(pythonCode == 0 && python == "\(count) None b'memo 69999\\n'\n", "\(python)")
        let file = try ZipFile(url: url)
        let end = try CentralDirectoryEnd.read(file)
        #expect(end.isZip64 && end.count == UInt64(count))
        var names = 0
        try CentralRecord.forEach(in: file, end) { _ in names += 1 }
        #expect(names == count)
    }
}
