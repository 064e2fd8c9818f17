import Foundation
import Testing

@testable import ReckonCore

@Suite struct DisplayTextTests {
    @Test func bytesThatAreNotUTF8AreShownAsBytes() {
        #expect(displayName(Array("memo.json".utf8)) == "memo.json")
        #expect(displayName([0x66, 0xFF, 0xFE] + Array(".json".utf8)) == #"f\x{ff}\x{fe}.json"#)
        #expect(displayName(Array("é".utf8)) == "é")
        #expect(displayName([0xC3]) == #"\x{c3}"#, "a sequence cut short")
        #expect(displayName([0xED, 0xA0, 0x80]) == #"\x{ed}\x{a0}\x{80}"#, "a surrogate is not UTF-8")
        #expect(displayName([0xE3, 0x81, 0x82, 0x80]) == #"あ\x{80}"#)
    }

    /// English says one thing in the singular: never "1 memos" nor "(1 seconds)".
    @Test func oneIsSaidInTheSingular() {
        #expect(counted(1, "memo") == "1 memo")
        #expect(counted(0, "memo") == "0 memos")
        #expect(counted(Int64(2), "entry", "entries") == "2 entries")
        #expect(counted(UInt64(1), "entry", "entries") == "1 entry")
        let en = Strings.en
        #expect(en.exportSize(1, 1) == "1 memo, 1 byte")
        #expect(en.exportSize(2, 900) == "2 memos, 900 bytes")
        #expect(en.statusWithProblems(.degraded, 1) == "degraded, 1 problem")
        #expect(en.sideHasProblems("the drive", 1) == "The drive has 1 problem that needs a look; see below.")
        #expect(en.sideHasProblems("the drive", 3) == "The drive has 3 problems that need a look; see below.")
        #expect(Applier.duration(1) == "1 second")
        #expect(Applier.duration(90) == "90 seconds")
        #expect(Strings.ja.exportSize(1, 1) == "メモ1件、1バイト", "Japanese has no plural")
    }

    @Test func controlAndFormatCharactersAreEscaped() {
        #expect(escapedForDisplay("\u{1B}[31mred\u{7}\r\n") == #"\u{1b}[31mred\u{7}\u{d}\u{a}"#)
        #expect(escapedForDisplay("abc\u{202E}txt.exe") == #"abc\u{202e}txt.exe"#)
        #expect(escapedForDisplay("zero\u{200B}width\u{2028}") == #"zero\u{200b}width\u{2028}"#)
        #expect(escapedForDisplay("買い物 ok") == "買い物 ok")
    }
}

@Suite struct ReportRenderingTests {
    func report(exports: [ExportRecord]) -> Report {
        let url = URL(fileURLWithPath: "/nowhere/device")
        let local = SideListing(spec: SideSpec(role: .local, name: "device", label: "this device", path: "device", kind: .folder(url)))
        let remote = SideListing(spec: SideSpec(role: .remote, name: "drive", label: "Google Drive", path: "drive", kind: .folder(url)))
        return Report(
            pipeline: "p", check: .deep, sides: [SideReport(local), SideReport(remote)], inSync: true, outcome: .trouble,
            differences: [], quarantined: [], exports: exports)
    }

    /// A failed export is said in so many words on every page, and the
    /// JSON keeps the failure.
    @Test func aFailedExportIsSaidInWords() throws {
        // A failed export has a record for each format asked, all with one failure, said once.
        let failed = [ExportFormat.json, .markdown, .zip].map {
            ExportRecord(format: $0, path: "", memos: 0, bytes: 0, failure: "out/export/memos.json: No space left on device")
        }
        let report = report(exports: failed)
        let sentence = "The export could not be written: out/export/memos.json: No space left on device"
        func once(_ page: String, _ line: String) -> Bool { page.components(separatedBy: line).count == 2 }
        #expect(once(TextSummary().render(report), "  " + sentence + "\n"))
        #expect(once(MarkdownReport().render(report), "> ⚠ " + sentence + "\n"))
        #expect(once(HTMLReport().render(report), "<p class=\"failed\">⚠ " + sentence + "</p>"))
        #expect(!HTMLReport().render(report).contains("<ul class=\"diffs files\">"), "no list of files that were not written")
        let json = String(decoding: try makeJSONEncoder().encode(report), as: UTF8.self)
        #expect(
            json.contains(#""failure" : "out\/export\/memos.json: No space left on device""#)
                || json.contains(#""failure" : "out/export/memos.json: No space left on device""#))
    }

    /// `countsFrom` is a typed value with the same JSON spelling.
    @Test func countsFromKeepsItsSpelling() throws {
        let encoded = try makeJSONEncoder().encode([SideReport.CountsFrom.index, .memoFiles])
        #expect(
            String(decoding: encoded, as: UTF8.self).replacingOccurrences(of: " ", with: "").replacingOccurrences(of: "\n", with: "")
                == #"["index","memo-files"]"#)
    }
}
