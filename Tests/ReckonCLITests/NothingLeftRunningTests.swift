import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The process ids whose parent is `parent`, from `/proc/*/stat`.
func children(of parent: pid_t) -> [pid_t] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return names.compactMap(pid_t.init).filter { pid in
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return false }
        // After the name: the state, then the parent's id.
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 1 && pid_t(fields[1]) == parent
    }
}

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
    @Test(.needs(.rclone)) func rcloneDiesWithAReckonKilledAtRandomPointsOfADeepRunAndTheNextRunLeavesNoStagingFolder() throws {
        var random = TestSeed.generator()
        let folder = temporaryFolder()
        let served = folder.appendingPathComponent("served")
        // Enough memos that downloading them all (--refresh) keeps rclone busy for a while.
        let memos = (0..<300).map { n in
            MemoSpec(
                id: String(format: "%08X-2222-4000-8000-000000000000", n * 7919), title: "Memo \(n)",
                body: String(repeating: "Line of memo \(n).\n", count: 400))
        }
        try writeMemoFolder(memos, to: served.appendingPathComponent("60dMemo"))
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let cache = folder.appendingPathComponent("cache")
        let environment = server.environment.merging(["XDG_CACHE_HOME": cache.path]) { $1 }
        let arguments = ["reconcile", "--refresh", "--local", served.appendingPathComponent("60dMemo").path, "--remote", server.remote]
        let remoteCache = cache.appendingPathComponent("reckon/\(Rclone.cacheName(of: server.remote))")
        func stagings() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: remoteCache.path)) ?? []).filter { $0.hasPrefix("staging-") }
        }
        var killedWithRclone = 0
        for round in 0..<6 {
            let run = try BackgroundRun(arguments, environment: environment)
            // The kill comes a random time after reckon starts its first child (looked for at most 2000 × 5 ms).
            var seen: Set<pid_t> = []
            for _ in 0..<2000 where seen.isEmpty && kill(run.pid, 0) == 0 {
                seen.formUnion(children(of: run.pid))
                usleep(5000)
            }
            let delay = Int.random(in: 0..<120, using: &random)
            for _ in 0..<delay {
                seen.formUnion(children(of: run.pid))
                usleep(10_000)
            }
            let running = children(of: run.pid)
            seen.formUnion(running)
            kill(run.pid, SIGKILL)
            _ = run.wait()
            if !running.isEmpty { killedWithRclone += 1 }
            // Within 2 seconds no child is left (looked at for at most 40 × 50 ms); a zombie has ended.
            var left = seen
            for _ in 0..<40 where !left.isEmpty {
                left = left.filter { !PrivateFolder.processIsGone($0, running: nil) }
                if !left.isEmpty { usleep(50_000) }
            }
            #expect(left.isEmpty, "round \(round), killed after \(delay * 10) ms: \(left.sorted()) still running")
            let next = try runArray(
                ["reconcile", "--local", served.appendingPathComponent("60dMemo").path, "--remote", server.remote], environment: environment)
            #expect(next.code == 0, "round \(round): \(next.stdout)\(next.stderr)")
            #expect(stagings().isEmpty, "round \(round), killed after \(delay * 10) ms")
        }
        print("reckon was killed with rclone running in \(killedWithRclone) of 6 rounds")
        #expect(killedWithRclone > 0)
    }

    @Test(.needs(.rclone)) func aDeadRunsStagingFolderStaysWhileAnRcloneItRecordedRuns() throws {
        let folder = temporaryFolder()
        let served = folder.appendingPathComponent("served")
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Samples/drift/drive"), to: served)
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let cache = folder.appendingPathComponent("cache")
        let arguments = ["reconcile", "--local", served.appendingPathComponent("60dMemo").path, "--remote", server.remote]
        let environment = server.environment.merging(["XDG_CACHE_HOME": cache.path]) { $1 }
        #expect(try runArray(arguments, environment: environment).code == 0)
        // A dead run's folder whose record names a process still running (sleep, standing for its rclone).
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        let child = try ChildProcess.start("/bin/sleep", arguments: ["30"], environment: [:], stdout: null, stderr: null)
        var reaped = false
        defer {
            if !reaped {
                child.signalGroup(SIGKILL)
                _ = child.ended(waiting: true)
            }
        }
        let staging = cache.appendingPathComponent("reckon/\(Rclone.cacheName(of: server.remote))/staging-999999999")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        child.record(in: staging.appendingPathComponent(".children"), executable: ChildProcess.realPath("/bin/sleep"))
        // (Once it runs sleep: looked at for at most 200 × 10 ms.)
        for _ in 0..<200
        where (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child.pid)/exe")) != ChildProcess.realPath("/bin/sleep") {
            usleep(10_000)
        }
        #expect(try runArray(arguments, environment: environment).code == 0)
        #expect(FileManager.default.fileExists(atPath: staging.path), "kept while a child it recorded runs")
        child.signalGroup(SIGKILL)
        _ = child.ended(waiting: true)
        reaped = true
        #expect(try runArray(arguments, environment: environment).code == 0)
        #expect(!FileManager.default.fileExists(atPath: staging.path), "removed once none runs")
    }

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
