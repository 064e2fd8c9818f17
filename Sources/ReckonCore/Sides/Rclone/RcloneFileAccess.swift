import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The files of a memo folder in an rclone remote: listed and fetched in one
/// call each, written by `copyto` a temporary name and `moveto` the target.
package struct RcloneFileAccess: FileAccess {
    let rclone: Rclone
    /// The folder holding `index.json` in the remote.
    let root: String
    package let shownRoot: String
    package let limits: ReadLimits
    /// What the process decides for the access (child environment, private folders).
    let process: ProcessSettings

    /// Lists the remote once to find the folder holding `index.json`, or its
    /// parent holding `60dMemo/`, as `RcloneStore` finds it.
    init(_ side: RcloneSide, shown: String, limits: ReadLimits, process: ProcessSettings) throws(MemoFolderError) {
        self.limits = limits
        self.process = process
        var rclone: Rclone
        do { rclone = try Rclone(process: process, config: side.config, flags: side.flags) } catch {
            throw MemoFolderError(path: shown, reason: error.message)
        }
        rclone.connectTimeout = .seconds(side.connectTimeout)
        rclone.ioTimeout = .seconds(side.ioTimeout)
        rclone.callLimit = .seconds(side.callLimit)
        let top: [Rclone.Entry]
        do { top = try rclone.lsjson(side.remote, filesOnly: false, hash: false) } catch {
            throw MemoFolderError(path: shown, reason: error.message)
        }
        let holdsIndex = top.contains { $0.name == "index.json" || ($0.name == "memos" && $0.isDir) }
        let nested = !holdsIndex && top.contains { $0.name == MemoFolder.nestedFolder && $0.isDir }
        self.rclone = rclone
        root = nested ? Rclone.joined(side.remote, MemoFolder.nestedFolder) : side.remote
        shownRoot = nested ? joinPath(shown, MemoFolder.nestedFolder) : shown
    }

    package var localFolder: URL? { nil }

    package func read(_ files: [MemoFolderFile]) throws(MemoFolderError) -> [String: FileRead?] {
        try readRemote(files, rclone: rclone, root: root)
    }

    /// The target is read again right before: no compare-and-swap over
    /// rclone, so the race is narrowed, not closed.
    package func write(_ data: Data, to file: MemoFolderFile, expecting: String?, grant: WriteGrant) throws(MemoFolderError) {
        let now = try read([file])[file.path] ?? nil
        guard now?.tag.sha256 == expecting else { throw changed(file, now: now?.tag.sha256) }
        try writeRemote(data, to: file, rclone: rclone, root: root, grant: grant)
    }

    package func remove(_ file: MemoFolderFile, grant: WriteGrant) throws(MemoFolderError) {
        // rclone's deletefile says the same for an absent file as for any failure: the listing tells.
        let listed: [Rclone.Entry]
        do {
            listed = try rclone.lsjson(file.folder.map { Rclone.joined(root, $0) } ?? root, filesOnly: false, hash: false)
        } catch  where file.folder != nil && error.exitCode == 3 {
            return
        } catch {
            throw failure(file.folder ?? "", error.message)
        }
        let same = listed.filter { $0.name == file.name }
        guard !same.isEmpty else { return }
        guard same.count == 1, !same[0].isDir else {
            throw failure(
                file.path, same.count > 1 ? "the remote holds \(same.count) files of this name; reckon does not pick one" : "is a folder, not a file")
        }
        do {
            try rclone.run(["deletefile", "--", Rclone.joined(root, file.path)], grant: grant)
        } catch {
            throw failure(file.path, error.message)
        }
    }

    package func removeLeftovers(known: Set<String>, grant: WriteGrant) -> [String] {
        var removed: [String] = []
        for (folderName, folder) in [("", root), ("memos/", Rclone.joined(root, "memos"))] {
            guard let listed = try? rclone.lsjson(folder, filesOnly: true, hash: false) else { continue }
            for entry in listed where isLeftover(entry.name, local: false) && entry.size <= limits.indexSizeLimit {
                guard
                    entry.size == 0
                        || (try? rclone.cat(Rclone.joined(folder, entry.name), limit: limits.indexSizeLimit))
                            .map({ known.contains(SHA256.hex(of: $0)) }) == true,
                    (try? rclone.run(["deletefile", "--", Rclone.joined(folder, entry.name)], grant: grant)) != nil
                else { continue }
                removed.append(folderName + entry.name)
            }
        }
        return removed
    }

    /// One listing of the folder holding `index.json` (when it is asked for)
    /// and one of `memos/` (when a memo file is), then one `copy` of every
    /// file listed into a private folder, each checked against its listed size.
    func readRemote(_ files: [MemoFolderFile], rclone: Rclone, root: String) throws(MemoFolderError) -> [String: FileRead?] {
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
                throw failure(file.path, "is \(counted(entries[0].size, "byte")), over the limit of \(counted(limit(file), "byte"))")
            }
            wanted[file] = entries[0]
        }
        guard !wanted.isEmpty else { return result }
        let local: URL
        do { local = try PrivateFolder.make(prefix: "reckon-read", process: process) } catch {
            throw failure("", "reckon cannot make a private folder: \(error.description)")
        }
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
                throw failure(file.path, "changed while it was being read (listed as \(counted(entry.size, "byte")), \(data.count) came); try again")
            }
            result[file.path] = FileRead(
                data: data,
                tag: FileTag(
                    size: entry.size, modified: Timestamp(iso8601: entry.modTime),
                    sha256: SHA256.hex(of: data)))
        }
        return result
    }

    private func writeRemote(_ data: Data, to file: MemoFolderFile, rclone: Rclone, root: String, grant: WriteGrant) throws(MemoFolderError) {
        let local: URL
        do { local = try PrivateFolder.make(prefix: "reckon-write", process: process) } catch {
            throw failure("", "reckon cannot make a private folder: \(error.description)")
        }
        defer { PrivateFolder.remove(local) }
        let upload = local.appendingPathComponent(file.name)
        do { try data.write(to: upload) } catch { throw failure(file.path, "cannot be staged for upload: \(errorWords(error))") }
        let temporary = Rclone.joined(
            root, (file.folder.map { $0 + "/" } ?? "") + MemoFolderWriter.temporaryPrefix + "\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        // --ignore-times: rclone 1.60 takes a file of the same size and second for the same file, and moveto would then
        // drop the new bytes and keep the old file.
        do {
            try rclone.run(["copyto", "--ignore-times", "--", upload.path, temporary], grant: grant)
        } catch {
            throw failure(file.path, error.message)
        }
        do {
            try rclone.run(["moveto", "--ignore-times", "--", temporary, Rclone.joined(root, file.path)], grant: grant)
        } catch {
            _ = try? rclone.run(["deletefile", "--", temporary], grant: grant)
            throw failure(file.path, error.message)
        }
    }
}
