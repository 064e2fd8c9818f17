import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One timed run of a command: wall seconds, peak RSS and CPU seconds
/// (user and system) of the child and the children it waited for.
struct Measurement {
    var seconds: Double
    var peakKilobytes: Int
    var exitCode: Int32
    var cpuSeconds: Double = 0
}

/// User and system CPU seconds of a rusage.
func cpu(_ usage: rusage) -> Double {
    Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Starts a command with posix_spawn: stdout and stderr to /dev/null unless
/// given, stdin inherited unless given, and `environment` laid over this
/// process's. The descriptors given are duplicated onto 0, 1 and 2 and should
/// be close-on-exec, so no other child holds a pipe open.
func spawn(
    _ command: [String], environment: [String: String] = [:], stdin: Int32? = nil, stdout: Int32? = nil,
    stderr: Int32? = nil
) throws -> pid_t {
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin, 0) }
    if let stdout {
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    if let stderr {
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    let argv = command.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in envp { free(pointer) } }
    let spawned =
        environment.isEmpty
        ? posix_spawnp(&pid, command[0], &actions, nil, argv, environ)
        : posix_spawnp(&pid, command[0], &actions, nil, argv, envp)
    guard spawned == 0 else { throw BenchError("cannot start \(command[0]): \(String(cString: strerror(spawned)))") }
    return pid
}

/// Waits for a child: its exit code and resource usage.
func reap(_ pid: pid_t) -> (exitCode: Int32, usage: rusage) {
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    return ((status >> 8) & 0xFF, usage)
}

/// Runs a command with posix_spawn, output discarded, and measures it with wait4.
func measure(_ command: [String], environment: [String: String] = [:]) throws -> Measurement {
    let start = ContinuousClock.now
    let pid = try spawn(command, environment: environment)
    let (code, usage) = reap(pid)
    return Measurement(seconds: seconds(since: start), peakKilobytes: usage.ru_maxrss, exitCode: code, cpuSeconds: cpu(usage))
}

/// Runs `first | second` as two processes joined by a pipe (no shell), the
/// second's output discarded: wall time until both have exited, the larger
/// peak RSS, and the first exit code that is not 0.
func measurePipeline(_ first: [String], into second: [String], environment: [String: String] = [:]) throws -> Measurement {
    let fds = try closeOnExecPipe()
    let start = ContinuousClock.now
    let writer: pid_t
    do { writer = try spawn(first, environment: environment, stdout: fds[1]) } catch {
        close(fds[0])
        close(fds[1])
        throw error
    }
    close(fds[1])
    let reader: pid_t
    do { reader = try spawn(second, environment: environment, stdin: fds[0]) } catch {
        close(fds[0])
        _ = reap(writer)
        throw error
    }
    close(fds[0])
    let (a, usageA) = reap(writer)
    let (b, usageB) = reap(reader)
    return Measurement(
        seconds: seconds(since: start), peakKilobytes: max(usageA.ru_maxrss, usageB.ru_maxrss), exitCode: a != 0 ? a : b,
        cpuSeconds: cpu(usageA) + cpu(usageB))
}

/// A pipe whose ends are close-on-exec (Glibc's pipe2 is not visible to
/// Swift; the benchmark spawns from one thread, so nothing forks between).
func closeOnExecPipe() throws -> [Int32] {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return fds
}

