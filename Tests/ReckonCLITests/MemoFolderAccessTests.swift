import Foundation
import TestSupport
import Testing

@testable import ReckonCore

#if canImport(Glibc)
    import Glibc
#endif

/// Reading and writing memo folders for apply and undo, on real folders and
/// over a real `rclone serve sftp`; and the per-target lock.
@Suite struct MemoFolderAccessTests {
    static let idA = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    static let idB = "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
    static let index = Data(#"{"schemaVersion": 1, "entries": []}"#.utf8)

    /// A memo folder with index.json only (no memos/), and its side.
    func folder() throws -> (URL, SideSpec) {
        let url = temporaryFolder()
        try Self.index.write(to: url.appendingPathComponent("index.json"))
        return (url, SideSpec(role: .remote, name: "drive", label: "Drive", path: "drive", kind: .folder(url)))
    }

    func names(_ url: URL) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() }

    func reason(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as MemoFolderError {
            return error.description
        } catch {
            return "unexpected \(error)"
        }
    }

    // MARK: - On disk

    @Test func writeCreatesMemosAndReplacesAFileWithoutTruncatingTheOldOne() throws {
        let (url, side) = try folder()
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try MemoFolderWriter(side, grant: WriteGrant())
        let path = "memos/\(Self.idA).json"
        let file = url.appendingPathComponent(path)
        try writer.write(Data("old bytes".utf8), to: path, expecting: nil)
        #expect(try Data(contentsOf: file) == Data("old bytes".utf8))
        chmod(file.path, 0o600)

        // A second name for the old file's inode: the write must leave those bytes alone.
        let keeper = url.appendingPathComponent("keeper")
        #expect(link(file.path, keeper.path) == 0)
        try writer.write(Data("new bytes, longer".utf8), to: path, expecting: SHA256.hex(of: Data("old bytes".utf8)))
        #expect(try Data(contentsOf: file) == Data("new bytes, longer".utf8))
        #expect(try Data(contentsOf: keeper) == Data("old bytes".utf8))
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600, "the permissions are kept")
        #expect(names(url.appendingPathComponent("memos")) == ["\(Self.idA).json"], "no temporary file is left")

