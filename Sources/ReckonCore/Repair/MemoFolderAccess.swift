import CLinux
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a plan records of one file and apply checks again right before
/// writing it (the change tag).
public struct FileTag: Sendable, Equatable, Codable {
    public var size: Int64
    /// The file's modification time on disk, or the remote's ModTime.
    public var modified: Timestamp?
    /// The SHA-256 of the file's bytes, in small hexadecimal letters.
    public var sha256: String

    public init(size: Int64, modified: Timestamp?, sha256: String) {
        self.size = size
        self.modified = modified
        self.sha256 = sha256
    }
}

/// One file of a memo folder as read: its bytes and its change tag.
package struct FileRead: Sendable, Equatable {
    package var data: Data
    package var tag: FileTag
}

/// A file of a memo folder that could not be read or written: the file, as
/// the side's path names it, and why.
package struct MemoFolderError: Error, Equatable, CustomStringConvertible {
    /// The side's path and the file inside it (`../drive/60dMemo/memos/….json`), secrets masked.
    package var path: String
    package var reason: String
    /// The file was not as the caller read it when the write came: nothing was written.
    package var changedSince = false
    package var description: String { "\(path): \(reason)" }
}

/// The only files reckon reads or writes in a memo folder: `index.json` and
/// `memos/<uuid>.json`. A path is taken apart into these validated parts,
/// and the paths used are built from them alone (DESIGN §5.4).
struct MemoFolderFile: Sendable, Hashable {
    /// `memos` for a memo file, nil for `index.json`.
    var folder: String?
    /// `index.json`, or the memo's id as the caller spells it and `.json`.
    var name: String

    /// The file a relative path names, or nil for any other path.
    init?(_ path: String) {
        if path == "index.json" {
            (folder, name) = (nil, "index.json")
            return
        }
        guard path.hasPrefix("memos/"), path.hasSuffix(".json") else { return nil }
        let stem = path.dropFirst(6).dropLast(5)
        guard MemoID(stem) != nil else { return nil }
        (folder, name) = ("memos", String(stem) + ".json")
    }

    var path: String { folder.map { $0 + "/" + name } ?? name }
}