func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The path of a program on PATH, or nil.
func which(_ name: String) -> String? {
    for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
        let path = "\(folder)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// A comparison: reckon's command against a peer's, run alternately.
struct Pair {
    var name: String
    var reckon: [String]
    var peer: [String]
    var peerName: String
    /// Run, untimed, before each command: clears outputs and warms inputs,
    /// so every run of either side starts the same way.
    var prepare: () -> Void = {}
    /// Further commands of the peer, run one after another after `peer` and
    /// timed together with it, as a script would run them.
    var peerAfter: [[String]] = []
    /// Run, untimed, after each run of the peer: removes what it made.
    var cleanup: () -> Void = {}
    /// Variables laid over this process's environment for both sides (an rclone remote, a cache folder).
    var environment: [String: String] = [:]
    /// A command the peer's output is piped into (`rclone cat … | jq …`), timed with it.
    var peerPipedInto: [String]? = nil
    /// The row's target against this peer, printed beside it.
    var target: Target? = nil
    /// Further peers timed in the same rounds against the same runs of
    /// reckon's command (their own `reckon` is not run): each has its own
    /// prepare, cleanup, environment and target, and its own line.
    var others: [Pair] = []

    /// The peer's commands, one after another: wall seconds add up, the
    /// peak RSS is the largest, the exit code the first that is not 0.
    func measurePeer() throws -> Measurement {
        var total = Measurement(seconds: 0, peakKilobytes: 0, exitCode: 0)
        for (n, command) in ([peer] + peerAfter).enumerated() {
            let step =
                try n == 0 && peerPipedInto != nil
                ? measurePipeline(command, into: peerPipedInto!, environment: environment)
                : measure(command, environment: environment)
            total.seconds += step.seconds
            total.peakKilobytes = max(total.peakKilobytes, step.peakKilobytes)
            total.cpuSeconds += step.cpuSeconds
            if total.exitCode == 0 { total.exitCode = step.exitCode }
        }
        cleanup()
        return total
    }

    /// Warm-up, then `rounds` of A B; returns both sides' measurements.
    func run(rounds: Int) throws -> ([Measurement], [Measurement]) {
        prepare()
        _ = try measure(reckon, environment: environment)
        prepare()
        _ = try measurePeer()
        var a: [Measurement] = []
        var b: [Measurement] = []
        for _ in 0..<rounds {
            prepare()
            a.append(try measure(reckon, environment: environment))
            prepare()
            b.append(try measurePeer())
        }
        return (a, b)
    }

    /// Warm-up of each side (reckon's command, then each peer), then
    /// `rounds` of reckon followed by each peer; returns reckon's
    /// measurements and each peer's, in the order of `[self] + others`.
    func runAll(rounds: Int) throws -> ([Measurement], [[Measurement]]) {
        let peers = [self] + others
        var a: [Measurement] = []
        var b = [[Measurement]](repeating: [], count: peers.count)
        for round in 0...rounds {
            prepare()
            let ours = try measure(reckon, environment: environment)
            if round > 0 { a.append(ours) }
            for (n, peer) in peers.enumerated() {
                peer.prepare()
                let theirs = try peer.measurePeer()
                if round > 0 { b[n].append(theirs) }
            }
        }
        return (a, b)
    }

    /// The same row as old binary against new: reckon's command run by the
    /// binary at `old` as side A, and as it is as side B; the peer is left out.
    /// Nil when the row's timed command is not reckon's (the floor row's bsdtar).
    func against(_ old: String, new: String) -> Pair? {
        guard reckon.first == new else { return nil }
        return Pair(name: name, reckon: [old] + reckon.dropFirst(), peer: reckon, peerName: "new", prepare: prepare, environment: environment)
    }
}

/// A row's target, as the issue words it, and whether a run met it: given
/// reckon's median and this peer's, and the medians of every peer of the
/// row by name (a target may depend on two of them).
struct Target {
    var text: String
    var met: (_ reckon: Double, _ peer: Double, _ peers: [String: Double]) -> Bool

    /// reckon's time at most `factor` times the peer's.
    static func atMost(_ factor: Double, _ text: String) -> Target {
        Target(text: text) { reckon, peer, _ in reckon <= factor * peer }
    }

    /// reckon at least `factor` times as fast as the peer (the peer's time at least `factor` times reckon's).
    static func fasterBy(_ factor: Double, _ text: String) -> Target {
        Target(text: text) { reckon, peer, _ in peer >= factor * reckon }
    }
}

/// Reads every file under `paths` and flushes what earlier runs wrote, so
/// the next run starts with its input in the page cache and no writeback of
/// someone else's output. (rclone drops the cache of each file it reads, so
/// without this whoever runs after it reads from disk.) Folders are walked
/// with readdir, one name at a time: the benchmark's own peak RSS is the
/// least Linux reports for a child it spawns, so it must stay small.
func warm(_ paths: [String]) {
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    func visit(_ path: String) {
        if let folder = opendir(path) {
            defer { closedir(folder) }
            while let entry = readdir(folder) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { visit(path + "/" + name) }
            }
            return
        }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        while read(fd, &buffer, buffer.count) > 0 {}
        close(fd)
    }
    for path in paths { visit(path) }
    sync()
}
