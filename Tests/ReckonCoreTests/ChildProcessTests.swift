import Foundation
import ReckonCore
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The child helper and the one "is that process gone" check: a zombie is
/// gone, a pid running another program is not ours, and a child dies with
/// the thread that started it.
@Suite struct ChildProcessTests {
    let sleepProgram = ChildProcess.realPath("/bin/sleep")

    func start(_ program: String, _ arguments: [String]) throws -> ChildProcess {
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        return try ChildProcess.start(program, arguments: arguments, environment: [:], stdout: null, stderr: null)
    }

    /// The state letter of `/proc/<pid>/stat` (R, S, Z…), or nil.
    func state(_ pid: pid_t) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        return text[close...].dropFirst(2).first
    }

    @Test func aRunningProcessIsNotGoneAnEndedOneIsAndAZombieIs() throws {
        #expect(!PrivateFolder.processIsGone(getpid()))
        let child = try start("/bin/true", [])
        // Not reaped: it stays a zombie, which kill(pid, 0) still finds (looked at for at most 200 × 10 ms).
        for _ in 0..<200 where state(child.pid) != "Z" { usleep(10_000) }
        #expect(state(child.pid) == "Z")
        #expect(kill(child.pid, 0) == 0)
        #expect(PrivateFolder.processIsGone(child.pid, running: nil))
        #expect(PrivateFolder.processIsGone(child.pid, running: ChildProcess.realPath("/bin/true")))
        #expect(child.ended(waiting: true) == .exited(0))
        #expect(PrivateFolder.processIsGone(child.pid))
    }

    @Test func aPidRunningAnotherProgramIsNotOurs() throws {
        let child = try start("/bin/sleep", ["30"])
        defer {
            child.signalGroup(SIGKILL)
            _ = child.ended(waiting: true)
        }
        // Once it runs sleep (looked at for at most 200 × 10 ms), it is sleep's, not this program's.
        for _ in 0..<200 where (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child.pid)/exe")) != sleepProgram {
            usleep(10_000)
        }
        #expect(!PrivateFolder.processIsGone(child.pid, running: sleepProgram))
        #expect(!PrivateFolder.processIsGone(child.pid, running: "/elsewhere/sleep"), "the file name decides, not the folder")
        #expect(!PrivateFolder.processIsGone(child.pid, running: nil))
        #expect(PrivateFolder.processIsGone(child.pid), "a pid running sleep is not this program's run")
        #expect(PrivateFolder.processIsGone(child.pid, running: "/usr/bin/rclone"))
    }

    @Test func aChildDiesWithTheThreadThatStartedIt() throws {
        let started = Mutex<ChildProcess?>(nil)
        let thread = Thread { started.withLock { $0 = try? start("/bin/sleep", ["30"]) } }
        thread.start()
        for _ in 0..<500 where started.withLock({ $0 }) == nil { usleep(10_000) }
        let child = try #require(started.withLock { $0 })
        // The thread has ended: the kernel sends SIGKILL (looked for at most 500 × 10 ms).
        var ending: ChildProcess.Ending?
        for _ in 0..<500 where ending == nil {
            usleep(10_000)
            ending = child.ended(waiting: false)
        }
        if ending == nil {
            child.signalGroup(SIGKILL)
            _ = child.ended(waiting: true)
        }
        #expect(ending == .signalled(SIGKILL))
    }

    @Test func theChildGetsItsArgumentsAndOnlyTheEnvironmentGiven() throws {
        let pipe = try ChildProcess.pipe()
        let child: ChildProcess
        do {
            defer { close(pipe.write) }
            child = try ChildProcess.start("/usr/bin/env", arguments: [], environment: ["ONLY": "this one"], stdout: pipe.write, stderr: pipe.write)
        }
        let output = FileHandle(fileDescriptor: pipe.read, closeOnDealloc: true).readDataToEndOfFile()
        #expect(child.ended(waiting: true) == .exited(0))
        #expect(String(decoding: output, as: UTF8.self) == "ONLY=this one\n")
        #expect(throws: ChildProcess.Failure.self) { try start("/nonexistent/program", []) }
    }
}
