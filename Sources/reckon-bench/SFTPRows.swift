import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Servers still running, stopped by the signal handler if the benchmark is
/// interrupted (a child started with posix_spawn is in the benchmark's own
/// process group, but SIGTERM from elsewhere reaches only the benchmark).
nonisolated(unsafe) var runningServers: [pid_t] = []

/// `rclone serve sftp` of one folder on 127.0.0.1, started by the benchmark
/// itself. The client side is the remote `srv:`, given through `environment`.
///
/// Not `--dir-cache-time 0s`, as the tests use: with it, rclone's VFS lists
/// the whole folder again for every file opened or hashed, so each file
/// costs time in proportion to the folder (1,000 files: rclone check 12.8 s
/// instead of 0.85 s, reckon's first fill 24 s instead of 2.4 s; 10,000:
/// 9 files a second, the server on a core), which would make 100,000 files
/// take a day and time rclone's VFS, not the tools. The served folders do not
/// change while a server runs (the 1% row starts a new server after its
/// change), so a cache that outlives a run serves them as they are on disk.
final class Served {
    let folder: String
    let port: Int
    let pid: pid_t
    let log: String
    /// `RCLONE_CONFIG_SRV_*`, an empty config file (never the user's), and `XDG_CACHE_HOME` for reckon's cache.
    let environment: [String: String]
    private var stopped = false

    init(folder: String, scratch: URL, name: String) throws {
        self.folder = folder
        let own = scratch.appendingPathComponent("sftp-\(name)")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        let config = own.appendingPathComponent("rclone.conf")
        try Data().write(to: config)
        let password = "pw-\(UUID().uuidString.prefix(8))"
        let obscured = try capture(["rclone", "obscure", "--", password])
        guard obscured.code == 0 else { throw BenchError("rclone obscure failed") }
        log = own.appendingPathComponent("server.log").path
        var problem = ""
        // A free port is found by binding port 0 and closing the socket;
        // another process may take it first, so a bounded number of tries.
        for _ in 0..<5 {
            let port = try Self.freePort()
            let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw BenchError("cannot write \(log)") }
            let pid = try spawn(
                [
                    "rclone", "serve", "sftp", folder, "--addr", "127.0.0.1:\(port)", "--user", "reckon", "--pass", password,
                    "--config", config.path, "--cache-dir", own.appendingPathComponent("rclone-cache").path,
                    "--dir-cache-time", "24h"
                ], stderr: fd)
            close(fd)
            runningServers.append(pid)
            if Self.waitForPort(port, pid: pid) {
                self.port = port
                self.pid = pid
                environment = [
                    "RCLONE_CONFIG": config.path,
                    "RCLONE_CONFIG_SRV_TYPE": "sftp",
                    "RCLONE_CONFIG_SRV_HOST": "127.0.0.1",
                    "RCLONE_CONFIG_SRV_PORT": String(port),
                    "RCLONE_CONFIG_SRV_USER": "reckon",
                    "RCLONE_CONFIG_SRV_PASS": obscured.output.trimmingCharacters(in: .whitespacesAndNewlines),
                    "XDG_CACHE_HOME": own.appendingPathComponent("xdg").path
                ]
                return
            }
            Self.end(pid)
            problem = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        }
        throw BenchError("rclone serve sftp of \(folder) did not start: \(problem)")
    }

    /// reckon's cache folder of `srv:` under this server's XDG_CACHE_HOME.
    var reckonCache: String { environment["XDG_CACHE_HOME"]! + "/reckon" }

    /// SIGTERM, up to 2 s, then SIGKILL; safe to call twice.
    func stop() {
        guard !stopped else { return }
        stopped = true
        Self.end(pid)
    }

    deinit { stop() }

    static func end(_ pid: pid_t) {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<40 {
            if waitpid(pid, &status, WNOHANG) == pid {
                runningServers.removeAll { $0 == pid }
                return
            }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        runningServers.removeAll { $0 == pid }
    }

    /// Stops every server on SIGINT, SIGTERM or SIGHUP, then ends the benchmark.
    static func stopOnSignals() {
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            Glibc.signal(signal) { received in
                for pid in runningServers { kill(pid, SIGKILL) }
                _exit(128 + received)
            }
        }
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BenchError("bind 127.0.0.1:0: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Until the port accepts a connection: 50 ms apart, 10 s in all; false if the server ended first.
    static func waitForPort(_ port: Int, pid: pid_t) -> Bool {
        let end = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < end {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                runningServers.removeAll { $0 == pid }
                return false
            }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port: UInt16(port))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return true }
            usleep(50_000)
        }
        return false
    }
}

