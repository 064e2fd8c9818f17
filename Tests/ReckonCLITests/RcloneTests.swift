import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The rclone wrapper against a real `rclone serve sftp` on 127.0.0.1
/// serving a copy of the drift sample's Drive folder. After every test
/// the served folder has the same bytes and the same modification times.
@Suite struct RcloneTests {
    static let sample = packageRoot.appendingPathComponent("Samples/drift/drive/60dMemo")

    /// Runs `body` against a served copy of `sample` (each memo given its
    /// own modification time, with nanoseconds), and checks afterwards that
    /// nothing in the served folder changed.
    func withServer(
        _ body: (SFTPServer, Rclone, URL) throws -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let root = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let served = root.appendingPathComponent("60dMemo")
        try FileManager.default.copyItem(at: Self.sample, to: served)
        for (index, name) in try memoNames(served).enumerated() {
            setModificationTime(
                served.appendingPathComponent("memos/\(name)"), seconds: 1_700_000_000 + index * 3_607,
                nanoseconds: 123_456_789 * (index + 1) % 1_000_000_000)
        }
        let before = try fingerprint(served)
        let stampsBefore = stamps(served)
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        var rclone = try Rclone(process: testSettings, environment: server.environment)
        rclone.callLimit = .seconds(60)
        try body(server, rclone, served)
        #expect(try fingerprint(served) == before, "the served folder's bytes changed", sourceLocation: sourceLocation)
        #expect(stamps(served) == stampsBefore, "the served folder's times changed", sourceLocation: sourceLocation)
    }

    // MARK: - cat

    @Test(.needs(.rclone)) func catGivesTheExactBytesOfIndexJSON() throws {
        try withServer { _, rclone, served in
            let data = try rclone.cat("reckontest:index.json", limit: 1 << 20)
            #expect(data == (try Data(contentsOf: served.appendingPathComponent("index.json"))))
        }
    }

    @Test(.needs(.rclone)) func catOfAMissingFileIsExit3AndCatCanWriteIntoAFile() throws {
        try withServer { _, rclone, served in
            // rclone 1.60 takes a path that is no file for a folder: exit 3, not 4.
            let failure = #expect(throws: Rclone.Failure.self) { try rclone.cat("reckontest:memos/gone.json", limit: 100) }
            #expect(failure?.exitCode == 3)
            let folder = temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("index.json")
            let output = try rclone.run(["cat", "--", "reckontest:index.json"], stdoutFile: file)
            #expect(output.stdout.isEmpty)
            #expect(try Data(contentsOf: file) == (try Data(contentsOf: served.appendingPathComponent("index.json"))))
            #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
        }
    }

    @Test(.needs(.rclone)) func catWithASmallerLimitGivesOneByteMoreThanTheLimit() throws {
        try withServer { _, rclone, served in
            let whole = try Data(contentsOf: served.appendingPathComponent("index.json"))
            let data = try rclone.cat("reckontest:index.json", limit: 100)
            #expect(whole.count > 101)
            #expect(data.count == 101, "so the caller can tell the file is over the limit")
            #expect(data == whole.prefix(101))
        }
    }

    // MARK: - lsjson

    @Test(.needs(.rclone)) func lsjsonListsTheMemoFilesWithTheirSizesAndTimes() throws {
        try withServer { _, rclone, served in
            let entries = try rclone.lsjson("reckontest:memos", filesOnly: true, hash: false)
            let names = try memoNames(served)
            #expect(entries.map(\.name).sorted() == names)
            #expect(names.count == 7)
            for entry in entries {
                let url = served.appendingPathComponent("memos/\(entry.name)")
                let info = try statOf(url)
                #expect(entry.path == entry.name)
                #expect(!entry.isDir)
                #expect(entry.md5 == nil)
                #expect(entry.size == Int64(info.st_size))
                // sftp gives whole seconds: "2023-11-14T22:13:20Z".
                #expect(String(entry.modTime.prefix(19)) == utcSecond(info.st_mtim.tv_sec), "\(entry.name): \(entry.modTime)")
            }
        }
    }

