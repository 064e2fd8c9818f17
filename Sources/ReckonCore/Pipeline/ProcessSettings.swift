import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the process around the library decides for it: where private
/// folders go, what a child program's environment is, how many threads
/// parallel work runs on, how long a reader waits for apply, and the test
/// checkpoints. The library reads no environment variable and installs no
/// signal handler: the command line reads its environment once, builds this
/// value before any work and hands it to the command, which passes it on to
/// what needs it. A library user that passes `ProcessSettings()` gets the
/// defaults: `/tmp`, an empty child environment, every core, 30 s, and no
/// checkpoints.
package struct ProcessSettings: Sendable {
    /// The folder private folders and the fallback lock folder go in.
    package var temporaryRoot = "/tmp"
    /// The value of the variable that chose `temporaryRoot` (`TMPDIR`), if
    /// one did, so that a message can name it.
    package var temporaryRootVariable: String?
    /// The environment a child program (rclone) starts with, before what
    /// its own definition adds.
    package var childEnvironment: [String: String] = [:]
    /// How many threads parallel work runs on; nil: every core. With 1,
    /// all the work is done in order on the calling thread.
    package var workers: Int?
    /// The threads parallel work runs on, as `workers` says.
    package var threads: Workers { Workers(workers) }
    /// How long a command that reads a side waits while apply or undo
    /// writes it, and apply or undo waits for the readers.
    package var lockWait: Duration = .seconds(30)
    /// Where a test stops or pauses the process.
    package var checkpoints = Checkpoints()
    /// Called before each private folder is made (`PrivateFolder.make`),
    /// on that thread: the command line sets one that installs, the first time, the exit
    /// and signal handlers that call `PrivateFolder.removeAll()`.
    package var beforePrivateFolder: (@Sendable () -> Void)?

    /// The defaults, for a library user that sets nothing.
    package init() {}

    /// The settings a process's `environment` asks for, as the command line
    /// reads its own: `TMPDIR` (nil or empty: `/tmp`), the environment
    /// itself for children, less the backup password's variable, and the
    /// test-only `RECKON_TEST_WORKERS`, `RECKON_TEST_LOCK_WAIT` (seconds),
    /// `RECKON_TEST_STOP_AT`, `RECKON_TEST_WAIT_AT` and `RECKON_TEST_WAIT_FILE`.
    package init(environment: [String: String]) {
        let root = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 }
        temporaryRootVariable = root
        let chosen = root ?? "/tmp"
        temporaryRoot = chosen.count > 1 && chosen.hasSuffix("/") ? String(chosen.dropLast()) : chosen
        childEnvironment = environment.filter { $0.key != BackupPassword.variable }
        workers = environment["RECKON_TEST_WORKERS"].flatMap { Int($0) }.map { max($0, 1) }
        if let seconds = environment["RECKON_TEST_LOCK_WAIT"].flatMap({ Double($0) }) { lockWait = .milliseconds(Int64(seconds * 1000)) }
        checkpoints = Checkpoints(
            stopAt: environment["RECKON_TEST_STOP_AT"], waitAt: environment["RECKON_TEST_WAIT_AT"], waitFile: environment["RECKON_TEST_WAIT_FILE"])
    }
}

/// Named steps where a test stops the process (`stopAt`) or pauses it
/// (`waitAt` while `waitFile` exists): how the tests stop an export at
/// every step, with no timing involved. Empty (always, outside tests), it
/// does nothing.
package final class Checkpoints: Sendable {
    /// The step to stop at: `name`, `name#N` or either with `:TERM` after it.
    private let stop: (name: String, count: Int, term: Bool)?
    /// The step to pause at, and the file whose existence holds the pause.
    private let pause: (name: String, file: String)?
    /// How many times the step named has been reached.
    private let reached = Atomic(0)

    /// - Parameters:
    ///   - stopAt: `name`, `name#N`, either with `:TERM` after it; nil or
    ///     malformed: no stop.
    ///   - waitAt: the step to pause at; paused only when `waitFile` is set.
    ///   - waitFile: the file whose existence holds the pause.
    package init(stopAt: String? = nil, waitAt: String? = nil, waitFile: String? = nil) {
        stop = stopAt.flatMap { text in
            let term = text.hasSuffix(":TERM")
            let parts = text.dropLast(term ? 5 : 0).split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            guard let count = parts.count == 1 ? 1 : Int(parts[1]), count >= 1 else { return nil }
            return (String(parts[0]), count, term)
        }
        pause = waitAt.flatMap { name in waitFile.map { (name, $0) } }
    }

    /// Kills the process at step `name`, or at the Nth time it is reached
    /// (`name#N`: with one worker thread the same point every run). With
    /// `:TERM`, sends SIGTERM instead, which the process may catch, each
    /// time from then on.
    package func at(_ name: String) {
        guard let stop, stop.name == name, reached.add(1, ordering: .relaxed).newValue >= stop.count else { return }
        if stop.term { kill(getpid(), SIGTERM) } else { raise(SIGKILL) }
    }

    /// Whether a test asked to pause at step `name`.
    package func pauses(at name: String) -> Bool { pause?.name == name }

    /// At step `name`, makes `<file>.reached` and waits while the file
    /// exists, for at most 30 s, so that a test can change the world
    /// between two steps (stop a server, delete a file).
    package func wait(at name: String) {
        guard let pause, pause.name == name else { return }
        _ = FileManager.default.createFile(atPath: pause.file + ".reached", contents: nil)
        for _ in 0..<300 where FileManager.default.fileExists(atPath: pause.file) { usleep(100_000) }
    }
}
