import Foundation
import ReckonCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The image from the top-level Containerfile, and the Indexed Job on the
/// Operations page run in it as Kubernetes would run its completions.
@Suite struct ContainerFleetTests {
    /// The Job's manifest: the page's one `yaml` block of a Kubernetes
    /// object (the other holds Prometheus' alert rules).
    static func manifest() throws -> IndexedJob {
        let page = try read(FleetTests.operationsPage)
        let blocks = page.components(separatedBy: "```yaml\n").dropFirst().compactMap { $0.components(separatedBy: "\n```").first }
            .filter { $0.contains("\nkind: ") }
        #expect(blocks.count == 1, "the Operations page has one yaml block of a Kubernetes object, the Job's manifest")
        let block = try #require(blocks.first)
        return try IndexedJob(readYAML(block))
    }

    @Test func theOperationsPageHoldsAnIndexedJobOfFourShardsRunAsTheImagesUser() throws {
        let job = try Self.manifest()
        #expect(job.completions == 4)
        #expect(job.args.contains("$(JOB_COMPLETION_INDEX)/\(job.completions)"), "each completion runs its shard of N = completions")
        let shard = try #require(job.args.firstIndex(of: "--shard")) + 1
        #expect((0..<4).map { job.arguments(index: $0)[shard] } == ["0/4", "1/4", "2/4", "3/4"])
        #expect(job.user == imageUser.uid && job.group == imageUser.gid && job.runAsNonRoot)
        #expect(job.readOnlyRootFilesystem && !job.allowPrivilegeEscalation && job.dropsAllCapabilities)
        let tmp = try #require(job.environment.first { $0.name == "TMPDIR" }?.value)
        #expect(job.mounts.contains { $0.path == tmp && job.volumes[$0.volume] == .emptyDir }, "TMPDIR is an emptyDir")
        let fleet = try #require(job.args.last)
        #expect(job.mounts.contains { $0.path == fleet && $0.readOnly && $0.subPath == "fleet" }, "the fleet is mounted read-only")
    }

    @Test func theManifestReaderReadsWhatKubernetesReadsAndRefusesTheRest() throws {
        let text = """
            a: 1   # a comment
            b:
              - x
              - { k: "v # not a comment", l: [1, 'it''s'] }
              - name: n
                value: "a\\"b"
            c:
            - "$(X)"
            d: {}
            """
        let value = try readYAML(text)
        #expect(value["a"] == .scalar("1"))
        #expect(value["b"]?.items?[0] == .scalar("x"))
        #expect(value["b"]?.items?[1] == .mapping(["k": .scalar("v # not a comment"), "l": .sequence([.scalar("1"), .scalar("it's")])]))
        #expect(value["b"]?.items?[2] == .mapping(["name": .scalar("n"), "value": .scalar("a\"b")]))
        #expect(value["c"] == .sequence([.scalar("$(X)")]))
        #expect(value["d"] == .mapping([:]))
        for bad in ["a: &anchor 1", "a: 1\na: 2", "a: |\n  text", "a:\n\tb: 1", "a: [1, 2", "a:\n  b: 1\n c: 2"] {
            #expect(throws: YAMLError.self, "\(bad)") { try readYAML(bad) }
        }
        // As Kubernetes expands $(VAR) in args: $$ is $, an unknown name stays.
        let environment = ["JOB_COMPLETION_INDEX": "2"]
        #expect(expandKubernetesReferences("$(JOB_COMPLETION_INDEX)/4", environment) == "2/4")
        #expect(expandKubernetesReferences("$$(JOB_COMPLETION_INDEX) $(NOPE) $x $", environment) == "$(JOB_COMPLETION_INDEX) $(NOPE) $x $")
    }