    @Test(.needs(.rclone)) func lsjsonWithHashGivesTheFilesMD5() throws {
        try withServer { _, rclone, served in
            let entries = try rclone.lsjson("reckontest:memos", filesOnly: true, hash: true)
            #expect(entries.count == 7)
            for entry in entries {
                #expect(entry.md5 == (try md5sum(served.appendingPathComponent("memos/\(entry.name)"))), "\(entry.name)")
            }
        }
    }

    @Test(.needs(.rclone)) func lsjsonWithoutFilesOnlyShowsTheFolder() throws {
        try withServer { _, rclone, _ in
            let entries = try rclone.lsjson("reckontest:", filesOnly: false, hash: false)
            #expect(entries.map(\.name).sorted() == ["index.json", "memos"])
            #expect(entries.first { $0.name == "memos" }?.isDir == true)
        }
    }

    @Test(.needs(.rclone)) func aMissingFolderIsExit3InWords() throws {
        try withServer { _, rclone, _ in
            let failure = #expect(throws: Rclone.Failure.self) { try rclone.lsjson("reckontest:nothere", filesOnly: true, hash: false) }
            #expect(failure?.exitCode == 3)
            #expect(failure?.sentence == "rclone did not find the folder (exit 3: directory not found)")
            #expect(failure?.lastLine.contains("directory not found") == true, "\(failure?.message ?? "")")
        }
    }

    @Test func aRecordedDriveListingWithTwoEntriesOfOneNameKeepsBoth() throws {
        let recorded = """
            [
            {"Path":"a.json","Name":"a.json","Size":12,"MimeType":"application/json","ModTime":"2024-05-01T10:00:00.123Z","IsDir":false,"Hashes":{"md5":"0CC175B9C0F1B6A831C399E269772661"},"ID":"1aaa"},
            {"Path":"a.json","Name":"a.json","Size":13,"MimeType":"application/json","ModTime":"2024-05-01T10:00:01.000Z","IsDir":false,"Hashes":{"md5":"92eb5ffee6ae2fec3ad71c777531578f"},"ID":"1bbb"},
            {"Path":"doc","Name":"doc","Size":-1,"MimeType":"application/vnd.google-apps.document","ModTime":"2024-05-01T10:00:02.000Z","IsDir":false,"ID":"1ccc"}
            ]
            """
        let entries = try Rclone.entries(from: Data(recorded.utf8))
        #expect(entries.map(\.id) == ["1aaa", "1bbb", "1ccc"])
        #expect(entries[0].md5 == "0cc175b9c0f1b6a831c399e269772661")
        #expect(entries[0].modTime == "2024-05-01T10:00:00.123Z")
        #expect(entries[2].size == -1 && entries[2].md5 == nil)
        let bad = #expect(throws: Rclone.Failure.self) { try Rclone.entries(from: Data("[{\"Name\":\"x\"}]".utf8)) }
        #expect(bad?.message == "rclone lsjson gave a listing reckon cannot read: entry 0 lacks Path, Name, Size, ModTime or IsDir")
    }

    // MARK: - copy

    @Test(.needs(.rclone)) func copyFilesFromFetchesExactlyTheNamedFiles() throws {
        try withServer { _, rclone, served in
            let names = Array(try memoNames(served).prefix(2))
            let into = temporaryFolder()
            defer { try? FileManager.default.removeItem(at: into) }
            let transfer = try rclone.copy(from: "reckontest:memos", files: names, into: into)
            #expect(transfer.fetched.sorted() == names)
            #expect(transfer.transfers == 2)
            #expect(transfer.checks == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: into.path).sorted() == names)
            var bytes: Int64 = 0
            for name in names {
                let fetched = try Data(contentsOf: into.appendingPathComponent(name))
                #expect(fetched == (try Data(contentsOf: served.appendingPathComponent("memos/\(name)"))))
                bytes += Int64(fetched.count)
            }
            #expect(transfer.bytes == bytes)
        }
    }

