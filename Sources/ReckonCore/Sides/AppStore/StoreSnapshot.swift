import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private copy of a SQLite store and its `-wal`, the only files SQLite
/// ever opens for a store side: the user's files are read as bytes, never
/// by SQLite, so nothing of theirs is locked, checkpointed or rebuilt.
///
/// The copy lives in a folder only reckon uses (`$TMPDIR/reckon-store-<pid>-…`,
/// mode 0700), removed when reckon exits. `-shm` is never copied: SQLite
/// rebuilds it, and a running app touches it all the time.
package final class StoreSnapshot: Sendable {
    /// The private folder.
    package let folder: URL
    /// The copy of the store, which SQLite opens.
    package let database: URL
    /// What the copy was made from, as problems name it: the store's file name, and its `-wal`'s.
    package let name: String
    package let walName: String
    /// The copied files' names inside the folder, with the paths they were copied from.
    package let copied: [(name: String, from: String)]

    private init(folder: URL, name: String, walName: String, copied: [(name: String, from: String)]) {
        self.folder = folder
        self.name = name
        self.walName = walName
        self.copied = copied
        database = folder.appendingPathComponent(Self.storeName)
    }

    deinit { PrivateFolder.remove(folder) }

    /// Why a store could not be copied.
    package struct Failure: Error, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    /// How many times a store that changes while it is copied is tried.
    static let tries = 3
    /// The copy's names: SQLite finds the `-wal` beside the database by name.
    static let storeName = "default.store"

    /// Copies `store` and `wal` (when it exists) into a new private folder,
    /// checking that each file's size and modification time stay the same
    /// while it is copied; a store that keeps changing fails after `tries`.
    /// Tests change the store in `afterCopy`, which gets each source copied.
    package static func take(
        store: String, wal: String, named name: String, walNamed walName: String? = nil,
        afterCopy: (String) -> Void = { _ in }
    ) throws(Failure) -> StoreSnapshot {
        let walName = walName ?? name + "-wal"
        var info = stat()
        if stat(wal, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            throw Failure(message: "\(walName), the store's write-ahead log, is not a regular file, so the store cannot be read whole")
        }
        let folder: URL
        do { folder = try PrivateFolder.make(prefix: "reckon-store") } catch { throw Failure(message: error.description) }
        let files = [(storeName, store), (storeName + "-wal", wal)]
        for _ in 0..<tries {
            var copied: [(name: String, from: String)] = []
            var stable = true
            for (copyName, source) in files {
                let before = Stamp(path: source)
                guard let before else {
                    if copyName == storeName {
                        PrivateFolder.remove(folder)
                        throw Failure(message: "cannot be read: \(String(cString: strerror(errno)))")
                    }
                    continue
                }
                let target = folder.appendingPathComponent(copyName).path
                unlink(target)
                do { try copyFile(source, to: target) } catch {
                    PrivateFolder.remove(folder)
                    throw error
                }
                copied.append((copyName, source))
                afterCopy(source)
                if Stamp(path: source) != before { stable = false }
            }
            // The `-wal` may appear, go or change while the store was copied.
            if stable,
                files.allSatisfy({ copyName, source in
                    let now = Stamp(path: source)
                    let copy = Stamp(path: folder.appendingPathComponent(copyName).path)
                    return now?.size == copy?.size
                })
            {
                return StoreSnapshot(folder: folder, name: name, walName: walName, copied: copied)
            }
        }
        PrivateFolder.remove(folder)
        throw Failure(message: "the store kept changing while it was read; close the app or copy the store yourself")
    }

    /// Opens the copy for reading, mapped into memory: SQLite then reads its
    /// pages without copying each one out of the page cache, which halves
    /// the check and the scan of a large store. Only the private copy is
    /// mapped, and nothing else can shorten it while it is read.
    package func open() throws(SQLite.Failure) -> SQLite {
        let db = try SQLite(path: database.path)
        try db.execute("PRAGMA mmap_size = \(1 << 40)")
        return db
    }

    /// The bytes of every copied file, as they were judged, for the
    /// quarantine (mapped, not read into memory).
    /// Why SQLite could not go on with the copy, a file's trouble in its
    /// private folder (a disk error, a full disk), said of that folder.
    func troubleWords(_ failure: SQLite.Failure) -> String {
        "cannot read it through its private copy in \(folder.path): \(failure.words); check that folder's disk (TMPDIR) and run again"
    }

    package func damagedFiles() -> [DamagedFile] {
        copied.compactMap { copyName, _ in
            guard let bytes = try? Data(contentsOf: folder.appendingPathComponent(copyName), options: .alwaysMapped) else { return nil }
            return DamagedFile(path: copyName == Self.storeName ? name : walName, bytes: bytes)
        }
    }

    /// What the copied `-wal` is.
    package enum WALState {
        /// There is none, or it is empty.
        case none
        /// SQLite's log header, with the store's page size, and whole frames.
        case whole
        /// A log that ends in part of a frame, as after a crash.
        case partialFrame
        /// Bytes that do not start as SQLite's log does: SQLite would pass over them in silence.
        case notAWAL
    }

    /// Checks the copied `-wal`'s header (magic number, format, page size)
    /// against the store, since SQLite ignores a log it does not recognise
    /// without a word and the newest memos would be lost unseen.
    package func walState() -> WALState {
        guard let log = try? Data(contentsOf: folder.appendingPathComponent(Self.storeName + "-wal"), options: .alwaysMapped), !log.isEmpty,
            let store = FileHandle(forReadingAtPath: database.path)
        else { return .none }
        defer { try? store.close() }
        guard let header = try? store.read(upToCount: 18), header.count == 18 else { return .notAWAL }
        func number(_ data: Data, _ at: Int, _ count: Int) -> UInt32 {
            data.dropFirst(at).prefix(count).reduce(0) { $0 << 8 | UInt32($1) }
        }
        let storePageSize = number(header, 16, 2) == 1 ? 65_536 : number(header, 16, 2)
        guard log.count >= 32, [0x377f_0682, 0x377f_0683].contains(number(log, 0, 4)), number(log, 4, 4) == 3_007_000,
            number(log, 8, 4) == storePageSize
        else { return .notAWAL }
        return (log.count - 32) % (Int(storePageSize) + 24) == 0 ? .whole : .partialFrame
    }

    /// A file's size and modification time, to tell whether it changed.
    struct Stamp: Equatable {
        var size: Int64
        var seconds: Int
        var nanoseconds: Int

        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            size = Int64(info.st_size)
            seconds = info.st_mtim.tv_sec
            nanoseconds = info.st_mtim.tv_nsec
        }
    }

    /// Copies one file's bytes; a full disk names the private folder.
    private static func copyFile(_ source: String, to target: String) throws(Failure) {
        // O_NONBLOCK: a FIFO put where the store was must not hang the run.
        let input = Glibc.open(source, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard input >= 0 else { throw Failure(message: "\(source) cannot be read: \(String(cString: strerror(errno)))") }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Failure(message: "\(source) is not a regular file, so it is not read")
        }
        let output = Glibc.open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw Failure(message: "cannot copy the store into \(target): \(String(cString: strerror(errno)))") }
        defer { close(output) }
        func full(_ reason: String) -> Failure {
            Failure(message: "cannot copy the store into the private folder \((target as NSString).deletingLastPathComponent): \(reason)")
        }
        // In the kernel when it can (as cp does); byte by byte where it cannot.
        while true {
            let copied = reckon_copy_file_range(input, output, 1 << 30)
            if copied > 0 { continue }
            if copied == 0 { return }
            if errno == ENOSPC || errno == EDQUOT { throw full(String(cString: strerror(errno))) }
            guard [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, EBADF].contains(errno) else {
                throw Failure(message: "\(source) cannot be read: \(String(cString: strerror(errno)))")
            }
            break
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = read(input, &buffer, buffer.count)
            if count == 0 { break }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw Failure(message: "\(source) cannot be read: \(String(cString: strerror(errno)))")
            }
            var written = 0
            while written < count {
                let step = buffer[written..<count].withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
                guard step > 0 else {
                    if step < 0 && errno == EINTR { continue }
                    throw full(step < 0 ? String(cString: strerror(errno)) : "nothing was written")
                }
                written += step
            }
        }
    }
}