/// Reads files of a memo folder — on disk, or in an rclone remote — by
/// their paths inside it, each with the change tag a plan records. Never
/// follows a link, never writes.
package struct MemoFolderReader: Sendable {
    /// Where the files are: the folder holding `index.json` on disk, or in the remote.
    enum Place: Sendable {
        case disk(URL)
        case remote(Rclone, root: String)
    }

    let place: Place
    /// The folder holding `index.json` as the user named it (`60dMemo` added when nested), secrets masked.
    let shownRoot: String
    let limits: ReadLimits

    /// Throws for a store side, which is never read or written as files,
    /// and for a remote that cannot be listed.
    package init(_ side: SideSpec, limits: ReadLimits = ReadLimits()) throws(MemoFolderError) {
        self.limits = limits
        let shown = Rclone.masked(side.path)
        switch side.location {
        case .folder(let url):
            let root = MemoFolder.resolveRoot(url)
            place = .disk(root)
            shownRoot = root == url ? shown : joinPath(shown, MemoFolder.nestedFolder)
        case .rclone(let source):
            var rclone: Rclone
            do { rclone = try Rclone(config: source.config, flags: source.flags) } catch {
                throw MemoFolderError(path: shown, reason: error.message)
            }
            rclone.connectTimeout = .seconds(source.connectTimeout)
            rclone.ioTimeout = .seconds(source.ioTimeout)
            rclone.callLimit = .seconds(source.callLimit)
            // The folder holding index.json, or its parent holding 60dMemo/, as RcloneStore finds it.
            let top: [Rclone.Entry]
            do { top = try rclone.lsjson(source.remote, filesOnly: false, hash: false) } catch {
                throw MemoFolderError(path: shown, reason: error.message)
            }
            let holdsIndex = top.contains { $0.name == "index.json" || ($0.name == "memos" && $0.isDir) }
            let nested = !holdsIndex && top.contains { $0.name == MemoFolder.nestedFolder && $0.isDir }
            place = .remote(rclone, root: nested ? Rclone.joined(source.remote, MemoFolder.nestedFolder) : source.remote)
            shownRoot = nested ? joinPath(shown, MemoFolder.nestedFolder) : shown
        case .store:
            throw MemoFolderError(path: shown, reason: "is the app's store, which reckon never writes; only memo folders are")
        }
    }

    func failure(_ path: String, _ reason: String) -> MemoFolderError {
        MemoFolderError(path: joinPath(shownRoot, path), reason: reason)
    }

    /// The validated file a path names, or a failure naming it.
    func file(_ path: String) throws(MemoFolderError) -> MemoFolderFile {
        guard let file = MemoFolderFile(path) else {
            // The path as given is shown with its control characters made visible.
            throw failure(escapedForDisplay(path), "is neither index.json nor memos/<uuid>.json; reckon reads and writes no other file in a memo folder")
        }
        return file
    }

    /// Each path's bytes and tag; nil when the file is absent. A link, a
    /// folder or a FIFO where the file should be throws a sentence naming
    /// the path. Over rclone, the files are listed and fetched in one call
    /// each, whatever their number.
    package func read(_ paths: [String]) throws(MemoFolderError) -> [String: FileRead?] {
        var files: [MemoFolderFile] = []
        for path in paths { files.append(try file(path)) }
        switch place {
        case .disk(let root): return try readOnDisk(files, root: root)
        case .remote(let rclone, let root): return try readRemote(files, rclone: rclone, root: root)
        }
    }

    private func limit(_ file: MemoFolderFile) -> Int64 { file.folder == nil ? limits.indexSizeLimit : limits.memoSizeLimit }

    // MARK: - On disk

    /// The folder holding `index.json`, opened; it must be a folder, not a link.
    func openRoot(_ root: URL) throws(MemoFolderError) -> OpenFolder {
        let kind = FileKind(path: root.path)
        guard kind == .directory, let folder = OpenFolder(root.path) else {
            throw failure("", kind == .missing ? "the folder does not exist" : kind == .link ? "is a link; reckon does not follow links"
                : kind == .directory ? "the folder cannot be opened: \(AtomicFile.lastError())" : "is \(kind.description), not a folder")
        }
        return folder
    }

    /// The folder a file is in, opened; nil when `memos/` is absent.
    func openFolder(of file: MemoFolderFile, in root: URL) throws(MemoFolderError) -> OpenFolder? {
        let rootFolder = try openRoot(root)
        guard let name = file.folder else { return rootFolder }
        let kind = FileKind(path: root.appendingPathComponent(name).path)
        if kind == .missing { return nil }
        guard kind == .directory, let folder = OpenFolder(root.appendingPathComponent(name).path) else {
            throw failure(name, kind == .link ? "is a link; reckon does not follow links" : "is \(kind.description), not a folder")
        }
        return folder
    }

    private func readOnDisk(_ files: [MemoFolderFile], root: URL) throws(MemoFolderError) -> [String: FileRead?] {
        var result: [String: FileRead?] = [:]
        for file in files {
            guard let folder = try openFolder(of: file, in: root) else {
                result[file.path] = .some(nil)
                continue
            }
            let kind = FileKind(path: root.appendingPathComponent(file.path).path)
            switch kind {
            case .missing:
                result[file.path] = .some(nil)
                continue
            case .regular: break
            case .link: throw failure(file.path, "is a link; reckon does not follow links")
            default: throw failure(file.path, "is \(kind.description), not a regular file")
            }
            let fd: Int32
            do { fd = try openForReading(atPath: file.name, in: folder) } catch { throw failure(file.path, error.message) }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw failure(file.path, "is no longer a regular file")
            }
            guard Int64(info.st_size) <= limit(file) else {
                throw failure(file.path, "is \(info.st_size) bytes, over the limit of \(limit(file)) bytes")
            }
            let data: Data
            do { data = try FileHandle(fileDescriptor: fd, closeOnDealloc: false).readToEnd() ?? Data() } catch {
                throw failure(file.path, "cannot be read: \(errorWords(error))")
            }
            let modified = Timestamp(seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int32(info.st_mtim.tv_nsec))
            result[file.path] = FileRead(data: data, tag: FileTag(size: Int64(data.count), modified: modified, sha256: SHA256.hex(of: data)))
        }
        return result
    }

    // MARK: - Over rclone

    /// One listing of the folder holding `index.json` (when it is asked for)
    /// and one of `memos/` (when a memo file is), then one `copy` of every
    /// file listed into a private folder, each checked against its listed size.
    private func readRemote(_ files: [MemoFolderFile], rclone: Rclone, root: String) throws(MemoFolderError) -> [String: FileRead?] {
        var listed: [String: [Rclone.Entry]] = [:]
        for folder in Set(files.map(\.folder)) {
            let entries: [Rclone.Entry]
            do { entries = try rclone.lsjson(folder.map { Rclone.joined(root, $0) } ?? root, filesOnly: false, hash: false) } catch {
                // A remote without memos/ holds none of its files.
                if folder != nil && error.exitCode == 3 { continue }
                throw failure(folder ?? "", error.message)
            }
            for entry in entries { listed[folder.map { $0 + "/" + entry.name } ?? entry.name, default: []].append(entry) }
        }
        var result: [String: FileRead?] = [:]
        var wanted: [MemoFolderFile: Rclone.Entry] = [:]
        for file in files {
            guard let entries = listed[file.path] else {
                result[file.path] = .some(nil)
                continue
            }
            guard entries.count == 1 else {
                throw failure(file.path, "the remote holds \(entries.count) files of this name; reckon does not pick one")
            }
            if entries[0].isDir { throw failure(file.path, "is a folder, not a file") }
            guard entries[0].size <= limit(file) else {
                throw failure(file.path, "is \(entries[0].size) bytes, over the limit of \(limit(file)) bytes")
            }
            wanted[file] = entries[0]
        }
        guard !wanted.isEmpty else { return result }
        let local: URL
        do { local = try PrivateFolder.make(prefix: "reckon-read") } catch { throw failure("", "reckon cannot make a private folder: \(error.description)") }
        defer { PrivateFolder.remove(local) }
        do {
            _ = try rclone.copy(from: root, files: wanted.keys.map(\.path).sorted(), into: local)
        } catch {
            throw failure("", error.message)
        }
        for (file, entry) in wanted {
            let data: Data
            do { data = try readRegularFile(atPath: local.appendingPathComponent(file.path).path, limit: limit(file)) } catch {
                throw failure(file.path, "was listed but could not be downloaded; it may have been removed just now")
            }
            guard Int64(data.count) == entry.size else {
                throw failure(file.path, "changed while it was being read (listed as \(entry.size) bytes, \(data.count) came); try again")
            }
            result[file.path] = FileRead(data: data, tag: FileTag(size: entry.size, modified: Timestamp(iso8601: entry.modTime),
                                                                  sha256: SHA256.hex(of: data)))
        }
        return result
    }
}

