import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One pipeline's lock file: held with `flock` for the whole run, so the
/// kernel frees it when a run dies; the file holds the holder's process id.
package final class RunLock {
    package struct Busy: Error, CustomStringConvertible {
        package var path: String
        package var holder: String
        /// What the lock guards, when its path does not say (`the export folder out/export`).
        package var guarding: String?
        package var description: String {
            let lock = guarding.map { "the lock of \($0) (\(path))" } ?? "the lock \(path)"
            return "another reckon run (process \(holder)) holds \(lock); try again when it has finished"
        }
    }

    private let fd: Int32
    package let url: URL
    /// The process id left in the file by a run that died holding it (a
    /// process with that id may be running now: its id was reused).
    package let staleHolder: String?

    /// Takes the lock or throws `Busy` naming the process that holds it.
    package init(at url: URL) throws {
        try AtomicFile.makeFolder(url.deletingLastPathComponent())
        self.url = url
        fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            throw OutputError(path: url.path, reason: errno == ELOOP ? "a link stands there; reckon does not follow it" : AtomicFile.lastError())
        }
        let previous = Self.contents(fd)
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw Busy(path: url.path, holder: previous.isEmpty ? "unknown" : previous)
        }
        staleHolder = previous.isEmpty ? nil : previous
        let text = "\(getpid())\n"
        let written = ftruncate(fd, 0) == 0 && text.withCString { pwrite(fd, $0, strlen($0), 0) } == text.utf8.count && fsync(fd) == 0
        guard written else {
            let reason = AtomicFile.lastError()
            close(fd)
            throw OutputError(path: url.path, reason: reason)
        }
    }

    /// Empties the file and lets the lock go.
    package func release() {
        ftruncate(fd, 0)
        flock(fd, LOCK_UN)
        close(fd)
    }

    private static func contents(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return "" }
        return String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