    @Test(.needs(.root, .podman, .runc, .ldd, .rclone, .releaseBuild))
    func theImageHoldsReckonItsLibrariesRcloneTheCABundleAndItsUserAndNoShell() throws {
        let context = try imageContext.get()
        let podman = try Podman()
        defer { podman.removeEverything() }
        let tag = "localhost/reckon-test:image"
        try podman.build(context, tag: tag)
        let config = try podman(["image", "inspect", "--format", "{{json .Config}}", tag]).stdout
        let settings = try json(config)
        #expect(settings["User"] as? String == "\(imageUser.uid):\(imageUser.gid)")
        #expect(settings["Entrypoint"] as? [String] == ["/usr/local/bin/reckon"])

        // Every file in the image, by its path there: what the context holds, and nothing else.
        let mounted = URL(fileURLWithPath: try podman(["image", "mount", tag]).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        defer { _ = try? podman.run(["image", "unmount", tag]) }
        var files: Set<String> = []
        let walker = FileManager.default.enumerator(atPath: mounted.path)
        while let path = walker?.nextObject() as? String {
            if FileKind(path: mounted.appendingPathComponent(path).path) != .directory { files.insert("/" + path) }
        }
        #expect(files == context.files)
        for shell in ["/bin/sh", "/usr/bin/sh", "/bin/bash", "/bin/busybox"] { #expect(!files.contains(shell)) }
        #expect(files.contains("/etc/ssl/certs/ca-certificates.crt") && files.contains("/usr/bin/rclone"))
        let passwd = try read(mounted.appendingPathComponent("etc/passwd"))
        #expect(passwd == "reckon:x:\(imageUser.uid):\(imageUser.gid):reckon:/nonexistent:/nonexistent\n")

        // Both programs start in it, as its user, on a read-only root.
        let run = ["run", "--rm", "--pull=never", "--network=none", "--read-only", "--read-only-tmpfs=false"]
        let version = try podman(run + [tag, "--version"])
        let hostVersion = try runArray(["--version"])
        #expect(version.stdout == hostVersion.stdout, "the image's reckon is this one")
        let rclone = try podman(run + ["--entrypoint", "/usr/bin/rclone", tag, "version"])
        #expect(rclone.stdout.hasPrefix("rclone v"))
    }

    /// The users whose folders the fleet checks: in-sync or drifted copies of
    /// the samples. Over four shards, by FNV-1a 64 of the name, they fall
    /// 1, 1, 4 and 2 to shards 0 to 3. `farid`'s drive is read through rclone.
    static let users: [(name: String, pair: String)] = [
        ("ana", "in-sync"), ("ben", "drift"), ("chloe", "in-sync"), ("dev", "drift"),
        ("emi", "drift"), ("farid", "drift"), ("gus", "in-sync"), ("hana", "in-sync")
    ]

    /// Fills the data volume: `users/<name>/{device,drive}` and a definition
    /// for each user in `fleet/`, every path absolute under `/data`, as the
    /// Operations page says; everything owned by the image's user.
    static func fillDataVolume(_ data: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: data.appendingPathComponent("fleet"), withIntermediateDirectories: true)
        for (name, pair) in users {
            let folder = data.appendingPathComponent("users/\(name)")
            try manager.createDirectory(at: folder, withIntermediateDirectories: true)
            for side in ["device", "drive"] {
                try manager.copyItem(atPath: "\(FleetFolder.samples)/\(pair)/\(side)", toPath: folder.appendingPathComponent(side).path)
            }
            let drive =
                name == "farid"
                ? #"{"name": "drive", "kind": "rclone", "remote": ":local:/data/users/farid/drive"}"#
                : #"{"name": "drive", "path": "/data/users/\#(name)/drive"}"#
            let definition = """
                {"name": "\(name)", "local": {"name": "device", "path": "/data/users/\(name)/device"},
                 "remotes": [\(drive)],
                 "reports": {"dir": "/data/out/\(name)/reports"},
                 "export": {"from": "drive", "formats": ["json", "markdown", "zip"], "includeArchived": true,
                            "dir": "/data/out/\(name)/exports", "keep": 14}}

                """
            try Data(definition.utf8).write(to: data.appendingPathComponent("fleet/\(name).json"))
        }
        try chownTree(data, uid: uid_t(imageUser.uid), gid: gid_t(imageUser.gid))
    }

    @Test(.needs(.root, .podman, .runc, .ldd, .rclone, .releaseBuild))
    func theManifestsFourCompletionsRunEveryPipelineOnceAsKubernetesWould() throws {
        let job = try Self.manifest()
        let context = try imageContext.get()
        let podman = try Podman()
        defer { podman.removeEverything() }
        // The image under the manifest's own name, in this test's storage only.
        try podman.build(context, tag: job.image)

        let root = scratchFolder("job")
        var claims: [String: URL] = [:]
        for case .claim(let claim) in job.volumes.values {
            claims[claim] = root.appendingPathComponent("volumes/\(claim)")
            try FileManager.default.createDirectory(at: claims[claim]!, withIntermediateDirectories: true)
        }
        let data = try #require(claims["reckon-data"], "the manifest's data volume is the claim reckon-data")
        try Self.fillDataVolume(data)
        let fleet = try fingerprint(data.appendingPathComponent("fleet"))
        let users = try fingerprint(data.appendingPathComponent("users"))

        var ran: [String: Int] = [:]
        for index in 0..<job.completions {
            var arguments = ["run", "--rm", "--pull=never", "--network=none", "--user", "\(job.user):\(job.group)"]
            #expect(job.user != 0 || !job.runAsNonRoot)
            if let folder = job.workingDir { arguments += ["--workdir", folder] }
            if job.readOnlyRootFilesystem { arguments += ["--read-only", "--read-only-tmpfs=false"] }
            if !job.allowPrivilegeEscalation { arguments += ["--security-opt", "no-new-privileges"] }
            if job.dropsAllCapabilities { arguments += ["--cap-drop", "all"] }
            for (name, value) in job.environment(index: index).sorted(by: { $0.key < $1.key }) { arguments += ["--env", "\(name)=\(value)"] }
            for mount in job.mounts {
                var source: URL
                switch job.volumes[mount.volume]! {
                case .claim(let claim): source = claims[claim]!
                case .emptyDir:
                    // A new empty folder for each pod, writable by all, as Kubernetes makes one.
                    source = root.appendingPathComponent("emptyDir-\(index)-\(mount.volume)")
                    try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
                    chmod(source.path, 0o777)
                }
                if let subPath = mount.subPath { source.appendPathComponent(subPath) }
                arguments += ["--mount", "type=bind,source=\(source.path),destination=\(mount.path)\(mount.readOnly ? ",ro" : "")"]
            }
            arguments += [job.image] + job.arguments(index: index)

            let before = try reportedPipelines(data)
            let result = try podman.run(arguments)
            #expect(result.code == 0, "completion \(index) succeeds: \(result.stderr)")
            #expect(result.stderr.isEmpty, "completion \(index): \(result.stderr)")
            let shard = Self.users.filter { fnv1a64($0.name) % UInt64(job.completions) == UInt64(index) }
            let expected = Set(shard.map(\.name))
            #expect(try reportedPipelines(data).subtracting(before) == expected, "completion \(index) ran shard \(index)/\(job.completions)")
            // Its log: a line for each pipeline it ran, then the tally.
            let width = shard.map(\.name.count).max() ?? 0
            var lines = shard.map { name, pair in
                name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + (pair == "drift" ? "drift: 1 difference" : "in sync: 2 active, 1 archived") + "; reports in out/\(name)/reports\n"
            }
            let drifted = shard.filter { $0.pair == "drift" }.count
            let tally = [(shard.count - drifted, "in sync"), (drifted, "drift")].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            lines.append(
                "\(shard.count) of \(Self.users.count) pipelines (shard \(index)/\(job.completions)): \(tally.joined(separator: ", ")); exit 0\n")
            #expect(result.stdout == lines.joined(), "completion \(index)")
            for name in try reportedPipelines(data).subtracting(before) { ran[name, default: 0] += 1 }
        }
        #expect(ran == Dictionary(uniqueKeysWithValues: Self.users.map { ($0.name, 1) }), "every pipeline ran exactly once")

        // What each wrote is what a run of the same pipeline on this machine writes.
        let host = scratchFolder("host")
        for (name, pair) in Self.users {
            let out = data.appendingPathComponent("out/\(name)")
            #expect(try read(out.appendingPathComponent("reports/history.jsonl")).split(separator: "\n").count == 1)
            let report = try json(read(out.appendingPathComponent("reports/report.json")))
            #expect(report["pipeline"] as? String == name)
            #expect(report["outcome"] as? String == pair, "\(name) compares the \(pair) samples")
            let expectedCombined = try hostCombined(pair: pair, in: host.appendingPathComponent(name))
            #expect(try read(out.appendingPathComponent("reports/combined.txt")) == expectedCombined, "\(name)")
            let export = out.appendingPathComponent("exports/latest")
            let verify = try runArray(["verify", export.path])
            #expect(verify.code == 0, "\(name)'s export verifies: \(verify.stdout)\(verify.stderr)")
            let hostExport = host.appendingPathComponent("\(name)/export")
            let exported = try runArray([
                "export", "\(FleetFolder.samples)/\(pair)/drive", "--out", hostExport.path, "--format", "json,markdown,zip", "--include-archived"
            ])
            #expect(exported.code == 0, "\(exported.stderr)")
            // memos.json and the zip's manifest name the source as each run saw it, so
            // the memos are compared, and the zip is checked by verify.
            func memos(_ folder: URL) throws -> Data {
                let memos = try json(read(folder.appendingPathComponent("memos.json")))["memos"] ?? []
                return try JSONSerialization.data(withJSONObject: memos, options: [.sortedKeys])
            }
            #expect(try memos(export) == memos(hostExport), "\(name)'s memos.json holds the host's memos")
            #expect(
                try fingerprint(export.appendingPathComponent("markdown")) == fingerprint(hostExport.appendingPathComponent("markdown")),
                "\(name)'s Markdown is the host's")
        }
        // Written as the manifest's user; the fleet and the users' folders untouched.
        try expectOwned(by: job.user, data.appendingPathComponent("out"))
        #expect(try fingerprint(data.appendingPathComponent("fleet")) == fleet)
        #expect(try fingerprint(data.appendingPathComponent("users")) == users)
    }

