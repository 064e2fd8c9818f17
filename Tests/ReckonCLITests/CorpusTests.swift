import Foundation
import ReckonCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

let fixtures = packageRoot.appendingPathComponent("Tests/ReckonCLITests/Fixtures")
let memoA = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
let memoB = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
let memoC = "16FD2706-8BAF-433B-82EB-8C7FADA847DA"

/// One kind of damage in `Fixtures/bad/`, and what reconciling it against
/// `Fixtures/good/` must give.
struct DamageCase: Sendable, CustomTestStringConvertible {
    var name: String
    var exit: Int32
    var status = "ok"
    var message: String?
    var quarantined: [String] = []
    var sigils: [String: String] = [:]
    var testDescription: String { name }
}

let damageCases: [DamageCase] = [
    .init(name: "truncated-memo", exit: 2, message: "not valid JSON", quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"]),
    .init(name: "null-memo", exit: 2, message: "must be a JSON object, found null", quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"]),
    .init(name: "array-index", exit: 2, status: "degraded", message: "must be a JSON object, found an array", quarantined: ["index.json"]),
    .init(name: "truncated-index", exit: 2, status: "degraded", message: "not valid JSON", quarantined: ["index.json"]),
    .init(name: "empty-index", exit: 2, status: "degraded", message: "is empty (0 bytes)", quarantined: ["index.json"]),
    .init(
        name: "wrong-types-memo", exit: 2, message: "'title' must be a string, found a number", quarantined: ["memos/\(memoA).json"],
        sigils: [memoA: "!"]),
    .init(name: "wrong-types-entry", exit: 2, message: "'archivedAt' must be an ISO 8601 date or null, found a number", sigils: [memoA: "!"]),
    .init(name: "invalid-id", exit: 2, message: "id 'not-a-uuid' is not a UUID"),
    .init(name: "path-walking-id", exit: 2, message: "id '../../x' is not a UUID"),
    .init(name: "duplicate-ids", exit: 2, message: "appears again (first at entries[0]); counted once", sigils: [memoA: "!"]),
    .init(name: "bom", exit: 0),
    .init(name: "invalid-utf8", exit: 2, message: "bytes that are not UTF-8 at byte 66", quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"]),
    .init(
        name: "nul-bytes", exit: 2, message: "not valid JSON (a control character (U+0000) inside a string at byte 89; it must be escaped)",
        quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"]),
    .init(name: "long-strings", exit: 1, sigils: [memoA: "*"]),
    .init(name: "deep-nesting", exit: 2, message: "nests JSON deeper than 64 levels", quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"]),
    .init(
        name: "id-mismatch", exit: 2, message: "the file holds id \(memoB.lowercased())", quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"]),
    .init(name: "dangling-entry", exit: 2, message: "index.json lists this memo but its file is missing", sigils: [memoB: "!"]),
    .init(name: "orphan-file", exit: 2, message: "this memo file has no entry in index.json", sigils: [memoC: "!"]),
    .init(name: "future-schema", exit: 2, status: "failed", message: "has schemaVersion 2, newer than the version 1 this reckon reads"),
    .init(name: "empty-memo", exit: 2, message: "is empty (0 bytes)", quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"]),
    // JSON is read strictly and in one way.
    .init(
        name: "repeated-key-entry", exit: 2,
        message: #"entries[0] (id 3f2504e0-4f89-11d3-9a0c-0305e82c3301): the key "modifiedTime" appears twice; the entry is not counted"#,
        sigils: [memoA: "!"]),
    .init(name: "repeated-key-index", exit: 2, status: "degraded", message: #"the key "schemaVersion" appears twice"#, quarantined: ["index.json"]),
    .init(name: "repeated-key-memo", exit: 2, message: #"the key "title" appears twice"#, quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"]),
    .init(
        name: "trailing-comma-index", exit: 2, status: "degraded", message: "not valid JSON (a comma before '}' at byte 381)",
        quarantined: ["index.json"]),
    .init(
        name: "trailing-comma-memo", exit: 2, message: "not valid JSON (a comma before '}' at byte 258)", quarantined: ["memos/\(memoA).json"],
        sigils: [memoA: "!"]),
    .init(name: "utf16-index", exit: 2, status: "degraded", message: "the file is UTF-16, not UTF-8", quarantined: ["index.json"]),
    .init(name: "utf16-memo", exit: 2, message: "the file is UTF-16, not UTF-8", quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"]),
    .init(name: "not-utf8-index", exit: 2, status: "degraded", message: "bytes that are not UTF-8 at byte 212", quarantined: ["index.json"]),
    .init(name: "not-utf8-memo", exit: 2, message: "bytes that are not UTF-8 at byte 274", quarantined: ["memos/\(memoA).json"], sigils: [memoA: "!"])
]

/// Reconciles the good folder with a damaged one and returns the result and report.
func reconcileDamaged(_ remote: URL, out: URL, extra: [String] = []) throws -> (RunResult, [String: Any]) {
    let result = try runArray(
        [
            "reconcile", "--local", fixtures.appendingPathComponent("good").path, "--remote", remote.path,
            "--out", out.path, "--json"
        ] + extra)
    return (result, try json(result.stdout))
}

/// This run's quarantine folder under `out/quarantine/` (the only one).
func quarantineRun(_ out: URL) throws -> URL {
    let quarantine = out.appendingPathComponent("quarantine")
    let runs = try FileManager.default.contentsOfDirectory(atPath: quarantine.path)
    try #require(runs.count == 1)
    return quarantine.appendingPathComponent(runs[0])
}

func remoteSide(_ report: [String: Any]) -> [String: Any] {
    (report["sides"] as? [[String: Any]] ?? []).last ?? [:]
}

func sigils(_ report: [String: Any]) -> [String: String] {
    var result: [String: String] = [:]
    for difference in report["differences"] as? [[String: Any]] ?? [] {
        result[(difference["id"] as? String ?? "").uppercased()] = difference["sigil"] as? String
    }
    return result
}

@Suite struct CorpusTests {
    @Test(arguments: damageCases)
    func eachDamageIsNamedSetAsideAndLeftUntouched(_ damage: DamageCase) throws {
        let remote = fixtures.appendingPathComponent("bad/\(damage.name)")
        let before = try fingerprint(remote)
        let goodBefore = try fingerprint(fixtures.appendingPathComponent("good"))
        let out = temporaryFolder()
        let (result, report) = try reconcileDamaged(remote, out: out)
        #expect(result.code == damage.exit, "\(result.stdout)")
        let side = remoteSide(report)
        #expect(side["status"] as? String == damage.status)
        let messages = (side["problems"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        if let expected = damage.message {
            #expect(messages.contains { $0.contains(expected) }, "\(messages)")
        } else {
            #expect(messages.isEmpty, "\(messages)")
        }
        #expect(sigils(report) == damage.sigils)
        if damage.status == "degraded" {
            #expect(side["countsFrom"] as? String == "memo-files")
            #expect(side["counts"] as? [String: Int] == ["active": 1, "archived": 1], "rebuilt from the memo files")
        }
        let records = report["quarantined"] as? [[String: Any]] ?? []
        #expect(records.compactMap { $0["source"] as? String } == damage.quarantined.map { remote.path + "/" + $0 })
        for (record, inside) in zip(records, damage.quarantined) {
            #expect(record["copy"] as? String == "remote/" + inside, "inside the run's quarantine folder, which the JSON does not name")
            let copy = try quarantineRun(out).appendingPathComponent("remote/" + inside)
            let original = try Data(contentsOf: remote.appendingPathComponent(inside))
            #expect(try Data(contentsOf: copy) == original, "the copy is byte for byte")
            #expect(record["sha256"] as? String == SHA256.hex(of: original))
            let manifest = copy.deletingLastPathComponent().appendingPathComponent(inside.contains("/") ? "../../manifest.json" : "../manifest.json")
                .standardizedFileURL
            #expect(FileManager.default.fileExists(atPath: manifest.path), "\(manifest.path)")
        }
        #expect(try fingerprint(remote) == before, "every byte under the source is unchanged")
        #expect(try fingerprint(fixtures.appendingPathComponent("good")) == goodBefore)
    }

    @Test func aNestedDamagedFileIsNamedAndCopiedFromWhereItIs() throws {
        let remote = temporaryFolder()
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("bad/truncated-memo"), to: remote.appendingPathComponent("60dMemo"))
        let out = temporaryFolder()
        let (result, report) = try reconcileDamaged(remote, out: out)
        #expect(result.code == 2)
        let inside = "60dMemo/memos/\(memoA).json"
        let problems = (remoteSide(report)["problems"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(problems == [inside])
        let records = report["quarantined"] as? [[String: Any]] ?? []
        #expect(records.compactMap { $0["source"] as? String } == [remote.path + "/" + inside])
        #expect(records.first?["copy"] as? String == "remote/" + inside)
        let copy = try quarantineRun(out).appendingPathComponent("remote/" + inside)
        #expect(try Data(contentsOf: copy) == Data(contentsOf: remote.appendingPathComponent(inside)))
    }

    @Test func withoutOutNothingIsCopiedAndTheDamageIsStillNamed() throws {
        let remote = fixtures.appendingPathComponent("bad/truncated-memo")
        let result = try runArray(["reconcile", "--local", fixtures.appendingPathComponent("good").path, "--remote", remote.path])
        #expect(result.code == 2)
        #expect(
            result.stdout.contains("error: Tests/ReckonCLITests/Fixtures/bad/truncated-memo/memos/\(memoA).json: not valid JSON"),
            "shown relative to the current folder")
        #expect(!result.stdout.contains("copied aside"))
    }

    @Test func countsFallBackToTheMemoFilesWhenTheIndexIsDamaged() throws {
        let result = try runArray(["counts", fixtures.appendingPathComponent("bad/truncated-index").path, "--json"])
        #expect(result.code == 2)
        let counts = try json(result.stdout)
        #expect(counts["active"] as? Int == 1)
        #expect(counts["archived"] as? Int == 1)
        #expect(counts["status"] as? String == "degraded")
    }

    @Test func whenTheCopyCannotBeMadeTheOriginalIsUntouchedAndTheReportSaysWhy() throws {
        let remote = fixtures.appendingPathComponent("bad/truncated-memo")
        let before = try fingerprint(remote)
        let out = temporaryFolder()
        try Data("not a folder".utf8).write(to: out.appendingPathComponent("quarantine"))
        let (result, report) = try reconcileDamaged(remote, out: out)
        #expect(result.code == 2)
        #expect((report["quarantined"] as? [Any])?.isEmpty == true)
        let messages = (remoteSide(report)["problems"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(
            messages.contains { $0.hasPrefix("could not be copied aside (cannot write ") && $0.hasSuffix("; the original is untouched") },
            "\(messages)")
        let summary = try read(out.appendingPathComponent("report.md"))
        #expect(summary.contains("could not be copied aside"))
        #expect(try fingerprint(remote) == before)
    }
}

/// Files that must not be read as they are, made at run time (git cannot hold a FIFO).
@Suite struct SpecialFileCorpusTests {
    func copyOfGood() throws -> URL {
        let folder = temporaryFolder().appendingPathComponent("side")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("good"), to: folder)
        return folder
    }

    /// Runs reconcile, killing it if it has not finished after `seconds`,
    /// so that a hang fails the test instead of stopping the suite.
    func reconcileWithDeadline(_ remote: URL, seconds: Double = 60, extra: [String] = []) throws -> (Int32, [String: Any]) {
        let process = Process()
        process.executableURL = reckonBinary
        process.arguments = ["reconcile", "--local", fixtures.appendingPathComponent("good").path, "--remote", remote.path, "--json"] + extra
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let watchdog = DispatchWorkItem { [pid = process.processIdentifier] in kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        #expect(process.terminationReason == .exit, "reckon was killed after \(seconds) s: it hung")
        return (process.terminationStatus, (try? json(String(decoding: data, as: UTF8.self))) ?? [:])
    }

    func messages(_ report: [String: Any]) -> [String] {
        (remoteSide(report)["problems"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
    }

    @Test func aFIFOWhereAMemoShouldBeDoesNotHang() throws {
        let remote = try copyOfGood()
        let path = remote.appendingPathComponent("memos/\(memoA).json").path
        unlink(path)
        #expect(mkfifo(path, 0o644) == 0)
        let (code, report) = try reconcileWithDeadline(remote)
        #expect(code == 2)
        #expect(messages(report).contains("is a FIFO, not a regular file"))
        #expect(sigils(report) == [memoA: "!"])
    }

    @Test func aFIFOWhereTheIndexShouldBeFallsBackToTheMemoFiles() throws {
        let remote = try copyOfGood()
        let path = remote.appendingPathComponent("index.json").path
        unlink(path)
        #expect(mkfifo(path, 0o644) == 0)
        let (code, report) = try reconcileWithDeadline(remote)
        #expect(code == 2)
        #expect(remoteSide(report)["status"] as? String == "degraded")
        #expect(remoteSide(report)["counts"] as? [String: Int] == ["active": 1, "archived": 1])
    }

    @Test func aLinkIsReportedAndNeverFollowed() throws {
        let remote = try copyOfGood()
        let outside = temporaryFolder().appendingPathComponent("secret.json")
        try Data("{\"secret\": true}".utf8).write(to: outside)
        let path = remote.appendingPathComponent("memos/\(memoA).json")
        try FileManager.default.removeItem(at: path)
        try FileManager.default.createSymbolicLink(at: path, withDestinationURL: outside)
        let (code, report) = try reconcileWithDeadline(remote)
        #expect(code == 2)
        #expect(messages(report).contains("is a link; links are not followed"))
        #expect(sigils(report) == [memoA: "!"])
        #expect(try read(outside) == "{\"secret\": true}")
    }

    @Test func aFolderAndASocketWhereMemosShouldBeAreReported() throws {
        let remote = try copyOfGood()
        try FileManager.default.removeItem(at: remote.appendingPathComponent("memos/\(memoA).json"))
        try FileManager.default.createDirectory(at: remote.appendingPathComponent("memos/\(memoA).json"), withIntermediateDirectories: false)
        let socketPath = remote.appendingPathComponent("memos/\(memoB).json").path
        try FileManager.default.removeItem(atPath: socketPath)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            socketPath.utf8CString.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(buffer.count - 1))) }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        defer { close(fd) }
        try #require(bound == 0, "the test could not make a socket")
        let (code, report) = try reconcileWithDeadline(remote)
        #expect(code == 2)
        #expect(messages(report).contains("is a folder, not a regular file"))
        #expect(messages(report).contains("is a socket, not a regular file"))
        #expect(sigils(report) == [memoA: "!", memoB: "!"])
    }

    @Test func aFileOverTheLimitIsNotRead() throws {
        let folder = temporaryFolder()
        let good = fixtures.appendingPathComponent("good").path
        let definition = """
            {"local": {"path": "\(good)"}, "remotes": [{"path": "\(good)"}], "limits": {"memoBytes": 100}, "reports": {"dir": "r"}}
            """
        try Data(definition.utf8).write(to: folder.appendingPathComponent("p.json"))
        let result = try runArray(["run", folder.appendingPathComponent("p.json").path, "--json"])
        #expect(result.code == 2)
        let report = try json(result.stdout)
        let text = String(describing: report["sides"] ?? "")
        #expect(text.contains("bytes, over the limit of 100 bytes"))
    }
}
