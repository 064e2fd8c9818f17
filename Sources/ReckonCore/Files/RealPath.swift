import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An absolute path with every link in it resolved and `.` and `..` taken
/// as the kernel takes them (`link/..` is the parent of the link's target),
/// also when its last parts do not exist yet, as an output folder about to
/// be made. A loop of links stops after 40 hops, as the kernel's does.
package func realPath(_ path: String) -> String {
    var resolved: [Substring] = []
    var pending = Array(path.split(separator: "/").reversed())
    var hops = 0
    while let part = pending.popLast() {
        if part == "." { continue }
        if part == ".." {
            _ = resolved.popLast()
            continue
        }
        let candidate = "/" + (resolved + [part]).joined(separator: "/")
        if hops < 40, FileKind(path: candidate) == .link, let target = linkTarget(candidate) {
            hops += 1
            if target.hasPrefix("/") { resolved = [] }
            pending += target.split(separator: "/").reversed()
            continue
        }
        resolved.append(part)
    }
    return "/" + resolved.joined(separator: "/")
}

/// A path as a person can read it: one reached through `/proc/self/fd/N`
/// (a side named on the command line by a path that is not UTF-8) by the
/// real path it stands for, with `\x{e9}` for such a byte; any other as it is.
package func readablePath(_ path: String) -> String {
    path.hasPrefix("/proc/self/fd/") ? realPath(path) : path
}

/// A resolved path as a person can use it from `current` (by default the
/// process's current folder): relative when it lies under it (`.` for it),
/// else absolute; never relative to a pipeline file.
package func shownPath(
    _ url: URL, from current: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
) -> String {
    let path = readablePath(url.standardizedFileURL.path)
    let base = current.standardizedFileURL.path
    if path == base { return "." }
    let prefix = base.hasSuffix("/") ? base : base + "/"
    return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
}

/// An output folder named by `path` (taken from `base` when relative), by
/// its real path, so that what is checked against the sources is what is
/// written to.
package func outputFolder(_ path: String, from base: String) -> URL {
    URL(fileURLWithPath: realPath(path.hasPrefix("/") ? path : base + "/" + path))
}

/// A file to write named by `path` (taken from `base` when relative): its
/// folder by its real path, its own name as given, so that a link there is
/// met as a link, never followed.
package func outputFileURL(_ path: String, from base: String) -> URL {
    let given = URL(fileURLWithPath: path.hasPrefix("/") ? path : base + "/" + path)
    return outputFolder(given.deletingLastPathComponent().path, from: base).appendingPathComponent(given.lastPathComponent)
}

/// What a link holds, as written; a byte that is not UTF-8 as `\x{e9}`, so
/// that a folder reached through `/proc/self/fd` keeps a name of its own.
private func linkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return displayName(buffer[..<count].map { UInt8(bitPattern: $0) })
}

/// Whether `inner` is `outer` or lies inside it, both real paths: by their
/// names, and by the folders themselves (device and inode), so that a bind
/// mount of `outer` elsewhere is inside it too.
package func isWithin(_ inner: String, _ outer: String) -> Bool {
    if inner == outer || inner.hasPrefix(outer == "/" ? "/" : outer + "/") { return true }
    guard let target = folderIdentity(outer) else { return false }
    var folder = inner
    while true {
        if folderIdentity(folder) == target { return true }
        guard folder != "/", let slash = folder.lastIndex(of: "/") else { return false }
        folder = slash == folder.startIndex ? "/" : String(folder[..<slash])
    }
}

/// A folder's device and inode, which every path to it shares.
private func folderIdentity(_ path: String) -> [UInt64]? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return [UInt64(info.st_dev), UInt64(info.st_ino)]
}