    /// The pipelines whose report folder holds a report.
    func reportedPipelines(_ data: URL) throws -> Set<String> {
        let out = data.appendingPathComponent("out")
        guard FileManager.default.fileExists(atPath: out.path) else { return [] }
        return Set(
            try FileManager.default.contentsOfDirectory(atPath: out.path).filter {
                FileManager.default.fileExists(atPath: out.appendingPathComponent("\($0)/reports/report.json").path)
            })
    }

    /// The `combined.txt` the host's reckon writes for a sample pair.
    func hostCombined(pair: String, in folder: URL) throws -> String {
        let result = try runArray([
            "reconcile", "--local", "\(FleetFolder.samples)/\(pair)/device", "--remote", "\(FleetFolder.samples)/\(pair)/drive", "--out",
            folder.path
        ])
        #expect(result.code == (pair == "drift" ? 1 : 0), "\(result.stderr)")
        return try read(folder.appendingPathComponent("combined.txt"))
    }

    /// Expects every file and folder under `folder` to belong to `uid`.
    func expectOwned(by uid: Int, _ folder: URL) throws {
        let walker = FileManager.default.enumerator(atPath: folder.path)
        while let path = walker?.nextObject() as? String {
            var info = stat()
            guard lstat(folder.appendingPathComponent(path).path, &info) == 0 else { continue }
            #expect(Int(info.st_uid) == uid, "\(path) belongs to \(info.st_uid)")
        }
    }
}

/// Gives `folder` and everything under it to `uid`:`gid`, never following a link.
func chownTree(_ folder: URL, uid: uid_t, gid: gid_t) throws {
    guard lchown(folder.path, uid, gid) == 0 else {
        throw ContainerSetupError(description: "\(folder.path) cannot be given to \(uid): \(String(cString: strerror(errno)))")
    }
    let walker = FileManager.default.enumerator(atPath: folder.path)
    while let path = walker?.nextObject() as? String {
        let url = folder.appendingPathComponent(path)
        guard lchown(url.path, uid, gid) == 0 else {
            throw ContainerSetupError(description: "\(url.path) cannot be given to \(uid): \(String(cString: strerror(errno)))")
        }
    }
}
