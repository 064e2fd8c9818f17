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
        // Without the script the page still shows the versions, the plan line and the `--take` syntax, and hides what needs it.
        #expect(page.contains("<th>Google Drive</th>"))
        #expect(page.contains("--take e4eaaaf2-d142-11e1-b3e4-080027620cdd=local|remote@none,1776636600.000000000-0-_-_-"))
        #expect(page.contains("To choose by hand, add --take ID=local, --take ID=remote or --take ID=both to the plan line for each memo."))
        #expect(
            page.contains(#"<div class="tools" hidden>"#)
                && page.contains(#"<button type="button" class="copy" data-for="plan-0" data-done="Copied" hidden>"#))
        #expect(page.contains(#"<div class="line scripted" hidden>"#), "the choices file is made by the script")
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
        #expect(!dom.stdout.contains("<script>alert"))
        #expect(dom.stdout.components(separatedBy: "<script").count == 2, "the page's own script, and no other")
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

/// The pages measured on a phone and on a desktop: the drift sample's
/// report and the report fixture's (exports, problems, a file set aside and
/// the history chart of two runs), each in English and Japanese, and the
/// drift sample's plan.
func measuredPages() throws -> [(name: String, page: URL)] {
    var pages: [(name: String, page: URL)] = []
    for language in ["en", "ja"] {
        pages.append(("drift-\(language)", try reportPage(local: "Samples/drift/device", remote: "Samples/drift/drive", language: language)))
        let folder = try reportFixture(language: language)
        _ = try runReportFixture(folder)
        pages.append(("pipeline-\(language)", folder.appendingPathComponent("out/reports/report.html")))
    }
    let plan = temporaryFolder()
    _ = try runArray(
        ["plan", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--out", plan.path],
        environment: ["SOURCE_DATE_EPOCH": "1776600000"])
    pages.append(("plan", plan.appendingPathComponent("plan.html")))
    return pages
}

/// What the page says of itself, measured by a script in the browser.
struct PageMeasurement: Sendable {
    var name: String
    /// The viewport's width (`innerWidth`: on a phone it grows past 390
    /// when the page is zoomed out to fit what is too wide), the width shown
    /// (the document's `clientWidth`, without a scroll bar) and the width
    /// the page's content needs (its `scrollWidth`), in CSS pixels.
    var viewport: Double
    var visible: Double
    var pageWidth: Double
    /// Boxes inside `main` whose left or right edge passes the visible
    /// width, and boxes that scroll sideways: tag, class, text and edge.
    var pastTheEdge: [String]
    /// How many table headers, and the words in them placed on more than one line.
    var headers: Int
    var brokenHeaderWords: [String]
    /// Each chart's smallest text as drawn, in CSS pixels.
    var chartText: [Double]
    /// How many controls, and those smaller than 44 × 44 CSS pixels.
    var controls: Int
    var smallControls: [String]

    /// Runs `script` on the page the browser shows.
    init(_ name: String, in browser: Browser) throws {
        let value = try browser.script(Self.script)
        func texts(_ key: String) -> [String] { value[key].arrayValue.compactMap(\.stringValue) }
        self.name = name
        viewport = value["viewport"].double ?? 0
        visible = value["visible"].double ?? 0
        pageWidth = value["pageWidth"].double ?? .infinity
        pastTheEdge = texts("pastTheEdge")
        headers = Int(value["headers"].double ?? 0)
        brokenHeaderWords = texts("brokenHeaderWords")
        chartText = value["chartText"].arrayValue.compactMap(\.double)
        controls = Int(value["controls"].double ?? 0)
        smallControls = texts("smallControls")
    }

    /// The measuring script. A word in a header is each run of non-spaces,
    /// placed in a Range: its boxes on more than one line (tops more than
    /// half a box apart) mean the word was broken. A control is `a[href]`,
    /// `button`, `input`, `select`, `textarea`, `summary` or `label` inside
    /// `main`, shown; a link in running text (`p a`) is not one. A radio
    /// button or checkbox is tapped through its labels too, so its box is
    /// taken together with theirs.
    static let script = """
        const visible = document.documentElement.clientWidth;
        const main = document.querySelector('main');
        const name = e => {
          const classes = typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\\s+/).join('.') : '';
          return `${e.tagName.toLowerCase()}${classes} "${(e.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40)}"`;
        };
        const shown = e => {
          const box = e.getBoundingClientRect();
          return box.width > 0 && box.height > 0 && getComputedStyle(e).visibility !== 'hidden';
        };
        const inside = [...main.querySelectorAll('*')].filter(shown);
        const pastTheEdge = inside.flatMap(e => {
          const box = e.getBoundingClientRect();
          const found = [];
          if (box.right > visible + 0.5 || box.left < -0.5) found.push(`${name(e)} from ${Math.round(box.left)} to ${Math.round(box.right)} px`);
          if (['auto', 'scroll'].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + 1)
            found.push(`${name(e)} scrolls sideways: ${e.scrollWidth} px in ${e.clientWidth}`);
          return found;
        });
        const headers = [...document.querySelectorAll('th')];
        const brokenHeaderWords = headers.flatMap(th => {
          const broken = [];
          const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const word of node.data.matchAll(/\\S+/g)) {
              const range = document.createRange();
              range.setStart(node, word.index);
              range.setEnd(node, word.index + word[0].length);
              const boxes = [...range.getClientRects()].filter(r => r.width > 0).sort((a, b) => a.top - b.top);
              let lines = boxes.length ? 1 : 0;
              for (let i = 1; i < boxes.length; i++) if (boxes[i].top > boxes[i - 1].top + boxes[i - 1].height / 2) lines++;
              if (lines > 1) broken.push(`"${word[0]}" on ${lines} lines, ${Math.round(th.getBoundingClientRect().width)} px wide`);
            }
          }
          return broken;
        });
        const chartText = [...main.querySelectorAll('svg')].map(svg => {
          const sizes = [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize));
          return Math.min(...sizes) * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        });
        const controls = [...main.querySelectorAll('a[href], button, input, select, textarea, summary, label')]
          .filter(e => !e.matches('p a'))
          .filter(e => shown(e) || [...(e.labels || [])].some(shown));
        const smallControls = controls.flatMap(e => {
          const boxes = [e, ...(e.matches('input[type=radio], input[type=checkbox]') ? e.labels : [])].filter(shown).map(x => x.getBoundingClientRect());
          const width = Math.max(...boxes.map(b => b.right)) - Math.min(...boxes.map(b => b.left));
          const height = Math.max(...boxes.map(b => b.bottom)) - Math.min(...boxes.map(b => b.top));
          return width < 44 || height < 44 ? [`${name(e)} ${Math.round(width)} × ${Math.round(height)} px`] : [];
        });
        return {
          viewport: window.innerWidth, visible, pageWidth: document.documentElement.scrollWidth, pastTheEdge,
          headers: headers.length, brokenHeaderWords, chartText, controls: controls.length, smallControls
        };
        """
}

/// Where the screenshots go: `RECKON_TEST_SCREENSHOTS` when set (a folder
/// that stays, to look at), else the test's scratch folder.
let screenshotFolder: URL = {
    guard let kept = ProcessInfo.processInfo.environment["RECKON_TEST_SCREENSHOTS"], !kept.isEmpty else { return scratchFolder("screens") }
    let folder = URL(fileURLWithPath: kept, isDirectory: true)
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}()

/// Every page of `measuredPages()` opened in Chromium on `screen`, measured,
/// and shot whole into `screenshotFolder` as `<page>-<width>.png`.
func measure(on screen: Screen) throws -> [PageMeasurement] {
    let pages = try measuredPages()
    let browser = try Browser(screen)
    defer { browser.close() }
    return try pages.map { name, page in
        try browser.open(page)
        let measured = try PageMeasurement(name, in: browser)
        try browser.screenshot(to: screenshotFolder.appendingPathComponent("\(name)-\(screen.width).png"), wholePage: true)
        return measured
    }
}

/// Each screen's measurements, made once per test process for the tests below.
private let phoneMeasurements = Result { try measure(on: .phone) }
private let desktopMeasurements = Result { try measure(on: .desktop) }

func measurements(on screen: Screen) throws -> [PageMeasurement] {
    try (screen == .phone ? phoneMeasurements : desktopMeasurements).get()
}

/// The report and the plan at a phone's size (390 × 844 CSS pixels, in
/// Chromium's mobile emulation) and at a desktop's, driven through
/// chromedriver, checked by the pages' own measurements.
@Suite(.needs(.chromium, .chromedriver))
struct PhoneTests {
    @Test(arguments: Screen.allCases)
    func nothingScrollsSideways(on screen: Screen) throws {
        for page in try measurements(on: screen) {
            #expect(page.viewport == Double(screen.width), "\(page.name): the screen's width")
            #expect(page.pageWidth <= page.visible, "\(page.name) is \(page.pageWidth) px wide in \(page.visible)")
            #expect(page.pastTheEdge.isEmpty, "\(page.name): \(page.pastTheEdge.joined(separator: "; "))")
        }
    }

    @Test(arguments: Screen.allCases)
    func noWordIsBrokenInATableHeader(on screen: Screen) throws {
        for page in try measurements(on: screen) {
            #expect(page.headers > 0, "\(page.name) has a table")
            #expect(page.brokenHeaderWords.isEmpty, "\(page.name): \(page.brokenHeaderWords.joined(separator: "; "))")
        }
    }

    /// The chart's text is drawn at 11 CSS px or more.
    @Test(arguments: Screen.allCases)
    func theHistoryChartCanBeRead(on screen: Screen) throws {
        for page in try measurements(on: screen) {
            if page.name.hasPrefix("pipeline") { #expect(page.chartText.count == 1, "\(page.name) draws the chart of its two runs") }
            for size in page.chartText { #expect(size >= 11, "\(page.name): chart text \(size) px") }
        }
    }

    @Test(arguments: Screen.allCases)
    func everyControlCanBeTapped(on screen: Screen) throws {
        for page in try measurements(on: screen) {
            #expect(page.smallControls.isEmpty, "\(page.name): \(page.smallControls.joined(separator: "; "))")
        }
    }

    /// The drift report's own controls on a phone: each is 44 px or more,
    /// nothing passes the edge, and a tap on a choice's label chooses it and
    /// puts it in the plan line.
    @Test func theReportsControlsCanBeTappedOnAPhone() throws {
        let browser = try Browser(.phone)
        defer { browser.close() }
        try browser.open(reportPage(local: "Samples/drift/device", remote: "Samples/drift/drive"))
        let measured = try PageMeasurement("drift-en", in: browser)
        #expect(measured.controls >= 9, "three choices, two buttons, three text areas with their copy buttons, a link")
        #expect(measured.smallControls.isEmpty, "\(measured.smallControls.joined(separator: "; "))")
        #expect(measured.pastTheEdge.isEmpty, "\(measured.pastTheEdge.joined(separator: "; "))")
        // Only on Google Drive, never agreed on: its version is chosen at first, as a plan copies it.
        #expect(try browser.property("checked", of: "#choice-0-remote").boolValue == true)
        try browser.click("label[for=choice-0-local]")
        #expect(try browser.property("checked", of: "#choice-0-local").boolValue == true, "a tap on the label chose it")
        #expect(try browser.property("checked", of: "#choice-0-remote").boolValue == false)
        #expect(try browser.value(of: "textarea.plan")?.contains(" --take e4eaaaf2-d142-11e1-b3e4-080027620cdd=local@none,") == true)
        try browser.screenshot(to: screenshotFolder.appendingPathComponent("controls-390.png"), wholePage: true)
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
