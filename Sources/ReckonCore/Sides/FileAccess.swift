import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a plan records of one file and apply checks again right before
/// writing it (the change tag).
package struct FileTag: Sendable, Equatable, Codable {
    package var size: Int64
    /// The file's modification time on disk, or the remote's ModTime.
    package var modified: Timestamp?
    /// The SHA-256 of the file's bytes, in small hexadecimal letters.
    package var sha256: String

    package init(size: Int64, modified: Timestamp?, sha256: String) {
        self.size = size
        self.modified = modified
        self.sha256 = sha256
    }
}

/// One file of a memo folder as read: its bytes and its change tag.
package struct FileRead: Sendable, Equatable {
    package var data: Data
    package var tag: FileTag
}

/// A file of a memo folder that could not be read or written: the file, as
/// the side's path names it, and why.
package struct MemoFolderError: Error, Equatable, CustomStringConvertible {
    /// The side's path and the file inside it (`../drive/60dMemo/memos/….json`), secrets masked.
    package var path: String
    package var reason: String
    /// The file was not as the caller read it when the write came: nothing was written.
    package var changedSince = false
    package var description: String { "\(path): \(reason)" }
}

/// The only files reckon reads or writes in a memo folder: `index.json` and
/// `memos/<uuid>.json`. A path is taken apart into these validated parts,
/// and the paths used are built from them alone (DESIGN §5.4).
package struct MemoFolderFile: Sendable, Hashable {
    /// `memos` for a memo file, nil for `index.json`.
    var folder: String?
    /// `index.json`, or the memo's id as the caller spells it and `.json`.
    var name: String

    /// The file a relative path names, or nil for any other path.
    init?(_ path: String) {
        if path == "index.json" {
            (folder, name) = (nil, "index.json")
            return
        }
        guard path.hasPrefix("memos/"), path.hasSuffix(".json") else { return nil }
        let stem = path.dropFirst(6).dropLast(5)
        guard MemoID(stem) != nil else { return nil }
        (folder, name) = ("memos", String(stem) + ".json")
    }

    var path: String { folder.map { $0 + "/" + name } ?? name }
}
/// How the files of a memo folder are reached: on disk, or in an rclone
/// remote. Each kind of side that holds files gives one
/// (`SideKind.fileAccess`); a store's memos are rows, never files.
package protocol FileAccess: Sendable {
    /// The folder holding `index.json` as the user named it (`60dMemo` added when nested), secrets masked.
    var shownRoot: String { get }
    var limits: ReadLimits { get }
    /// The folder on this machine that holds the files, whose free space a write uses; nil for a remote.
    var localFolder: URL? { get }
    /// Each file's bytes and tag by its path; nil when the file is absent.
    func read(_ files: [MemoFolderFile]) throws(MemoFolderError) -> [String: FileRead?]
    /// Creates or replaces one file atomically, only if it still holds what the caller read.
    func write(_ data: Data, to file: MemoFolderFile, expecting: String?, grant: WriteGrant) throws(MemoFolderError)
    /// Removes one file; an absent file is left absent.
    func remove(_ file: MemoFolderFile, grant: WriteGrant) throws(MemoFolderError)
    /// Removes the temporary files a killed run left, and says which.
    func removeLeftovers(known: Set<String>, grant: WriteGrant) -> [String]
}

extension FileAccess {
    func failure(_ path: String, _ reason: String) -> MemoFolderError {
        MemoFolderError(path: joinPath(shownRoot, path), reason: reason)
    }

    func limit(_ file: MemoFolderFile) -> Int64 { file.folder == nil ? limits.indexSizeLimit : limits.memoSizeLimit }

    /// The failure of a file that is not as the caller read it.
    func changed(_ file: MemoFolderFile, now: String?) -> MemoFolderError {
        var failure = failure(file.path, now == nil ? "was removed since it was read; left as it is" : "changed since it was read; left as it is")
        failure.changedSince = true
        return failure
    }

    /// Whether a name is one a writer makes (`.reckon-write.<pid>.<n>.tmp`)
    /// and, on this machine, of a process that is gone.
    func isLeftover(_ name: String, local: Bool) -> Bool {
        guard let match = name.wholeMatch(of: /\.reckon-write\.([0-9]{1,10})\.[0-9]{1,10}\.tmp/), let pid = Int32(match.1) else { return false }
        return !local || (pid != getpid() && PrivateFolder.processIsGone(pid))
    }
}