/// Permission to write into a memo folder. Only `apply` and `undo` make
/// one: its initializer is internal to ReckonCore.
package struct WriteGrant: Sendable {
    init() {}
}

/// Writes files into a memo folder, on disk or in an rclone remote. Only
/// `apply` and `undo` build one (it takes a `WriteGrant`).
package struct MemoFolderWriter: Sendable {
    /// Reads the same folder, to check a file right before it is written.
    package let reader: MemoFolderReader
    private let grant: WriteGrant

    /// Throws for a store side, and for a remote that cannot be listed.
    package init(_ side: SideSpec, grant: WriteGrant) throws(MemoFolderError) {
        reader = try MemoFolderReader(side)
        self.grant = grant
    }

    /// Creates or replaces one file atomically, only if it still holds
    /// what the caller read: `expecting` is its SHA-256, or nil for a file
    /// that must be absent. On disk the check is made at the swap itself:
    /// the new file is written under a temporary name in the same folder,
    /// flushed, then swapped with the target (`renameat2` with
    /// RENAME_EXCHANGE, or RENAME_NOREPLACE for a new file); if what was
    /// swapped out is not what the caller read (the app saved meanwhile),
    /// it is swapped straight back and `changedSince` is thrown. The new
    /// file keeps the old one's owner and permissions. Never through a link
    /// (`memos/` is made when missing). Over rclone: the target is read
    /// again, then `copyto` a temporary name in the same remote folder and
    /// `moveto` onto the target (rclone deletes the target first: a moment
    /// without the file, and no compare-and-swap: the race is narrowed, not closed).
    package func write(_ data: Data, to path: String, expecting: String?) throws(MemoFolderError) {
        let file = try reader.file(path)
        switch reader.place {
        case .disk(let root): try writeOnDisk(data, to: file, root: root, expecting: expecting)
        case .remote(let rclone, let root):
            let now = try reader.read([path])[path] ?? nil
            guard now?.tag.sha256 == expecting else { throw changed(file, now: now?.tag.sha256) }
            try writeRemote(data, to: file, rclone: rclone, root: root)
        }
    }

    /// The failure of a file that is not as the caller read it.
    func changed(_ file: MemoFolderFile, now: String?) -> MemoFolderError {
        var failure = reader.failure(file.path, now == nil ? "was removed since it was read; left as it is" : "changed since it was read; left as it is")
        failure.changedSince = true
        return failure
    }

    /// Removes one file (undo uses it only for a file apply created and
    /// that still has apply's bytes). An absent file is left absent.
    package func remove(_ path: String) throws(MemoFolderError) {
        let file = try reader.file(path)
        switch reader.place {
        case .disk(let root):
            guard let folder = try reader.openFolder(of: file, in: root) else { return }
            guard try existingMode(of: file, in: folder) != nil else { return }
            guard unlinkat(folder.fd, file.name, 0) == 0 else { throw reader.failure(file.path, "cannot be removed: \(AtomicFile.lastError())") }
            fsync(folder.fd)
        case .remote(let rclone, let root):
            // rclone's deletefile says the same for an absent file as for any failure: the listing tells.
            let listed: [Rclone.Entry]
            do {
                listed = try rclone.lsjson(file.folder.map { Rclone.joined(root, $0) } ?? root, filesOnly: false, hash: false)
            } catch where file.folder != nil && error.exitCode == 3 {
                return
            } catch {
                throw reader.failure(file.folder ?? "", error.message)
            }
            let same = listed.filter { $0.name == file.name }
            guard !same.isEmpty else { return }
            guard same.count == 1, !same[0].isDir else {
                throw reader.failure(file.path, same.count > 1 ? "the remote holds \(same.count) files of this name; reckon does not pick one" : "is a folder, not a file")
            }
            do {
                try rclone.run(["deletefile", "--", Rclone.joined(root, file.path)], grant: grant)
            } catch {
                throw reader.failure(file.path, error.message)
            }
        }
    }

    /// The permissions of the regular file at `file` in its open folder, nil
    /// when it is absent; anything else standing there is refused.
    private func existingMode(of file: MemoFolderFile, in folder: OpenFolder) throws(MemoFolderError) -> mode_t? {
        var info = stat()
        guard fstatat(folder.fd, file.name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw reader.failure(file.path, "cannot be examined: \(AtomicFile.lastError())")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return info.st_mode & 0o777
        case S_IFLNK: throw reader.failure(file.path, "is a link; reckon does not write through links")
        case S_IFDIR: throw reader.failure(file.path, "is a folder, not a file; reckon does not replace it")
        default: throw reader.failure(file.path, "is not a regular file; reckon does not replace it")
        }
    }

    private func writeOnDisk(_ data: Data, to file: MemoFolderFile, root: URL, expecting: String?) throws(MemoFolderError) {
        if let name = file.folder, FileKind(path: root.appendingPathComponent(name).path) == .missing {
            let rootFolder = try reader.openRoot(root)
            guard mkdirat(rootFolder.fd, name, 0o755) == 0 || errno == EEXIST else {
                throw reader.failure(name, "cannot be made: \(AtomicFile.lastError())")
            }
            fsync(rootFolder.fd)
        }
        guard let folder = try reader.openFolder(of: file, in: root) else { throw reader.failure(file.folder ?? "", "disappeared while being made") }
        var old = stat()
        let exists = fstatat(folder.fd, file.name, &old, AT_SYMLINK_NOFOLLOW) == 0
        if exists { _ = try existingMode(of: file, in: folder) }
        let mode = exists ? old.st_mode & 0o777 : 0o644
        let temporary = Self.temporaryPrefix + "\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = openat(folder.fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw reader.failure(file.path, "cannot be written: \(AtomicFile.lastError())") }
        var failure: String?
        do { try FileHandle(fileDescriptor: fd, closeOnDealloc: false).write(contentsOf: data) } catch { failure = errorWords(error) }
        // The file keeps the owner and permissions of the one it replaces, whatever the umask.
        if failure == nil, exists {
            _ = fchown(fd, old.st_uid, old.st_gid)
            if fchmod(fd, mode) != 0 { failure = AtomicFile.lastError() }
        }
        if failure == nil, fsync(fd) != 0 { failure = AtomicFile.lastError() }
        close(fd)
        if let failure {
            unlinkat(folder.fd, temporary, 0)
            throw reader.failure(file.path, "cannot be written: \(failure)")
        }
        // A test changes the target here, as the app would between reckon's read and its write.
        TestStop.wait(at: file.folder == nil ? "index-swap" : "memo-swap")
        guard let expecting else {
            guard reckon_renameat2(folder.fd, temporary, file.name, 1) == 0 else {
                let appeared = errno == EEXIST
                let reason = AtomicFile.lastError()
                unlinkat(folder.fd, temporary, 0)
                if appeared { throw changed(file, now: "") }
                throw reader.failure(file.path, "cannot be written: \(reason)")
            }
            fsync(folder.fd)
            return
        }
        guard reckon_renameat2(folder.fd, temporary, file.name, 2) == 0 else {
            let gone = errno == ENOENT
            let reason = AtomicFile.lastError()
            unlinkat(folder.fd, temporary, 0)
            if gone { throw changed(file, now: nil) }
            throw reader.failure(file.path, "cannot be written: \(reason)")
        }
        // The old file is now under the temporary name: it must be the one the caller read.
        let swappedOut = Self.sha256(of: temporary, in: folder)
        if swappedOut != expecting {
            reckon_renameat2(folder.fd, temporary, file.name, 2)
            unlinkat(folder.fd, temporary, 0)
            fsync(folder.fd)
            throw changed(file, now: swappedOut)
        }
        unlinkat(folder.fd, temporary, 0)
        fsync(folder.fd)
    }

    /// Every temporary file a writer makes starts so; a run that holds the
    /// side's lock removes those a killed run left (`removeLeftovers`).
    static let temporaryPrefix = ".reckon-write."

    /// The SHA-256 of a regular file in an open folder, nil when it cannot be read.
    static func sha256(of name: String, in folder: OpenFolder) -> String? {
        let fd = openat(folder.fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let data = try? FileHandle(fileDescriptor: fd, closeOnDealloc: false).readToEnd() else { return nil }
        return SHA256.hex(of: data)
    }

    /// Removes the temporary files a killed run left in the folder and its
    /// `memos/`, and says which. Called only while the side's lock is held.
    /// A file goes only when its name is one a writer makes, of a process
    /// that is gone (on disk), and its bytes are ones reckon wrote or read
    /// (`known`: SHA-256s from the plan and the journals) or it is empty,
    /// so nothing a person made under such a name is ever removed.
    package func removeLeftovers(known: Set<String>) -> [String] {
        func isLeftover(_ name: String) -> Bool {
            guard let match = name.wholeMatch(of: /\.reckon-write\.([0-9]{1,10})\.[0-9]{1,10}\.tmp/), let pid = Int32(match.1) else { return false }
            if case .disk = reader.place { return pid != getpid() && PrivateFolder.processIsGone(pid) }
            return true
        }
        var removed: [String] = []
        switch reader.place {
        case .disk(let root):
            for (folderName, path) in [("", root.path), ("memos/", root.appendingPathComponent("memos").path)] {
                guard FileKind(path: path) == .directory, let folder = OpenFolder(path) else { continue }
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                for name in names where isLeftover(name) {
                    var info = stat()
                    // A killed run can leave the file empty, before its first byte: nothing of anyone's is in it.
                    guard fstatat(folder.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG,
                          info.st_size == 0 || Self.sha256(of: name, in: folder).map(known.contains) == true,
                          unlinkat(folder.fd, name, 0) == 0 else { continue }
                    removed.append(folderName + name)
                }
            }
        case .remote(let rclone, let root):
            for (folderName, folder) in [("", root), ("memos/", Rclone.joined(root, "memos"))] {
                guard let listed = try? rclone.lsjson(folder, filesOnly: true, hash: false) else { continue }
                for entry in listed where isLeftover(entry.name) && entry.size <= reader.limits.indexSizeLimit {
                    guard entry.size == 0 || (try? rclone.cat(Rclone.joined(folder, entry.name), limit: reader.limits.indexSizeLimit))
                            .map({ known.contains(SHA256.hex(of: $0)) }) == true,
                          (try? rclone.run(["deletefile", "--", Rclone.joined(folder, entry.name)], grant: grant)) != nil else { continue }
                    removed.append(folderName + entry.name)
                }
            }
        }
        return removed
    }

    private func writeRemote(_ data: Data, to file: MemoFolderFile, rclone: Rclone, root: String) throws(MemoFolderError) {
        let local: URL
        do { local = try PrivateFolder.make(prefix: "reckon-write") } catch { throw reader.failure("", "reckon cannot make a private folder: \(error.description)") }
        defer { PrivateFolder.remove(local) }
        let upload = local.appendingPathComponent(file.name)
        do { try data.write(to: upload) } catch { throw reader.failure(file.path, "cannot be staged for upload: \(errorWords(error))") }
        let temporary = Rclone.joined(root, (file.folder.map { $0 + "/" } ?? "") + Self.temporaryPrefix + "\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        // --ignore-times: rclone 1.60 takes a file of the same size and second for the same file, and moveto would then
        // drop the new bytes and keep the old file.
        do {
            try rclone.run(["copyto", "--ignore-times", "--", upload.path, temporary], grant: grant)
        } catch {
            throw reader.failure(file.path, error.message)
        }
        do {
            try rclone.run(["moveto", "--ignore-times", "--", temporary, Rclone.joined(root, file.path)], grant: grant)
        } catch {
            _ = try? rclone.run(["deletefile", "--", temporary], grant: grant)
            throw reader.failure(file.path, error.message)
        }
    }
}
