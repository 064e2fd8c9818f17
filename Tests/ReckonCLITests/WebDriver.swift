import Foundation
import ReckonCore
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

extension Requirement {
    /// Debian's `chromium-driver`: drives Chromium through W3C WebDriver.
    static let chromedriver = Requirement.tool("/usr/bin/chromedriver")
}

/// A WebDriver call that failed: which endpoint, and what the driver said.
struct WebDriverError: Error, CustomStringConvertible {
    var endpoint: String
    var message: String
    var description: String { "WebDriver \(endpoint): \(message)" }
}

/// What a page is shown on.
enum Screen: String, CaseIterable, Sendable, CustomStringConvertible {
    /// A phone: 390 × 844 CSS pixels, 3 device pixels to one, with a
    /// phone's viewport and touch (Chromium's mobile emulation).
    case phone
    /// A desktop window of 1280 × 900.
    case desktop
    var description: String { rawValue }
    /// The width in CSS pixels.
    var width: Int { self == .phone ? 390 : 1280 }
}

/// Headless Chromium driven as a person would use it, through chromedriver
/// on a free port of 127.0.0.1: one session, on one screen. Elements are
/// named by CSS selectors. `close()` ends the session and the driver; call
/// it in a `defer`. Not `Sendable`: one test owns it.
///
///     let browser = try Browser(.phone)
///     defer { browser.close() }
///     try browser.open(page)
///     try browser.click("label[for=keep-local]")
///     let checked = try browser.property("checked", of: "#keep-local").boolValue  // true
///     let width = try browser.script("return {width: innerWidth}")["width"].double  // 390
final class Browser {
    private let driver: Process
    private let scratch: URL
    private var session: URL?
    private var browserProcess: pid_t?

    /// Starts chromedriver (up to 5 ports, each waited for through `GET
    /// /status` at most 100 times in 10 s) and opens a session on `screen`.
    init(_ screen: Screen) throws {
        scratch = scratchFolder("webdriver")
        let root: URL
        (driver, root) = try Self.startDriver(log: scratch.appendingPathComponent("chromedriver.log"))
        do {
            try startSession(at: root, on: screen)
        } catch {
            close()
            throw error
        }
    }

    private static func startDriver(log: URL) throws -> (Process, URL) {
        var problem = ""
        for _ in 0..<5 {
            let port = try SFTPServer.freePort()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/chromedriver")
            process.arguments = ["--port=\(port)", "--log-path=\(log.path)"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let root = URL(string: "http://127.0.0.1:\(port)")!
            let deadline = ContinuousClock.now + .seconds(10)
            var answer = ""
            for _ in 0..<100 where process.isRunning && ContinuousClock.now < deadline {
                do {
                    let status = try call("GET", root.appendingPathComponent("status"), timeout: 1)
                    if status["ready"].boolValue == true { return (process, root) }
                    answer = "not ready"
                } catch { answer = "\(error)" }
                usleep(100_000)
            }
            problem = answer + "; log: " + ((try? String(contentsOf: log, encoding: .utf8)) ?? "")
            Self.end(process.processIdentifier) { process.isRunning }
        }
        throw WebDriverError(endpoint: "GET /status", message: "chromedriver did not start: \(problem.suffix(2000))")
    }

    private func startSession(at root: URL, on screen: Screen) throws {
        var options: [String: JSONValue] = [
            "binary": .string("/usr/bin/chromium"),
            "args": .array(
                ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--user-data-dir=\(scratch.path)/profile"].map {
                    .string($0)
                })
        ]
        if screen == .phone {
            options["mobileEmulation"] = .object([
                "deviceMetrics": .object(["width": .integer(screen.width), "height": .integer(844), "pixelRatio": .integer(3)])
            ])
        }
        let created = try Self.call(
            "POST", root.appendingPathComponent("session"),
            .object([
                "capabilities": .object(["alwaysMatch": .object(["browserName": .string("chrome"), "goog:chromeOptions": .object(options)])])
            ]))
        guard let id = created["sessionId"].stringValue else { throw WebDriverError(endpoint: "POST /session", message: "no session id") }
        session = root.appendingPathComponent("session/\(id)")
        browserProcess = created["capabilities"]["goog:processID"].double.map { pid_t($0) }
        if screen == .desktop { try send("POST", "window/rect", .object(["width": .integer(screen.width), "height": .integer(900)])) }
    }

