import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A live reckon (an export held at its lock, for at most 30 s): its pid
/// stands for a run that is still going; `release` lets it end.
func heldReckon() throws -> (pid: pid_t, release: () -> Void) {
    let folder = temporaryFolder()
    let (run, gate) = try heldRun(
        ["export", packageRoot.appendingPathComponent("Samples/drift/device").path, "--out", "held"], at: "export-locked", in: folder)
    return (
        run.pid,
        {
            try? FileManager.default.removeItem(at: gate)
            _ = run.wait()
        }
    )
}

/// A reckon killed with SIGKILL leaves nothing running and nothing staged
/// for good: its rclone children die with it, and the next run removes
/// the staging folders it left, also while its process is a zombie.
@Suite(.serialized) struct NothingLeftRunningTests {
    @Test func aKilledRunsStagingFolderGoesWithTheNextRunWhileItsProcessIsAZombie() throws {
        let source = temporaryFolder()
        try writeMemoFolder(twelveMemos(), to: source)
        let definition = try exportPipeline(source: source)
        let exports = definition.deletingLastPathComponent().appendingPathComponent("exports")
        // Started and never reaped here until the end: once killed at the step, it stays a zombie.
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        let environment = childEnvironment(["RECKON_TEST_STOP_AT": "staging-made"])
        let killed = try ChildProcess.start(
            reckonBinary.path, arguments: ["run", definition.path], environment: environment, stdout: null, stderr: null)
        defer { _ = killed.ended(waiting: true) }
        // Looked at for at most 1000 × 10 ms.
        for _ in 0..<1000 where !isZombie(killed.pid) { usleep(10_000) }
        #expect(isZombie(killed.pid))
        let staging = ".reckon-run-\(killed.pid).partial"
        #expect(FileManager.default.fileExists(atPath: exports.appendingPathComponent(staging).path))

        let next = try runArray(["run", definition.path, "--quiet"])
        #expect(next.code == 0, "\(next.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: exports.path).filter { $0.hasSuffix(".partial") }
        #expect(left.isEmpty, "the killed run's staging folder is left while its process is a zombie")
    }

    func isZombie(_ pid: pid_t) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return false }
        return text[close...].dropFirst(2).first == "Z"
    }
}
