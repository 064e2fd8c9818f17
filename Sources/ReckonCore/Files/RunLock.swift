import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One pipeline's lock file: held with `flock` for the whole run, so the
/// kernel frees it when a run dies; the file holds the holder's process id.
/// A target's lock is also taken shared, by the commands that read it.
package final class RunLock {
    package struct Busy: Error, CustomStringConvertible {
        package var path: String
        package var holder: String
        /// What the lock guards, when its path does not say (`the export folder out/export`).
        package var guarding: String?
        /// How long reckon waited for commands reading the target to finish; nil when a writer holds it.
        package var readersFor: Duration?
        package var description: String {
            let lock = guarding.map { "the lock of \($0) (\(path))" } ?? "the lock \(path)"
            if let readersFor {
                return "reckon commands reading it hold \(lock); tried for \(RunLock.words(readersFor)), try again when they have finished"
            }
            return "another reckon run (process \(holder)) holds \(lock); try again when it has finished"
        }
    }

    /// The lock was held by a writer (apply or undo) for all of `waited`.
    package struct Written: Error, CustomStringConvertible {
        package var holder: String
        package var waited: Duration
        package var description: String {
            "is being changed by reckon apply or undo (process \(holder)); tried for \(RunLock.words(waited)), run again when it has finished"
        }
    }

    private let fd: Int32
    package let url: URL
    /// The process id left in the file by a run that died holding it (a
    /// process with that id may be running now: its id was reused).
    package let staleHolder: String?
    /// Shared with other readers: the file is neither written nor emptied.
    private let shared: Bool

    /// Takes the lock alone or throws `Busy` naming the process that holds
    /// it. Commands reading the target (`init(sharing:waiting:)`) are waited
    /// for, up to `readers`; a writer never is.
    package init(at url: URL, readers: Duration = .zero) throws {
        fd = try Self.open(url)
        self.url = url
        shared = false
        let previous = Self.contents(fd)
        let deadline = ContinuousClock.now + readers
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            // Readers share the lock; a writer holds it alone.
            let onlyReaders = flock(fd, LOCK_SH | LOCK_NB) == 0
            if onlyReaders { flock(fd, LOCK_UN) }
            guard onlyReaders, ContinuousClock.now < deadline else {
                let holder = Self.contents(fd)
                close(fd)
                throw Busy(path: url.path, holder: holder.isEmpty ? "unknown" : holder, readersFor: onlyReaders ? readers : nil)
            }
            usleep(20_000)
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

    /// Takes the lock shared with other readers, waiting up to `waiting` while
    /// a writer holds it, then throws `Written` naming it.
    package init(sharing url: URL, waiting: Duration) throws {
        fd = try Self.open(url)
        self.url = url
        shared = true
        staleHolder = nil
        let deadline = ContinuousClock.now + waiting
        while flock(fd, LOCK_SH | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else {
                let holder = Self.contents(fd)
                close(fd)
                throw Written(holder: holder.isEmpty ? "unknown" : holder, waited: waiting)
            }
            usleep(20_000)
        }
    }

    private static func open(_ url: URL) throws -> Int32 {
        try AtomicFile.makeFolder(url.deletingLastPathComponent())
        let fd = Glibc.open(url.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            throw OutputError(path: url.path, reason: errno == ELOOP ? "a link stands there; reckon does not follow it" : AtomicFile.lastError())
        }
        return fd
    }

    /// A wait in words: `30 s`, `1.5 s`.
    static func words(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    /// Empties the file and lets the lock go.
    package func release() {
        if !shared { ftruncate(fd, 0) }
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