    /// Ends the session (Chromium quits), then the driver; Chromium is
    /// ended by its process id if it outlived its session. Safe to call twice.
    func close() {
        if session != nil { _ = try? send("DELETE", "") }
        session = nil
        Self.end(driver.processIdentifier) { driver.isRunning }
        if let pid = browserProcess { Self.end(pid) { kill(pid, 0) == 0 } }
        browserProcess = nil
    }

    /// Shows `page` (a `file://` URL) and waits until it is loaded.
    func open(_ page: URL) throws { try send("POST", "url", .object(["url": .string(page.absoluteString)])) }

    /// Runs `js` as the body of a function in the page (`/execute/sync`, which
    /// the page's Content-Security-Policy does not stop) and gives what it returns.
    @discardableResult
    func script(_ js: String, _ arguments: [JSONValue] = []) throws -> JSONValue {
        try send("POST", "execute/sync", .object(["script": .string(js), "args": .array(arguments)]))
    }

    /// The WebDriver ids of the elements `selector` finds (none is no error).
    func elements(_ selector: String) throws -> [String] {
        try send("POST", "elements", .object(["using": .string("css selector"), "value": .string(selector)])).arrayValue.compactMap {
            $0["element-6066-11e4-a52e-4f735466cecf"].stringValue
        }
    }

    /// The id of the first element `selector` finds; an error names the selector when there is none.
    func element(_ selector: String) throws -> String {
        guard let first = try elements(selector).first else {
            throw WebDriverError(endpoint: "POST elements", message: "no element matches \(selector)")
        }
        return first
    }

    /// Clicks the element as a person would (scrolled into view, clicked in its middle).
    func click(_ selector: String) throws { try send("POST", "element/\(element(selector))/click", .object([:])) }

    /// A DOM property of the element: `checked`, `value`, `textContent` …
    func property(_ name: String, of selector: String) throws -> JSONValue {
        try send("GET", "element/\(element(selector))/property/\(name)")
    }

    /// The element's `value` (of an input, a select, a textarea).
    func value(of selector: String) throws -> String? { try property("value", of: selector).stringValue }

    /// The element's `textContent`.
    func text(of selector: String) throws -> String? { try property("textContent", of: selector).stringValue }

    /// An attribute as written in the page; nil when the element has none.
    func attribute(_ name: String, of selector: String) throws -> String? {
        try send("GET", "element/\(element(selector))/attribute/\(name)").stringValue
    }

    /// Writes what the screen shows now (`/screenshot`) as a PNG; with
    /// `wholePage`, the page from top to bottom (Chromium's DevTools
    /// `Page.captureScreenshot`, through chromedriver's `goog/cdp/execute`).
    func screenshot(to file: URL, wholePage: Bool = false) throws {
        let base64: String?
        if wholePage {
            let size = try script("return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]").arrayValue
            let clip: [String: JSONValue] = [
                "x": .integer(0), "y": .integer(0), "width": size.first ?? .integer(1), "height": size.last ?? .integer(1), "scale": .integer(1)
            ]
            let parameters: JSONValue = .object(["captureBeyondViewport": .bool(true), "clip": .object(clip)])
            base64 = try send("POST", "goog/cdp/execute", .object(["cmd": .string("Page.captureScreenshot"), "params": parameters]))["data"]
                .stringValue
        } else {
            base64 = try send("GET", "screenshot").stringValue
        }
        guard let base64, let png = Data(base64Encoded: base64) else {
            throw WebDriverError(endpoint: "screenshot", message: "not a base64 picture")
        }
        try png.write(to: file)
    }

    @discardableResult
    private func send(_ method: String, _ path: String, _ body: JSONValue? = nil) throws -> JSONValue {
        guard let session else { throw WebDriverError(endpoint: "\(method) \(path)", message: "the session is closed") }
        return try Self.call(method, path.isEmpty ? session : session.appendingPathComponent(path), body)
    }

