import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An output file or folder that could not be written, and errno's words for why.
package struct OutputError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "cannot write \(path): \(reason)" }

    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// Writes files so that a run killed at any moment leaves either the old file
/// or the new one: a temporary name in the same folder, flushed, then renamed.
package enum AtomicFile {
    /// Writes `data` as `url`; with `replacing` false, a file already there
    /// stays and the write fails ("File exists").
    package static func write(_ data: Data, to url: URL, mode: mode_t = 0o644, replacing: Bool = true) throws(OutputError) {
        let folder = url.deletingLastPathComponent()
        try makeFolder(folder)
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw OutputError(path: url.path, reason: lastError()) }
        var failure: String?
        if !data.withUnsafeBytes({ writeAll(fd, $0) }) { failure = lastError() }
        if failure == nil, fsync(fd) != 0 { failure = lastError() }
        close(fd)
        if failure == nil, (replacing ? rename(temporary.path, url.path) : reckon_rename_no_replace(temporary.path, url.path)) != 0 {
            failure = lastError()
        }
        if let failure {
            unlink(temporary.path)
            throw OutputError(path: url.path, reason: failure)
        }
        // The rename is on disk only once the folder is flushed: a failure
        // there fails the write too.
        let folderFD = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderFD >= 0 else { throw OutputError(path: url.path, reason: lastError()) }
        defer { close(folderFD) }
        guard fsync(folderFD) == 0 else { throw OutputError(path: url.path, reason: lastError()) }
    }

    /// Whether `name` is a temporary file `write` names (`.<name>.<pid>.<number>.tmp`)
    /// of a process that is gone: what a run killed between writing and renaming left.
    package static func isLeftover(_ name: String) -> Bool {
        guard let match = name.wholeMatch(of: /\..+\.([0-9]{1,10})\.[0-9]{1,10}\.tmp/), let pid = pid_t(match.1) else { return false }
        return pid != getpid() && PrivateFolder.processIsGone(pid)
    }

    /// Removes every leftover (`isLeftover`) under `folder` and its
    /// subfolders, except in a folder whose real path is in `skipping` or
    /// inside one of them. Links are never followed. Returns the paths
    /// removed, relative to `folder`.
    package static func removeLeftovers(under folder: URL, skipping: [String]) -> [String] {
        var removed: [String] = []
        func walk(_ path: String, _ prefix: String) {
            guard !skipping.contains(where: { isWithin(realPath(path), $0) }) else { return }
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() {
                let child = path + "/" + name
                switch FileKind(path: child) {
                case .directory: walk(child, prefix + name + "/")
                case .regular:
                    guard isLeftover(name), unlink(child) == 0 else { continue }
                    removed.append(prefix + name)
                default: continue
                }
            }
        }
        walk(folder.path, "")
        return removed
    }

    /// Creates a folder and its parents, or says why it could not. Output
    /// folders are named by their real paths (a link the user chose is
    /// resolved before the run), so a link met on the way was put inside
    /// reckon's own output folder: it is never followed, for it could lead
    /// into a source.
    package static func makeFolder(_ url: URL) throws(OutputError) {
        switch FileKind(path: url.path) {
        case .directory:
            let path = url.standardizedFileURL.path
            guard realPath(path) == path else {
                throw OutputError(
                    path: url.path, reason: "a link stands on the way there (it leads to \(realPath(path))); reckon does not write through links")
            }
            return
        case .missing: break
        case .link:
            throw OutputError(path: url.path, reason: "a link stands where a folder must be; reckon does not write through links")
        case let other:
            throw OutputError(path: url.path, reason: "\(other.description) stands where a folder must be")
        }
        let parent = url.deletingLastPathComponent()
        if parent.path != url.path { try makeFolder(parent) }
        guard mkdir(url.path, 0o755) == 0 || errno == EEXIST else { throw OutputError(path: url.path, reason: lastError()) }
    }

    package static func lastError() -> String { String(cString: strerror(errno)) }
}
