import Foundation
import ReckonCore
import Testing

/// The built binary on `Samples/`, compared with expectations written by hand.
@Suite struct ReconcileCommandTests {
    @Test func theDriftSampleShowsTheSeedsPicture() throws {
        let result = try reckon("reconcile", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive")
        #expect(result.code == 1)
        #expect(
            result.stdout.hasPrefix(
                """
                Memos on this device
                  Active    4
                  Archived  1

                Memos on Google Drive
                  Active    5 (local 4)
                  Archived  1

                Google Drive has 1 memo that is not on this device. Sync this device to bring it in.

                """))
        #expect(result.stdout.contains("- e4eaaaf2-d142-11e1-b3e4-080027620cdd  only on Google Drive  'Idea from the train'"))
        #expect(!result.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")
        #expect(result.stderr.isEmpty)
    }

    /// The reports of each sample in each language, compared with golden files
    /// reviewed by hand. The clock is fixed with SOURCE_DATE_EPOCH; stage
    /// timings, the one part that varies, are masked.
    @Test(arguments: ["drift", "in-sync", "empty"], ["en", "ja"])
    func outWritesTheGoldenReportFiles(_ sample: String, _ language: String) throws {
        let out = temporaryFolder()
        let result = try reckon(
            "reconcile", "--local", "Samples/\(sample)/device", "--remote", "Samples/\(sample)/drive",
            "--out", out.path, "--lang", language, environment: ["SOURCE_DATE_EPOCH": "1776600000"])
        #expect(result.code == (sample == "drift" ? 1 : 0))
        let golden = packageRoot.appendingPathComponent("Tests/ReckonCLITests/Golden/\(sample)/\(language)")
        for name in ["report.json", "report.md", "report.html", "combined.txt"] {
            // The page's commands name the sides and the output folder by their absolute paths.
            let text = maskTimings(try read(out.appendingPathComponent(name)))
                .replacingOccurrences(of: out.path, with: "/OUT").replacingOccurrences(of: packageRoot.path, with: "/PACKAGE")
            try expectGolden(text, golden.appendingPathComponent(name))
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == [
                "combined.txt", "report.html", "report.json", "report.md", "state"
            ])
    }

