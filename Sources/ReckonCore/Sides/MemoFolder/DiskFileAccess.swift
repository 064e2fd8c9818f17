import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The files of a memo folder on disk, reached through the open folder that
/// holds them: never through a link, and written by a swap that checks, at
/// the swap itself, that the target is still what the caller read.
package struct DiskFileAccess: FileAccess {
    /// The folder holding `index.json`.
    let root: URL
    package let shownRoot: String
    package let limits: ReadLimits
    /// Where a test pauses the process, before a swap.
    let checkpoints: Checkpoints

    init(_ url: URL, shown: String, limits: ReadLimits, checkpoints: Checkpoints) {
        self.checkpoints = checkpoints
        root = MemoFolder.resolveRoot(url)
        shownRoot = root == url ? shown : joinPath(shown, MemoFolder.nestedFolder)
        self.limits = limits
    }

    package var localFolder: URL? { root }

    package func read(_ files: [MemoFolderFile]) throws(MemoFolderError) -> [String: FileRead?] {
        try readOnDisk(files, root: root)
    }

    package func write(_ data: Data, to file: MemoFolderFile, expecting: String?, grant: WriteGrant) throws(MemoFolderError) {
        try writeOnDisk(data, to: file, root: root, expecting: expecting)
    }

    package func remove(_ file: MemoFolderFile, grant: WriteGrant) throws(MemoFolderError) {
        guard let folder = try openFolder(of: file, in: root) else { return }
        guard try existingMode(of: file, in: folder) != nil else { return }
        guard unlinkat(folder.fd, file.name, 0) == 0 else { throw failure(file.path, "cannot be removed: \(AtomicFile.lastError())") }
        try flush(folder, after: file.path)
    }

    package func removeLeftovers(known: Set<String>, grant: WriteGrant) -> [String] {
        var removed: [String] = []
        for (folderName, path) in [("", root.path), ("memos/", root.appendingPathComponent("memos").path)] {
            guard FileKind(path: path) == .directory, let folder = OpenFolder(path) else { continue }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            for name in names where isLeftover(name, local: true) {
                var info = stat()
                // A killed run can leave the file empty, before its first byte: nothing of anyone's is in it.
                guard fstatat(folder.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG,
                    info.st_size == 0 || DiskFileAccess.sha256(of: name, in: folder).map(known.contains) == true,
                    unlinkat(folder.fd, name, 0) == 0
                else { continue }
                removed.append(folderName + name)
            }
        }
        return removed
    }

    /// The folder holding `index.json`, opened; it must be a folder, not a link.
    func openRoot(_ root: URL) throws(MemoFolderError) -> OpenFolder {
        let kind = FileKind(path: root.path)
        guard kind == .directory, let folder = OpenFolder(root.path) else {
            throw failure(
                "",
                kind == .missing
                    ? "the folder does not exist"
                    : kind == .link
                        ? "is a link; reckon does not follow links"
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
                throw failure(file.path, "is \(counted(info.st_size, "byte")), over the limit of \(counted(limit(file), "byte"))")
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

    /// The permissions of the regular file at `file` in its open folder, nil
    /// when it is absent; anything else standing there is refused.
    private func existingMode(of file: MemoFolderFile, in folder: OpenFolder) throws(MemoFolderError) -> mode_t? {
        var info = stat()
        guard fstatat(folder.fd, file.name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw failure(file.path, "cannot be examined: \(AtomicFile.lastError())")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return info.st_mode & 0o777
        case S_IFLNK: throw failure(file.path, "is a link; reckon does not write through links")
        case S_IFDIR: throw failure(file.path, "is a folder, not a file; reckon does not replace it")
        default: throw failure(file.path, "is not a regular file; reckon does not replace it")
        }
    }

    func writeOnDisk(_ data: Data, to file: MemoFolderFile, root: URL, expecting: String?) throws(MemoFolderError) {
        if let name = file.folder, FileKind(path: root.appendingPathComponent(name).path) == .missing {
            let rootFolder = try openRoot(root)
            guard mkdirat(rootFolder.fd, name, 0o755) == 0 || errno == EEXIST else {
                throw failure(name, "cannot be made: \(AtomicFile.lastError())")
            }
            try flush(rootFolder, after: name)
        }
        guard let folder = try openFolder(of: file, in: root) else { throw failure(file.folder ?? "", "disappeared while being made") }
        var old = stat()
        let exists = fstatat(folder.fd, file.name, &old, AT_SYMLINK_NOFOLLOW) == 0
        if exists { _ = try existingMode(of: file, in: folder) }
        let mode = exists ? old.st_mode & 0o777 : 0o644
        let temporary = MemoFolderWriter.temporaryPrefix + "\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = openat(folder.fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure(file.path, "cannot be written: \(AtomicFile.lastError())") }
        var problem: String?
        do { try FileHandle(fileDescriptor: fd, closeOnDealloc: false).write(contentsOf: data) } catch { problem = errorWords(error) }
        // The file keeps the owner and permissions of the one it replaces, whatever the umask.
        if problem == nil, exists {
            _ = fchown(fd, old.st_uid, old.st_gid)
            if fchmod(fd, mode) != 0 { problem = AtomicFile.lastError() }
        }
        if problem == nil, fsync(fd) != 0 { problem = AtomicFile.lastError() }
        close(fd)
        if let problem {
            unlinkat(folder.fd, temporary, 0)
            throw failure(file.path, "cannot be written: \(problem)")
        }
        // A test changes the target here, as the app would between reckon's read and its write.
        checkpoints.wait(at: file.folder == nil ? "index-swap" : "memo-swap")
        guard let expecting else {
            guard reckon_renameat2(folder.fd, temporary, file.name, 1) == 0 else {
                let appeared = errno == EEXIST
                let reason = AtomicFile.lastError()
                unlinkat(folder.fd, temporary, 0)
                if appeared { throw changed(file, now: "") }
                throw failure(file.path, "cannot be written: \(reason)")
            }
            try flush(folder, after: file.path)
            return
        }
        guard reckon_renameat2(folder.fd, temporary, file.name, 2) == 0 else {
            let gone = errno == ENOENT
            let reason = AtomicFile.lastError()
            unlinkat(folder.fd, temporary, 0)
            if gone { throw changed(file, now: nil) }
            throw failure(file.path, "cannot be written: \(reason)")
        }
        // The old file is now under the temporary name: it must be the one the caller read.
        let swappedOut = DiskFileAccess.sha256(of: temporary, in: folder)
        if swappedOut != expecting {
            reckon_renameat2(folder.fd, temporary, file.name, 2)
            unlinkat(folder.fd, temporary, 0)
            fsync(folder.fd)
            throw changed(file, now: swappedOut)
        }
        unlinkat(folder.fd, temporary, 0)
        try flush(folder, after: file.path)
    }

    /// Flushes a folder after `path` in it was written, renamed or removed:
    /// a failed flush fails the write, which may not be on disk.
    func flush(_ folder: OpenFolder, after path: String) throws(MemoFolderError) {
        guard fsync(folder.fd) == 0 else { throw failure(path, "cannot be flushed to disk: \(AtomicFile.lastError())") }
    }

    /// The SHA-256 of a regular file in an open folder, nil when it cannot be read.
    static func sha256(of name: String, in folder: OpenFolder) -> String? {
        let fd = openat(folder.fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let data = try? FileHandle(fileDescriptor: fd, closeOnDealloc: false).readToEnd() else { return nil }
        return SHA256.hex(of: data)
    }
}