    /// One WebDriver call: its `value`, or an error naming the endpoint and the driver's message.
    private static func call(_ method: String, _ url: URL, _ body: JSONValue? = nil, timeout: Int = 60) throws -> JSONValue {
        let endpoint = "\(method) \(url.path)"
        let data = try exchange(method, url, body.map { JSONWriter.data($0, pretty: false) }, timeout: timeout, endpoint: endpoint)
        let answer: JSONValue
        do { answer = try JSONValue.parse(data) } catch {
            throw WebDriverError(endpoint: endpoint, message: "not JSON: \(String(decoding: data.prefix(500), as: UTF8.self))")
        }
        if let kind = answer["value"]["error"].stringValue {
            let message = answer["value"]["message"].stringValue ?? ""
            throw WebDriverError(endpoint: endpoint, message: "\(kind): \(message.split(separator: "\n").first ?? "")")
        }
        return answer["value"]
    }

    /// SIGTERM, up to 2 s, then SIGKILL and up to 2 s more.
    private static func end(_ pid: pid_t, while running: () -> Bool) {
        guard pid > 0, running() else { return }
        kill(pid, SIGTERM)
        for _ in 0..<40 where running() { usleep(50_000) }
        if running() { kill(pid, SIGKILL) }
        for _ in 0..<40 where running() { usleep(50_000) }
    }
}

/// One HTTP/1.1 request to 127.0.0.1 and the body of its answer, each
/// read or write waiting at most `timeout` seconds, the answer at most twice
/// that in all. Not URLSession: the FoundationNetworking of Swift 6.3 refuses
/// chromedriver's answers ("Failed writing header"), whose headers have no
/// space after the colon (`Content-Length:252`; swift-corelibs-foundation#5527,
/// not in 6.3).
private func exchange(_ method: String, _ url: URL, _ body: Data?, timeout: Int, endpoint: String) throws -> Data {
    func failure(_ what: String) -> WebDriverError { WebDriverError(endpoint: endpoint, message: "\(what): \(String(cString: strerror(errno)))") }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw failure("socket") }
    defer { close(fd) }
    var wait = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(url.port ?? 80).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    guard connected else { throw failure("connect to 127.0.0.1:\(url.port ?? 80)") }
    var request = "\(method) \(url.path) HTTP/1.1\r\nHost: 127.0.0.1:\(url.port ?? 80)\r\nConnection: close\r\n"
    if let body { request += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\n" }
    let bytes = Array((request + "\r\n").utf8) + (body ?? Data())
    var sent = 0
    while sent < bytes.count {
        let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n > 0 else { throw failure("send") }
        sent += n
    }
    // The answer: headers, then as many bytes as Content-Length says (or up to the end).
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    var bodyStart: Int?
    var length: Int?
    let deadline = ContinuousClock.now + .seconds(timeout)
    while answer.count < 256 << 20 && ContinuousClock.now < deadline {
        if let start = bodyStart, let length, answer.count - start >= length { break }
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n >= 0 else { throw failure("no answer") }
        if n == 0 { break }
        answer += buffer[..<n]
        if bodyStart == nil, let end = answer.firstRange(of: Array("\r\n\r\n".utf8)) {
            bodyStart = end.upperBound
            for line in String(decoding: answer[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == "content-length" { length = Int(parts[1].trimmingCharacters(in: .whitespaces)) }
            }
        }
    }
    guard let start = bodyStart else { throw WebDriverError(endpoint: endpoint, message: "an answer cut short") }
    return Data(answer[start...].prefix(length ?? .max))
}

/// Reading what a script or the driver returned.
extension JSONValue {
    /// A member of an object; `.null` for anything else.
    subscript(key: String) -> JSONValue {
        if case .object(let members) = self { members[key] ?? .null } else { .null }
    }

    var stringValue: String? { if case .string(let text) = self { text } else { nil } }
    var boolValue: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    var arrayValue: [JSONValue] { if case .array(let items) = self { items } else { [] } }
}
