import Foundation
import ReckonCore
import TestSupport
import Testing

let chromium = URL(fileURLWithPath: "/usr/bin/chromium")

/// Runs headless Chromium on a page and returns what it printed.
func headless(_ page: URL, _ arguments: [String]) throws -> RunResult {
    try runArray(
        [
            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--hide-scrollbars",
            "--user-data-dir=\(temporaryFolder().path)"
        ] + arguments + [page.absoluteString], executable: chromium)
}

/// The report of a reconcile with `--out`, written to a new folder.
func reportPage(local: String, remote: String, language: String = "en") throws -> URL {
    let out = temporaryFolder()
    _ = try runArray(["reconcile", "--local", local, "--remote", remote, "--out", out.path, "--lang", language])
    return out.appendingPathComponent("report.html")
}

@Suite struct ReportPageTests {
    /// The page's one script is the one its policy allows by hash; no
    /// element carries a handler of its own.
    @Test func thePageIsSelfContainedAndAllowsOnlyItsOwnScript() throws {
        let page = try read(reportPage(local: "Samples/drift/device", remote: "Samples/drift/drive"))
        let scripts = page.matches(of: /<script>(?<code>[^<]*)<\/script>/)
        try #require(scripts.count == 1)
        let hash = Data(scripts[0].code.utf8).withUnsafeBytes { SHA256.digest(of: $0) }.base64
        #expect(page.contains(#"content="default-src 'none'; script-src 'sha256-\#(hash)'; style-src 'unsafe-inline'"#))
        #expect(page.components(separatedBy: "<script").count == 2)
        #expect(page.firstMatch(of: /\son[a-z]+=/) == nil, "no inline handler")
        #expect(!page.contains("http://") && !page.contains("https://"), "no network")
        #expect(page.contains(#"<meta name="viewport" content="width=device-width, initial-scale=1">"#))
    }
}

@Suite(.needs(.chromium))
struct BrowserTests {
    @Test func theDOMShowsTheDriftAndTheSentence() throws {
        let dom = try headless(reportPage(local: "Samples/drift/device", remote: "Samples/drift/drive"), ["--dump-dom"])
        #expect(dom.code == 0)
        #expect(dom.stdout.contains("5 (local 4)"))
        #expect(dom.stdout.contains("differs"))
        #expect(dom.stdout.contains("Google Drive has 1 memo that is not on this device. Sync this device to bring it in."))
    }

    @Test func japaneseWithLangJa() throws {
        let dom = try headless(reportPage(local: "Samples/drift/device", remote: "Samples/drift/drive", language: "ja"), ["--dump-dom"])
        #expect(dom.stdout.contains("<html lang=\"ja\">"))
        #expect(dom.stdout.contains("この端末のメモ"))
        #expect(dom.stdout.contains("アクティブ"))
        #expect(dom.stdout.contains("5（端末 4）"))
        #expect(dom.stdout.contains("Google Driveに、この端末にないメモが1件あります。この端末を同期すると取り込めます。"))
    }