        try writer.write(Data("{}".utf8), to: "index.json", expecting: SHA256.hex(of: Self.index))
        #expect(try Data(contentsOf: url.appendingPathComponent("index.json")) == Data("{}".utf8))
        #expect(names(url) == ["index.json", "keeper", "memos"])
    }

    @Test func readGivesBytesAndTagsAndNilForWhatIsAbsent() throws {
        let (url, side) = try folder()
        defer { try? FileManager.default.removeItem(at: url) }
        let reader = try MemoFolderReader(side)
        // No memos/ at all: the memo is absent, not an error.
        let before = try reader.read(["index.json", "memos/\(Self.idA).json"])
        #expect(before["memos/\(Self.idA).json"] == .some(nil))
        let index = try #require(before["index.json"] ?? nil)
        #expect(index.data == Self.index)
        var info = stat()
        #expect(stat(url.appendingPathComponent("index.json").path, &info) == 0)
        #expect(
            index.tag
                == FileTag(
                    size: Int64(Self.index.count), modified: Timestamp(seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int32(info.st_mtim.tv_nsec)),
                    sha256: SHA256.hex(of: Self.index)))
        try FileManager.default.createDirectory(at: url.appendingPathComponent("memos"), withIntermediateDirectories: true)
        let after = try reader.read(["memos/\(Self.idA).json", "memos/\(Self.idB.lowercased()).json"])
        #expect(after.count == 2)
        #expect(after.values.allSatisfy { $0 == nil })
    }

    @Test func aLinkAFolderOrAFIFOWhereAFileShouldBeIsASentenceNamingIt() throws {
        let (url, side) = try folder()
        defer { try? FileManager.default.removeItem(at: url) }
        let elsewhere = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        try Data("theirs".utf8).write(to: elsewhere.appendingPathComponent("\(Self.idA).json"))
        let writer = try MemoFolderWriter(side, grant: WriteGrant())
        let memos = url.appendingPathComponent("memos")

        // memos/ as a link to another folder: neither read nor written through.
        #expect(symlink(elsewhere.path, memos.path) == 0)
        let refusedFolder = "drive/memos: is a link; reckon does not follow links"
        #expect(reason { _ = try writer.reader.read(["memos/\(Self.idA).json"]) } == refusedFolder)
        #expect(reason { try writer.write(Data("mine".utf8), to: "memos/\(Self.idA).json", expecting: nil) } == refusedFolder)
        #expect(names(elsewhere) == ["\(Self.idA).json"])
        #expect(try Data(contentsOf: elsewhere.appendingPathComponent("\(Self.idA).json")) == Data("theirs".utf8))
        unlink(memos.path)

        // The file itself a link, a folder, a FIFO.
        try FileManager.default.createDirectory(at: memos, withIntermediateDirectories: true)
        #expect(symlink(elsewhere.appendingPathComponent("\(Self.idA).json").path, memos.appendingPathComponent("\(Self.idA).json").path) == 0)
        #expect(
            reason { _ = try writer.reader.read(["memos/\(Self.idA).json"]) }
                == "drive/memos/\(Self.idA).json: is a link; reckon does not follow links")
        #expect(
            reason { try writer.write(Data("mine".utf8), to: "memos/\(Self.idA).json", expecting: nil) }
                == "drive/memos/\(Self.idA).json: is a link; reckon does not write through links")
        #expect(try Data(contentsOf: elsewhere.appendingPathComponent("\(Self.idA).json")) == Data("theirs".utf8))
        try FileManager.default.createDirectory(at: memos.appendingPathComponent("\(Self.idB).json"), withIntermediateDirectories: true)
        #expect(reason { _ = try writer.reader.read(["memos/\(Self.idB).json"]) } == "drive/memos/\(Self.idB).json: is a folder, not a regular file")
        #expect(
            reason { try writer.write(Data(), to: "memos/\(Self.idB).json", expecting: nil) }
                == "drive/memos/\(Self.idB).json: is a folder, not a file; reckon does not replace it")
        unlink(url.appendingPathComponent("index.json").path)
        #expect(mkfifo(url.appendingPathComponent("index.json").path, 0o644) == 0)
        #expect(reason { _ = try writer.reader.read(["index.json"]) } == "drive/index.json: is a FIFO, not a regular file")
        #expect(names(memos) == ["\(Self.idA).json", "\(Self.idB).json"], "no temporary file is left")
    }

    /// A write lands only on the file the caller read: checked at the swap
    /// itself, so a save that came in between is swapped back, whole.
    @Test func aFileThatChangedSinceItWasReadIsNeverReplaced() throws {
        let (url, side) = try folder()
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try MemoFolderWriter(side, grant: WriteGrant())
        let path = "memos/\(Self.idA).json"
        let file = url.appendingPathComponent(path)
        try writer.write(Data("read by the plan".utf8), to: path, expecting: nil)
        try Data("saved by the app meanwhile".utf8).write(to: file)
        func refusal(_ body: () throws -> Void) -> MemoFolderError? {
            do { try body() } catch let error as MemoFolderError { return error } catch { return nil }
            return nil
        }
        let changed = refusal { try writer.write(Data("reckon's".utf8), to: path, expecting: SHA256.hex(of: Data("read by the plan".utf8))) }
        #expect(changed?.changedSince == true)
        #expect(changed?.description == "drive/\(path): changed since it was read; left as it is")
        #expect(try Data(contentsOf: file) == Data("saved by the app meanwhile".utf8))
        let appeared = refusal { try writer.write(Data("reckon's".utf8), to: path, expecting: nil) }
        #expect(appeared?.changedSince == true, "a file that must be new is never put over one that came meanwhile")
        #expect(try Data(contentsOf: file) == Data("saved by the app meanwhile".utf8))
        try FileManager.default.removeItem(at: file)
        #expect(
            refusal { try writer.write(Data("reckon's".utf8), to: path, expecting: SHA256.hex(of: Data("read by the plan".utf8))) }?.changedSince
                == true)
        #expect(FileKind(path: file.path) == .missing, "a file removed meanwhile stays removed")
        #expect(names(url.appendingPathComponent("memos")).isEmpty, "no temporary file is left")
    }

    @Test func onlyIndexJSONAndMemoFilesNamedByAUUIDAreEverAccepted() throws {
        let (url, side) = try folder()
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try MemoFolderWriter(side, grant: WriteGrant())
        for path in [
            "../index.json", "memos/../index.json", "memos/not-a-uuid.json", "memos/\(Self.idA)", "memos/\(Self.idA).json/x",
            "/etc/passwd", "index.json ", "./index.json", "memos//\(Self.idA).json", "memos/\(Self.idA).JSON", "quarantine/\(Self.idA).json", ""
        ] {
            let refused =
                "\(joinPath("drive", path)): is neither index.json nor memos/<uuid>.json; reckon reads and writes no other file in a memo folder"
            #expect(reason { try writer.write(Data("x".utf8), to: path, expecting: nil) } == refused)
            #expect(reason { _ = try writer.reader.read([path]) } == refused)
            #expect(reason { try writer.remove(path) } == refused)
        }
        let shown = try #require(reason { try writer.write(Data("x".utf8), to: "memos/\u{1B}[31m.json", expecting: nil) })
        #expect(!shown.contains("\u{1B}"), "a control character never reaches a terminal raw")
        #expect(names(url) == ["index.json"])
    }

    @Test func aFolderAbove60dMemoIsWrittenInside() throws {
        let parent = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        let memoFolder = parent.appendingPathComponent("60dMemo")
        try FileManager.default.createDirectory(at: memoFolder, withIntermediateDirectories: true)
        try Self.index.write(to: memoFolder.appendingPathComponent("index.json"))
        let side = SideSpec(role: .local, name: "mirror", label: "mirror", path: "mirror", kind: .folder(parent))
        let writer = try MemoFolderWriter(side, grant: WriteGrant())
        try writer.write(Data("memo".utf8), to: "memos/\(Self.idB).json", expecting: nil)
        #expect(try Data(contentsOf: memoFolder.appendingPathComponent("memos/\(Self.idB).json")) == Data("memo".utf8))
        #expect(names(parent) == ["60dMemo"])
        #expect(reason { _ = try writer.reader.read(["memos/x.json"]) }?.hasPrefix("mirror/60dMemo/memos/x.json: ") == true)
    }

    @Test func removeTakesAwayOneFileAndLeavesAnAbsentOneAbsent() throws {
        let (url, side) = try folder()
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try MemoFolderWriter(side, grant: WriteGrant())
        try writer.write(Data("a".utf8), to: "memos/\(Self.idA).json", expecting: nil)
        try writer.write(Data("b".utf8), to: "memos/\(Self.idB).json", expecting: nil)
        try writer.remove("memos/\(Self.idA).json")
        try writer.remove("memos/\(Self.idA).json")
        #expect(names(url.appendingPathComponent("memos")) == ["\(Self.idB).json"])
    }

    @Test func aStoreSideIsNeverAMemoFolder() {
        let side = SideSpec(
            role: .local, name: "device", label: "device", path: "default.store",
            kind: .store(AppStoreSide(url: URL(fileURLWithPath: "/nonexistent/default.store"), isBackup: false)))
        #expect(reason { _ = try MemoFolderReader(side) } == "default.store: is the app's store, which reckon never writes; only memo folders are")
        #expect(reason { _ = try MemoFolderWriter(side, grant: WriteGrant()) } != nil)
        #expect(throws: TargetLock.Refusal.self) { _ = try TargetLock.lock(side) }
    }

    // MARK: - Over rclone

    @Test(.needs(.rclone)) func overRcloneWritesReadsAndRemovesLeavingNoTemporaryFile() throws {
        let served = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: served) }
        let memoFolder = served.appendingPathComponent("60dMemo")
        try FileManager.default.createDirectory(at: memoFolder.appendingPathComponent("memos"), withIntermediateDirectories: true)
        try Self.index.write(to: memoFolder.appendingPathComponent("index.json"))
        let pathA = "memos/\(Self.idA).json"
        let pathB = "memos/\(Self.idB).json"
        try Data("version 1".utf8).write(to: memoFolder.appendingPathComponent(pathA))
        let server = try SFTPServer(serving: served)
        defer { server.stop() }
        let config = served.deletingLastPathComponent().appendingPathComponent("\(served.lastPathComponent).conf")
        defer { try? FileManager.default.removeItem(at: config) }
        let env = server.environment
        try Data(
            """
            [reckontest]
            type = sftp
            host = 127.0.0.1
            port = \(server.port)
            user = \(server.user)
            pass = \(env["RCLONE_CONFIG_RECKONTEST_PASS"]!)

            """.utf8
        ).write(to: config)
        var source = RcloneSide(remote: "reckontest:", cache: served.appendingPathComponent("unused-cache"))
        source.config = config.path
        source.callLimit = 60
        let side = SideSpec(role: .remote, name: "drive", label: "Drive", path: "reckontest:", kind: .rclone(source))
        let writer = try MemoFolderWriter(side, grant: WriteGrant(), process: testSettings)

        // Read: one listing of each folder and one copy, whatever is asked.
        let read = try writer.reader.read(["index.json", pathA, pathB])
        #expect(read[pathB] == .some(nil))
        let a = try #require(read[pathA] ?? nil)
        #expect(a.data == Data("version 1".utf8))
        var info = stat()
        #expect(stat(memoFolder.appendingPathComponent(pathA).path, &info) == 0)
        #expect(a.tag.size == 9 && a.tag.sha256 == SHA256.hex(of: Data("version 1".utf8)))
        #expect(a.tag.modified?.seconds == Int64(info.st_mtim.tv_sec))
        #expect((read["index.json"] ?? nil)?.data == Self.index)

        // Write: a new file, and a replacement of the same size within the same second.
        try writer.write(Data("version 2".utf8), to: pathA, expecting: SHA256.hex(of: Data("version 1".utf8)))
        try writer.write(Data("new memo".utf8), to: pathB, expecting: nil)
        try writer.write(Data("{\"entries\": []}".utf8), to: "index.json", expecting: SHA256.hex(of: Self.index))
        #expect(try Data(contentsOf: memoFolder.appendingPathComponent(pathA)) == Data("version 2".utf8))
        #expect(try Data(contentsOf: memoFolder.appendingPathComponent(pathB)) == Data("new memo".utf8))
        #expect(try Data(contentsOf: memoFolder.appendingPathComponent("index.json")) == Data("{\"entries\": []}".utf8))
        #expect((try writer.reader.read([pathA])[pathA] ?? nil)?.data == Data("version 2".utf8))

        try writer.remove(pathB)
        try writer.remove(pathB)
        #expect(names(memoFolder) == ["index.json", "memos"], "no temporary file is left")
        #expect(names(memoFolder.appendingPathComponent("memos")) == ["\(Self.idA).json"], "no temporary file is left")

        // The rclone wrapper itself refuses a write without a grant, and nothing is written.
        let local = served.appendingPathComponent("local.json")
        try Data("x".utf8).write(to: local)
        let rclone = try Rclone(process: testSettings, config: config.path)
        for arguments in [
            ["copyto", "--", local.path, "reckontest:60dMemo/memos/\(Self.idB).json"],
            ["copy", "--", served.path, "reckontest:60dMemo"], ["deletefile", "--", "reckontest:60dMemo/index.json"],
            ["config", "create", "x", "local"]
        ] {
            let failure = #expect(throws: Rclone.Failure.self) { try rclone.run(arguments) }
            #expect(failure?.kind == .refused)
        }
        #expect(names(memoFolder.appendingPathComponent("memos")) == ["\(Self.idA).json"])
        #expect(FileKind(path: memoFolder.appendingPathComponent("index.json").path) != .missing)
    }

    // MARK: - Target locks

    @Test func aTargetIsLockedOnceWhateverPathNamesIt() throws {
        let locks = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: locks) }
        let parent = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: parent) }
        try FileManager.default.createDirectory(at: parent.appendingPathComponent("60dMemo"), withIntermediateDirectories: true)
        try Self.index.write(to: parent.appendingPathComponent("60dMemo/index.json"))
        let (other, otherSide) = try folder()
        defer { try? FileManager.default.removeItem(at: other) }
        func side(_ url: URL) -> SideSpec { SideSpec(role: .remote, name: "d", label: "d", path: "d", kind: .folder(url)) }

        let held = try TargetLock.lock(side(parent), in: locks)
        // The same memo folder named by its own path is the same target.
        #expect(throws: RunLock.Busy.self) { _ = try TargetLock.lock(side(parent.appendingPathComponent("60dMemo")), in: locks) }
        let second = try TargetLock.lock(otherSide, in: locks)
        #expect(names(locks).count == 2)
        held.release()
        let again = try TargetLock.lock(side(parent.appendingPathComponent("60dMemo")), in: locks)
        again.release()
        second.release()

        // Remotes: by the remote string's hash, so no secret is in a name.
        let source = RcloneSide(remote: ":sftp,host=h,pass=secret:60dMemo", cache: locks)
        let remote = SideSpec(role: .remote, name: "r", label: "r", path: "r", kind: .rclone(source))
        let remoteLock = try TargetLock.lock(remote, in: locks)
        #expect(throws: RunLock.Busy.self) { _ = try TargetLock.lock(remote, in: locks) }
        #expect(!names(locks).contains { $0.contains("secret") })
        remoteLock.release()
    }

    @Test func theSharedLockFolderIsPrivateAndALinkThereIsRefused() throws {
        let (url, side) = try folder()
        defer { try? FileManager.default.removeItem(at: url) }
        let settings = ProcessSettings(environment: ProcessInfo.processInfo.environment)
        let lock = try TargetLock.lock(side, process: settings)
        let folder = lock.url.deletingLastPathComponent()
        #expect(["/run/lock/reckon", settings.temporaryRoot + "/reckon-locks"].contains(folder.path))
        var info = stat()
        #expect(lstat(folder.path, &info) == 0 && info.st_mode & 0o022 == 0 && info.st_uid == getuid())
        #expect(lock.url.lastPathComponent.count == 21, "16 hex digits and .lock")
        lock.release()

        let scratch = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let link = scratch.appendingPathComponent("locks")
        #expect(symlink(scratch.path, link.path) == 0)
        #expect(throws: OutputError.self) { _ = try TargetLock.lock(side, in: link) }
        #expect(names(scratch) == ["locks"], "nothing was written through the link")
    }
}