/// The rows over a served folder (issues 15 and 34), on one data set: the
/// first deep reconcile of its Drive folder with an empty cache, against
/// `rclone copy` of the remote's memos at rclone's defaults and with
/// reckon's own transfer count; a deep reconcile after 1% of it changed
/// from a cache filled before the change, against the floor (`rclone
/// lsjson` of memos/, `rclone copy` of the changed files, a deep reconcile
/// of the two folders on disk) and against `rclone check`; and counts of
/// index-1m against `rclone cat | jq` (one row, whatever the set).
final class SFTPRows {
    static func firstRun(_ set: DataSet) -> String { "deep reconcile over sftp, first run, \(set.label)" }
    static func changed(_ set: DataSet) -> String { "deep reconcile over sftp, after 1% changed, \(set.label)" }
    static let counts = "counts over sftp, 1M-entry index"
    static func names(_ set: DataSet) -> [String] { [firstRun(set), changed(set), counts] }
    /// rclone's own default of `--transfers`.
    static let rcloneTransfers = 4

    let data: String
    let set: DataSet
    let scratch: URL
    let reckon: String
    let jqProgram: String
    /// How many files reckon downloads at once from an sftp remote (`--sftp-transfers`).
    let transfers: Int
    var servers: [String: Served] = [:]
    var pairs: [Pair] = []
    /// Caches and downloads set aside, not deleted (see `clear` in main.swift: ext4 creates files slowly right after many were deleted).
    private var setAside = 0

    var device: String { "\(data)/\(set.folder)/device/60dMemo" }
    var drive: String { "\(data)/\(set.folder)/drive/60dMemo" }
    var changedCopy: URL { scratch.appendingPathComponent("sftp-changed-drive/60dMemo") }
    /// The names of the memo files the 1% row changed, one a line, for `rclone copy --files-from-raw`.
    var changedList: URL { scratch.appendingPathComponent("sftp-changed-files.txt") }
    var download: URL { scratch.appendingPathComponent("sftp-download") }

    /// Starts a server for each wanted row and prepares its state (the 1% row: a copy, a warm cache, the change).
    init(data: String, set: DataSet, scratch: URL, reckon: String, jqProgram: String, transfers: Int, wanted: [String]) throws {
        self.data = data
        self.set = set
        self.scratch = scratch.appendingPathComponent("sftp-\(set.folder)")
        self.reckon = reckon
        self.jqProgram = jqProgram
        self.transfers = transfers
        try FileManager.default.createDirectory(at: self.scratch, withIntermediateDirectories: true)
        Served.stopOnSignals()
        do {
            try setUp(wanted)
        } catch {
            stop()
            throw error
        }
    }

    func stop() {
        for server in servers.values { server.stop() }
    }

    private func setUp(_ wanted: [String]) throws {
        if wanted.contains(Self.counts) { try setUpCounts() }
        // The rows with a target first, the long first fill last.
        if wanted.contains(Self.changed(set)) { try setUpChanged() }
        if wanted.contains(Self.firstRun(set)) { try setUpFirstRun() }
    }

