import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Folders only this process uses (mode 0700, under the temporary root
/// of `ProcessSettings`, `$TMPDIR` for the command line). The library
/// installs no handler: the process around it calls `removeAll()` when it
/// exits (the command line does on a normal exit, and on SIGINT, SIGTERM
/// and SIGHUP). SIGKILL cannot be caught, so each new folder first sweeps
/// the folders left by runs whose process is gone.
package enum PrivateFolder {
    /// Makes `<temporary root>/<prefix>-<pid>-XXXXXX`, the root `process`
    /// names, after sweeping folders of that prefix whose process no longer
    /// runs; first calls what `process` asks to be called before.
    package static func make(prefix: String, process: ProcessSettings) throws(OutputError) -> URL {
        process.beforePrivateFolder?()
        let parent = process.temporaryRoot
        sweep(prefix: prefix, in: parent)
        var template = Array("\(parent)/\(prefix)-\(getpid())-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else {
            throw OutputError(
                path: parent, reason: namingTMPDIR("cannot make a private folder there: \(AtomicFile.lastError())", in: process))
        }
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        madeHere.withLock { $0.append(path) }
        return URL(fileURLWithPath: path)
    }

    /// Removes a folder made here, now rather than at exit.
    package static func remove(_ folder: URL) {
        try? FileTree.remove(folder.path)
        madeHere.withLock { $0.removeAll { $0 == folder.path } }
    }

    /// `reason`, why something could not be made in `temporaryRoot`, and,
    /// when `TMPDIR` chose that folder, that it did and what to do: a person
    /// who set it long ago would not think of it from the path alone.
    package static func namingTMPDIR(_ reason: String, in process: ProcessSettings) -> String {
        guard let value = process.temporaryRootVariable else { return reason }
        return reason + "; the folder is TMPDIR's (TMPDIR=\(value)): set TMPDIR to a folder you can write in, or unset it to use /tmp"
    }

    /// The names reckon puts in a private folder: a store's copy, and rclone's list of files.
    static let ownNames: Set<String> = ["default.store", "default.store-wal", "default.store-shm", "default.store-journal", "files-from.txt"]

    /// Removes `<prefix>-<pid>-…` folders in `parent` whose process is gone
    /// and that can only be reckon's: this user's, mode 0700, the pid
    /// written as reckon writes it, holding nothing but files reckon makes.
    package static func sweep(prefix: String, in parent: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [] where name.hasPrefix(prefix + "-") {
            let rest = name.dropFirst(prefix.count + 1)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), String(pid) == rest[..<dash], pid > 0, pid != getpid()
            else { continue }
            var info = stat()
            let path = parent + "/" + name
            // The temporary folder is shared by every program that uses the
            // library (the tests run it inside their own process): a live one
            // is not reckon's executable, so here only a pid that is gone or a
            // zombie counts, and a reused pid leaves its folder till reboot.
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_mode & 0o7777 == 0o700, info.st_uid == getuid(),
                processIsGone(pid, running: nil),
                let inside = try? FileManager.default.contentsOfDirectory(atPath: path),
                inside.allSatisfy({ ownNames.contains($0) && FileKind(path: path + "/" + $0).isRegular })
            else { continue }
            try? FileTree.remove(path)
        }
    }

    /// Whether the process `pid` has ended, the one check of every "is that
    /// run (or child) gone": no such process; a zombie (ended, not yet reaped
    /// by its parent, which `kill(pid, 0)` still finds); or a process whose
    /// `/proc/<pid>/exe` has another file name than `executable` (reckon's
    /// own by default): the pid reused by another program. The name, not the
    /// whole path, so that a live reckon installed elsewhere (or rebuilt,
    /// "(deleted)") is never taken for gone. A process of another user, which
    /// cannot be looked into, counts as running. With `executable` nil, no
    /// program is checked.
    package static func processIsGone(_ pid: pid_t, running executable: String? = ownExecutable) -> Bool {
        guard pid > 0 else { return false }
        if kill(pid, 0) != 0 { return errno == ESRCH }
        let (stat, statError) = procText("/proc/\(pid)/stat")
        guard let stat else { return statError == ENOENT }
        // The state follows the command's name, which may hold `)`: after the last one.
        if let close = stat.lastIndex(of: ")"), let state = stat[close...].dropFirst(2).first, state == "Z" || state == "X" { return true }
        guard let executable else { return false }
        // No link at all (ENOENT) is a kernel thread, or a process that ended just now.
        let (link, linkError) = procLink("/proc/\(pid)/exe")
        guard let link else { return linkError == ENOENT }
        return fileName(link) != fileName(executable)
    }

    /// reckon's own program, as `/proc/self/exe` names it.
    package static let ownExecutable: String? = procLink("/proc/self/exe").0

    /// The last part of a path, without the " (deleted)" the kernel adds to a replaced program.
    private static func fileName(_ path: String) -> Substring {
        let kept = path.hasSuffix(" (deleted)") ? path.dropLast(10) : Substring(path)
        return kept.split(separator: "/").last ?? kept
    }

    /// A small file of /proc (its size reads as 0), or nil and errno.
    private static func procText(_ path: String) -> (String?, Int32) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return (nil, errno) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        guard count >= 0 else { return (nil, errno) }
        return (String(decoding: buffer[0..<count], as: UTF8.self), 0)
    }

    /// Where a link of /proc points, or nil and errno.
    private static func procLink(_ path: String) -> (String?, Int32) {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return (nil, errno) }
        return (String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self), 0)
    }

    /// The folders made here and not yet removed: what `removeAll()` removes.
    private static let madeHere = Mutex<[String]>([])

    /// Removes every folder made here and not yet removed: what the process
    /// around the library calls as it exits and on a signal that ends it.
    package static func removeAll() {
        for path in madeHere.withLock({ $0 }) { try? FileTree.remove(path) }
    }
}
