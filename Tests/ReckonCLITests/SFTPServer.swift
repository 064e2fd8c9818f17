import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A real `rclone serve sftp` of one folder on 127.0.0.1, for tests. The
/// client side is the remote `reckontest:` given by `environment`
/// (`RCLONE_CONFIG_RECKONTEST_…`), so a test passes `reckontest:path` as
/// the remote and the environment to the process. Stopped by `stop()` and
/// on deinit. Not `Sendable`: one test owns it.
final class SFTPServer {
    enum StartError: Error, CustomStringConvertible {
        case failed(String)
        var description: String { if case .failed(let text) = self { text } else { "" } }
    }

    /// The served folder.
    let folder: URL
    let port: Int
    let user: String
    let password: String
    /// The client remote's name, with its `:`.
    let remote = "reckontest:"
    /// The server's own stderr (rclone's log; `-v` when `verbose`).
    let logFile: URL
    /// What the client needs: the remote `reckontest`, an empty config file
    /// (so the user's own rclone.conf is never read), and no host-key check
    /// (rclone's sftp checks host keys only when `known_hosts_file` is set).
    let environment: [String: String]

    private let process: Process
    private let scratch: URL

    /// The server's host keys, made once per test process: rclone makes
    /// them in `<cache-dir>/serve-sftp` on its first start, so starts are
    /// serialised until they exist.
    private static let starting = Mutex<URL?>(nil)

    /// Serves `folder` (which it never changes itself) with a fresh password.
    init(serving folder: URL, password: String = "pw-\(UUID().uuidString.prefix(8))", verbose: Bool = false) throws {
        self.folder = folder
        let user = "reckon"
        self.user = user
        self.password = password
        let obscured = try Self.obscure(password)
        scratch = scratchFolder("sftp")
        let config = scratch.appendingPathComponent("rclone.conf")
        logFile = scratch.appendingPathComponent("server.log")

        let started: (Process, Int)
        do {
            try Data().write(to: config)
            started = try Self.start(
                folder: folder, user: user, password: password, config: config, log: scratch.appendingPathComponent("server.log"), verbose: verbose)
        } catch {
            try? FileManager.default.removeItem(at: scratch)
            throw error
        }
        (process, port) = started
        environment = [
            "RCLONE_CONFIG": config.path,
            "RCLONE_CONFIG_RECKONTEST_TYPE": "sftp",
            "RCLONE_CONFIG_RECKONTEST_HOST": "127.0.0.1",
            "RCLONE_CONFIG_RECKONTEST_PORT": String(started.1),
            "RCLONE_CONFIG_RECKONTEST_USER": user,
            "RCLONE_CONFIG_RECKONTEST_PASS": obscured
        ]
    }

    private static func start(
        folder: URL, user: String, password: String, config: URL, log: URL,
        verbose: Bool
    ) throws -> (Process, Int) {
        try starting.withLock { (cache: inout URL?) throws -> (Process, Int) in
            if cache == nil {
                let made = testScratch.appendingPathComponent("reckon-sftp-keys-\(getpid())")
                try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
                cache = made
                atexit { SFTPServer.removeKeys() }
            }
            var lastProblem = ""
            // A free port is found by binding port 0 and closing the socket;
            // another process may take it before rclone does, so a bounded
            // number of tries.
            for _ in 0..<5 {
                let port = try freePort()
                let process = Process()
                process.executableURL = URL(fileURLWithPath: try rclonePath())
                process.arguments =
                    [
                        "serve", "sftp", folder.path, "--addr", "127.0.0.1:\(port)",
                        "--user", user, "--pass", password, "--config", config.path,
                        "--cache-dir", cache!.path,
                        // Tests change served files behind the server's back: it must not keep their old sizes.
                        "--dir-cache-time", "0s"
                    ] + (verbose ? ["-v"] : [])
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = FileHandle.nullDevice
                _ = FileManager.default.createFile(atPath: log.path, contents: nil)
                process.standardError = try FileHandle(forWritingTo: log)
                try process.run()
                if waitForPort(port, while: process) { return (process, port) }
                lastProblem = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                end(process)
            }
            throw StartError.failed("rclone serve sftp did not start: \(lastProblem)")
        }
    }

    /// Removes the host keys made for this test process.
    private static func removeKeys() {
        if let folder = starting.withLock({ $0 }) { try? FileManager.default.removeItem(at: folder) }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Whether the server still runs.
    var isRunning: Bool { process.isRunning }

    /// Stops the server: SIGTERM, up to 2 s, then SIGKILL. Safe to call twice.
    func stop() {
        Self.end(process)
    }

    /// The server's log so far.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    private static func end(_ process: Process) {
        guard process.processIdentifier > 0 else { return }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        for _ in 0..<40 where process.isRunning { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for _ in 0..<100 where process.isRunning { usleep(20_000) }
    }

    /// `rclone obscure`, the form rclone wants a password in a config.
    static func obscure(_ password: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try rclonePath())
        process.arguments = ["obscure", "--", password]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, !text.isEmpty else { throw StartError.failed("rclone obscure failed") }
        return text
    }

    static func rclonePath() throws -> String {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = String(folder) + "/rclone"
            if access(path, X_OK) == 0 { return path }
        }
        throw StartError.failed("rclone is not on PATH: install rclone (apt-get install rclone)")
    }

    /// A port on 127.0.0.1 that was free a moment ago.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw StartError.failed("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw StartError.failed("bind 127.0.0.1:0: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Waits until the port accepts a connection: at most 100 tries, 50 ms
    /// apart, and 10 s in all; false if the process ended first.
    private static func waitForPort(_ port: Int, while process: Process) -> Bool {
        let end = ContinuousClock.now + .seconds(10)
        for _ in 0..<100 where ContinuousClock.now < end {
            guard process.isRunning else { return false }
            if accepts(port) { return true }
            usleep(50_000)
        }
        return false
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: UInt16(port))
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