    /// Listing the folder once (`traverse`) or looking each name up, in one transfer or several at
    /// once, rclone fetches the same files, and names each as it lands, before the copy ends.
    @Test(.needs(.rclone)) func copyFetchesTheSameFilesWhicheverWayAndNamesEachAsItLands() throws {
        try withServer { _, rclone, served in
            let names = try memoNames(served)
            let asked = Array(names.dropFirst())
            for (traverse, transfers) in [(false, nil), (true, 1), (true, 8), (false, 3)] as [(Bool, Int?)] {
                let into = temporaryFolder()
                defer { try? FileManager.default.removeItem(at: into) }
                var copier = rclone
                copier.transfers = transfers
                var told: [String] = []
                var whole: [String] = []
                let transfer = try copier.copy(
                    from: "reckontest:memos", files: asked, into: into, checksum: false, traverse: traverse,
                    copied: { name in
                        told.append(name)
                        // Told only once the file is there whole, with the remote's time.
                        if let bytes = try? Data(contentsOf: into.appendingPathComponent(name)),
                            bytes == (try? Data(contentsOf: served.appendingPathComponent("memos/\(name)")))
                        {
                            whole.append(name)
                        }
                    })
                #expect(told.sorted() == asked, "traverse \(traverse), transfers \(transfers ?? 0)")
                #expect(whole.sorted() == asked, "traverse \(traverse), transfers \(transfers ?? 0)")
                #expect(transfer.fetched.sorted() == asked)
                #expect(try FileManager.default.contentsOfDirectory(atPath: into.path).sorted() == asked, "the name not asked for is not fetched")
            }
        }
    }

    @Test func theTransferCountIsTheFlagsElseTheBackendsOwn() throws {
        #expect(Rclone.flagValue("--transfers", in: ["--fast-list", "--transfers", "6"]) == "6")
        #expect(Rclone.flagValue("--transfers", in: ["--transfers=6", "--transfers", "2"]) == "2")
        #expect(Rclone.flagValue("--transfers", in: ["--tpslimit", "--transfers"]) == nil, "a value, not a flag")
        #expect(Rclone.flagValue("--transfers", in: ["--checkers", "6"]) == nil)
        #expect(Rclone.transfers(backend: "sftp") == 8)
        #expect(Rclone.transfers(backend: "local") == 8)
        #expect(Rclone.transfers(backend: "drive") == 4)
        #expect(Rclone.transfers(backend: nil) == 4)
    }

    @Test(.needs(.rclone)) func copySkipsANameTheRemoteDoesNotHaveWithoutAnError() throws {
        try withServer { _, rclone, served in
            let name = try memoNames(served)[0]
            let into = temporaryFolder()
            defer { try? FileManager.default.removeItem(at: into) }
            let transfer = try rclone.copy(from: "reckontest:memos", files: [name, "gone.json"], into: into, checksum: false)
            #expect(transfer.fetched == [name], "the caller compares fetched with what it asked for")
        }
    }

    @Test(.needs(.rclone)) func aCopyStopsAtItsTransferLimitAndAStagedFileIsTheListedOneOnlyWithItsTime() throws {
        try withServer { _, rclone, served in
            let names = try memoNames(served)
            let listed = try rclone.lsjson("reckontest:memos", filesOnly: true, hash: false)
            let into = temporaryFolder()
            defer { try? FileManager.default.removeItem(at: into) }
            // 1 byte allowed: rclone stops, and no file arrives whole.
            #expect(throws: Rclone.Failure.self) {
                try rclone.copy(from: "reckontest:memos", files: names, into: into, checksum: false, maxTransfer: 1)
            }
            for entry in listed { #expect(!RcloneStore.Remote.isStaged(atPath: into.appendingPathComponent(entry.name).path, as: entry)) }

            _ = try rclone.copy(from: "reckontest:memos", files: names, into: into, checksum: false, maxTransfer: 1 << 20)
            for entry in listed {
                #expect(RcloneStore.Remote.isStaged(atPath: into.appendingPathComponent(entry.name).path, as: entry), "\(entry.name)")
            }
            // Another time than the listing's (a file replaced since) is not the listed file.
            let first = into.appendingPathComponent(listed[0].name).path
            var times = [timespec(tv_sec: 0, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, first, &times, 0) == 0)
            #expect(!RcloneStore.Remote.isStaged(atPath: first, as: listed[0]))
        }
    }

