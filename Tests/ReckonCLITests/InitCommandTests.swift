import Foundation
import Testing

@Suite struct InitCommandTests {
    @Test func writesAValidDefinitionWithPathsRelativeToItAndTheLinesThatRunIt() throws {
        let dir = temporaryFolder().appendingPathComponent("pipelines")
        let result = try reckon("init", "--local", "Samples/store/default.store", "--remote", "Samples/drift/drive", "--dir", dir.path)
        #expect(result.code == 0, "\(result.stderr)")
        let file = dir.appendingPathComponent("reckon.json")
        let definition = try json(read(file))
        #expect(definition["name"] as? String == "reckon")
        let local = definition["local"] as! [String: Any]
        #expect(local["kind"] as? String == "store")
        let relative = local["path"] as! String
        #expect(!relative.hasPrefix("/"), "paths are relative to the file")
        #expect(
            dir.appendingPathComponent(relative).standardizedFileURL.path
                == packageRoot.appendingPathComponent("Samples/store/default.store").standardizedFileURL.path)
        #expect((definition["reports"] as! [String: Any])["dir"] as? String == "out/reckon/reports")
        #expect((definition["export"] as! [String: Any])["dir"] as? String == "out/reckon/export")
        #expect(try reckon("validate", file.path).code == 0)
        #expect(result.stdout.contains("15 3 * * * \(reckonBinary.path) run --quiet \(file.path)\n"))
        #expect(result.stdout.contains("ExecStart=\"\(reckonBinary.path)\" run --quiet \"\(file.path)\"\n"))
        #expect(result.stdout.contains("OnCalendar=*-*-* 03:15:00\n"))
        // The definition runs, and its outputs land under out/NAME/ beside it.
        let run = try reckon("run", file.path, "--quiet")
        #expect(run.code == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/reckon/reports/report.json").path))
    }

    @Test func anRcloneRemoteIsWrittenByItsNameAndTheNameOptionNamesTheFile() throws {
        let dir = temporaryFolder()
        // rclone's config holds the remote, as `rclone config` would have left it.
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let config = dir.appendingPathComponent("rclone.conf")
        try Data("[gdrive]\ntype = drive\n".utf8).write(to: config)
        let result = try reckon(
            "init", "--local", "Samples/drift/device", "--remote", "gdrive:60dMemo", "--dir", dir.path, "--name", "phone-1",
            environment: ["XDG_CACHE_HOME": dir.appendingPathComponent("cache").path, "RCLONE_CONFIG": config.path])
        #expect(result.code == 0, "\(result.stderr)")
        let definition = try json(read(dir.appendingPathComponent("phone-1.json")))
        let remote = (definition["remotes"] as! [[String: Any]])[0]
        #expect(remote["kind"] as? String == "rclone")
        #expect(remote["remote"] as? String == "gdrive:60dMemo")
        #expect(remote["path"] == nil)
    }

    @Test func refusesAFileThatExistsASecretAndABadNameWritingNothing() throws {
        let dir = temporaryFolder()
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let existing = dir.appendingPathComponent("reckon.json")
        try Data("{}".utf8).write(to: existing)
        let exists = try reckon("init", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--dir", dir.path)
        #expect(exists.code == 64)
        #expect(exists.stderr.hasPrefix("Error: \(dir.path)/reckon.json exists; reckon init never replaces a definition"))
        #expect(try read(existing) == "{}")

        let secret = try reckon(
            "init", "--local", "Samples/drift/device", "--remote", ":sftp,host=127.0.0.1,user=u,pass=c2VjcmV0:memos", "--dir", dir.path,
            "--name", "other")
        #expect(secret.code == 64)
        #expect(secret.stderr.contains("may hold a secret"))
        #expect(!secret.stderr.contains("c2VjcmV0"), "the secret itself is never shown")
        #expect(secret.stderr.contains("rclone config"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("other.json").path))

        let dead = dir.appendingPathComponent("dead")
        try FileManager.default.createSymbolicLink(atPath: dead.path, withDestinationPath: "nowhere")
        let link = try reckon("init", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--dir", dead.path)
        #expect(link.code == 64)
        #expect(link.stderr.contains("is a link that leads nowhere"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("nowhere").path), "nothing is made through the link")

        let name = try reckon("init", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--dir", dir.path, "--name", "../x")
        #expect(name.code == 64)
        #expect(name.stderr.hasPrefix("Error: The value '../x' is invalid for '--name <name>'"))
    }

    @Test func everyConnectionStringWithParametersIsRefusedWhateverShapeItsSecretTakes() throws {
        let dir = temporaryFolder()
        for remote in [
            ":webdav,url=\"http://u:SECRETPW@127.0.0.1/dav\",vendor=other:60dMemo",
            ":http,url=\"http://127.0.0.1\",headers=\"Authorization,Bearer SECRETPW\":60dMemo",
            "gdrive,client_secret=SECRETPW:60dMemo"
        ] {
            let result = try reckon("init", "--local", "Samples/drift/device", "--remote", remote, "--dir", dir.path)
            #expect(result.code == 64, "\(remote)")
            #expect(!result.stderr.contains("SECRETPW") && !result.stdout.contains("SECRETPW"))
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("reckon.json").path))
        }
    }

    @Test func theLinesItPrintsQuoteAPathThatAShellCronOrSystemdWouldSplit() throws {
        let dir = temporaryFolder().appendingPathComponent("my memos 100%")
        let result = try reckon("init", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--dir", dir.path)
        #expect(result.code == 0, "\(result.stderr)")
        let file = dir.appendingPathComponent("reckon.json").path
        #expect(result.stdout.contains("run --quiet '\(file.replacingOccurrences(of: "%", with: "\\%"))'\n"), "cron: % escaped, quoted")
        #expect(result.stdout.contains("ExecStart=\"\(reckonBinary.path)\" run --quiet \"\(file.replacingOccurrences(of: "%", with: "%%"))\"\n"))
        // The "run it now" line, given to a shell, runs the definition.
        let line = try #require(result.stdout.split(separator: "\n").first { $0.hasSuffix("reckon.json'") && !$0.contains("*") })
        let run = try runTool("sh", ["-c", String(line.drop { $0 == " " }).replacingOccurrences(of: " run ", with: " run --dry-run ")])
        #expect(run.code == 0, "\(line): \(run.stderr)")
    }

    @Test func aSideThatCannotBeReadOrTheSamePlaceTwiceIsRefused() throws {
        let dir = temporaryFolder()
        let missing = try reckon("init", "--local", "Samples/nowhere", "--remote", "Samples/drift/drive", "--dir", dir.path)
        #expect(missing.code == 64)
        #expect(missing.stderr.contains("Samples/nowhere"))
        let same = try reckon("init", "--local", "Samples/drift/drive", "--remote", "Samples/drift/drive", "--dir", dir.path)
        #expect(same.code == 64)
        #expect(same.stderr.contains("the same place"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("reckon.json").path))
    }
}
