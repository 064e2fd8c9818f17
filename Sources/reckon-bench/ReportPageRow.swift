import Foundation
import ReckonCore

#if canImport(Glibc)
    import Glibc
#endif

/// The row that measures the review page a deep run writes: how many
/// differences `pair-100k` gives, how large `report.html` is for them (the
/// page must stay within 5 MB at 1,500 differences of 100,000 memos), and how
/// long headless Chromium takes to load it, by the page's own navigation
/// timing. A figure, not a test: it is printed, never checked against a bar.
///
/// The peers are pages of about the same size that run nothing: the same
/// run's `combined.txt` (one line per memo) shown as plain text, and the
/// same page with its one script removed (that ratio shows what the script
/// costs). All three are loaded in one Chromium, alternately, each from
/// `about:blank` with its file in the page cache: a warm-up, then `rounds`
/// loads of each.
struct ReportPageRow {
    static let name = "report page: Chromium loads report.html, 100k"

    /// What one load of a page measured, in ms from the start of its navigation.
    struct Load {
        var contentLoaded: Double
        var loaded: Double
        /// When the page's script last set a textarea's value; nil on a page that sets none.
        var filled: Double?
    }

    /// Runs the deep reconcile once, prints the page's size, then times
    /// the loads and prints their medians.
    static func run(data: String, scratch: URL, reckon: String, rounds: Int) throws {
        let folder = scratch.appendingPathComponent("report-page")
        let reports = folder.appendingPathComponent("reports")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (device, drive) = ("\(data)/pair-100k/device/60dMemo", "\(data)/pair-100k/drive/60dMemo")
        let ran = try capture([reckon, "reconcile", "--local", device, "--remote", drive, "--out", reports.path])
        // 1 is drift found: what this pair must give.
        guard ran.code == 1 else { throw BenchError("reckon reconcile --out of pair-100k exited with \(ran.code), not 1 (drift found)") }
        let page = reports.appendingPathComponent("report.html")
        let html = try Data(contentsOf: page)
        let report = try JSONValue.parse(Data(contentsOf: reports.appendingPathComponent("report.json")))
        let differences = report["differences"].arrayValue.count
        let bound = 5_000_000
        say(
            "report page: a deep reconcile --out of pair-100k found \(grouped(differences)) differences"
                + (abs(differences - 1_500) <= 75 ? "" : " (not the 1,500 of the issue's example: what this pair's drift gives)"))
        say(
            "report page: report.html is \(grouped(html.count)) bytes, "
                + (html.count <= bound ? "within" : "OVER") + " 5 MB (\(grouped(bound)) bytes)")

        // The peers: the run's combined.txt (plain text of about the page's size), and the page without its script.
        // (report.html's own bytes as text/plain are no peer: its body is one line of 3 MB, which
        // Chromium's text layout did not finish in 200 s.)
        let text = reports.appendingPathComponent("combined.txt")
        let source = String(decoding: html, as: UTF8.self)
        guard let open = source.range(of: "<script>"), let close = source.range(of: "</script>\n", range: open.upperBound..<source.endIndex)
        else { throw BenchError("report.html of pair-100k has no script: no choices to fill") }
        let quiet = folder.appendingPathComponent("report-without-script.html")
        try Data((source[..<open.lowerBound] + source[close.upperBound...]).utf8).write(to: quiet)
        let pages: [(name: String, file: URL)] = [
            ("report.html", page), ("peer: combined.txt of the same run, as text/plain", text), ("peer: report.html without its script", quiet)
        ]

        let browser = try WebDriverSession(scratch: folder)
        defer { browser.close() }
        var loads = Array(repeating: [Load](), count: pages.count)
        for round in 0...rounds {
            for (n, page) in pages.enumerated() {
                let load = try browser.load(page.file)
                // Round 0 is the warm-up.
                if round > 0 { loads[n].append(load) }
            }
        }
        // The script filled the choices file (a page without choices would leave it empty).
        guard let filled = try browser.choicesFilled(page), filled > 0 else {
            throw BenchError("report.html's script did not fill the choices textarea in Chromium")
        }

        var average = [0.0]
        getloadavg(&average, 1)
        say(
            "report page: \(browser.version), headless, 1280 × 900, load average \(String(format: "%.1f", average[0])) after the loads;"
                + " a warm-up, then \(rounds) loads of each page alternately, each from about:blank"
                + " with its file in the page cache; medians of the page's navigation timing (performance.getEntriesByType('navigation')[0]),"
                + " in ms from the navigation's start")
        say("")
        say("| page | bytes | DOMContentLoaded end | load end | script filled the commands | ratio of load end (peer / report.html) |")
        say("| --- | --- | --- | --- | --- | --- |")
        let reference = median(loads[0].map(\.loaded))
        for (n, page) in pages.enumerated() {
            let size = (try? FileManager.default.attributesOfItem(atPath: page.file.path)[.size] as? Int) ?? 0
            let filled = loads[n].compactMap(\.filled)
            let loaded = median(loads[n].map(\.loaded))
            say(
                String(
                    format: "| %@ | %@ | %.0f ms | %.0f ms | %@ | %@ |", page.name, grouped(size), median(loads[n].map(\.contentLoaded)), loaded,
                    filled.count == loads[n].count ? String(format: "%.0f ms", median(filled)) : "–",
                    n == 0 ? "" : String(format: "%.2f×", loaded / reference)))
        }
        say("")
    }