    @Test(.needs(.rclone)) func copyTakesNamesAsTheyAreAndRefusesALineBreak() throws {
        let root = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        // Names --files-from would take as comments or trim.
        let names = ["#hash.json", ";semi.json", " lead and trail .json "]
        for name in names { try Data(name.utf8).write(to: root.appendingPathComponent(name)) }
        let before = try fingerprint(root)
        let server = try SFTPServer(serving: root)
        defer { server.stop() }
        let rclone = try Rclone(process: testSettings, environment: server.environment)
        let into = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: into) }
        let transfer = try rclone.copy(from: "reckontest:", files: names, into: into)
        #expect(transfer.fetched.sorted() == names.sorted())
        for name in names { #expect(try read(into.appendingPathComponent(name)) == name) }
        let refused = #expect(throws: Rclone.Failure.self) { try rclone.copy(from: "reckontest:", files: ["a\nb.json"], into: into) }
        #expect(refused?.kind == .refused)
        #expect(refused?.message == #"reckon cannot ask rclone for a file whose name is empty or holds a line break: "a\nb.json""#)
        #expect(try fingerprint(root) == before)
    }

    // MARK: - Faults

    @Test(.needs(.rclone)) func aWrongPasswordIsAFailureWithRclonesLineAndNoPassword() throws {
        try withServer { server, _, _ in
            var environment = server.environment
            environment["RCLONE_CONFIG_RECKONTEST_PASS"] = try SFTPServer.obscure("wrong-secret")
            let rclone = try Rclone(process: testSettings, environment: environment)
            let failure = #expect(throws: Rclone.Failure.self) { try rclone.cat("reckontest:index.json", limit: 1000) }
            #expect(failure?.exitCode == 1)
            #expect(failure?.sentence.hasPrefix("rclone refused the command or could not open the remote (exit 1") == true)
            #expect(failure?.lastLine.contains("unable to authenticate") == true, "\(failure?.message ?? "")")
            let message = failure?.message ?? ""
            #expect(!message.contains("wrong-secret") && !message.contains(server.password))
            #expect(!message.contains(environment["RCLONE_CONFIG_RECKONTEST_PASS"]!))
        }
    }

    @Test(.needs(.rclone)) func aConnectionStringsPasswordNeverReachesAMessage() throws {
        try withServer { server, _, _ in
            let obscured = try SFTPServer.obscure("wrong-secret")
            let remote = ":sftp,host=127.0.0.1,port=\(server.port),user=\(server.user),pass=\(obscured):index.json"
            let rclone = try Rclone(process: testSettings, environment: ["RCLONE_CONFIG": server.environment["RCLONE_CONFIG"]!])
            let failure = #expect(throws: Rclone.Failure.self) { try rclone.cat(remote, limit: 1000) }
            let message = failure?.message ?? ""
            #expect(message.contains("unable to authenticate"), "\(message)")
            #expect(!message.contains(obscured))
            #expect(message.contains("pass=***"), "rclone names the remote, masked: \(message)")
            #expect(Rclone.masked(remote) == ":sftp,host=127.0.0.1,port=\(server.port),user=\(server.user),pass=***:index.json")
        }
    }

    @Test func withoutRcloneOnPathTheSentenceSaysHowToInstallIt() throws {
        let empty = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: empty) }
        let rclone = try Rclone(process: testSettings, environment: ["PATH": empty.path])
        let failure = #expect(throws: Rclone.Failure.self) { try rclone.cat("reckontest:index.json", limit: 10) }
        #expect(failure?.kind == .notInstalled)
        #expect(failure?.message == "rclone is not installed (no rclone on PATH): install rclone (apt-get install rclone)")
        let elsewhere = try Rclone(process: testSettings, executable: empty.appendingPathComponent("rclone").path)
        let missing = #expect(throws: Rclone.Failure.self) { try elsewhere.lsjson("x:", filesOnly: true, hash: false) }
        #expect(missing?.message.hasSuffix(": install rclone (apt-get install rclone)") == true)
    }

    /// A test of the wrapper's own time limit, not of rclone: a stand-in
    /// `rclone` script that waits for a child process, each noting in
    /// `ended` when it runs to its end (after 30 s).
    @Test func aCallOverItsTimeLimitIsStoppedWithItsChildren() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = folder.appendingPathComponent("rclone")
        let pidFile = folder.appendingPathComponent("child.pid")
        let ended = folder.appendingPathComponent("ended")
        try writeScript(
            """
            #!/bin/sh
            (sleep 30; echo child >> '\(ended.path)') &
            echo $! > '\(pidFile.path)'
            echo 'NOTICE: stalled' >&2
            wait
            echo script >> '\(ended.path)'

            """, to: script)
        var rclone = try Rclone(process: testSettings, environment: ["PATH": folder.path + ":/usr/bin:/bin"])
        rclone.callLimit = .milliseconds(500)
        rclone.grace = .milliseconds(500)
        let failure = #expect(throws: Rclone.Failure.self) { try rclone.cat("reckontest:index.json", limit: 10) }
        #expect(failure?.kind == .timedOut)
        #expect(failure?.message == "rclone took longer than the 0.500 s reckon gives one call, and was stopped: NOTICE: stalled")
        #expect(!FileManager.default.fileExists(atPath: ended.path), "the call was waited out: \((try? read(ended)) ?? "")")
        let pid = pid_t(try read(pidFile).trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(gone(pid), "the waiting child of the stand-in was stopped too")
    }

    /// The wrapper's error limit, with a stand-in `rclone` that logs three
    /// errors and then waits, as rclone 1.60 does file after file once a
    /// connection dropped.
    @Test func aCallStopsOnceRcloneLoggedTheErrorLimit() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = folder.appendingPathComponent("rclone")
        // Files that changed while rclone read them say nothing of the connection: they are not counted.
        var lines = ""
        for index in 1...5 {
            lines += #"echo '{"level":"error","msg":"corrupted on transfer: sizes differ 10 vs 12","object":"c\#(index).json"}' >&2"# + "\n"
        }
        for index in 1...3 {
            lines += #"echo '{"level":"error","msg":"Failed to copy: connection refused","object":"m\#(index).json"}' >&2"# + "\nsleep 0.1\n"
        }
        // Run to its end (after 30 s), the stand-in notes it in `ended`.
        let ended = folder.appendingPathComponent("ended")
        try writeScript("#!/bin/sh\n\(lines)sleep 30\necho script >> '\(ended.path)'\n", to: script)
        var rclone = try Rclone(process: testSettings, executable: script.path)
        rclone.errorLimit = 3
        rclone.grace = .milliseconds(500)
        let failure = #expect(throws: Rclone.Failure.self) { try rclone.copy(from: "x:", files: ["a"], into: folder) }
        #expect(failure?.kind == .tooManyErrors)
        #expect(
            failure?.message
                == "rclone was stopped after 3 errors in one call (the remote may have stopped answering): m3.json: Failed to copy: connection refused"
        )
        #expect(!FileManager.default.fileExists(atPath: ended.path), "the call was waited out rather than stopped at the third error")
    }

    /// The real rclone against a server that accepts and never speaks,
    /// started by a script first on PATH that counts its calls and notes in
    /// `ended` when rclone ends on its own.
    @Test(.needs(.rclone)) func aStalledServerIsStoppedAtTheTimeLimit() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 && listen(fd, 8) == 0
            }
        }
        try #require(listening)
        let config = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: config) }
        try Data().write(to: config.appendingPathComponent("rclone.conf"))
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let real = try #require(path.split(separator: ":").map { "\($0)/rclone" }.first { FileManager.default.isExecutableFile(atPath: $0) })
        let calls = config.appendingPathComponent("calls")
        let pidFile = config.appendingPathComponent("rclone.pid")
        let ended = config.appendingPathComponent("ended")
        try writeScript(
            """
            #!/bin/sh
            echo call >> '\(calls.path)'
            '\(real)' "$@" &
            echo $! > '\(pidFile.path)'
            wait $!
            echo "exit $?" >> '\(ended.path)'

            """, to: config.appendingPathComponent("rclone"))
        var rclone = try Rclone(
            process: testSettings,
            environment: [
                "PATH": config.path + ":" + path,
                "RCLONE_CONFIG": config.appendingPathComponent("rclone.conf").path,
                "RCLONE_CONFIG_STALL_TYPE": "sftp", "RCLONE_CONFIG_STALL_HOST": "127.0.0.1",
                "RCLONE_CONFIG_STALL_PORT": String(UInt16(bigEndian: address.sin_port)),
                "RCLONE_CONFIG_STALL_USER": "u", "RCLONE_CONFIG_STALL_PASS": try SFTPServer.obscure("p")
            ])
        rclone.callLimit = .seconds(2)
        rclone.grace = .milliseconds(500)
        let failure = #expect(throws: Rclone.Failure.self) { try rclone.cat("stall:index.json", limit: 10) }
        #expect(failure?.kind == .timedOut)
        #expect(try read(calls) == "call\n", "one call starts one rclone")
        #expect(!FileManager.default.fileExists(atPath: ended.path), "rclone ended on its own: \((try? read(ended)) ?? "")")
        let pid = pid_t(try read(pidFile).trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(gone(pid), "rclone was stopped")
    }

    // MARK: - Words, flags, names

    @Test func everyExitCodeHasItsOwnSentence() {
        let sentences = (0...9).map { Rclone.sentence(exit: Int32($0)) }
        #expect(Set(sentences).count == 10)
        for (code, sentence) in sentences.enumerated() { #expect(sentence.contains("(exit \(code)")) }
        #expect(Rclone.sentence(exit: 5) == "rclone could not reach the remote (exit 5: a temporary error; trying again later may work)")
        #expect(
            Rclone.Failure(.exit(5), Rclone.sentence(exit: 5), lastLine: "dial tcp: i/o timeout").message
                == "rclone could not reach the remote (exit 5: a temporary error; trying again later may work): dial tcp: i/o timeout")
        #expect(Rclone.sentence(exit: 42) == "rclone failed (exit 42: a code rclone 1.60 does not document)")
    }

    @Test func secretsAreMasked() {
        #expect(Rclone.masked(":sftp,host=h,pass=xyz:path") == ":sftp,host=h,pass=***:path")
        #expect(Rclone.masked(":sftp,host=h,user=u,password=xyz,port=22:") == ":sftp,host=h,user=u,password=***,port=22:")
        #expect(Rclone.masked(#":drive,token='{"access_token":"ya29","expiry":"2024"}':60dMemo"#) == ":drive,token=***:60dMemo")
        #expect(
            Rclone.masked(#":s3,key="a,""b",secret_access_key=SK,access_key_id=AK:bucket"#)
                == ":s3,key=***,secret_access_key=***,access_key_id=AK:bucket")
        #expect(Rclone.masked("gdrive,client_secret=cs,client_id=ci:x") == "gdrive,client_secret=***,client_id=ci:x")
        #expect(Rclone.masked(":b2,account=a,key=k:b") == ":b2,account=a,key=***:b")
        #expect(Rclone.masked(":sftp,key_file=/home/u/.ssh/id,key_file_pass=kp:") == ":sftp,key_file=/home/u/.ssh/id,key_file_pass=***:")
        #expect(
            Rclone.masked(#"Failed to create file system for ":sftp,pass=xyz:p": refused"#)
                == #"Failed to create file system for ":sftp,pass=***:p": refused"#)
        #expect(Rclone.masked("--sftp-pass=xyz") == "--sftp-pass=***")
        #expect(
            Rclone.masked(#":drive,token={"access_token":"ya29","n":{"a":1}},scope=drive.readonly:x"#) == ":drive,token=***,scope=drive.readonly:x")
        #expect(Rclone.masked("gdrive:60dMemo") == "gdrive:60dMemo")
        #expect(Rclone.masked("bypass=1,monkey=2") == "bypass=1,monkey=2")
    }

    @Test func aConnectionStringsSecretsMoveIntoTheEnvironment() throws {
        let onTheFly = Rclone.secretsMoved(["lsjson", "--", ":sftp,host=h,user=u,pass=OBSC,port=22:memos", "/tmp/x"])
        let name = try #require(onTheFly.arguments[2].split(separator: ",").first.map(String.init))
        #expect(name.hasPrefix("reckon") && name.count == 22)
        #expect(onTheFly.arguments == ["lsjson", "--", "\(name),host=h,user=u,port=22:memos", "/tmp/x"])
        let variable = "RCLONE_CONFIG_" + name.uppercased()
        #expect(onTheFly.environment == [variable + "_TYPE": "sftp", variable + "_PASS": "OBSC"])
        // The same remote, its secret aside, is named alike; another is not.
        #expect(Rclone.secretsMoved([":sftp,host=h,user=u,pass=OTHER,port=22:"]).arguments == ["\(name),host=h,user=u,port=22:"])
        #expect(Rclone.secretsMoved([":sftp,host=k,pass=OBSC:"]).arguments[0].hasPrefix(name + ",") == false)

        // A named remote's own variables; a quoted value as rclone reads it; a bare key is `true`.
        let named = Rclone.secretsMoved([#"my-drive,client_secret="a,""b:c",scope=drive,key_file_pass='x''y',fast:60dMemo/memos"#])
        #expect(named.arguments == ["my-drive,scope=drive,fast:60dMemo/memos"])
        #expect(named.environment == ["RCLONE_CONFIG_MY_DRIVE_CLIENT_SECRET": #"a,"b:c"#, "RCLONE_CONFIG_MY_DRIVE_KEY_FILE_PASS": "x'y"])

        // What holds no secret parameter is left as it is: a plain remote, a local path, a flag, a path named like a parameter.
        for unchanged in [
            ["gdrive:60dMemo"], ["/tmp/pass=x"], ["--sftp-pass=x"], [":sftp,host=h,key_file=/k:p"], ["gdrive:a,pass=b"], [":local:/x,pass=y"],
            [":sftp,pass=\"unclosed:p"]
        ] {
            #expect(Rclone.secretsMoved(unchanged).arguments == unchanged)
            #expect(Rclone.secretsMoved(unchanged).environment.isEmpty)
        }
        // One rclone could not read is refused rather than passed with its secret.
        let refused = #expect(throws: Rclone.Failure.self) {
            try Rclone(process: testSettings).lsjson(":sftp,pass=\"unclosed:p", filesOnly: true, hash: false)
        }
        #expect(refused?.kind == .refused)
        #expect(refused?.message.contains("reckon puts no secret on rclone's command line") == true)
        #expect(refused?.message.contains("unclosed") == false)
    }

    /// rclone 1.60's own lines (sftp and local sources): each file's last
    /// error is kept, and a source that changed while it was read is told apart.
    @Test func eachFilesErrorIsKeptAndASourceThatChangedIsToldApart() {
        let stderr = Data(
            """
            {"level":"error","msg":"Failed to copy: corrupted on transfer: sizes differ 288 vs 289","object":"a.json","objectType":"*sftp.Object","source":"operations/copy.go:217","time":"2026-12-01T11:54:12Z"}
            {"level":"error","msg":"Failed to copy: can't copy - source file is being updated (size changed from 10 to 12)","object":"b.json","objectType":"*local.Object"}
            {"level":"error","msg":"Failed to copy: permission denied","object":"c.json"}
            {"level":"error","msg":"Failed to copy: permission denied again","object":"c.json"}
            {"level":"info","msg":"Copied (new)","object":"d.json"}
            {"level":"error","msg":"Attempt 1/1 failed with 3 errors and: permission denied"}
            """.utf8)
        let split = Rclone.split(stderr, secrets: [])
        #expect(
            split.objectErrors == [
                "a.json": "Failed to copy: corrupted on transfer: sizes differ 288 vs 289",
                "b.json": "Failed to copy: can't copy - source file is being updated (size changed from 10 to 12)",
                "c.json": "Failed to copy: permission denied again"
            ])
        #expect(split.info.map(\.text) == ["d.json: Copied (new)"])
        #expect(split.objectErrors.filter { Rclone.saysTheSourceChanged($0.value) }.keys.sorted() == ["a.json", "b.json"])
    }

    @Test func onlyReadOnlyFlagsArePassed() throws {
        let allowed = ["--fast-list", "--drive-shared-with-me", "--drive-root-folder-id", "0AbC", "--tpslimit=5", "--bwlimit", "1M"]
        #expect(try Rclone(flags: allowed).flags == allowed)
        for flag in ["--delete-after", "--drive-use-trash", "--sftp-md5sum-command=rm", "-v", "--config=x"] {
            let failure = #expect(throws: Rclone.Failure.self) { try Rclone(flags: [flag]) }
            #expect(failure?.kind == .refused)
            let name = flag.split(separator: "=").first.map(String.init)!
            #expect(
                failure?.message.hasPrefix("reckon does not pass the rclone flag \(name): only flags that change how rclone reads are allowed (")
                    == true, "\(failure?.message ?? "")")
        }
        let noValue = #expect(throws: Rclone.Failure.self) { try Rclone(flags: ["--tpslimit"]) }
        #expect(noValue?.message == "the rclone flag --tpslimit needs a value after it")
        // A value that looks like a flag is a value, passed after its flag.
        let rclone = try Rclone(config: "/etc/r.conf", flags: ["--drive-root-folder-id", "--x"])
        #expect(rclone.globalFlags.suffix(4) == ["--config", "/etc/r.conf", "--drive-root-folder-id", "--x"])
        #expect(rclone.globalFlags.prefix(8) == ["--contimeout", "15000ms", "--timeout", "60000ms", "--low-level-retries", "3", "--retries", "1"])
    }

    @Test func aCacheNameIsTheRemotesHashNotItsSecret() {
        let remote = ":sftp,host=h,pass=xyz:60dMemo"
        let name = Rclone.cacheName(of: remote)
        #expect(name == String(SHA256.hex(of: Data(remote.utf8)).prefix(16)))
        #expect(name.count == 16 && name.allSatisfy(\.isHexDigit))
        #expect(Rclone.cacheName(of: "gdrive:60dMemo") != Rclone.cacheName(of: "gdrive:60dMemo/"))
        #expect(Rclone.joined("gdrive:", "60dMemo") == "gdrive:60dMemo")
        #expect(Rclone.joined("gdrive:60dMemo", "index.json") == "gdrive:60dMemo/index.json")
    }

    @Test(.needs(.rclone)) func theBackendTypeDecidesWhetherAHashIsFree() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("rclone.conf")
        try Data("[gd]\ntype = drive\nscope = drive.readonly\n\n[box]\ntype = sftp\nhost = h\n".utf8).write(to: config)
        let rclone = try Rclone(process: testSettings, config: config.path, environment: ["RCLONE_CONFIG_ENVREMOTE_TYPE": "s3"])
        #expect(try rclone.backendType(of: ":sftp,host=h,pass=x:a") == "sftp")
        #expect(try rclone.backendType(of: ":drive:") == "drive")
        #expect(try rclone.backendType(of: "gd:60dMemo") == "drive")
        #expect(try rclone.backendType(of: "gd,shared_with_me=true:60dMemo") == "drive")
        #expect(try rclone.backendType(of: "box:") == "sftp")
        #expect(try rclone.backendType(of: "envremote:bucket") == "s3")
        #expect(try rclone.backendType(of: "nowhere:") == nil)
        #expect(Rclone.listingCarriesMD5(backend: "drive") && Rclone.listingCarriesMD5(backend: "s3"))
        #expect(!Rclone.listingCarriesMD5(backend: "sftp") && !Rclone.listingCarriesMD5(backend: "local") && !Rclone.listingCarriesMD5(backend: "b2"))
    }
}

