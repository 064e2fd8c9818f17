import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An rclone remote as a side, against a real `rclone serve sftp` on
/// 127.0.0.1 serving a copy of the drift samples' Drive folder: the same
/// results as the folder read from disk, a cache that downloads only what
/// changed, faults in words, and the served folder never written.
@Suite(.serialized) struct RcloneSideTests {
    let folder = temporaryFolder()
    /// The folder the server serves: it holds `60dMemo/`, as a Drive folder's parent would.
    var served: URL { folder.appendingPathComponent("served") }
    var cache: URL { folder.appendingPathComponent("cache") }
    let store = packageRoot.appendingPathComponent("Samples/store/default.store").path

    init() throws {
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Samples/drift/drive"), to: served)
    }

    /// Runs reckon with the server's remote configured and the cache in this test's folder.
    func reckon(_ arguments: [String], _ server: SFTPServer, environment: [String: String] = [:]) throws -> RunResult {
        try runArray(arguments, environment: server.environment.merging(["XDG_CACHE_HOME": cache.path]) { $1 }.merging(environment) { $1 })
    }

    /// A report's JSON with the remote side's path made the same for both kinds.
    func comparable(_ text: String, remotePath: String) -> String {
        text.replacingOccurrences(of: "\"path\" : \"\(remotePath)\"", with: "\"path\" : \"REMOTE\"")
            .replacingOccurrences(of: "\"label\" : \"\(remotePath)\"", with: "\"label\" : \"REMOTE\"")
    }

    @Test(.needs(.rclone)) func countsQuickAndDeepChecksAndTheExportMatchTheFolderReadFromDisk() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let before = try fingerprint(served)

        let counts = try reckon(["counts", "--json", server.remote], server)
        let countsOnDisk = try reckon(["counts", "--json", served.path], server)
        #expect(counts.code == 0, "\(counts.stderr)")
        #expect(comparable(counts.stdout, remotePath: server.remote) == comparable(countsOnDisk.stdout, remotePath: served.path))

        for mode in [["--quick"], []] {
            let remote = try reckon(["reconcile", "--json", "--local", store, "--remote", server.remote] + mode, server)
            let onDisk = try reckon(["reconcile", "--json", "--local", store, "--remote", served.path] + mode, server)
            #expect(remote.code == 1, "\(remote.stderr)")
            #expect(comparable(remote.stdout, remotePath: server.remote) == comparable(onDisk.stdout, remotePath: served.path))
        }

