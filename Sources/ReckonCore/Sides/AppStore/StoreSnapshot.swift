import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private copy of a SQLite store with its `-wal` and `-journal`, the
/// only files SQLite ever opens for a store side: the user's files are read
/// as bytes, never by SQLite, so nothing of theirs is locked, checkpointed,
/// rolled back or rebuilt.
///
/// The copy lives in a folder only reckon uses (`$TMPDIR/reckon-store-<pid>-…`,
/// mode 0700), removed when reckon exits. `-shm` is never copied: SQLite
/// rebuilds it, and a running app touches it all the time. A `-journal` left
/// by a writer that crashed (a hot journal) is rolled back in the copy, as
/// SQLite would roll it back in the store, so only saved changes are read.
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
    /// Whether the copies were decrypted (from an encrypted backup): their
    /// plain bytes never leave the private folder, so a quarantine takes the files as the backup holds them.
    let encrypted: Bool

    private init(folder: URL, name: String, walName: String, copied: [(name: String, from: String)], encrypted: Bool) {
        self.folder = folder
        self.name = name
        self.walName = walName
        self.copied = copied
        self.encrypted = encrypted
        database = folder.appendingPathComponent(Self.storeName)
    }

    deinit { PrivateFolder.remove(folder) }

    /// Why a store could not be copied.
    package struct Failure: Error, CustomStringConvertible {
        package var message: String
        /// The store was being written on every try: nothing is wrong with it, it is busy.
        package var beingWritten = false
        package var description: String { message }
    }

    /// How many times a store that is being written is tried, a second apart.
    static let tries = 3
    /// The copy's names: SQLite finds the `-wal` and `-journal` beside the database by name.
    static let storeName = "default.store"

    /// Copies `store`, its `wal` and its `journal` (those that exist) into a
    /// new private folder, under the temporary root of `process`. A store being written (one of its files changes
    /// size, time or inode while they are copied, or a writer holds its
    /// lock) is tried again a second later, `tries` times in all, and then
    /// fails with `beingWritten`. The `-wal` and `-journal` must be regular
    /// files: a link beside a store is not followed, as the store itself is
    /// not. Tests act on the store in `eachTry`, which gets each try's number
    /// after its copy.
    package static func take(
        store: String, wal: String, journal: String? = nil, named name: String, walNamed walName: String? = nil,
        keys: [String: EncryptedBackup.FileKey] = [:], process: ProcessSettings, eachTry: (Int) -> Void = { _ in }
    ) throws(Failure) -> StoreSnapshot {
        let walName = walName ?? name + "-wal"
        let journal = journal ?? store + "-journal"
        for (path, shown, what) in [(wal, walName, "write-ahead log"), (journal, name + "-journal", "rollback journal")] {
            switch FileKind(path: path) {
            case .missing, .regular: continue
            case .link: throw Failure(message: "\(shown), the store's \(what), is a link; links are not followed, so the store cannot be read whole")
            default: throw Failure(message: "\(shown), the store's \(what), is not a regular file, so the store cannot be read whole")
            }
        }
        let folder: URL
        do { folder = try PrivateFolder.make(prefix: "reckon-store", process: process) } catch { throw Failure(message: error.description) }
        let files = [(storeName, store), (storeName + "-wal", wal), (storeName + "-journal", journal)]
        for attempt in 1...tries {
            if attempt > 1 { sleep(1) }
            let before = files.map { Stamp(path: $0.1) }
            guard before[0] != nil else {
                PrivateFolder.remove(folder)
                throw Failure(message: "cannot be read: \(String(cString: strerror(errno)))")
            }
            let locked = isLockedForWriting(store)
            var copied: [(name: String, from: String)] = []
            if !locked {
                for ((copyName, source), stamp) in zip(files, before) where stamp != nil {
                    let target = folder.appendingPathComponent(copyName).path
                    unlink(target)
                    do { try copyFile(source, to: target, decrypting: keys[copyName]) } catch {
                        PrivateFolder.remove(folder)
                        throw error
                    }
                    copied.append((copyName, source))
                }
            }
            eachTry(attempt)
            // A file that appeared, went or changed while the others were copied is a new try.
            guard !locked, files.map({ Stamp(path: $0.1) }) == before, !isLockedForWriting(store) else { continue }
            for (copyName, _) in files where !copied.contains(where: { $0.name == copyName }) {
                unlink(folder.appendingPathComponent(copyName).path)
            }
            let snapshot = StoreSnapshot(folder: folder, name: name, walName: walName, copied: copied, encrypted: !keys.isEmpty)
            if copied.contains(where: { $0.name == storeName + "-journal" }) { snapshot.rollBack() }
            return snapshot
        }
        PrivateFolder.remove(folder)
        throw Failure(
            message:
                "the store was being written while reckon read it, on each of \(tries) tries a second apart; close the app and run again",
            beingWritten: true)
    }

    /// Whether another connection holds a write lock on the store (SQLite's
    /// RESERVED, PENDING or EXCLUSIVE lock, taken in rollback-journal mode
    /// while a transaction writes). Asked with `F_OFD_GETLK`, which takes no
    /// lock: a reader's shared lock does not count.
    static func isLockedForWriting(_ path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // SQLite's lock bytes: PENDING at 1 GiB, then RESERVED, then 510 SHARED bytes.
        var lock = flock()
        lock.l_type = Int16(F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0x4000_0000
        lock.l_len = 512
        /// `F_OFD_GETLK`, which Swift's Glibc module does not name.
        let getOpenFileDescriptionLock: Int32 = 36
        guard fcntl(fd, getOpenFileDescriptionLock, &lock) == 0 else { return false }
        return lock.l_type != Int16(F_UNLCK)
    }

    /// Rolls back, in the copy, the transaction a `-journal` holds, as
    /// SQLite does when it opens a store with a hot journal; a journal that
    /// is not hot is left alone by SQLite. A journal of a transaction over
    /// several databases names a super-journal outside the copy, which SQLite
    /// would read and may delete: reckon decides as SQLite would (the
    /// transaction is undone only while that file exists) and takes the name
    /// out of the copy, so SQLite reaches nothing outside the private folder.
    private func rollBack() {
        let journal = folder.appendingPathComponent(Self.storeName + "-journal").path
        if let superJournal = Self.superJournal(journal) {
            if access(superJournal.name, F_OK) != 0 {
                unlink(journal)
                return
            }
            let fd = Glibc.open(journal, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { return }
            let zeros = [UInt8](repeating: 0, count: 8)
            _ = pwrite(fd, zeros, zeros.count, off_t(superJournal.magicAt))
            close(fd)
        }
        // Any read makes SQLite roll a hot journal back; it needs to write the copy to do so.
        _ = try? SQLite(path: database.path, mode: .create).rows("PRAGMA schema_version")
    }

    /// The super-journal a rollback journal names at its end, read as
    /// SQLite's `readSuperJournal` reads it (a name of at most 512 bytes, its
    /// checksum, the journal's magic number), and where that magic number is.
    static func superJournal(_ journal: String) -> (name: String, magicAt: Int)? {
        guard let bytes = try? Data(contentsOf: URL(fileURLWithPath: journal), options: .alwaysMapped), bytes.count >= 16 else { return nil }
        func number(_ at: Int) -> UInt32 { bytes[(bytes.startIndex + at)..<(bytes.startIndex + at + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
        let magic: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
        let end = bytes.count
        let length = Int(number(end - 16))
        guard bytes.suffix(8).elementsEqual(magic), length > 0, length <= 512, length <= end - 16 else { return nil }
        let name = bytes[(bytes.startIndex + end - 16 - length)..<(bytes.startIndex + end - 16)]
        // SQLite's checksum adds each byte as a C char, signed on the machines reckon runs on.
        let sum = name.reduce(UInt32(0)) { $0 &+ UInt32(bitPattern: Int32(Int8(bitPattern: $1))) }
        guard sum == number(end - 12) else { return nil }
        return (String(decoding: name.prefix { $0 != 0 }, as: UTF8.self), end - 8)
    }

    /// Opens the copy for reading, mapped into memory unless `mapped` is
    /// false: SQLite then reads its pages without copying each one out of the
    /// page cache, which halves the check and the scan of a large store. Only
    /// the private copy is mapped, and nothing else can shorten it while it
    /// is read. Whole memos are read unmapped: every page of a long body read
    /// through the map would stay in the process's memory beside the body.
    package func open(mapped: Bool = true) throws(SQLite.Failure) -> SQLite {
        let db = try SQLite(path: database.path)
        if mapped { try db.execute("PRAGMA mmap_size = \(1 << 40)") }
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
        copied.compactMap { copyName, source in
            let url = encrypted ? URL(fileURLWithPath: source) : folder.appendingPathComponent(copyName)
            guard let bytes = try? Data(contentsOf: url, options: .alwaysMapped) else { return nil }
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
        /// A frame whose checksum fails, with a change committed after it in the same log:
        /// SQLite would stop at the broken frame and drop that change in silence. A crash
        /// leaves failing frames only after the last commit, which is not this.
        case brokenFrame
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
        if Self.commitAfterBrokenFrame(log, pageSize: Int(storePageSize)) { return .brokenFrame }
        return (log.count - 32) % (Int(storePageSize) + 24) == 0 ? .whole : .partialFrame
    }

    /// Walks the log's frames as SQLite does (salts as the header's, each
    /// frame's checksum chained from the one before, over words big- or
    /// little-endian as the magic number says) and tells whether a frame
    /// fails while a commit frame with the header's salts comes after it.
    static func commitAfterBrokenFrame(_ log: Data, pageSize: Int) -> Bool {
        let bytes = [UInt8](log)
        let bigEndian = bytes[3] == 0x83
        func word(_ at: Int) -> UInt32 {
            let b = bytes[at..<at + 4].map(UInt32.init)
            return bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
        }
        func big(_ at: Int) -> UInt32 { bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        func sum(_ range: Range<Int>, _ start: (UInt32, UInt32)) -> (UInt32, UInt32) {
            var (s0, s1) = start
            for at in stride(from: range.lowerBound, to: range.upperBound, by: 8) {
                s0 = s0 &+ word(at) &+ s1
                s1 = s1 &+ word(at + 4) &+ s0
            }
            return (s0, s1)
        }
        var chain = sum(0..<24, (0, 0))
        guard chain == (big(24), big(28)) else { return false }
        let salts = (big(16), big(20))
        let frame = 24 + pageSize
        var at = 32
        var broken = false
        while at + frame <= bytes.count {
            let sameLog = (big(at + 8), big(at + 12)) == salts
            if broken {
                if sameLog && big(at + 4) != 0 { return true }
            } else {
                let next = sum(at + 24..<at + frame, sum(at..<at + 8, chain))
                if sameLog && next == (big(at + 16), big(at + 20)) {
                    chain = next
                } else {
                    broken = true
                }
            }
            at += frame
        }
        return false
    }

    /// A regular file's size, modification time and inode, to tell whether
    /// it changed or was replaced; nil for a file that is missing or is not
    /// a regular file (a link is not followed).
    struct Stamp: Equatable {
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
        var inode: UInt64

        init?(path: String) {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            size = Int64(info.st_size)
            seconds = info.st_mtim.tv_sec
            nanoseconds = info.st_mtim.tv_nsec
            inode = UInt64(info.st_ino)
        }
    }

    /// Copies one file's bytes, decrypted with `key` (from an encrypted
    /// backup); a full disk names the private folder.
    private static func copyFile(_ source: String, to target: String, decrypting key: EncryptedBackup.FileKey?) throws(Failure) {
        // O_NONBLOCK: a FIFO put where the store was must not hang the run; O_NOFOLLOW: nor a link put there be followed.
        let input = Glibc.open(source, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard input >= 0 else {
            if errno == ELOOP { throw Failure(message: "\(source) is a link; links are not followed") }
            throw Failure(message: "\(source) cannot be read: \(String(cString: strerror(errno)))")
        }
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
        if let key { return try decryptingCopy(input, source: source, to: output, key: key, full: full) }
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

    /// Reads `input` whole, decrypts it with `key` (AES-256-CBC, zero IV)
    /// and writes the plain bytes to `output`, cut to the record's size, or,
    /// without one (`Manifest.db`), with its PKCS#7 padding taken off unless
    /// it is a whole number of SQLite pages. What does not decrypt is damage.
    private static func decryptingCopy(
        _ input: Int32, source: String, to output: Int32, key: EncryptedBackup.FileKey, full: (String) -> Failure
    ) throws(Failure) {
        let damaged = "\(source) cannot be decrypted whole, so the backup is damaged; make a new backup"
        var written = 0
        var total = 0
        var last = [UInt8]()
        do {
            try BackupCrypto.decrypt(
                with: key.key,
                input: {
                    var piece = Data(count: 1 << 20)
                    let count = piece.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                    guard count >= 0 else { throw Failure(message: "\(source) cannot be read: \(String(cString: strerror(errno)))") }
                    piece.count = count
                    return count == 0 ? nil : piece
                },
                body: { plain in
                    total += plain.count
                    // Only the bytes within the record's size are kept; the rest is padding.
                    let keep = key.size.map { min(plain.count, max(0, $0 - written)) } ?? plain.count
                    var done = 0
                    while done < keep {
                        let step = write(output, plain.baseAddress! + done, keep - done)
                        guard step > 0 else {
                            if step < 0 && errno == EINTR { continue }
                            throw full(step < 0 ? String(cString: strerror(errno)) : "nothing was written")
                        }
                        done += step
                    }
                    written += keep
                    // The last 16 plain bytes, whatever the pieces' sizes, for the padding.
                    last = Array((last + plain).suffix(16))
                })
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(message: damaged)
        }
        if let size = key.size {
            // The plain text is the file, then one to sixteen bytes of padding (none in some backups).
            guard written == size, total >= size, total <= size + 16 else {
                throw Failure(message: "\(source) holds \(total) bytes where its record says \(size), so the backup is damaged; make a new backup")
            }
            // What lies past the size is PKCS#7 padding, each byte its length; anything else is damage.
            guard total == size || last.suffix(total - size).allSatisfy({ Int($0) == total - size }) else { throw Failure(message: damaged) }
        } else if total % 512 != 0 {
            guard let pad = last.last, (1...16).contains(Int(pad)), last.suffix(Int(pad)).allSatisfy({ $0 == pad }) else {
                throw Failure(message: damaged)
            }
            guard ftruncate(output, off_t(total - Int(pad))) == 0 else { throw full(String(cString: strerror(errno))) }
        }
    }
}