// MARK: - Helpers

private func memoNames(_ served: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: served.appendingPathComponent("memos").path).sorted()
}

private func statOf(_ url: URL) throws -> stat {
    var info = stat()
    try #require(lstat(url.path, &info) == 0)
    return info
}

/// Every path under a folder with its modification time in nanoseconds.
private func stamps(_ folder: URL) -> [String: Int] {
    var result: [String: Int] = [:]
    let enumerator = FileManager.default.enumerator(atPath: folder.path)!
    for case let relative as String in enumerator {
        var info = stat()
        if lstat(folder.path + "/" + relative, &info) == 0 { result[relative] = info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec }
    }
    return result
}

private func setModificationTime(_ url: URL, seconds: Int, nanoseconds: Int) {
    let times = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
    _ = utimensat(AT_FDCWD, url.path, times, 0)
}

private func utcSecond(_ seconds: Int) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
}

/// `md5sum` of a file, small hex letters.
private func md5sum(_ url: URL) throws -> String {
    let result = try runArray([url.path], executable: URL(fileURLWithPath: "/usr/bin/md5sum"))
    return String(result.stdout.prefix(32))
}

/// Whether a process is gone (or a zombie), waiting at most 2 s.
private func gone(_ pid: pid_t) -> Bool {
    for _ in 0..<40 {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        if let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "Z" { return true }
        usleep(50_000)
    }
    return false
}