        for (source, name) in [(server.remote, "from-remote"), (served.path, "from-disk")] {
            let result = try reckon(["export", source, "--out", folder.appendingPathComponent(name).path, "--include-archived"], server)
            #expect(result.code == 0, "\(result.stderr)")
        }
        let fromRemote = try read(folder.appendingPathComponent("from-remote/memos.json"))
        let fromDisk = try read(folder.appendingPathComponent("from-disk/memos.json"))
        #expect(comparable(fromRemote, remotePath: server.remote) == comparable(fromDisk, remotePath: served.path))
        #expect(try fingerprint(served) == before, "the served folder was written")
    }

    /// `reckon show` and the report's page read a memo over rclone as they read it from the folder.
    @Test(.needs(.rclone)) func showAndTheReportPageReadTheRemoteAsTheFolder() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let device = packageRoot.appendingPathComponent("Samples/drift/device").path
        for (id, code) in [("e4eaaaf2", Int32(1)), ("3f2504e0", 0)] {
            let remote = try reckon(["show", id, "--local", device, "--remote", server.remote], server)
            let onDisk = try reckon(["show", id, "--local", device, "--remote", served.path], server)
            #expect(remote.code == code, "\(remote.stdout)\(remote.stderr)")
            #expect(remote.stdout == onDisk.stdout)
        }
        let out = folder.appendingPathComponent("page")
        let result = try reckon(["reconcile", "--local", device, "--remote", server.remote, "--out", out.path], server)
        #expect(result.code == 1, "\(result.stderr)")
        let page = try read(out.appendingPathComponent("report.html"))
        #expect(page.contains("<pre class=\"diff\">A memo app that lets you doubt it.</pre>"), "the first lines, read through the cache")
        #expect(page.contains("--remote &#39;\(server.remote)&#39;"), "the remote as given")
    }

    @Test(.needs(.rclone)) func aPipelineReadsTheRemoteAndKeepsItsCacheInTheReportFolder() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let before = try fingerprint(served)
        func definition(_ remote: String) -> String {
            """
            {"name": "t", "local": {"name": "device", "kind": "store", "path": "\(store)"},
             "remotes": [\(remote)], "reports": {"dir": "reports"}}
            """
        }
        let pipeline = folder.appendingPathComponent("pipeline.json")
        try Data(definition(#"{"name": "drive", "label": "Google Drive", "kind": "rclone", "remote": "reckontest:"}"#).utf8).write(to: pipeline)
        let remote = try reckon(["run", pipeline.path], server)
        #expect(remote.code == 0, "\(remote.stdout)\(remote.stderr)")
        #expect(remote.stdout.contains("Google Drive: 7 memo files downloaded, 0 from the cache."))
        let cached = folder.appendingPathComponent("reports/cache/\(Rclone.cacheName(of: "reckontest:"))/memos")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cached.path).count == 7)
        let remoteReport = try read(folder.appendingPathComponent("reports/report.json"))

        try Data(definition(#"{"name": "drive", "label": "Google Drive", "path": "served"}"#).utf8).write(to: pipeline)
        // The first run's baselines are an input of the second; the two runs are compared from the same (none).
        try FileManager.default.removeItem(at: folder.appendingPathComponent("reports/state"))
        #expect(try reckon(["run", pipeline.path], server).code == 0)
        let diskReport = try read(folder.appendingPathComponent("reports/report.json"))
        #expect(comparable(remoteReport, remotePath: "reckontest:") == comparable(diskReport, remotePath: "served"))
        #expect(!remoteReport.contains("downloaded"), "the cache's figures stay out of report.json")
        #expect(try fingerprint(served) == before)
    }

    /// A definition's `transfers` is the `--transfers` of every download; without it, a `--transfers`
    /// in `flags` is rclone's alone, else sftp gets reckon's 8. However many at once, a first fill
    /// and a nightly run give the report the folder read from disk gives, and a number given
    /// twice, or out of range, is refused before anything runs.
    @Test(.needs(.rclone)) func theTransferCountIsTheDefinitionsAndTheResultsAreTheSameWhateverIt() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let calls = folder.appendingPathComponent("calls.txt")
        let recording = try recordingRclone(in: folder, calls: calls)
        let pipeline = folder.appendingPathComponent("pipeline.json")
        func definition(_ settings: String, cache: String) throws {
            try Data(
                """
                {"name": "t", "local": {"name": "device", "kind": "store", "path": "\(store)"},
                 "remotes": [{"name": "drive", "label": "Google Drive", "kind": "rclone", "remote": "reckontest:"\(settings)}],
                 "reports": {"dir": "reports"}, "cache": {"dir": "\(cache)"}}
                """.utf8
            ).write(to: pipeline)
        }
        /// The report of one run, and the `--transfers` values of its `copy` calls (after `copy`, and before it).
        func run(_ settings: String, cache: String) throws -> (report: String, own: [String], global: [String]) {
            try? FileManager.default.removeItem(at: calls)
            try? FileManager.default.removeItem(at: folder.appendingPathComponent("reports"))
            try definition(settings, cache: cache)
            let result = try reckon(["run", pipeline.path], server, environment: recording)
            #expect(result.code == 0, "\(settings): \(result.stdout)\(result.stderr)")
            let copies = try recordedCalls(calls).filter { $0.contains("copy") }
            #expect(!copies.isEmpty, "\(settings): nothing was downloaded")
            func values(_ arguments: ArraySlice<String>) -> [String] {
                zip(arguments, arguments.dropFirst()).filter { $0.0 == "--transfers" }.map(\.1)
            }
            let own = copies.flatMap { values($0[$0.firstIndex(of: "copy")!...]) }
            let global = copies.flatMap { values($0[..<$0.firstIndex(of: "copy")!]) }
            return (try read(folder.appendingPathComponent("reports/report.json")), own, global)
        }

        let three = try run(#", "transfers": 3"#, cache: "cache-3")
        #expect(three.own == ["3"] && three.global.isEmpty, "\(three.own) \(three.global)")
        let byDefault = try run("", cache: "cache-default")
        #expect(byDefault.own == ["8"] && byDefault.global.isEmpty, "sftp's own number: \(byDefault.own) \(byDefault.global)")
        let one = try run(#", "transfers": 1"#, cache: "cache-1")
        #expect(one.own == ["1"])
        let flagged = try run(#", "flags": ["--transfers", "2"]"#, cache: "cache-flag")
        #expect(flagged.own.isEmpty && flagged.global == ["2"], "the flag is rclone's only number: \(flagged.own) \(flagged.global)")
        for other in [byDefault, one, flagged] { #expect(other.report == three.report) }

        // A nightly run after a change downloads that file alone, with the same count, to the report of the folder on disk.
        let groceries = served.appendingPathComponent("60dMemo/memos/3f2504e0-4f89-11d3-9a0c-0305e82c3301.json")
        try Data(try read(groceries).replacingOccurrences(of: "Milk", with: "Oat milk").utf8).write(to: groceries)
        let nightly = try run(#", "transfers": 3"#, cache: "cache-3")
        #expect(nightly.own == ["3"])
        try definition(#", "transfers": 3"#, cache: "cache-3")
        let onDisk = try reckon(["reconcile", "--json", "--local", store, "--remote", served.path], server)
        let remote = try reckon(["reconcile", "--json", "--local", store, "--remote", server.remote], server)
        #expect(remote.stdout.contains("Oat milk") == onDisk.stdout.contains("Oat milk"))
        #expect(comparable(remote.stdout, remotePath: server.remote) == comparable(onDisk.stdout, remotePath: served.path))
        #expect(nightly.report != three.report, "the change shows")

        for (settings, words) in [
            (#", "transfers": 3, "flags": ["--transfers=2"]"#, "is given twice: once here and once as --transfers in \"flags\"; keep one"),
            (#", "transfers": 0"#, "must be a whole number of parallel downloads from 1 to 64"),
            (#", "transfers": 100"#, "must be a whole number of parallel downloads from 1 to 64")
        ] {
            try definition(settings, cache: "cache-refused")
            let refused = try reckon(["run", pipeline.path], server)
            #expect(refused.code == 64, "\(settings): \(refused.stdout)\(refused.stderr)")
            #expect(refused.stderr.contains("pipeline.json: 'remotes[0].transfers' \(words)"), "\(refused.stderr)")
        }
    }

    @Test(.needs(.rclone)) func theCacheDownloadsOnlyWhatChangedAndWhatWasDamagedInIt() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        func deep() throws -> String {
            let result = try reckon(["reconcile", "--local", store, "--remote", server.remote], server)
            #expect([1, 2].contains(result.code), "\(result.stderr)")
            return result.stdout
        }
        #expect(try deep().contains("Google Drive: 7 memo files downloaded, 0 from the cache."))
        #expect(try deep().contains("Google Drive: 0 memo files downloaded, 7 from the cache."))

        let groceries = served.appendingPathComponent("60dMemo/memos/3f2504e0-4f89-11d3-9a0c-0305e82c3301.json")
        try Data(try read(groceries).replacingOccurrences(of: "Milk", with: "Oat milk").utf8).write(to: groceries)
        let afterEdit = try deep()
        #expect(afterEdit.contains("Google Drive: 1 memo file downloaded, 6 from the cache."))
        #expect(afterEdit.contains("* 3f2504e0-4f89-11d3-9a0c-0305e82c3301  text changed"))

        let cachedBook = cache.appendingPathComponent("reckon/\(Rclone.cacheName(of: server.remote))/memos/16fd2706-8baf-433b-82eb-8c7fada847da.json")
        try Data("damaged in the cache".utf8).write(to: cachedBook)
        #expect(try deep().contains("Google Drive: 1 memo file downloaded, 6 from the cache."))
        #expect(try read(cachedBook) == read(served.appendingPathComponent("60dMemo/memos/16fd2706-8baf-433b-82eb-8c7fada847da.json")))

        let refreshed = try reckon(["reconcile", "--refresh", "--local", store, "--remote", server.remote], server)
        #expect(refreshed.stdout.contains("Google Drive: 7 memo files downloaded, 0 from the cache."))

        // A memo the remote no longer lists leaves the cache, never the remote.
        try FileManager.default.removeItem(at: groceries)
        _ = try deep()
        #expect(
            !FileManager.default.fileExists(atPath: cachedBook.deletingLastPathComponent().appendingPathComponent(groceries.lastPathComponent).path))
    }

    /// Starts reckon, waits until it has listed `memos/`, lets `meanwhile`
    /// change the world, then lets reckon go on; gives its result.
    func reconcile(pausingAfterTheListing server: SFTPServer, meanwhile: () throws -> Void) throws -> RunResult {
        let marker = folder.appendingPathComponent("paused")
        try Data().write(to: marker)
        let waiting = try BackgroundRun(
            ["reconcile", "--local", store, "--remote", server.remote],
            environment: server.environment.merging([
                "XDG_CACHE_HOME": cache.path, "RECKON_TEST_WAIT_AT": "rclone-listed",
                "RECKON_TEST_WAIT_FILE": marker.path
            ]) { $1 })
        // reckon says it is waiting by making `paused.reached` (looked for at most 600 × 50 ms).
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: marker.path + ".reached") { usleep(50_000) }
        #expect(FileManager.default.fileExists(atPath: marker.path + ".reached"), "reckon never reached the listing")
        try meanwhile()
        try FileManager.default.removeItem(at: marker)
        return waiting.wait()
    }

    @Test(.needs(.rclone)) func aMemoWhoseIndexEntryChangedIsFetchedWhileMemosIsBeingListed() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        #expect(
            try reckon(["reconcile", "--local", store, "--remote", server.remote], server).stdout
                .contains("Google Drive: 7 memo files downloaded, 0 from the cache."))
        // Groceries changes, file and entry; another entry gains a change tag while its file stays the same.
        let groceries = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
        let memo = served.appendingPathComponent("60dMemo/memos/\(groceries).json")
        try Data(
            try read(memo).replacingOccurrences(of: "Milk", with: "Oat milk")
                .replacingOccurrences(of: "2026-04-18T09:15:00Z", with: "2026-04-20T08:00:00Z").utf8
        ).write(to: memo)
        let index = served.appendingPathComponent("60dMemo/index.json")
        try Data(
            try read(index).replacingOccurrences(of: "\"2026-04-18T09:15:00Z\"", with: "\"2026-04-20T08:00:00Z\"")
                .replacingOccurrences(of: "\"2026-04-19T23:32:00+09:00\",", with: "\"2026-04-19T23:32:00+09:00\", \"changeTag\": \"v2\",").utf8
        ).write(to: index)

        let remoteCache = cache.appendingPathComponent("reckon/\(Rclone.cacheName(of: server.remote))")
        let result = try reconcile(pausingAfterTheListing: server) {
            // Both changed entries' files were staged before the listing was done.
            let stagings = try FileManager.default.contentsOfDirectory(atPath: remoteCache.path).filter { $0.hasPrefix("staging-") }
            #expect(stagings.count == 1)
            let staged =
                try stagings.first.map { try FileManager.default.contentsOfDirectory(atPath: remoteCache.appendingPathComponent($0).path) } ?? []
            #expect(staged.sorted() == [".children", "\(groceries).json", "7c9e6679-7425-40de-944b-e07fc1f90ae7.json"])
        }
        // Only the file that changed counts as downloaded; the other staged one was the cached file, and no staging is left.
        #expect(result.stdout.contains("Google Drive: 1 memo file downloaded, 6 from the cache."), "\(result.stdout)")
        #expect(result.stdout.contains("* \(groceries)  text changed"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: remoteCache.path).filter { $0.hasPrefix("staging-") }.isEmpty)
        #expect(try read(remoteCache.appendingPathComponent("memos/\(groceries).json")) == read(memo))

        // A killed run's staging folder goes with the next deep run; a running one's stays.
        let holder = try heldReckon()
        defer { holder.release() }
        for pid in ["999999999", String(holder.pid)] {
            try FileManager.default.createDirectory(at: remoteCache.appendingPathComponent("staging-\(pid)"), withIntermediateDirectories: true)
            try Data("half".utf8).write(to: remoteCache.appendingPathComponent("staging-\(pid)/\(groceries).json"))
        }
        #expect(
            try reckon(["reconcile", "--local", store, "--remote", server.remote], server).stdout.contains(
                "0 memo files downloaded, 7 from the cache."))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: remoteCache.path).filter { $0.hasPrefix("staging-") } == ["staging-\(holder.pid)"])
    }

    @Test(.needs(.rclone)) func aServerThatStopsAfterTheListingDegradesTheSideAndTheNextRunGoesOn() throws {
        var server = try SFTPServer(serving: served)
        #expect(try reckon(["reconcile", "--local", store, "--remote", server.remote], server).code == 1)
        for name in ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "886313e1-3b8a-5372-9b90-0c9aee199e5d"] {
            let file = served.appendingPathComponent("60dMemo/memos/\(name).json")
            try Data(try read(file).replacingOccurrences(of: "\"title\"", with: "\"title\" ").utf8).write(to: file)
        }
        let dropped = try reconcile(pausingAfterTheListing: server) { server.stop() }
        #expect(dropped.code == 2, "\(dropped.stdout)\(dropped.stderr)")
        #expect(dropped.stdout.contains("! 3f2504e0-4f89-11d3-9a0c-0305e82c3301"))
        #expect(dropped.stdout.contains("! 886313e1-3b8a-5372-9b90-0c9aee199e5d"))
        #expect(dropped.stdout.contains("memos/886313e1-3b8a-5372-9b90-0c9aee199e5d.json: could not be downloaded from the remote"))
        #expect(dropped.stdout.contains("Google Drive: 0 memo files downloaded, 5 from the cache."))

        server = try SFTPServer(serving: served)
        defer { server.stop() }
        let resumed = try reckon(["reconcile", "--local", store, "--remote", server.remote], server)
        #expect(resumed.code == 1, "\(resumed.stdout)")
        #expect(resumed.stdout.contains("Google Drive: 2 memo files downloaded, 5 from the cache."))
    }

    @Test(.needs(.rclone)) func aMemoDeletedBetweenTheListingAndTheDownloadIsNamed() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let result = try reconcile(pausingAfterTheListing: server) {
            try FileManager.default.removeItem(at: served.appendingPathComponent("60dMemo/memos/886313e1-3b8a-5372-9b90-0c9aee199e5d.json"))
        }
        #expect(result.code == 2, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains(
                "memos/886313e1-3b8a-5372-9b90-0c9aee199e5d.json: could not be downloaded from the remote (rclone did not download it; it may have been deleted since the listing)"
            ),
            "\(result.stdout)")
        #expect(result.stdout.contains("Google Drive: 6 memo files downloaded, 0 from the cache."))
    }

    /// Files rewritten on the remote between the listing and the download
    /// are `!` for that reason alone; every other is downloaded and cached,
    /// so the next run downloads only the rewritten ones.
    @Test(.needs(.rclone)) func filesRewrittenAfterTheListingAreNamedAndTheRestIsCached() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let rewritten = ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "886313e1-3b8a-5372-9b90-0c9aee199e5d"]
        let result = try reconcile(pausingAfterTheListing: server) {
            for name in rewritten {
                let file = served.appendingPathComponent("60dMemo/memos/\(name).json")
                try Data(try read(file).replacingOccurrences(of: "\"title\"", with: "\"title\" ").utf8).write(to: file)
            }
        }
        #expect(result.code == 2, "\(result.stdout)\(result.stderr)")
        let marked = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  ! ") }.map { String($0.dropFirst(4).prefix(36)) }
        #expect(marked.sorted() == rewritten, "\(result.stdout)")
        for name in rewritten {
            #expect(result.stdout.contains("memos/\(name).json: changed on the remote after it was listed (listed as "), "\(result.stdout)")
        }
        #expect(result.stdout.contains("bytes downloaded), so it was not kept; run reckon again to read it"), "\(result.stdout)")
        #expect(result.stdout.contains("Google Drive: 5 memo files downloaded, 0 from the cache."), "\(result.stdout)")
        let cached = cache.appendingPathComponent("reckon/\(Rclone.cacheName(of: server.remote))/memos")
        let kept = try FileManager.default.contentsOfDirectory(atPath: cached.path).sorted()
        #expect(kept.count == 5 && !kept.contains { name in rewritten.contains { name.hasPrefix($0) } }, "\(kept)")

        let next = try reckon(["reconcile", "--local", store, "--remote", server.remote], server)
        #expect(next.code == 1, "\(next.stdout)\(next.stderr)")
        #expect(next.stdout.contains("Google Drive: 2 memo files downloaded, 5 from the cache."), "\(next.stdout)")
    }

    @Test(.needs(.rclone)) func aWrongPasswordAndAMissingRcloneFailTheSideInWords() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let wrong = try reckon(
            ["reconcile", "--local", store, "--remote", server.remote], server,
            environment: ["RCLONE_CONFIG_RECKONTEST_PASS": try SFTPServer.obscure("not-the-password")])
        #expect(wrong.code == 2)
        #expect(wrong.stdout.contains("Google Drive could not be read: rclone"), "\(wrong.stdout)")
        #expect(wrong.stdout.contains("Active    4"), "the device is still counted")
        #expect(!wrong.stdout.contains(server.password) && !wrong.stderr.contains(server.password))

        let empty = folder.appendingPathComponent("no-rclone")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let missing = try reckon(["reconcile", "--local", store, "--remote", server.remote], server, environment: ["PATH": empty.path])
        #expect(missing.code == 2)
        #expect(missing.stdout.contains("install rclone (apt-get install rclone)"), "\(missing.stdout)")
    }

    @Test(.needs(.rclone)) func aSecretInAConnectionStringIsMaskedAndNeverAFileName() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let obscured = try SFTPServer.obscure(server.password)
        let remote = ":sftp,host=127.0.0.1,port=\(server.port),user=\(server.user),pass=\(obscured):"
        let out = folder.appendingPathComponent("out")
        let result = try reckon(["reconcile", "--local", store, "--remote", remote, "--out", out.path], server)
        #expect(result.code == 1, "\(result.stdout)\(result.stderr)")
        for file in ["report.json", "report.md", "report.html"] {
            let text = try read(out.appendingPathComponent(file))
            #expect(!text.contains(obscured), "\(file) holds the secret")
            #expect(text.contains("pass=***"), "\(file) names the remote masked")
        }
        #expect(!result.stdout.contains(obscured))
        let names = try FileManager.default.subpathsOfDirectory(atPath: cache.path)
        #expect(!names.contains { $0.contains(obscured) || $0.contains("pass") })
    }

    /// An `rclone` first on `PATH`, in `folder`, that appends each call's
    /// arguments (one a line, then an empty line) to `calls` and runs the
    /// real rclone: the environment to run reckon with.
    func recordingRclone(in folder: URL, calls: URL) throws -> [String: String] {
        let bin = folder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let script = bin.appendingPathComponent("rclone")
        try writeScript(
            """
            #!/bin/sh
            for argument in "$@"; do printf '%s\\n' "$argument" >> '\(calls.path)'; done
            printf '\\n' >> '\(calls.path)'
            exec '\(try SFTPServer.rclonePath())' "$@"

            """, to: script)
        return ["PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
    }

    /// Every rclone call recorded, each its list of arguments.
    func recordedCalls(_ calls: URL) throws -> [[String]] {
        try read(calls).components(separatedBy: "\n\n").filter { !$0.isEmpty }.map { $0.components(separatedBy: "\n") }
    }

    /// A password given in a connection string, or in a config file, reaches
    /// rclone only through its environment: no argument of any call holds it
    /// or its obscured form, and every command still reads the remote.
    @Test(.needs(.rclone)) func noSecretIsEverOnRclonesCommandLine() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let obscured = try SFTPServer.obscure(server.password)
        let secrets = [server.password, obscured, try #require(server.environment["RCLONE_CONFIG_RECKONTEST_PASS"])]
        let calls = folder.appendingPathComponent("calls.txt")
        let recording = try recordingRclone(in: folder, calls: calls)
        // Only an empty config file: the remote is the connection string alone.
        let empty = ["RCLONE_CONFIG": try #require(server.environment["RCLONE_CONFIG"]), "XDG_CACHE_HOME": cache.path]
        func check(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let recorded = try recordedCalls(calls)
            #expect(recorded.count >= 2, "\(what): rclone was not run through the recording one", sourceLocation: sourceLocation)
            for call in recorded {
                for argument in call {
                    #expect(
                        !secrets.contains { argument.contains($0) } && !argument.contains("pass="), "\(what): \(Rclone.masked(argument))",
                        sourceLocation: sourceLocation)
                }
            }
            try FileManager.default.removeItem(at: calls)
        }

        let remote = ":sftp,host=127.0.0.1,port=\(server.port),user=\(server.user),pass=\(obscured):"
        let environment = empty.merging(recording) { $1 }
        let counts = try runArray(["counts", remote], environment: environment)
        #expect(counts.code == 0, "\(counts.stdout)\(counts.stderr)")
        try check("counts")
        let quick = try runArray(["reconcile", "--quick", "--local", store, "--remote", remote], environment: environment)
        #expect(quick.code == 1, "\(quick.stdout)\(quick.stderr)")
        try check("reconcile --quick")
        let deep = try runArray(["reconcile", "--local", store, "--remote", remote], environment: environment)
        #expect(deep.code == 1, "\(deep.stdout)\(deep.stderr)")
        #expect(deep.stdout.contains("7 memo files downloaded, 0 from the cache."), "\(deep.stdout)")
        try check("reconcile")
        let export = try runArray(["export", remote, "--out", folder.appendingPathComponent("export").path, "--refresh"], environment: environment)
        #expect(export.code == 0, "\(export.stdout)\(export.stderr)")
        #expect(
            try json(read(folder.appendingPathComponent("export/memos.json")))["memos"].map { ($0 as? [Any])?.count } == 5,
            "the sample holds 5 memos not archived")
        try check("export")

        // A remote named in a config file, read by a pipeline.
        let config = folder.appendingPathComponent("rclone.conf")
        try Data("[secretdrive]\ntype = sftp\nhost = 127.0.0.1\nport = \(server.port)\nuser = \(server.user)\npass = \(obscured)\n".utf8)
            .write(to: config)
        let pipeline = folder.appendingPathComponent("pipeline.json")
        try Data(
            """
            {"name": "t", "local": {"name": "device", "kind": "store", "path": "\(store)"},
             "remotes": [{"name": "drive", "kind": "rclone", "remote": "secretdrive:", "config": "\(config.path)"}],
             "reports": {"dir": "reports"}}
            """.utf8
        ).write(to: pipeline)
        let run = try runArray(["run", pipeline.path], environment: empty.merging(recording) { $1 })
        #expect(run.code == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("7 memo files downloaded, 0 from the cache."), "\(run.stdout)")
        try check("run")
    }

    /// Writes to a remote (apply's `copyto`, `moveto`, `deletefile`) keep the password off the command line too.
    @Test(.needs(.rclone)) func applyOverRcloneNeverPutsThePasswordOnTheCommandLine() throws {
        let (pipeline, started) = try driftedSince(servingDrive: true)
        let server = try #require(started)
        defer { server.stop() }
        let calls = folder.appendingPathComponent("calls.txt")
        let environment = server.environment.merging(try recordingRclone(in: folder, calls: calls)) { $1 }
        #expect(try pipeline.reckon(["plan", "p.json"], environment: environment).code == 1)
        let applied = try pipeline.apply(["--yes"], environment: environment)
        #expect(applied.code == 1, "\(applied.stdout)\(applied.stderr)")
        let recorded = try recordedCalls(calls)
        #expect(recorded.contains { $0.contains("moveto") }, "apply wrote through rclone")
        let secrets = [server.password, try #require(server.environment["RCLONE_CONFIG_RECKONTEST_PASS"])]
        for argument in recorded.joined() {
            #expect(!secrets.contains { argument.contains($0) }, "\(argument)")
        }
    }

    @Test(.needs(.rclone)) func aCacheOrOutputInsideALocalRemoteIsRefused() throws {
        let remote = ":local:" + served.path
        let pipeline = folder.appendingPathComponent("pipeline.json")
        try Data(
            """
            {"name": "t", "local": {"name": "device", "kind": "store", "path": "\(store)"},
             "remotes": [{"name": "drive", "kind": "rclone", "remote": "\(remote)"}], "cache": {"dir": "served/cache"}}
            """.utf8
        ).write(to: pipeline)
        let result = try runArray(["validate", pipeline.path])
        #expect(result.code == 64)
        #expect(result.stderr.contains("'cache.dir' is \(served.path)/cache, inside the source folder"), "\(result.stderr)")
        let export = try runArray(["export", remote, "--out", served.appendingPathComponent("export").path])
        #expect(export.code == 64, "\(export.stderr)")
    }

    @Test(.needs(.rclone)) func aCacheWhoseMemosFolderIsALinkFailsTheSideOnceAndWritesNothingThrough() throws {
        let remote = ":local:" + served.path
        let environment = ["XDG_CACHE_HOME": cache.path]
        let arguments = ["reconcile", "--local", store, "--remote", remote]
        #expect(try runArray(arguments, environment: environment).code == 1)
        let cachedMemos = cache.appendingPathComponent("reckon/\(Rclone.cacheName(of: remote))/memos")
        let users = folder.appendingPathComponent("users")
        try FileManager.default.createDirectory(at: users, withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: users.appendingPathComponent("notes.txt"))
        try FileManager.default.removeItem(at: cachedMemos)
        try FileManager.default.createSymbolicLink(at: cachedMemos, withDestinationURL: users)

        let result = try runArray(arguments, environment: environment)
        #expect(result.code == 2)
        #expect(result.stdout.contains("Google Drive could not be read: the cache folder cannot be made"), "\(result.stdout)")
        let linkLines = result.stdout.split(separator: "\n").filter { $0.contains("a link stands where a folder must be") }
        #expect(linkLines.count == 2, "\(result.stdout)")  // the sentence and the one problem
        #expect(try FileManager.default.contentsOfDirectory(atPath: users.path) == ["notes.txt"])
        #expect(try read(users.appendingPathComponent("notes.txt")) == "precious")
    }

    @Test(.needs(.rclone)) func countsNeverDownloadAndTooLargeMemosAreNotDownloaded() throws {
        let remote = ":local:" + served.path
        try Data("{\"schemaVersion\": 1, \"entries\": [,]}".utf8).write(to: served.appendingPathComponent("60dMemo/index.json"))
        let environment = ["XDG_CACHE_HOME": cache.path]
        let counts = try runArray(["counts", remote], environment: environment)
        #expect(counts.code == 2)
        #expect(
            counts.stderr.contains("counts read index.json alone, so run a deep check (reckon reconcile) to count from the memo files"),
            "\(counts.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cache.appendingPathComponent("reckon/\(Rclone.cacheName(of: remote))/memos").path))

        try FileManager.default.removeItem(at: served)
        try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Samples/drift/drive"), to: served)
        let pipeline = folder.appendingPathComponent("pipeline.json")
        try Data(
            """
            {"name": "t", "local": {"name": "device", "kind": "store", "path": "\(store)"},
             "remotes": [{"name": "drive", "kind": "rclone", "remote": "\(remote)"}], "reports": {"dir": "reports"},
             "limits": {"memoBytes": 300}}
            """.utf8
        ).write(to: pipeline)
        let run = try runArray(["run", pipeline.path])
        #expect(run.code == 2)
        #expect(run.stdout.contains("is larger than the limit of 300 bytes, so it is neither kept nor read"), "\(run.stdout)")
        let cached = try FileManager.default.contentsOfDirectory(
            atPath: folder.appendingPathComponent("reports/cache/\(Rclone.cacheName(of: remote))/memos").path)
        let small = try FileManager.default.contentsOfDirectory(atPath: served.appendingPathComponent("60dMemo/memos").path).filter { name in
            ((try? FileManager.default.attributesOfItem(atPath: served.appendingPathComponent("60dMemo/memos/" + name).path)[.size] as? Int) ?? 0)
                <= 300
        }
        #expect(cached.sorted() == small.sorted())
    }

    /// An `index.json` whose listed size is over the limit is refused
    /// before any of it is downloaded: rclone is never asked for it.
    @Test(.needs(.rclone)) func anIndexListedOverTheLimitIsNeverDownloaded() throws {
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let size = try #require(
            try FileManager.default.attributesOfItem(atPath: served.appendingPathComponent("60dMemo/index.json").path)[.size] as? Int)
        let calls = folder.appendingPathComponent("calls.txt")
        let pipeline = folder.appendingPathComponent("pipeline.json")
        try Data(
            """
            {"name": "t", "local": {"name": "device", "kind": "store", "path": "\(store)"},
             "remotes": [{"name": "drive", "kind": "rclone", "remote": "reckontest:"}], "reports": {"dir": "reports"},
             "limits": {"indexBytes": \(size - 1)}}
            """.utf8
        ).write(to: pipeline)
        let run = try reckon(["run", pipeline.path], server, environment: try recordingRclone(in: folder, calls: calls))
        #expect(run.code == 2, "\(run.stdout)\(run.stderr)")
        #expect(
            (run.stdout + run.stderr).contains("60dMemo/index.json: is \(size) bytes, over the limit of \(size - 1) bytes, so it is not downloaded"),
            "\(run.stdout)\(run.stderr)")
        let recorded = try recordedCalls(calls)
        #expect(recorded.contains { $0.contains("lsjson") }, "the remote was listed")
        #expect(!recorded.contains { $0.contains("cat") || $0.contains("copy") }, "\(recorded)")
    }

    @Test func aRemoteWithAControlCharacterIsRefused() throws {
        let pipeline = folder.appendingPathComponent("pipeline.json")
        try Data(
            #"{"name": "t", "local": {"name": "device", "path": "d"}, "remotes": [{"name": "drive", "kind": "rclone", "remote": "t:\u0000x"}]}"#.utf8
        )
        .write(to: pipeline)
        let result = try runArray(["validate", pipeline.path])
        #expect(result.code == 64)
        #expect(
            result.stderr.contains("'remotes[0].remote' must be an rclone remote such as \"gdrive:60dMemo\", with no control character"),
            "\(result.stderr)")
    }

    @Test(.needs(.rclone)) func countsAndExportMaskASecretToo() throws {
        let remote = ":local,password2=SECRETL,pass=OTHER:" + served.path
        let counts = try runArray(["counts", "--json", remote], environment: ["XDG_CACHE_HOME": cache.path])
        let export = try runArray(["export", remote, "--out", folder.appendingPathComponent("e").path], environment: ["XDG_CACHE_HOME": cache.path])
        #expect(export.code == 0, "\(export.stderr)")
        let written = try read(folder.appendingPathComponent("e/memos.json")) + read(folder.appendingPathComponent("e/manifest.json"))
        for text in [counts.stdout, counts.stderr, export.stdout, export.stderr, written] {
            #expect(!text.contains("SECRETL") && !text.contains("OTHER"), "\(text)")
        }
        #expect(counts.stdout.contains("password2=***"))
    }

    @Test func twoFilesOfOneNameInARecordedDriveListingAreNamedAndNeitherIsRead() throws {
        // `rclone lsjson` of a Drive folder holding two files named alike.
        let recorded = Data(
            """
            [
            {"Path":"3f2504e0-4f89-11d3-9a0c-0305e82c3301.json","Name":"3f2504e0-4f89-11d3-9a0c-0305e82c3301.json","Size":301,"ModTime":"2026-04-18T09:15:00.123Z","IsDir":false,"ID":"1AbC"},
            {"Path":"3f2504e0-4f89-11d3-9a0c-0305e82c3301.json","Name":"3f2504e0-4f89-11d3-9a0c-0305e82c3301.json","Size":305,"ModTime":"2026-04-19T10:00:00.000Z","IsDir":false,"ID":"1XyZ"},
            {"Path":"7c9e6679-7425-40de-944b-e07fc1f90ae7.json","Name":"7c9e6679-7425-40de-944b-e07fc1f90ae7.json","Size":200,"ModTime":"2026-04-19T14:32:00.000Z","IsDir":false,"ID":"1QrS"}
            ]
            """.utf8)
        let (unique, problems) = RcloneStore.Remote.unique(try Rclone.entries(from: recorded))
        #expect(unique.map(\.name) == ["7c9e6679-7425-40de-944b-e07fc1f90ae7.json"])
        #expect(
            problems.map { "\($0.kind.rawValue) \($0.path) \($0.id?.value ?? "-"): \($0.message)" } == [
                "duplicate-id memos/3f2504e0-4f89-11d3-9a0c-0305e82c3301.json 3f2504e0-4f89-11d3-9a0c-0305e82c3301: the remote holds 2 files of this name (ids 1AbC and 1XyZ); reckon does not pick one"
            ])
    }
}
