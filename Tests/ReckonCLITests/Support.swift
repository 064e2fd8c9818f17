import Foundation
import ReckonCore
import TestSupport
import Testing

/// The package's root folder, found from this file.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The `reckon` binary built beside the test bundle.
let reckonBinary: URL = {
    let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return exe.deletingLastPathComponent().appendingPathComponent("reckon")
}()

struct RunResult {
    var code: Int32
    var stdout: String
    var stderr: String
}

/// Runs the built binary, by default in the package root.
func reckon(_ arguments: String..., environment: [String: String] = [:]) throws -> RunResult {
    try runArray(arguments, environment: environment)
}

/// Runs the built binary with an argument array.
func runArray(
    _ arguments: [String], environment: [String: String] = [:], in folder: URL = packageRoot,
    executable: URL = reckonBinary
) throws -> RunResult {
    try BackgroundRun(arguments, environment: environment, in: folder, executable: executable).wait()
}

/// The built binary started, its output read to the end on threads of their
/// own: both pipes are drained at once, since a child that fills one while
/// the other is being read would otherwise wait forever.
final class BackgroundRun: Sendable {
    private let process: Process
    private let out: BackgroundRead
    private let err: BackgroundRead

    init(_ arguments: [String], environment: [String: String] = [:], in folder: URL = packageRoot, executable: URL = reckonBinary) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.environment = childEnvironment(environment)
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        out = BackgroundRead(outPipe.fileHandleForReading)
        err = BackgroundRead(errPipe.fileHandleForReading)
    }

    /// The process's id.
    var pid: pid_t { process.processIdentifier }

    /// Waits for the process and gives what it wrote and its exit status.
    func wait() -> RunResult {
        let stdout = out.wait()
        let stderr = err.wait()
        process.waitUntilExit()
        return RunResult(
            code: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// What the command line would be told, read from this test process's
/// environment: what a test hands the library it runs in-process (rclone
/// found on its `PATH`, its `TMPDIR`).
let testSettings = ProcessSettings(environment: ProcessInfo.processInfo.environment)

/// The environment of a reckon a test starts: this process's, `extra` over
/// it. A run told to stop or wait at a step (`RECKON_TEST_STOP_AT`,
/// `RECKON_TEST_WAIT_AT`) works on one thread (`RECKON_TEST_WORKERS=1`)
/// unless told otherwise, so that it reaches its steps in the same order,
/// and stops at the same point, every time.
func childEnvironment(_ extra: [String: String]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
    if environment["RECKON_TEST_STOP_AT"] != nil || environment["RECKON_TEST_WAIT_AT"] != nil, environment["RECKON_TEST_WORKERS"] == nil {
        environment["RECKON_TEST_WORKERS"] = "1"
    }
    return environment
}

/// A file read to its end on a thread of its own.
final class BackgroundRead: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    /// Everything read, once the file ended.
    func wait() -> Data {
        done.wait()
        return data
    }
}

func temporaryFolder() -> URL {
    scratchFolder("cli")
}

func read(_ url: URL) throws -> String { String(decoding: try Data(contentsOf: url), as: UTF8.self) }

func json(_ text: String) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
}

/// Every file under a folder with its SHA-256, to show nothing was written:
/// a folder is "folder", and a link "link to" its target, never followed.
/// Mount points are walked into (FileManager's enumerator stops at them).
func fingerprint(_ folder: URL) throws -> [String: String] {
    var result: [String: String] = [:]
    func walk(_ url: URL, _ relative: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
            let child = url.appendingPathComponent(name)
            let path = relative + "/" + name
            switch FileKind(path: child.path) {
            case .directory:
                result[path] = "folder"
                try walk(child, path)
            case .link: result[path] = "link to " + (try FileManager.default.destinationOfSymbolicLink(atPath: child.path))
            default: result[path] = SHA256.hex(of: try Data(contentsOf: child))
            }
        }
    }
    try walk(folder, "")
    return result
}

/// A report with its stage timings (the one part that varies between runs
/// of the same input) replaced by 0.000.
func maskTimings(_ text: String) -> String {
    text.replacing(/\| ([a-z]+) \| [0-9]+\.[0-9]{3} \|/) { "| \($0.1) | 0.000 |" }
        .replacing(/<td>([a-z]+)<\/td><td>[0-9]+\.[0-9]{3}<\/td>/) { "<td>\($0.1)</td><td>0.000</td>" }
}

/// Compares text with a golden file reviewed by hand. With
/// `RECKON_UPDATE_GOLDEN=1` the file is written instead, to be reviewed
/// with `git diff` before it is committed.
func expectGolden(_ actual: String, _ golden: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
    if ProcessInfo.processInfo.environment["RECKON_UPDATE_GOLDEN"] == "1" {
        try FileManager.default.createDirectory(at: golden.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(actual.utf8).write(to: golden)
        return
    }
    let expected = FileManager.default.fileExists(atPath: golden.path) ? try read(golden) : "(no golden file)"
    #expect(actual == expected, "\(golden.path) differs", sourceLocation: sourceLocation)
}

/// The programs the end-to-end tests run beside reckon, as they run them;
/// a test that runs one says so with `.needs(…)`.
extension Requirement {
    static let unzip = Requirement.tool("/usr/bin/unzip")
    static let bsdtar = Requirement.tool("/usr/bin/bsdtar")
    static let python3 = Requirement.tool("/usr/bin/python3")
    static let chromium = Requirement.tool("/usr/bin/chromium")
    static let rclone = Requirement.tool("rclone")
    static let parallel = Requirement.tool("parallel")
}