    /// The counts row: reckon counts against rclone cat piped into jq, over index-1m served.
    private func setUpCounts() throws {
        let index = "\(data)/index-1m"
        let server = try Served(folder: index, scratch: scratch, name: "counts")
        servers[Self.counts] = server
        pairs.append(
            Pair(
                name: Self.counts, reckon: [reckon, "counts", "srv:", "--json"],
                peer: ["rclone", "cat", "srv:index.json"], peerName: "rclone cat | jq",
                prepare: { warm([index]) }, environment: server.environment, peerPipedInto: ["jq", jqProgram]))
    }

    /// The 1% row: a copy of the drive with 1% of its memos changed, served,
    /// its cache filled from the unchanged drive, against rclone check and the floor.
    private func setUpChanged() throws {
        say("sftp: copying \(drive) to \(changedCopy.path) …")
        try? FileManager.default.removeItem(at: changedCopy.deletingLastPathComponent())
        try FileManager.default.createDirectory(at: changedCopy.deletingLastPathComponent(), withIntermediateDirectories: true)
        try run(["cp", "-a", drive, changedCopy.deletingLastPathComponent().path])
        // In a child, so that the benchmark's own peak RSS (the least a child it spawns shows) stays small.
        let changed = try capture([CommandLine.arguments[0], "change-memos", changedCopy.path, changedList.path], environment: [:])
        guard changed.code == 0 else { throw BenchError("change-memos failed: \(changed.errors)") }
        say("sftp: \(changed.output.trimmingCharacters(in: .whitespacesAndNewlines))")
        let server = try Served(folder: changedCopy.path, scratch: scratch, name: "changed")
        servers[Self.changed(set)] = server
        // The same remote before the change, served from the unchanged folder: a run of reckon
        // against it, untimed, brings the cache back to the night before, as a nightly run
        // leaves it (copying a saved cache instead would change every file's inode and ctime,
        // and reckon would then check each cached file's SHA-256).
        let before = try Served(folder: drive, scratch: scratch, name: "changed-before")
        servers[Self.changed(set) + " (before)"] = before
        let revert = [reckon, "reconcile", "--local", device, "--remote", "srv:"]
        let beforeEnvironment = before.environment.merging(["XDG_CACHE_HOME": server.environment["XDG_CACHE_HOME"]!]) { $1 }
        say("sftp: filling the cache of the 1% row before the change …")
        let filled = try capture(revert, environment: beforeEnvironment)
        guard filled.code < 2 else {
            throw BenchError("reckon reconcile over sftp exited \(filled.code) while filling the cache: \(filled.errors)")
        }
        say("  \(cacheLine(filled.output))")
        // The floor: what any tool must do after 1% changed, given a cache of the night before
        // and the names of what changed: list the remote's memos, download those that changed,
        // and compare the two folders on disk, deep.
        let floor = Pair(
            name: Self.changed(set), reckon: [], peer: ["rclone", "lsjson", "srv:memos"],
            peerName: "floor: rclone lsjson + rclone copy of the changed + deep reconcile on disk",
            prepare: { [unowned self] in warm([self.device, self.changedCopy.path]) },
            peerAfter: [
                [
                    "rclone", "copy", "--files-from-raw", changedList.path, "--no-traverse", "--no-check-dest", "srv:memos",
                    download.path
                ],
                [reckon, "reconcile", "--local", device, "--remote", changedCopy.path]
            ],
            cleanup: { [unowned self] in self.moveAside(self.download.path) }, environment: server.environment,
            target: .atMost(1.3, "≤ 1.3× the floor"))
        pairs.append(
            Pair(
                name: Self.changed(set), reckon: [reckon, "reconcile", "--local", device, "--remote", "srv:"],
                peer: ["rclone", "check", "\(device)/memos", "srv:memos"], peerName: "rclone check",
                prepare: { [unowned self] in
                    _ = try? capture(revert, environment: beforeEnvironment)
                    warm([self.device, self.changedCopy.path, server.reckonCache])
                },
                environment: server.environment, target: .fasterBy(3, "≥ 3× faster"), others: [floor]))
    }

