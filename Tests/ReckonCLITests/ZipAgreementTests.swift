import Foundation
import ReckonCore
import TestSupport
import Testing

/// Where the header of the entry `name` starts: the local header (signature
/// `PK\3\4`, name at byte 30) or the central record (`PK\1\2`, name at 46).
func zipHeader(_ zip: Data, central: Bool, of name: String) throws -> Int {
    let bytes = [UInt8](zip)
    let (kind, lengthAt, nameAt) = central ? (UInt8(1), 28, 46) : (UInt8(3), 26, 30)
    let wanted = Array(name.utf8)
    let found = (0..<(bytes.count - nameAt - wanted.count)).first { at in
        bytes[at] == 0x50 && bytes[at + 1] == 0x4B && bytes[at + 2] == kind && bytes[at + 3] == kind + 1
            && Int(bytes[at + lengthAt]) | Int(bytes[at + lengthAt + 1]) << 8 == wanted.count
            && Array(bytes[(at + nameAt)..<(at + nameAt + wanted.count)]) == wanted
    }
    return try #require(found, "no \(central ? "central record" : "local header") of \(name)")
}

/// `verify` and `restore` give one answer on a zip: what verify calls
/// damaged in `memos.json` (or the zip's own manifest), restore refuses in
/// verify's words, and restore never points to a verify that calls the zip whole.
@Suite struct ZipAgreementTests {
    let sample = "Samples/drift/device"

    /// Runs verify and restore on `zip`: both refuse it, and restore's
    /// reason, after the path of `entry` (or of the zip), is found in
    /// verify's line on it, and is `words` when given.
    private func expectBothRefuse(_ zip: URL, words: String? = nil, entry: String? = nil, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let verified = try runArray(["verify", zip.path])
        #expect(verified.code == 2, "\(verified.stdout)", sourceLocation: sourceLocation)
        let to = temporaryFolder().appendingPathComponent("restored")
        let restored = try runArray(["restore", zip.path, "--to", to.path])
        #expect(restored.code == 2, "\(restored.stdout)", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: to.path), sourceLocation: sourceLocation)
        let prefix = "Error: \(zip.path)\(entry.map { "/" + $0 } ?? ""): "
        #expect(restored.stderr.hasPrefix(prefix) && restored.stderr.hasSuffix("\n"), "\(restored.stderr)", sourceLocation: sourceLocation)
        let reason = String(restored.stderr.dropFirst(prefix.count).dropLast())
        if let words { #expect(reason == words, sourceLocation: sourceLocation) }
        let lines = verified.stdout.split(separator: "\n").filter { line in entry.map { line.contains("  \($0): ") } ?? true }
        #expect(lines.contains { $0.contains(reason) }, "restore: \(reason)\nverify: \(verified.stdout)", sourceLocation: sourceLocation)
        #expect(
            !restored.stderr.contains("'reckon verify' says more"), "restore never points to a verify that calls it whole",
            sourceLocation: sourceLocation)
    }

    /// A zip re-made by another tool with every entry's bytes as the
    /// manifest lists them, but compressed otherwise than reckon writes
    /// (bzip2, LZMA, or stored): verify and restore both refuse it, in
    /// the same words.
    @Test(
        .needs(.python3),
        arguments: [
            ("ZIP_BZIP2", "compressed with bzip2 (method 12)"), ("ZIP_LZMA", "compressed with LZMA (method 14)"),
            ("ZIP_STORED", "stored without compression (method 0)")
        ])
    func aZipCompressedOtherwiseIsRefusedByBoth(_ method: String, _ words: String) throws {
        let export = try exportFolder(sample)
        let copy = temporaryFolder().appendingPathComponent("recompressed.zip")
        let (code, output) = try tool(
            "/usr/bin/python3",
            [
                "-c",
                """
                import sys, zipfile
                with zipfile.ZipFile(sys.argv[1]) as source, zipfile.ZipFile(sys.argv[2], 'w') as copy:
                    for info in source.infolist():
                        copy.writestr(info, source.read(info), compress_type=zipfile.\(method))
                """, export.appendingPathComponent("memos.zip").path, copy.path
            ])
        #expect(code == 0, "\(output)")
        try expectBothRefuse(copy, words: "is \(words), which reckon does not write", entry: "memos.json")
    }

    /// memos.json's local header alone disagrees with the central
    /// directory (its CRC-32, a size, its flags), or the central directory
    /// makes it a link: verify calls it damaged, so restore refuses it.
    @Test(arguments: [("local", 14, UInt8(0x01)), ("local", 18, 0x01), ("local", 22, 0x01), ("local", 6, 0x02), ("central", 41, 0x20)])
    func memosJSONsHeadersDisagreeingIsRefusedByBoth(_ header: String, _ offset: Int, _ mask: UInt8) throws {
        let export = try exportFolder(sample)
        var bytes = try Data(contentsOf: export.appendingPathComponent("memos.zip"))
        let at = try zipHeader(bytes, central: header == "central", of: "memos.json")
        if header == "central" {
            // Mode 0100644 becomes 0120644, a link.
            #expect(bytes[at + 40] == 0xA4 && bytes[at + 41] == 0x81)
        }
        bytes[at + offset] ^= mask
        let zip = temporaryFolder().appendingPathComponent("memos.zip")
        try bytes.write(to: zip)
        try expectBothRefuse(zip, entry: "memos.json")
    }

    /// A zip reckon could have written but for its manifest.json: restore
    /// says what verify says, never libarchive's internal error.
    @Test func aZipWithoutItsManifestIsRefusedByBothInOneWay() throws {
        let export = try exportFolder(sample)
        let zip = temporaryFolder().appendingPathComponent("memos.zip")
        try reckonZip(try ArchiveReader.entries(of: export.appendingPathComponent("memos.zip")).filter { $0.name != "manifest.json" }, at: zip)
        let verified = try runArray(["verify", zip.path])
        #expect(
            verified.stdout == """
                missing  manifest.json: the zip holds no manifest.json, so nothing in it can be checked
                \(zip.path): DAMAGED: 1 of 1 files differ from manifest.json.

                """)
        try expectBothRefuse(zip, words: "the zip holds no manifest.json, so nothing in it can be checked")
    }
}