    /// 1234567 as "1,234,567".
    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        return String(digits.enumerated().flatMap { i, d in (i > 0 && (digits.count - i) % 3 == 0) ? [",", d] : [d] })
    }
}

/// Headless Chromium through chromedriver (W3C WebDriver over HTTP on a
/// free port of 127.0.0.1), started by the benchmark and ended by it: the
/// few calls the report page row needs. Every wait is bounded.
final class WebDriverSession {
    private let driver: pid_t
    private let session: String
    private let port: Int
    private var browser: pid_t?
    private var closed = false
    let version: String

    /// Records, in every new document, when a textarea's value was last set
    /// (`performance.now()`, ms from the navigation's start). Injected through
    /// DevTools, which the page's Content-Security-Policy does not stop.
    static let recorder = """
        (function () {
          var value = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value');
          Object.defineProperty(HTMLTextAreaElement.prototype, 'value', {
            configurable: true, enumerable: value.enumerable, get: value.get,
            set: function (text) { value.set.call(this, text); window.__reckonFilled = performance.now(); }
          });
        })();
        """

    /// Starts chromedriver (up to 5 free ports, each waited for up to 10 s)
    /// and a session of Debian's Chromium with its profile under `scratch`.
    init(scratch: URL) throws {
        Served.stopOnSignals()
        let log = scratch.appendingPathComponent("chromedriver.log").path
        var started: (pid: pid_t, port: Int)?
        for _ in 0..<5 where started == nil {
            let port = try Served.freePort()
            let pid = try spawn(["/usr/bin/chromedriver", "--port=\(port)", "--log-path=\(log)"])
            runningServers.append(pid)
            let deadline = ContinuousClock.now + .seconds(10)
            var ended = false
            while started == nil && !ended && ContinuousClock.now < deadline {
                if (try? Self.call(port, "GET", "/status", timeout: 1))?["ready"] == .bool(true) { started = (pid, port) }
                usleep(100_000)
                ended = waitpid(pid, nil, WNOHANG) == pid
            }
            if ended { runningServers.removeAll { $0 == pid } } else if started == nil { Served.end(pid) }
        }
        guard let started else { throw BenchError("chromedriver did not start; see \(log)") }
        (driver, port) = started
        let arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(scratch.path)/chromium-profile"
        ]
        let capabilities: JSONValue = .object([
            "browserName": .string("chrome"), "pageLoadStrategy": .string("normal"),
            "timeouts": .object(["pageLoad": .integer(120_000), "script": .integer(30_000)]),
            "goog:chromeOptions": .object(["binary": .string("/usr/bin/chromium"), "args": .array(arguments.map { .string($0) })])
        ])
        let created: JSONValue
        do {
            created = try Self.call(port, "POST", "/session", .object(["capabilities": .object(["alwaysMatch": capabilities])]))
        } catch {
            Served.end(driver)
            throw error
        }
        guard let id = created["sessionId"].stringValue else {
            Served.end(driver)
            throw BenchError("chromedriver gave no session id")
        }
        session = "/session/\(id)"
        browser = created["capabilities"]["goog:processID"].double.map { pid_t($0) }
        version = "Chromium " + (created["capabilities"]["browserVersion"].stringValue ?? "?")
        do {
            try send("POST", "/window/rect", .object(["width": .integer(1280), "height": .integer(900)]))
            try send(
                "POST", "/goog/cdp/execute",
                .object(["cmd": .string("Page.addScriptToEvaluateOnNewDocument"), "params": .object(["source": .string(Self.recorder)])]))
        } catch {
            close()
            throw error
        }
    }

    /// Loads `file` from `about:blank` after reading it into the page cache,
    /// and reads the page's navigation timing once its load event has ended.
    func load(_ file: URL) throws -> ReportPageRow.Load {
        try send("POST", "/url", .object(["url": .string("about:blank")]))
        warm([file.path])
        try send("POST", "/url", .object(["url": .string(file.absoluteString)]))
        let js = """
            var n = performance.getEntriesByType('navigation')[0];
            if (!n || n.loadEventEnd === 0) { return null; }
            return [n.domContentLoadedEventEnd, n.loadEventEnd, window.__reckonFilled === undefined ? -1 : window.__reckonFilled];
            """
        for _ in 0..<100 {
            let times = try send("POST", "/execute/sync", .object(["script": .string(js), "args": .array([])])).arrayValue.compactMap(\.double)
            if times.count == 3 { return ReportPageRow.Load(contentLoaded: times[0], loaded: times[1], filled: times[2] < 0 ? nil : times[2]) }
            usleep(20_000)
        }
        throw BenchError("\(file.lastPathComponent): no navigation timing 2 s after its load")
    }

    /// The length of the choices file the page's script wrote into its textarea, after loading `file`.
    func choicesFilled(_ file: URL) throws -> Int? {
        _ = try load(file)
        let js = "var c = document.querySelector('textarea.choices'); return c ? c.value.length : null;"
        return try send("POST", "/execute/sync", .object(["script": .string(js), "args": .array([])])).double.map { Int($0) }
    }

    /// Ends the session (Chromium quits), then chromedriver; Chromium is
    /// ended by its process id if it outlived its session. Safe to call twice.
    func close() {
        guard !closed else { return }
        closed = true
        _ = try? send("DELETE", "")
        Served.end(driver)
        if let pid = browser, kill(pid, 0) == 0 {
            kill(pid, SIGTERM)
            for _ in 0..<40 where kill(pid, 0) == 0 { usleep(50_000) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
    }

    @discardableResult
    private func send(_ method: String, _ path: String, _ body: JSONValue? = nil) throws -> JSONValue {
        try Self.call(port, method, session + path, body)
    }

    /// One WebDriver call: its `value`, or an error with the driver's message.
    private static func call(_ port: Int, _ method: String, _ path: String, _ body: JSONValue? = nil, timeout: Int = 150) throws -> JSONValue {
        let answer = try JSONValue.parse(exchange(port, method, path, body.map { JSONWriter.data($0, pretty: false) }, timeout: timeout))
        if let kind = answer["value"]["error"].stringValue {
            throw BenchError("WebDriver \(method) \(path): \(kind): \(answer["value"]["message"].stringValue?.prefix(300) ?? "")")
        }
        return answer["value"]
    }

    /// One HTTP/1.1 request to 127.0.0.1:`port` and the body of its answer,
    /// each read or write waiting at most `timeout` seconds. (Foundation's
    /// URLSession of Swift 6.3 refuses chromedriver's headers, which have no
    /// space after the colon; see Tests/ReckonCLITests/WebDriver.swift.)
    private static func exchange(_ port: Int, _ method: String, _ path: String, _ body: Data?, timeout: Int) throws -> Data {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        var wait = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var address = Served.loopback(port: UInt16(port))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw BenchError("connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let body { head += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\n" }
        let bytes = Array((head + "\r\n").utf8) + (body ?? Data())
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw BenchError("WebDriver \(method) \(path): send: \(String(cString: strerror(errno)))") }
            sent += n
        }
        // Headers, then as many bytes as Content-Length says, or up to the end.
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var start: Int?
        var length: Int?
        while start.map({ answer.count - $0 < length ?? .max }) ?? true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n >= 0 else { throw BenchError("WebDriver \(method) \(path): no answer: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            answer += buffer[..<n]
            if start == nil, let end = answer.firstRange(of: Array("\r\n\r\n".utf8)) {
                start = end.upperBound
                for line in String(decoding: answer[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n") {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    if parts.count == 2, parts[0].lowercased() == "content-length" { length = Int(parts[1].trimmingCharacters(in: .whitespaces)) }
                }
            }
        }
        guard let start else { throw BenchError("WebDriver \(method) \(path): an answer cut short") }
        return Data(answer[start...].prefix(length ?? .max))
    }
}

extension JSONValue {
    /// A member of an object; `.null` for anything else.
    subscript(key: String) -> JSONValue {
        if case .object(let members) = self { members[key] ?? .null } else { .null }
    }
    var stringValue: String? { if case .string(let text) = self { text } else { nil } }
    var arrayValue: [JSONValue] { if case .array(let items) = self { items } else { [] } }
}