    /// The first fill: reckon against rclone copy of the whole drive, with
    /// rclone's default transfers and with reckon's.
    private func setUpFirstRun() throws {
        let server = try Served(folder: drive, scratch: scratch, name: "first")
        servers[Self.firstRun(set)] = server
        func copy(_ flags: [String], _ name: String, _ target: Target) -> Pair {
            Pair(
                name: Self.firstRun(set), reckon: [], peer: ["rclone", "copy"] + flags + ["srv:memos", download.path], peerName: name,
                prepare: { [unowned self] in warm([self.device, self.drive]) },
                cleanup: { [unowned self] in self.moveAside(self.download.path) }, environment: server.environment, target: target)
        }
        let defaults = copy([], "rclone copy (defaults: --transfers \(Self.rcloneTransfers))", .atMost(1.0, "≤ 1.0× its time"))
        // With reckon's count equal to rclone's default, the second command would be the first again.
        let own =
            transfers == Self.rcloneTransfers
            ? []
            : [
                copy(
                    ["--transfers", String(transfers)], "rclone copy --transfers \(transfers) (reckon's count)", .atMost(1.15, "≤ 1.15× its time")
                )
            ]
        var row = defaults
        row.reckon = [reckon, "reconcile", "--local", device, "--remote", "srv:"]
        row.prepare = { [unowned self] in
            self.moveAside(server.reckonCache)
            warm([self.device, self.drive])
        }
        row.others = own
        // The first peer's own prepare (warm only) runs before it: `others` keep theirs, the row's
        // first peer shares the row's, which also sets the cache aside (it holds nothing rclone reads).
        row.cleanup = { [unowned self] in self.moveAside(self.download.path) }
        pairs.append(row)
    }

    /// The summary's line about the cache ("… downloaded, … from the cache"), or the last line.
    func cacheLine(_ output: String) -> String {
        let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        return lines.first { $0.contains("cache") } ?? lines.last ?? ""
    }

    private func moveAside(_ folder: String) {
        guard FileManager.default.fileExists(atPath: folder) else { return }
        let aside = scratch.appendingPathComponent("set-aside")
        try? FileManager.default.createDirectory(at: aside, withIntermediateDirectories: true)
        setAside += 1
        rename(folder, aside.appendingPathComponent("\(setAside)-\((folder as NSString).lastPathComponent)").path)
    }

