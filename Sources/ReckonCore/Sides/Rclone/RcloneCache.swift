import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The cache a remote's memo files are downloaded into: what it keeps of
/// each file, and the keeper that moves downloaded files into it.
extension RcloneStore {
    /// Checks each memo file rclone reports copied against the listing and
    /// moves it from the staging folder into the cache, on another core while
    /// rclone downloads the rest, so that little is left to check once the
    /// last file came. It keeps only a file that is certainly the listed one
    /// (size and time as staged, then size and MD5 of its bytes); any other
    /// it leaves staged, for the check after the copy to judge and name.
    final class Keeper: Sendable {
        private struct State {
            var waiting: [String] = []
            /// The files to keep, by name: nil until the listing is known.
            var wanted: [String: Rclone.Entry]?
            var kept: [String: CachedFile] = [:]
            var working = false

            /// Whether the caller is to start the work: names wait, the listing is known, and none runs.
            mutating func claim() -> Bool {
                guard wanted != nil, !waiting.isEmpty, !working else { return false }
                working = true
                return true
            }

            /// The names to judge next and the listing, or nil (and the work ends) when none wait.
            mutating func next() -> (names: [String], wanted: [String: Rclone.Entry])? {
                guard let wanted, !waiting.isEmpty else {
                    working = false
                    return nil
                }
                defer { waiting = [] }
                return (waiting, wanted)
            }
        }

        private let state = Mutex(State())
        private let work = DispatchGroup()
        let staging: URL
        let memosFolder: URL
        /// The threads the copied files are judged on.
        let workers: Workers

        init(staging: URL, memosFolder: URL, on workers: Workers) {
            self.workers = workers
            self.staging = staging
            self.memosFolder = memosFolder
        }

        /// rclone copied `name` whole (called as it logs it).
        func copied(_ name: String) {
            let claimed = state.withLock { state in
                state.waiting.append(name)
                return state.claim()
            }
            if claimed { startWork() }
        }

        /// From now on, keeps the files of `wanted` that rclone copied, those already reported first.
        func start(_ wanted: [String: Rclone.Entry]) {
            let claimed = state.withLock { state in
                state.wanted = wanted
                return state.claim()
            }
            if claimed { startWork() }
        }

        /// Waits until every file reported so far was judged; the files kept, by name.
        func finish() -> [String: CachedFile] {
            work.wait()
            return state.withLock { $0.kept }
        }

        private func startWork() {
            workers.async(group: work) { [self] in
                while let next = state.withLock({ $0.next() }) {
                    var kept: [String: CachedFile] = [:]
                    for name in next.names {
                        if let entry = next.wanted[name], let file = keep(entry) { kept[name] = file }
                    }
                    state.withLock { $0.kept.merge(kept) { _, new in new } }
                }
            }
        }

        /// The staged file, moved into the cache, when it is the listed one; nil leaves it staged.
        private func keep(_ entry: Rclone.Entry) -> CachedFile? {
            let staged = staging.appendingPathComponent(entry.name)
            guard Remote.isStaged(atPath: staged.path, as: entry), let bytes = try? Data(contentsOf: staged), Int64(bytes.count) == entry.size,
                entry.md5.map({ $0 == SHA256.md5Hex(of: bytes) }) ?? true
            else { return nil }
            let target = memosFolder.appendingPathComponent(entry.name).path
            guard rename(staged.path, target) == 0 else { return nil }
            var file = CachedFile(entry, sha256: SHA256.hex(of: bytes))
            file.stamp = CachedFile.stamp(atPath: target)
            return file
        }
    }

    /// What the cache knows of one memo file: the listing it was downloaded
    /// under (size, time, MD5 when the backend gives one), the SHA-256 of the
    /// bytes kept and the kept file's own stamp (size, times to the
    /// nanosecond, inode), so a cached file changed on disk is downloaded again.
    struct CachedFile: Sendable, Equatable {
        var size: Int64
        var modTime: String
        var md5: String?
        var sha256: String
        var stamp: String?