    @Test func aHostileTitleChangesNothingInTheDOM() throws {
        let local = temporaryFolder()
        let remote = temporaryFolder()
        let id = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
        try Data(#"{"schemaVersion": 1, "entries": []}"#.utf8).write(to: local.appendingPathComponent("index.json"))
        try Data(#"{"schemaVersion": 1, "entries": [{"id": "\#(id)", "modifiedTime": "2026-04-19T14:32:00Z"}]}"#.utf8)
            .write(to: remote.appendingPathComponent("index.json"))
        try FileManager.default.createDirectory(at: remote.appendingPathComponent("memos"), withIntermediateDirectories: true)
        let title = #"<img src=x onerror=alert(1)><script>alert(2)</script>\"'&"#
        try JSONSerialization.data(withJSONObject: ["id": id, "title": title, "body": "", "modifiedAt": "2026-04-19T14:32:00Z"])
            .write(to: remote.appendingPathComponent("memos/\(id).json"))
        let dom = try headless(reportPage(local: local.path, remote: remote.path), ["--dump-dom"])
        #expect(dom.code == 0)
        #expect(dom.stdout.contains("&lt;img src=x onerror=alert(1)&gt;"), "the title is shown as text")
        #expect(!dom.stdout.contains("<img"))
        #expect(!dom.stdout.contains("<script"))
    }

    /// At a phone's width (390 px) nothing scrolls sideways: neither the
    /// page nor any box inside it. Headless Chromium keeps a window at least
    /// 500 px wide, so the page, unchanged, is shown in a 390 px frame of a
    /// page whose script writes the widths into the DOM for `--dump-dom`.
    @Test(arguments: ["drift", "pipeline"])
    func nothingScrollsSidewaysOnAPhone(_ which: String) throws {
        let page: URL
        if which == "drift" {
            page = try reportPage(local: "Samples/drift/device", remote: "Samples/drift/drive")
        } else {
            let folder = try reportFixture()
            _ = try runReportFixture(folder)
            page = folder.appendingPathComponent("out/reports/report.html")
        }
        let frame = """
            <!DOCTYPE html>
            <html><body style="margin:0">
            <iframe width="390" height="844" style="border:0" srcdoc="\(try read(page).replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;"))"></iframe>
            <script>
            window.onload = () => {
              const d = frames[0].document;
              const wide = [...d.querySelectorAll('body *')]
                .filter(e => e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
                .map(e => e.tagName.toLowerCase() + '.' + e.className);
              document.body.setAttribute('data-measured', `view=${d.documentElement.clientWidth} page=${d.documentElement.scrollWidth} wide=${wide.join(',')};`);
            };
            </script>
            </body></html>
            """
        let copy = temporaryFolder().appendingPathComponent("frame.html")
        try Data(frame.utf8).write(to: copy)
        let dom = try headless(copy, ["--dump-dom"])
        let measured = try #require(
            dom.stdout.firstMatch(of: /data-measured="view=([0-9]+) page=([0-9]+) wide=([^;]*);"/), "\(dom.stdout.suffix(400))")
        #expect(measured.1 == "390", "the frame is a phone's width")
        #expect(measured.2 == "390", "the page is \(measured.2) px wide")
        #expect(measured.3.isEmpty, "boxes that scroll sideways: \(measured.3)")
    }

    @Test func aPhoneSizedScreenshotIsNotBlank() throws {
        let picture = temporaryFolder().appendingPathComponent("report.png")
        let shot = try headless(
            reportPage(local: "Samples/drift/device", remote: "Samples/drift/drive"),
            ["--window-size=390,844", "--screenshot=\(picture.path)"])
        #expect(shot.code == 0)
        let check = try tool(
            "/usr/bin/python3",
            [
                "-c",
                """
                import struct, sys, zlib
                data = open(sys.argv[1], 'rb').read()
                width, height = struct.unpack('>II', data[16:24])
                chunks, at = b'', 8
                while at < len(data):
                    length, kind = struct.unpack('>I4s', data[at:at + 8])
                    if kind == b'IDAT': chunks += data[at + 8:at + 8 + length]
                    at += 12 + length
                print(width, height, len(set(zlib.decompress(chunks))))
                """, picture.path
            ])
        let parts = check.1.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(parts.count == 3)
        #expect(parts.prefix(2) == [390, 844])
        #expect(parts.last ?? 0 > 50, "many distinct byte values: the page drew something")
    }
}

@Suite struct HistoryTests {
    @Test func eachRunAppendsALineAndThePageDrawsThem() throws {
        let folder = temporaryFolder()
        let samples = packageRoot.appendingPathComponent("Samples/drift").path
        let text = """
            {"local": {"name": "device", "path": "\(samples)/device"}, "remotes": [{"name": "drive", "path": "\(samples)/drive"}],
             "reports": {"dir": "reports"}, "timeZone": "Asia/Tokyo", "failOnDrift": true}
            """
        try Data(text.utf8).write(to: folder.appendingPathComponent("p.json"))
        let reports = folder.appendingPathComponent("reports")
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        try Data("not json, kept as it is\n".utf8).write(to: reports.appendingPathComponent("history.jsonl"))
        for epoch in ["1776600000", "1776686400", "1776772800"] {
            #expect(
                try runArray(["run", folder.appendingPathComponent("p.json").path, "--quiet"], environment: ["SOURCE_DATE_EPOCH": epoch]).code == 1)
        }
        let lines = try read(reports.appendingPathComponent("history.jsonl")).split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[0] == "not json, kept as it is")
        let last = try json(String(lines[3]))
        #expect(last["time"] as? String == "2026-04-21T12:00:00Z")
        #expect(last["differences"] as? Int == 1)
        #expect(last["exitCode"] as? Int == 1)
        let sides = try #require(last["sides"] as? [[String: Any]])
        #expect(sides.map { $0["counts"] as? [String: Int] } == [["active": 4, "archived": 1], ["active": 5, "archived": 1]])
        let page = try read(reports.appendingPathComponent("report.html"))
        #expect(page.components(separatedBy: "<polyline").count - 1 == 4, "Active and Archived for each of two sides")
        #expect(page.contains("2026-04-21 21:00 Asia/Tokyo"), "times in the definition's zone")
        #expect(try read(reports.appendingPathComponent("report.md")).contains("| 2026-04-19 21:00 Asia/Tokyo | 4 / 1 | 5 / 1 | 1 |"))
    }
}