    /// Rewrites every 100th memo file (by name) with a longer body and a new
    /// modifiedAt, same id, and its entry's modifiedTime in index.json;
    /// gives the names of the files changed (1% of any data set, whatever its drift).
    static func changeOnePercent(of folder: URL) throws -> [String] {
        let memos = folder.appendingPathComponent("memos")
        let names = try FileManager.default.contentsOfDirectory(atPath: memos.path).filter { $0.hasSuffix(".json") }.sorted()
        let generator = Generator(memos: 0, seed: 0)
        var newTimes: [String: String] = [:]
        var changed: [String] = []
        for (n, name) in names.enumerated() where n % 100 == 0 {
            let url = memos.appendingPathComponent(name)
            var text = try String(contentsOf: url, encoding: .utf8)
            let time = generator.date(1_790_000_000 + Int64(n))
            guard let bodyEnd = text.range(of: #"","createdAt":""#),
                let modified = text.range(of: #""modifiedAt":""#),
                let modifiedEnd = text[modified.upperBound...].firstIndex(of: "\"")
            else { throw BenchError("\(name) is not a generated memo file") }
            text.replaceSubrange(modified.upperBound..<modifiedEnd, with: time)
            text.replaceSubrange(bodyEnd.lowerBound..<bodyEnd.lowerBound, with: " changed on Drive")
            try Data(text.utf8).write(to: url)
            newTimes[String(name.dropLast(5))] = time
            changed.append(name)
        }
        let indexURL = folder.appendingPathComponent("index.json")
        let lines = try String(contentsOf: indexURL, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            // {"id":"<36>","modifiedTime":"<20>", …
            guard line.hasPrefix(#"{"id":""#), line.count > 80 else { return String(line) }
            let id = String(line.dropFirst(7).prefix(36))
            guard let time = newTimes[id], let start = line.range(of: #""modifiedTime":""#),
                let end = line[start.upperBound...].firstIndex(of: "\"")
            else { return String(line) }
            return String(line[..<start.upperBound]) + time + String(line[end...])
        }
        try Data(lines.joined(separator: "\n").utf8).write(to: indexURL)
        return changed
    }

    /// Checks once, untimed, that reckon and its peer agree on each row:
    /// the same Active and Archived counts; the same memos found different
    /// (reckon's combined.txt against `rclone check --combined`, by id).
    func check() -> Bool {
        var agreed = true
        for pair in pairs {
            do {
                let rowAgreed = try pair.name == Self.counts ? checkCounts(pair) : checkDifferences(pair)
                if !rowAgreed { agreed = false }
            } catch {
                agreed = false
                say("check FAILED: \(pair.name): \(error)")
            }
        }
        return agreed
    }

    /// The counts row's check: reckon's Active and Archived against jq's
    /// reading of the index rclone cat gives; false when they differ.
    private func checkCounts(_ pair: Pair) throws -> Bool {
        let environment = pair.environment
        var agreed = true
        let ours = try capture(pair.reckon, environment: environment)
        let theirs = try capturePipeline(pair.peer, into: pair.peerPipedInto!, environment: environment)
        let object = (try? JSONSerialization.jsonObject(with: Data(ours.output.utf8))) as? [String: Any]
        let active = object?["active"] as? Int
        let archived = object?["archived"] as? Int
        let jq = (try? JSONSerialization.jsonObject(with: Data(theirs.utf8))) as? [Int]
        if ours.code == 0, let active, let archived, jq == [active, archived] {
            say("check: reckon counts srv: and rclone cat | jq agree on index-1m over sftp: Active \(active), Archived \(archived)")
        } else {
            agreed = false
            say(
                "check FAILED: reckon counts srv: (exit \(ours.code)) gave \(ours.output.trimmingCharacters(in: .whitespacesAndNewlines)) \(ours.errors); jq gave \(theirs)"
            )
        }
        return agreed
    }

    /// A row's check of the memos found different: reckon's combined.txt
    /// against `rclone check --combined`, by id; false when they differ.
    private func checkDifferences(_ pair: Pair) throws -> Bool {
        let environment = pair.environment
        var agreed = true
        // The 1% row's check starts from the saved warm cache, as its timed runs do.
        pair.prepare()
        let out = scratch.appendingPathComponent("sftp-check-out")
        try? FileManager.default.removeItem(at: out)
        let ours = try capture(pair.reckon + ["--out", out.path], environment: environment)
        let combined = (try? String(contentsOf: out.appendingPathComponent("combined.txt"), encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: out)
        let theirs = try capture(["rclone", "check", "\(device)/memos", "srv:memos", "--combined", "-"], environment: environment)
        func different(_ text: String, stripping suffix: String) -> [String: String] {
            var result: [String: String] = [:]
            for line in text.split(separator: "\n") where line.count > 2 && !line.hasPrefix("=") {
                let name = String(line.dropFirst(2))
                // reckon writes ids in small letters, rclone names as they are.
                result[(!suffix.isEmpty && name.hasSuffix(suffix) ? String(name.dropLast(suffix.count)) : name).uppercased()] = String(
                    line.prefix(1))
            }
            return result
        }
        let reckonDiff = different(combined, stripping: "")
        let rcloneDiff = different(theirs.output, stripping: ".json")
        let same = combined.split(separator: "\n").count
        // rclone compares bytes; reckon compares a soft-deleted memo only as deleted, so a file
        // rclone finds different (or on one side only) is expected to be '=' for reckon when every
        // copy of it is soft-deleted.
        let served = servers[pair.name]!.folder
        func deletedOnBoth(_ id: String) -> Bool {
            let copies = [device, served].compactMap { try? String(contentsOfFile: "\($0)/memos/\(id).json", encoding: .utf8) }
            return !copies.isEmpty && copies.allSatisfy { $0.contains(#""deletedAt":""#) }
        }
        let deletedOnly = Set(rcloneDiff.keys).subtracting(reckonDiff.keys).filter(deletedOnBoth)
        if ours.code < 2, theirs.code < 2, !combined.isEmpty, Set(reckonDiff.keys) == Set(rcloneDiff.keys).subtracting(deletedOnly) {
            let sigils = reckonDiff.filter { rcloneDiff[$0.key] != $0.value }.count
            say(
                "check: \(pair.name): reckon (exit \(ours.code), \(same) memos, \(cacheLine(ours.output))) and rclone check (exit \(theirs.code)) find the same \(reckonDiff.count) memos different"
                    + (sigils == 0 ? ", with the same sigils" : " (\(sigils) with another sigil)")
                    + (deletedOnly.isEmpty
                        ? ""
                        : "; rclone also finds \(deletedOnly.count) files different or on one side only whose memo is soft-deleted wherever it is, which reckon counts as the same")
            )
        } else {
            agreed = false
            let onlyReckon = Set(reckonDiff.keys).subtracting(rcloneDiff.keys)
            let onlyRclone = Set(rcloneDiff.keys).subtracting(reckonDiff.keys)
            say(
                "check FAILED: \(pair.name): reckon exit \(ours.code), \(reckonDiff.count) different; rclone check exit \(theirs.code), \(rcloneDiff.count) different; \(onlyReckon.count) only reckon's, \(onlyRclone.count) only rclone's (\(deletedOnly.count) of them soft-deleted wherever they are) \(ours.errors)"
            )
            for id in onlyReckon.sorted().prefix(3) { say("  reckon: \(reckonDiff[id]!) \(id)") }
            for id in onlyRclone.subtracting(deletedOnly).sorted().prefix(3) { say("  rclone: \(rcloneDiff[id]!) \(id)") }
        }
        return agreed
    }

    /// Runs a command untimed and fails unless it exits 0.
    private func run(_ command: [String]) throws {
        let result = try capture(command, environment: [:])
        guard result.code == 0 else { throw BenchError("\(command.joined(separator: " ")) exited \(result.code): \(result.errors)") }
    }
}

/// Runs a command untimed with `environment` laid over this process's: stdout, the last lines of stderr, the exit code.
func capture(_ command: [String], environment: [String: String]) throws -> (output: String, errors: String, code: Int32) {
    let out = try TemporaryOutput()
    let err = try TemporaryOutput()
    let pid = try spawn(command, environment: environment, stdout: out.fd, stderr: err.fd)
    let (code, _) = reap(pid)
    return (out.text, err.text.split(separator: "\n").suffix(3).joined(separator: " / "), code)
}

/// `first | second`, untimed: the second's stdout.
func capturePipeline(_ first: [String], into second: [String], environment: [String: String]) throws -> String {
    let out = try TemporaryOutput()
    let fds = try closeOnExecPipe()
    let writer = try spawn(first, environment: environment, stdout: fds[1])
    close(fds[1])
    let reader = try spawn(second, environment: environment, stdin: fds[0], stdout: out.fd)
    close(fds[0])
    _ = reap(writer)
    _ = reap(reader)
    return out.text
}

/// An unlinked temporary file for a child's output (a pipe would need reading while the child runs).
final class TemporaryOutput {
    let fd: Int32
    init() throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/reckon-bench-out-XXXXXX").utf8CString)
        fd = mkstemp(&template)
        guard fd >= 0 else { throw BenchError("mkstemp: \(String(cString: strerror(errno)))") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }
    var text: String {
        lseek(fd, 0, SEEK_SET)
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }
    deinit { close(fd) }
}
