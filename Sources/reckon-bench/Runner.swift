import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One timed run of a command: wall seconds and peak RSS of the child.
struct Measurement {
    var seconds: Double
    var peakKilobytes: Int
    var exitCode: Int32
}

/// Runs a command with posix_spawn, output discarded, and measures it with wait4.
func measure(_ command: [String]) throws -> Measurement {
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = command.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let start = ContinuousClock.now
    let spawned = posix_spawnp(&pid, command[0], &actions, nil, argv, environ)
    guard spawned == 0 else { throw BenchError("cannot start \(command[0]): \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Measurement(seconds: seconds, peakKilobytes: usage.ru_maxrss, exitCode: (status >> 8) & 0xFF)
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

    /// The peer's commands, one after another: wall seconds add up, the
    /// peak RSS is the largest, the exit code the first that is not 0.
    func measurePeer() throws -> Measurement {
        var total = Measurement(seconds: 0, peakKilobytes: 0, exitCode: 0)
        for command in [peer] + peerAfter {
            let step = try measure(command)
            total.seconds += step.seconds
            total.peakKilobytes = max(total.peakKilobytes, step.peakKilobytes)
            if total.exitCode == 0 { total.exitCode = step.exitCode }
        }
        cleanup()
        return total
    }

    /// Warm-up, then `rounds` of A B; returns both sides' measurements.
    func run(rounds: Int) throws -> ([Measurement], [Measurement]) {
        prepare(); _ = try measure(reckon)
        prepare(); _ = try measurePeer()
        var a: [Measurement] = [], b: [Measurement] = []
        for _ in 0..<rounds {
            prepare(); a.append(try measure(reckon))
            prepare(); b.append(try measurePeer())
        }
        return (a, b)
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