        /// A file's size, modification and change times, and inode: a change
        /// time cannot be set back, so an edit always changes the stamp.
        static func stamp(atPath path: String) -> String? {
            var info = stat()
            return lstat(path, &info) == 0 ? stamp(info) : nil
        }

        /// The stamp of a regular file's status; nil for any other kind of file.
        private static func stamp(_ info: stat) -> String? {
            guard info.st_mode & S_IFMT == S_IFREG else { return nil }
            return "\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec):\(info.st_ino)"
        }

        /// The names of cached files whose stamp is the one recorded: each looked up
        /// in the folder opened once, not by its whole path.
        static func stampsKept(_ files: [String: CachedFile], in folder: URL) -> Set<String> {
            guard let opened = OpenFolder(folder.path) else { return [] }
            var info = stat()
            return Set(
                files.compactMap { name, file in
                    guard let recorded = file.stamp, fstatat(opened.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, stamp(info) == recorded else {
                        return nil
                    }
                    return name
                })
        }

        /// Whether the cached file is still the bytes downloaded: by its
        /// stamp, else by its SHA-256.
        func isKept(atPath path: String) -> Bool {
            guard let now = Self.stamp(atPath: path) else { return false }
            if now == stamp { return true }
            return (try? Data(contentsOf: URL(fileURLWithPath: path))).map { SHA256.hex(of: $0) == sha256 } ?? false
        }

        init(_ entry: Rclone.Entry, sha256: String) {
            size = entry.size
            modTime = entry.modTime
            md5 = entry.md5
            self.sha256 = sha256
        }

        /// Whether a listing entry is the file this was downloaded as.
        func matches(_ entry: Rclone.Entry) -> Bool {
            size == entry.size && modTime == entry.modTime && md5 == entry.md5
        }

        /// The cache's record of what it holds, one line per file after a
        /// version line: name, size, time, MD5 or `-`, SHA-256, stamp or `-`,
        /// separated by tabs. Names are memo file names (`<uuid>.json`), so
        /// they never hold a tab or a line break.
        static let fileName = "fingerprints.tsv"
        static let versionLine = "reckon cache fingerprints 1"

        /// The record; an unreadable one is an empty cache, and an unreadable
        /// line a file not cached, so those are downloaded again.
        static func read(_ url: URL) -> [String: CachedFile] {
            guard let data = try? Data(contentsOf: url) else { return [:] }
            return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> [String: CachedFile] in
                var lines = bytes.split(separator: UInt8(ascii: "\n"))[...]
                guard let first = lines.popFirst(), first.elementsEqual(versionLine.utf8) else { return [:] }
                var result: [String: CachedFile] = [:]
                result.reserveCapacity(lines.count)
                for line in lines {
                    let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
                        .map { String(decoding: UnsafeRawBufferPointer(rebasing: $0), as: UTF8.self) }
                    guard fields.count == 6, let size = Int64(fields[1]) else { continue }
                    var file = CachedFile(
                        Rclone.Entry(
                            name: fields[0], path: fields[0], size: size, modTime: fields[2], isDir: false,
                            md5: fields[3] == "-" ? nil : fields[3], id: nil), sha256: fields[4])
                    file.stamp = fields[5] == "-" ? nil : fields[5]
                    result[fields[0]] = file
                }
                return result
            }
        }

        /// The record's bytes, files in name order.
        static func data(_ files: [String: CachedFile]) -> Data {
            var text = versionLine + "\n"
            // The names alone are sorted: moving whole entries about costs more than looking each up again.
            for name in files.keys.sorted() {
                let file = files[name]!
                text += "\(name)\t\(file.size)\t\(file.modTime)\t\(file.md5 ?? "-")\t\(file.sha256)\t\(file.stamp ?? "-")\n"
            }
            return Data(text.utf8)
        }
    }
}