    @Test func theReportJSONHasTheDesignedFields() throws {
        let result = try reckon("reconcile", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--json")
        #expect(result.code == 1)
        let report = try json(result.stdout)
        #expect(report["schemaVersion"] as? Int == 1)
        #expect(report["inSync"] as? Bool == false)
        let sides = try #require(report["sides"] as? [[String: Any]])
        #expect(sides.map { $0["role"] as? String } == ["local", "remote"])
        #expect(sides.map { $0["label"] as? String } == ["this device", "Google Drive"])
        #expect(sides.map { $0["status"] as? String } == ["ok", "ok"])
        #expect(sides.map { ($0["counts"] as? [String: Int]) ?? [:] } == [["active": 4, "archived": 1], ["active": 5, "archived": 1]])
        let differences = try #require(report["differences"] as? [[String: Any]])
        #expect(differences.count == 1)
        #expect(differences.first?["id"] as? String == "e4eaaaf2-d142-11e1-b3e4-080027620cdd")
        #expect(differences.first?["sigil"] as? String == "-")
        #expect(differences.first?["kind"] as? String == "only-on-remote")
        #expect((report["quarantined"] as? [Any])?.isEmpty == true)
    }

    @Test func quickFindsTheSameDriftWithoutReadingBodies() throws {
        let result = try reckon("reconcile", "--quick", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--json")
        #expect(result.code == 1)
        let report = try json(result.stdout)
        #expect(report["check"] as? String == "quick")
        #expect((report["differences"] as? [[String: Any]])?.map { $0["sigil"] as? String } == ["-"])
    }

    @Test func inSyncExitsZero() throws {
        let result = try reckon("reconcile", "--local", "Samples/in-sync/device", "--remote", "Samples/in-sync/drive")
        #expect(result.code == 0)
        #expect(result.stdout.contains("  Active    2\n  Archived  1\n\nMemos on Google Drive\n  Active    2\n"))
        #expect(result.stdout.contains("This device and Google Drive agree"))
        #expect(!result.stdout.contains("local "))
    }

    @Test func emptyShowsOneFriendlyLine() throws {
        let result = try reckon("reconcile", "--local", "Samples/empty/device", "--remote", "Samples/empty/drive")
        #expect(result.code == 0)
        #expect(result.stdout == "There are no memos yet, on this device or on Google Drive.\n")
    }

    @Test func aMissingRemoteIsTroubleAndTheDeviceIsStillCounted() throws {
        let out = temporaryFolder()
        let result = try reckon("reconcile", "--local", "Samples/drift/device", "--remote", "Samples/no-such-folder", "--out", out.path)
        #expect(result.code == 2)
        #expect(result.stdout.contains("Memos on this device\n  Active    4\n  Archived  1\n"))
        #expect(result.stdout.contains("Google Drive could not be read: the folder does not exist."))
        let report = try json(read(out.appendingPathComponent("report.json")))
        let sides = try #require(report["sides"] as? [[String: Any]])
        #expect(sides[1]["status"] as? String == "failed")
        #expect(sides[1]["counts"] is NSNull)
        #expect(try read(out.appendingPathComponent("combined.txt")).split(separator: "\n").allSatisfy { $0.hasPrefix("! ") })
    }

    @Test func aNewerSchemaFailsThatSideOnly() throws {
        let remote = temporaryFolder()
        try Data(#"{"schemaVersion": 2, "entries": []}"#.utf8).write(to: remote.appendingPathComponent("index.json"))
        let result = try reckon("reconcile", "--local", "Samples/drift/device", "--remote", remote.path)
        #expect(result.code == 2)
        #expect(result.stdout.contains("has schemaVersion 2, newer than the version 1 this reckon reads"))
        #expect(result.stdout.contains("  Active    4\n"))
    }

    @Test func sideProblemsAreTroubleAndNamed() throws {
        let remote = temporaryFolder()
        let source = packageRoot.appendingPathComponent("Samples/drift/drive/60dMemo")
        try FileManager.default.copyItem(at: source, to: remote.appendingPathComponent("60dMemo"))
        let memo = remote.appendingPathComponent("60dMemo/memos/3f2504e0-4f89-11d3-9a0c-0305e82c3301.json")
        try Data(#"{"id": "3f2504e0-"#.utf8).write(to: memo)
        let deep = try reckon("reconcile", "--local", "Samples/drift/device", "--remote", remote.path)
        #expect(deep.code == 2)
        #expect(deep.stdout.contains("! 3f2504e0-4f89-11d3-9a0c-0305e82c3301  cannot be compared"))
        // The remote was given as the folder holding 60dMemo: the path printed is still the file's own.
        #expect(deep.stdout.contains("error: \(remote.path)/60dMemo/memos/3f2504e0-4f89-11d3-9a0c-0305e82c3301.json: not valid JSON"))
        let quick = try reckon("reconcile", "--quick", "--local", "Samples/drift/device", "--remote", remote.path)
        #expect(quick.code == 1, "the quick check does not open memo files")
    }

    @Test func aJapaneseReportNamesAProblemInJapanese() throws {
        let remote = temporaryFolder()
        try FileManager.default.copyItem(
            at: packageRoot.appendingPathComponent("Samples/drift/drive/60dMemo"), to: remote.appendingPathComponent("60dMemo"))
        let name = "60dMemo/memos/3f2504e0-4f89-11d3-9a0c-0305e82c3301.json"
        try Data(#"{"id": "3f2504e0-"#.utf8).write(to: remote.appendingPathComponent(name))
        let out = temporaryFolder()
        let result = try reckon("reconcile", "--local", "Samples/drift/device", "--remote", remote.path, "--out", out.path, "--lang", "ja")
        #expect(result.code == 2)
        let reason = "メモのファイルが壊れています（not valid JSON"
        #expect(result.stdout.contains("  エラー: \(remote.path)/\(name): \(reason)"), "\(result.stdout)")
        #expect(try read(out.appendingPathComponent("report.md")).contains("- エラー: `\(remote.path)/\(name)`: \(reason)"))
        #expect(try read(out.appendingPathComponent("report.html")).contains("<td>エラー: \(reason)"))
        #expect(try read(out.appendingPathComponent("report.json")).contains("\"message\" : \"not valid JSON"), "the JSON keeps the message alone")
    }

    @Test func theSameInputGivesTheSameBytes() throws {
        let first = temporaryFolder()
        let second = temporaryFolder()
        _ = try reckon("reconcile", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--out", first.path)
        _ = try reckon(
            "reconcile", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--out", second.path,
            environment: ["TZ": "Asia/Tokyo", "LANG": "ja_JP.UTF-8"])
        for name in ["report.json", "combined.txt"] {
            #expect(try Data(contentsOf: first.appendingPathComponent(name)) == Data(contentsOf: second.appendingPathComponent(name)))
        }
        // The pages' commands name the output folder, which is all that differs besides the time.
        func shown(_ folder: URL, _ name: String) throws -> String {
            try maskTimings(read(folder.appendingPathComponent(name))).replacing(/Checked [^<\n]*\./, with: "")
                .replacingOccurrences(of: folder.path, with: "/OUT")
        }
        for name in ["report.md", "report.html"] {
            #expect(try shown(first, name) == shown(second, name))
        }
    }

    @Test func withoutOutNothingIsWrittenAndSourcesAreNeverWritten() throws {
        let samples = packageRoot.appendingPathComponent("Samples")
        let before = try fingerprint(samples)
        let out = temporaryFolder()
        for sample in ["drift", "in-sync", "empty"] {
            _ = try reckon("reconcile", "--local", "Samples/\(sample)/device", "--remote", "Samples/\(sample)/drive")
            _ = try reckon(
                "reconcile", "--local", "Samples/\(sample)/device", "--remote", "Samples/\(sample)/drive", "--out",
                out.appendingPathComponent(sample).path)
            _ = try reckon("counts", "Samples/\(sample)/drive")
        }
        let refused = try reckon(
            "reconcile", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--out", "Samples/drift/drive/60dMemo/reports")
        #expect(refused.code == 64)
        #expect(refused.stderr.contains("reckon never writes into a source"))
        #expect(try fingerprint(samples) == before)
    }
}

@Suite struct OutputTests {
    @Test func anUnusableOutputFolderIsTroubleButTheSummaryIsStillPrinted() throws {
        let blocker = temporaryFolder().appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let result = try reckon("reconcile", "--local", "Samples/drift/device", "--remote", "Samples/drift/drive", "--out", blocker.path)
        #expect(result.code == 2)
        #expect(result.stdout.hasPrefix("Memos on this device\n"))
        #expect(result.stderr == "error: cannot write \(blocker.path): a file stands where a folder must be\n")
        #expect(try read(blocker) == "x")
    }

    @Test func aFailedLocalSideComparesNothingButStillShowsTheRemote() throws {
        let result = try reckon("reconcile", "--local", "Samples/nowhere", "--remote", "Samples/drift/drive", "--json")
        #expect(result.code == 2)
        let report = try json(result.stdout)
        #expect((report["differences"] as? [Any])?.isEmpty == true)
        let sides = try #require(report["sides"] as? [[String: Any]])
        #expect(sides[0]["status"] as? String == "failed")
        #expect(sides[1]["counts"] as? [String: Int] == ["active": 5, "archived": 1])
    }
}
